// Package provider tests provider-fleetplane as users run it: the real
// binary, out of cluster, against a real kube-apiserver and etcd, with the
// real azkustodata client talking to fleetplane's Kusto servers playing a
// hub and three partitions.
package provider

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/standin"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

var (
	kube         client.Client
	provider     *controlplane.Process
	controlPlane *controlplane.ControlPlane
	// azureAPI plays Azure Resource Manager and Azure Monitor for the
	// provider, on loopback.
	azureAPI *standin.AzureAPI
	// metricsURL is the provider's Prometheus endpoint, served securely
	// as it ships; scrapeToken is a scraper's bound to
	// fleetplane:metrics-reader.
	metricsURL, scrapeToken string
)

func TestMain(m *testing.M) {
	support.Harness(m, "provider tests (a real API server)", run)
}

func run(m *testing.M) int {
	root := support.Root()
	dir, err := os.MkdirTemp("", "fleetplane-provider-test-")
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, root, dir)
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	defer cp.Stop()
	controlPlane = cp
	// The real Argo CD and Argo Workflows CRDs, so that what the provider
	// writes is validated by their schemas.
	argo, err := support.ArgoCRDs(root)
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	crds := append(support.ProviderCRDs(root), argo...)
	crds = append(crds, filepath.Join(root, "test", "provider", "testdata", "experiments-crd.yaml"), filepath.Join(root, "test", "provider", "testdata", "placements-crd.yaml"))
	if err := controlplane.InstallCRDs(ctx, cp.Config, crds...); err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	bin := filepath.Join(dir, "provider-fleetplane")
	build := exec.Command("go", "build", "-o", bin, "./provider")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		support.SetupFailedf("go build ./provider: %v\n%s", err, out)
		return 1
	}
	// The provider runs as its ServiceAccount under exactly the RBAC a
	// real install gives it: what Crossplane's RBAC manager grants every
	// provider, and the ClusterRole fleetplane ships (package/rbac).
	providerKubeconfig, err := providerIdentity(ctx, cp, root)
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	azureAPI = standin.NewAzureAPI()
	defer azureAPI.Close()
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	metricsURL = fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort)
	if scrapeToken, err = cp.MetricsScraper(ctx); err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	provider, err = controlplane.Run(dir, "provider", bin, []string{
		"--kubeconfig", providerKubeconfig, "--poll", "2s", "--debug", "--health-address", "0",
		"--metrics-address", fmt.Sprintf("127.0.0.1:%d", metricsPort), "--poll-state-metric", "1s",
		"--azure-resource-manager-endpoint", azureAPI.URL, "--imds-endpoint", azureAPI.URL, "--scrape-loopback-pods",
	}, nil)
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	cp.Track(provider)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme} {
		_ = add(scheme)
	}
	kube, err = client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	// "default" governs every namespace a test does not label otherwise.
	pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}, NamespaceSelector: metav1.LabelSelector{},
		Kusto: everyStandIn(),
		// Jobs' and Deployments' status may come back from a cluster;
		// a PodDisruptionBudget's may not.
		Placement: &v1alpha1.PlacementPolicy{
			Kinds:              []string{"batch/Job", "apps/Deployment", "policy/PodDisruptionBudget"},
			ReportedStateKinds: []string{"batch/Job", "apps/Deployment"},
		},
	}}
	if err := kube.Create(ctx, pc); err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "provider log (tail):\n%s\n", provider.Tail(20000))
	}
	return code
}

// providerIdentity makes the provider's ServiceAccount, grants it the
// RBAC a real install does, and returns a kubeconfig acting as it.
func providerIdentity(ctx context.Context, cp *controlplane.ControlPlane, root string) (string, error) {
	const ns, sa = "crossplane-system", "provider-fleetplane"
	kc, err := cp.ServiceAccountKubeconfig(ctx, ns, sa)
	if err != nil {
		return "", err
	}
	if err := cp.GrantProviderSystemRole(ctx, "provider-fleetplane", support.ProviderCRDs(root), ns, sa); err != nil {
		return "", err
	}
	for _, f := range []string{"provider-fleetplane.yaml", "metrics.yaml"} {
		if err := cp.ApplyRBAC(ctx, filepath.Join(root, "package", "rbac", f)); err != nil {
			return "", err
		}
	}
	return kc, nil
}

// eventually polls cond until it holds or the timeout passes, and fails
// at once if the provider exits.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	support.Eventually(t, timeout, what, cond, func() error {
		if provider.Exited() {
			return fmt.Errorf("the provider exited:\n%s", provider.Tail(4000))
		}
		return nil
	})
}

func namespace(t *testing.T) string { t.Helper(); return support.Namespace(t, kube) }

// governing is the ClusterProviderConfig each namespace a test labelled
// for one is governed by (govern); others are governed by "default".
var governing sync.Map

// govern labels namespace ns for the ClusterProviderConfig name, as the
// admin does, so that its managed resources may use it (and no other).
func govern(t *testing.T, ns, name string) {
	t.Helper()
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	update(t, n, func() {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels["fleetplane.io/policy"] = name
	})
	governing.Store(ns, name)
}

// configOf is the reference a managed resource of namespace ns names: the
// config that governs ns.
func configOf(ns string) *xpv2.ProviderConfigReference {
	name := "default"
	if v, ok := governing.Load(ns); ok {
		name = v.(string)
	}
	return &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: name}
}

// everyStandIn grants every Kusto stand-in, each as a hub.
func everyStandIn() *v1alpha1.KustoPolicy {
	return &v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{{Endpoint: "http://*:*", Hub: &v1alpha1.KustoHubGrant{}}}, Quota: everySecond()}
}

// everySecond is the Kusto quota of the tests' configs: Federations may
// cycle every second (the default quota allows a minute at most).
func everySecond() *v1alpha1.KustoQuota {
	return &v1alpha1.KustoQuota{MinFederationInterval: every(time.Second), MinChangeCheckInterval: every(time.Second)}
}

func every(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func heartbeatTable(ns, endpoint string) *kustov1alpha1.Table {
	return &kustov1alpha1.Table{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "heartbeats"},
		Spec: kustov1alpha1.TableSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(ns)},
			ForProvider: kustov1alpha1.TableParameters{Endpoint: endpoint, Database: "FleetDiscovery", Table: "Heartbeats", Columns: []kustov1alpha1.Column{
				{Name: "Timestamp", Type: "datetime"}, {Name: "ClusterEndpoint", Type: "string"}, {Name: "Schema", Type: "dynamic"}, {Name: "PartitionMetadata", Type: "dynamic"},
			}},
		},
	}
}

func heartbeat(ns, name, endpoint string, hubs ...string) *kustov1alpha1.Heartbeat {
	hb := &kustov1alpha1.Heartbeat{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kustov1alpha1.HeartbeatSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(ns)},
			ForProvider:         kustov1alpha1.HeartbeatParameters{Endpoint: endpoint, Interval: every(time.Second), Partitioning: kustov1alpha1.Partitioning{"name": kustov1alpha1.PartitionValue(name)}},
		},
	}
	for _, h := range hubs {
		hb.Spec.ForProvider.Targets = append(hb.Spec.ForProvider.Targets, kustov1alpha1.HeartbeatTarget{Endpoint: h, HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats"})
	}
	return hb
}

func federation(ns, endpoint, ttl string) *kustov1alpha1.Federation {
	return &kustov1alpha1.Federation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub"},
		Spec: kustov1alpha1.FederationSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(ns)},
			ForProvider: kustov1alpha1.FederationParameters{
				Endpoint: endpoint, HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats", HeartbeatTTL: ttl,
				Interval: every(time.Second), AllowInsecureEndpoints: true,
				// Seconds, not the default quarter hour, so that expiry
				// is testable.
				Safety: &kustov1alpha1.FederationSafety{MinimumRetention: every(time.Second)},
			},
		},
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := kube.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

func get[T client.Object](t *testing.T, o T) T {
	t.Helper()
	if err := kube.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	return o
}

// update changes an object the provider writes too, retrying on conflicts
// with its status updates.
func update(t *testing.T, o client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := kube.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			return err
		}
		change()
		return kube.Update(context.Background(), o)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ready(c xpv2.Condition) bool { return c.Status == corev1.ConditionTrue }

// groupMembers lists the partition endpoints of a hub entity group.
func groupMembers(s *kustoserver.Server, db string) []string {
	var out []string
	for _, e := range s.EntityGroups(db)[db+"Spoke"] {
		ent, err := kql.ParseEntity(e)
		if err == nil {
			out = append(out, ent.Endpoint)
		}
	}
	sort.Strings(out)
	return out
}

// fleet is a hub with three partitions heartbeating to it, federated.
type fleet struct {
	ns         string
	hub        *kustoserver.Server
	partitions []*kustoserver.Server
}

func newFleet(t *testing.T, ttl string) *fleet {
	t.Helper()
	f := &fleet{ns: namespace(t), hub: support.KustoServer(t, "FleetDiscovery", "Metrics", "Logs")}
	create(t, heartbeatTable(f.ns, f.hub.URL))
	for i := range 3 {
		p := support.KustoServer(t, "Metrics", "Logs")
		support.KustoExec(t, p, "Metrics", ".create table ['cpu'] (['v']:real)", fmt.Sprintf(".create table ['only-p%d'] (['v']:real)", i+1))
		support.KustoExec(t, p, "Logs", ".create table ['app'] (['m']:string)", ".create-or-alter function with (view=true) ['errors']() { ['app'] }")
		f.partitions = append(f.partitions, p)
		create(t, heartbeat(f.ns, fmt.Sprintf("p%d", i+1), p.URL, f.hub.URL))
	}
	create(t, federation(f.ns, f.hub.URL, ttl))
	return f
}

func (f *fleet) endpoints(idx ...int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, f.partitions[i].URL)
	}
	sort.Strings(out)
	return out
}

func (f *fleet) waitMembers(t *testing.T, want []string) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("MetricsSpoke = %v", want), func() (bool, string) {
		got := groupMembers(f.hub, "Metrics")
		return strings.Join(got, ",") == strings.Join(want, ","), fmt.Sprintf("members %v", got)
	})
}

func TestFederation(t *testing.T) {
	f := newFleet(t, "1h")
	fed := &kustov1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "hub"}}

	t.Run("hub and three partitions converge", func(t *testing.T) {
		f.waitMembers(t, f.endpoints(0, 1, 2))
		eventually(t, 60*time.Second, "every function and a Ready federation", func() (bool, string) {
			fns := f.hub.Functions("Metrics")
			_, p3 := fns["only-p3"]
			fo := get(t, fed)
			return len(fns) == 4 && p3 && ready(fo.GetCondition(xpv2.TypeReady)) && fo.Status.AtProvider.Functions == 5,
				fmt.Sprintf("functions %d, federation %+v", len(fns), fo.Status)
		})
		// Each partition's partitioning reaches the hub and its status.
		meta := map[string]string{}
		for _, p := range get(t, fed).Status.AtProvider.Partitions {
			meta[p.Endpoint] = p.Metadata["name"]
		}
		for i, p := range f.partitions {
			if want := fmt.Sprintf("p%d", i+1); meta[p.URL] != want {
				t.Errorf("status.atProvider.partitions: %s has metadata name %q, want %q", p.URL, meta[p.URL], want)
			}
		}
		if _, ok := f.hub.Functions("Logs")["errors"]; ok {
			t.Error("views get hub tables, not functions")
		}
		if _, ok := f.hub.Tables("Logs")["errors"]; !ok {
			t.Error("a view gets an OTLP hub table")
		}
		// A heartbeat that raced the hub's table failed once and retries;
		// its row can reach the hub just before its status does.
		for _, name := range []string{"p1", "p2", "p3"} {
			eventually(t, 30*time.Second, "heartbeat "+name+" Ready", func() (bool, string) {
				hb := get(t, &kustov1alpha1.Heartbeat{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}})
				return ready(hb.GetCondition(xpv2.TypeReady)) && hb.Status.AtProvider.Tables == 3 && hb.Status.AtProvider.Views == 1,
					fmt.Sprintf("%+v", hb.Status)
			})
		}
		eventually(t, 30*time.Second, "the heartbeat table Ready", func() (bool, string) {
			tbl := get(t, &kustov1alpha1.Table{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "heartbeats"}})
			return ready(tbl.GetCondition(xpv2.TypeReady)) && tbl.Status.AtProvider.Exists, fmt.Sprintf("%+v", tbl.Status)
		})
	})

	t.Run("a steady cycle issues no mutating command", func(t *testing.T) {
		f.hub.ResetCommands()
		start := get(t, fed).Status.AtProvider.LastSyncTime.Time
		eventually(t, 30*time.Second, "two more federation cycles", func() (bool, string) {
			fo := get(t, fed)
			return fo.Status.AtProvider.LastSyncTime.After(start.Add(1500 * time.Millisecond)), "waiting"
		})
		if n := f.hub.ScriptCommands(); n != 0 {
			t.Errorf("steady cycles ran %d mutating commands", n)
		}
		if n := get(t, fed).Status.AtProvider.CommandsIssued; n != 0 {
			t.Errorf("status.atProvider.commandsIssued = %d", n)
		}
	})

	t.Run("a new partition table reaches the hub", func(t *testing.T) {
		support.KustoExec(t, f.partitions[1], "Metrics", ".create table ['gpu'] (['v']:real)")
		eventually(t, 30*time.Second, "function gpu on the hub", func() (bool, string) {
			fn, ok := f.hub.Functions("Metrics")["gpu"]
			return ok && fn.Folder == "fleetplane", "not yet"
		})
	})

	t.Run("a blocked partition leaves the groups", func(t *testing.T) {
		update(t, fed, func() {
			fed.Spec.ForProvider.BlockedClusters = &kustov1alpha1.BlockedClusters{Static: []string{strings.ToUpper(f.partitions[2].URL) + "/"}}
		})
		f.waitMembers(t, f.endpoints(0, 1))
		eventually(t, 30*time.Second, "only-p3 dropped and blockedMatched 1", func() (bool, string) {
			_, ok := f.hub.Functions("Metrics")["only-p3"]
			fo := get(t, fed)
			return !ok && fo.Status.AtProvider.BlockedMatched == 1, fmt.Sprintf("only-p3 present %v, %+v", ok, fo.Status.AtProvider)
		})
		if _, ok := f.hub.Tables("Metrics")["only-p3"]; !ok {
			t.Error("hub tables keep their data: never dropped")
		}
	})
}

func TestSilentPartitionExpires(t *testing.T) {
	// Ten seconds: long enough that a loaded machine seldom makes the
	// heartbeat path look down (its newest heartbeat older than half the
	// TTL), which holds every partition for a minute more.
	f := newFleet(t, "10s")
	f.waitMembers(t, f.endpoints(0, 1, 2))
	if err := kube.Delete(context.Background(), &kustov1alpha1.Heartbeat{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "p1"}}); err != nil {
		t.Fatal(err)
	}
	// A partition leaves after a TTL of silence, but never within the
	// settle window (TTL + a minute) after the heartbeat path last looked
	// down; a first cycle that ran before any heartbeat reached the hub, or
	// a loaded machine delaying heartbeats past half the TTL, counts as
	// down and moves the window. So the wait follows the window the
	// status reports: p1 must be gone within a grace of whichever ends
	// later, its own silence or the settle window, and the whole wait is
	// capped so a path that never settles still fails.
	const ttl, settle, grace = 10 * time.Second, 70 * time.Second, 45 * time.Second
	deleted := time.Now()
	fed := &kustov1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "hub"}}
	eventually(t, 5*time.Minute, "p1 leaves MetricsSpoke", func() (bool, string) {
		got := groupMembers(f.hub, "Metrics")
		fo := get(t, fed)
		if strings.Join(got, ",") == strings.Join(f.endpoints(1, 2), ",") {
			return true, ""
		}
		due := deleted.Add(ttl)
		if d := fo.Status.AtProvider.HeartbeatPathDownTime; d != nil && d.Add(settle).After(due) {
			due = d.Add(settle)
		}
		why := fmt.Sprintf("members %v, heldBack %v, heartbeat path last down %v", got, fo.Status.AtProvider.HeldBack, fo.Status.AtProvider.HeartbeatPathDownTime)
		if time.Now().After(due.Add(grace)) {
			t.Fatalf("p1 is still a member %s after its window ended at %s: %s", time.Since(due).Round(time.Second), due.Format(time.RFC3339), why)
		}
		return false, why
	})
	eventually(t, 30*time.Second, "only-p1 dropped", func() (bool, string) {
		_, ok := f.hub.Functions("Metrics")["only-p1"]
		return !ok, "still there"
	})
}

func TestFailingTargetLeavesOthersHealthy(t *testing.T) {
	ns := namespace(t)
	good := support.KustoServer(t, "FleetDiscovery")
	bad := support.KustoServer(t, "FleetDiscovery")
	part := support.KustoServer(t, "Metrics")
	support.KustoExec(t, part, "Metrics", ".create table ['cpu'] (['v']:real)")
	create(t, heartbeatTable(ns, good.URL))
	bt := heartbeatTable(ns, bad.URL)
	bt.Name = "heartbeats-bad"
	create(t, bt)
	if err := bad.InjectFault(kustoserver.Fault{Match: `^\.ingest`, Status: 500}); err != nil {
		t.Fatal(err)
	}
	create(t, heartbeat(ns, "p", part.URL, good.URL, bad.URL))
	key := &kustov1alpha1.Heartbeat{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}

	eventually(t, 60*time.Second, "the good hub getting heartbeats while the bad one fails", func() (bool, string) {
		hb := get(t, key)
		c := hb.GetCondition(xpv2.TypeReady)
		var goodOK, badErr bool
		for _, ts := range hb.Status.AtProvider.Targets {
			goodOK = goodOK || (ts.Endpoint == good.URL && ts.LastSuccessTime != nil && ts.LastError == "")
			badErr = badErr || (ts.Endpoint == bad.URL && strings.Contains(ts.LastError, "500"))
		}
		return goodOK && badErr && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, bad.URL), fmt.Sprintf("%+v", hb.Status)
	})
	if rows := good.Rows("FleetDiscovery", "Heartbeats"); len(rows) == 0 {
		t.Error("the good hub has no heartbeat rows")
	}

	bad.ClearFaults()
	eventually(t, 60*time.Second, "recovery once the bad hub heals", func() (bool, string) {
		hb := get(t, key)
		return ready(hb.GetCondition(xpv2.TypeReady)), hb.GetCondition(xpv2.TypeReady).Message
	})
}

// TestAdversarialHeartbeats writes heartbeat rows as an attacker with ingest
// rights on the hub's table would, and checks the hub never runs anything
// but the commands fleetplane means to.
func TestAdversarialHeartbeats(t *testing.T) {
	ns := namespace(t)
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	create(t, heartbeatTable(ns, hub.URL))
	eventually(t, 30*time.Second, "the heartbeat table", func() (bool, string) {
		_, ok := hub.Tables("FleetDiscovery")["Heartbeats"]
		return ok, "missing"
	})
	now := time.Now().UTC().Format(time.RFC3339Nano)
	payloads := []struct{ endpoint, schema string }{
		{"https://evil').database('Metrics')) | .drop table Heartbeats //", `[{"database":"Metrics","tables":["t"]}]`},
		{"https://ok.kusto.windows.net", `[{"database":"Metrics","tables":["x'] ) } .drop database Metrics //","cpu"]}]`},
		{"https://ok2.kusto.windows.net", `[{"database":"Metrics\n.drop table Heartbeats","tables":["t"]}]`},
		{"https://ok3.kusto.windows.net", `[{"database":"Metrics","tables":["a;.drop table Heartbeats"],"views":["v|take 1"]}]`},
		{"http://plain.kusto.windows.net", `[{"database":"Metrics","tables":["t"]}]`},
	}
	for _, p := range payloads {
		rec, _ := csvRecord(now, p.endpoint, p.schema)
		cmd, err := kql.IngestInline("Heartbeats", rec)
		if err != nil {
			t.Fatal(err)
		}
		support.KustoExec(t, hub, "FleetDiscovery", cmd)
	}
	fo := federation(ns, hub.URL, "1h")
	fo.Spec.ForProvider.AllowInsecureEndpoints = false
	create(t, fo)

	eventually(t, 60*time.Second, "a federation cycle with rejections reported", func() (bool, string) {
		got := get(t, fo)
		return got.Status.AtProvider.LastSyncTime != nil && len(got.Status.AtProvider.Warnings) >= 4, fmt.Sprintf("%+v", got.Status.AtProvider)
	})
	got := get(t, fo)
	errs := strings.Join(got.Status.AtProvider.Warnings, "\n")
	for _, want := range []string{"invalid Kusto endpoint", "plain http", `x'] ) } .drop database Metrics //`, "a;.drop table Heartbeats"} {
		if !strings.Contains(errs, want) {
			t.Errorf("status errors do not report %q:\n%s", want, errs)
		}
	}
	// Rejected rows are warnings: the hub federates the valid partitions.
	if !ready(got.GetCondition(xpv2.TypeReady)) {
		t.Errorf("rejected heartbeats must not take the federation down: %+v", got.Status)
	}
	// The one legitimate table of a legitimate partition is federated.
	if _, ok := hub.Functions("Metrics")["cpu"]; !ok {
		t.Error("cpu, reported by a valid partition, should be federated")
	}
	// Every command the hub received is one fleetplane writes, whole.
	allowed := map[string]bool{".show": true, ".create": true, ".alter": true, ".create-or-alter": true, ".create-merge": true, ".execute": true}
	var scripts []string
	for _, c := range hub.Commands() {
		scripts = append(scripts, c.Text)
	}
	for _, text := range scripts {
		lines := []string{text}
		if strings.HasPrefix(text, ".execute database script") {
			lines = strings.Split(strings.TrimSpace(strings.SplitN(text, "<|", 2)[1]), "\n")
		}
		for _, line := range lines {
			if strings.Contains(line, ".drop table") || strings.Contains(line, ".drop database") || strings.Contains(line, "take 1") {
				t.Errorf("injected text reached the hub: %q", line)
			}
			toks, err := kql.Tokenize(line)
			if err != nil {
				t.Errorf("the hub received text that does not tokenize: %q: %v", line, err)
				continue
			}
			if toks[0].Kind == kql.Command && !allowed[toks[0].Value] {
				t.Errorf("unexpected command %q", line)
			}
		}
	}
}

// csvRecord writes a heartbeat row as an attacker would, bypassing the
// partition-side validation fleetplane does.
func csvRecord(fields ...string) (string, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.Write(fields); err != nil {
		return "", err
	}
	w.Flush()
	return strings.TrimSuffix(strings.ReplaceAll(b.String(), "\n", " "), " "), nil
}

// TestHeartbeatTTLIsBoundAtApplyTime: a TTL past 30 days once passed
// validation and wrapped into minutes in the provider; the API server now
// refuses it with a message naming the bound.
func TestHeartbeatTTLIsBoundAtApplyTime(t *testing.T) {
	ns := namespace(t)
	cases := map[string]string{
		"213504d": "at most 30d", "31d": "at most 30d", "720h1s": "at most 30d", "99999999d": "heartbeatTTL", "0s": "at least 1s", "30d": "", "1d2h3m4s": "",
		// Kusto's other timespan forms, on the real API server.
		"1.5h": "", "00:30:00": "", "1.02:03:04": "", "30.00:00:01": "at most 30d", "0.5s": "at least 1s",
		// Not a timespan: the format is said, nothing else.
		"2 days": "heartbeatTTL is a Kusto timespan: units such as 2d, 4h30m",
	}
	i := 0
	for ttl, want := range cases {
		i++
		f := federation(ns, "http://127.0.0.1:1", ttl)
		f.Name = fmt.Sprintf("ttl-%d", i)
		err := kube.Create(context.Background(), f)
		switch {
		case want == "" && err != nil:
			t.Errorf("heartbeatTTL %s refused: %v", ttl, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("heartbeatTTL %s: error %v, want one mentioning %q", ttl, err, want)
		case strings.Contains(want, "timespan") && (strings.Contains(err.Error(), "at least") || strings.Contains(err.Error(), "should match")):
			t.Errorf("heartbeatTTL %s: the format error comes with others: %v", ttl, err)
		}
	}
}
