// Package support is what fleetplane's tests share, whatever their layer:
// polling with a deadline, namespaces named after tests, in-memory Kusto
// servers and clients, the repository root, and the lists of CRD files
// the harnesses install.
package support

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

// Root is the repository root, found from the working directory of the
// test (a package directory somewhere below it).
func Root() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			panic("no go.mod above " + wd)
		}
	}
}

// Eventually polls cond every interval until it holds or timeout passes;
// the last explanation cond gave is the failure message. alive, when
// given, is checked first on every poll: an error from it (a process that
// exited, say) fails at once instead of waiting out the deadline.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string), alive ...func() error) {
	t.Helper()
	const interval = 200 * time.Millisecond
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		for _, a := range alive {
			if err := a(); err != nil {
				t.Fatalf("while waiting for %s: %v", what, err)
			}
		}
		ok, why := cond()
		if ok {
			// A wait that used much of its budget is the first suspect
			// when a later one times out on a slower machine; the line
			// shows with the failure (or under -v).
			if took := time.Since(start); took > timeout/3 {
				t.Logf("waited %s of %s for %s", took.Round(100*time.Millisecond), timeout, what)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, why)
		}
		time.Sleep(interval)
	}
}

// Namespace creates a namespace named after the test, DNS-safe.
func Namespace(t testing.TB, kube client.Client) string {
	t.Helper()
	return NamespaceNamed(t, kube, t.Name())
}

// NamespaceNamed creates a namespace for name, DNS-safe.
func NamespaceNamed(t testing.TB, kube client.Client, name string) string {
	t.Helper()
	name = strings.ToLower(strings.NewReplacer("/", "-", "_", "-", " ", "-").Replace(name))
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	if err := kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// KustoServer starts an in-memory Kusto server with the databases, on a
// loopback port, stopped when the test ends.
func KustoServer(t testing.TB, dbs ...string) *kustoserver.Server {
	t.Helper()
	s := kustoserver.New(dbs...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// KustoExec runs management commands on a server, failing the test on
// the first that fails.
func KustoExec(t testing.TB, s *kustoserver.Server, db string, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if err := s.Exec(db, c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
}

// HeartbeatTable creates a hub's heartbeat table, as an ADXCluster's Table
// does.
const HeartbeatTable = ".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic)"

// Record is a row that renders itself as an inline ingestion record, as
// heartbeat.Row does (named here without importing it: heartbeat's own
// tests use this package).
type Record interface {
	Record() (string, error)
}

// IngestHeartbeat writes one row into the Heartbeats table of db, as a
// partition does.
func IngestHeartbeat(t testing.TB, s *kustoserver.Server, db string, row Record) {
	t.Helper()
	rec, err := row.Record()
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := kql.IngestInline("Heartbeats", rec)
	if err != nil {
		t.Fatal(err)
	}
	KustoExec(t, s, db, cmd)
}

// KustoClient is fleetplane's real client (azkustodata underneath) to a
// local server, without credentials, retrying quickly so that fault tests
// stay fast.
func KustoClient(t testing.TB, s *kustoserver.Server) *kusto.Client {
	t.Helper()
	c, err := kusto.New(s.URL, nil, kusto.Options{Timeout: 10 * time.Second, Attempts: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// CRD files the harnesses install.

// ProviderCRDs are provider-fleetplane's own.
func ProviderCRDs(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, "package", "provider", "crds", "*.yaml"))
	return files
}

// ArgoCRDs are the real Argo CD and Argo Workflows CRDs, from their
// modules at the pinned versions.
func ArgoCRDs(root string) ([]string, error) {
	var crds []string
	for _, mod := range []string{"argocd-crds", "argo-workflows-crds"} {
		dir, err := controlplane.Tool(root, mod)
		if err != nil {
			return nil, err
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			if filepath.Base(f) != "kustomization.yaml" {
				crds = append(crds, f)
			}
		}
	}
	if len(crds) == 0 {
		return nil, errors.New("no Argo CRDs found")
	}
	return crds, nil
}

// ClusterAPICRDs are the real CRDs of the kinds a talos target composes,
// with Cluster API's Docker infrastructure provider (CAPD) as the
// infrastructure: Cluster API's Cluster and MachineDeployment, Sidero's
// TalosControlPlane and TalosConfigTemplate, CAPD's DockerCluster and
// DockerMachineTemplate.
func ClusterAPICRDs(root string) ([]string, error) {
	var crds []string
	for _, c := range []struct{ tool, file string }{
		{"capi-crds", "cluster.x-k8s.io_clusters.yaml"},
		{"capi-crds", "cluster.x-k8s.io_machinedeployments.yaml"},
		{"talos-controlplane-crds", "controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml"},
		{"talos-bootstrap-crds", "bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml"},
		{"capd-crds", "infrastructure.cluster.x-k8s.io_dockerclusters.yaml"},
		{"capd-crds", "infrastructure.cluster.x-k8s.io_dockermachinetemplates.yaml"},
	} {
		dir, err := controlplane.Tool(root, c.tool)
		if err != nil {
			return nil, err
		}
		crds = append(crds, filepath.Join(dir, c.file))
	}
	return crds, nil
}

// UpjetAzureCRDs are the real upjet CRDs of the Azure kinds ADXCluster
// composes.
func UpjetAzureCRDs(root string) ([]string, error) {
	dir, err := controlplane.Tool(root, "upjet-azure-crds")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(dir, "azure.m.upbound.io_resourcegroups.yaml"),
		filepath.Join(dir, "kusto.azure.m.upbound.io_clusters.yaml"),
		filepath.Join(dir, "kusto.azure.m.upbound.io_databases.yaml"),
		filepath.Join(dir, "kusto.azure.m.upbound.io_databaseprincipalassignments.yaml"),
	}, nil
}

// GKECRDs are the stand-in GKE CRDs, a faithful subset of upstream's.
func GKECRDs(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, "test", "harness", "standin", "crds", "*.yaml"))
	return files
}

// Harness runs a test binary that needs the built tools and a control
// plane, unless the tests run with -short (make test-unit), where it
// reports the skip and succeeds.
func Harness(m *testing.M, what string, run func(*testing.M) int) {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintf(os.Stderr, "%s: skipped under -short\n", what)
		os.Exit(0)
	}
	echo, err := echoFailures(32 << 10)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
	code := run(m)
	failures := echo.stop()
	if code != 0 && failures != "" {
		fmt.Fprintf(os.Stderr, "\n%s: the failures again, after the logs above:\n%s", what, failures)
	}
	if setup := setupFailedText(); code != 0 && setup != "" {
		fmt.Fprintf(os.Stderr, "\n%s: could not set up, again after the logs above:\n%s", what, setup)
	}
	os.Exit(code)
}

// NeedsTools skips a test under -short: it builds or runs pinned tools.
func NeedsTools(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the pinned tools; skipped under -short")
	}
}

// Kubeconfig is a cluster's kubeconfig as a GKE connection Secret holds
// it: a server with a CA, and a token. Nothing connects to the server.
func Kubeconfig(server, token string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster: {server: %q, certificate-authority-data: Q0EK}
contexts:
- name: c
  context: {cluster: c, user: u}
users:
- name: u
  user: {token: %q}
`, server, token)
}
