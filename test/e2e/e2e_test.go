// Package e2e runs fleetplane end to end: real etcd, kube-apiserver and
// Crossplane core; the three packages installed through Crossplane's
// package manager; the function and provider as Crossplane's External
// runtime; stand-ins for the upjet Azure provider; Kusto servers for
// partitions and hubs. Users' actions are kubectl-equivalent API calls.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/internal/kql"
	"github.com/fleetplane/fleetplane/test/environment"
	"github.com/fleetplane/fleetplane/test/kustoserver"
)

var env *environment.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	dir, err := os.MkdirTemp("", "fleetplane-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	env, err = environment.Start(context.Background(), root, dir, environment.Options{
		Interval: 2 * time.Second,
		Logf:     func(f string, a ...any) { fmt.Fprintf(os.Stderr, "e2e: "+f+"\n", a...) },
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot start the environment: %v\n", err)
		if env != nil {
			fmt.Fprintln(os.Stderr, env.Logs(3000))
		} else {
			printLogs(dir)
		}
		return 1
	}
	defer env.Stop()
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, env.Logs(6000))
	}
	return code
}

func printLogs(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		fmt.Fprintf(os.Stderr, "==> %s <==\n%s\n", filepath.Base(f), b)
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	if err := env.Kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func kusto(t *testing.T, dbs ...string) *kustoserver.Server {
	t.Helper()
	s, err := env.KustoServer(dbs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustExec(t *testing.T, s *kustoserver.Server, db string, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if err := s.Exec(db, c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
}

// xr parses an ADXCluster manifest, as kubectl apply -f would take it.
func xr(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("bad manifest: %v\n%s", err, manifest)
	}
	return u
}

func apply(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if err := env.Kube.Create(context.Background(), o); err != nil {
			t.Fatalf("apply %s/%s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

func get(t *testing.T, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := env.Kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return u
}

func getXR(t *testing.T, ns, name string) *unstructured.Unstructured {
	return get(t, "adx.fleetplane.io/v1alpha1", "ADXCluster", ns, name)
}

// condition returns the status and reason of a condition type.
func condition(u *unstructured.Unstructured, typ string) (string, string, string) {
	if u == nil {
		return "", "", ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

func members(s *kustoserver.Server, db string) []string {
	var out []string
	for _, e := range s.EntityGroups(db)[db+"Spoke"] {
		if ent, err := kql.ParseEntity(e); err == nil {
			out = append(out, ent.Endpoint)
		}
	}
	sort.Strings(out)
	return out
}

func partitionXR(ns, name, endpoint, hub string) string {
	return fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: %s, namespace: %s}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: %s
  endpoint: %s
  allowInsecureEndpoints: true
  role: Partition
  federation:
    partitioning: {geo: EU}
    federatedTargets:
    - {endpoint: '%s', heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}
`, name, ns, environment.LocalComposition, name, endpoint, hub)
}

func hubXR(ns, name, endpoint string) string {
	return fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: %s, namespace: %s}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: %s
  endpoint: %s
  allowInsecureEndpoints: true
  role: Federated
  federation: {heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats, heartbeatTTL: 1h}
`, name, ns, environment.LocalComposition, name, endpoint)
}

// TestFederatedFleet is scenario 1: a hub and three bring-your-own
// partitions on local Kusto servers.
func TestFederatedFleet(t *testing.T) {
	ns := namespace(t)
	hub := kusto(t, "FleetDiscovery", "Metrics")
	var parts []*kustoserver.Server
	for i := range 3 {
		p := kusto(t, "Metrics")
		mustExec(t, p, "Metrics", ".create table ['cpu'] (['v']:real)", fmt.Sprintf(".create table ['mem%d'] (['v']:real)", i))
		parts = append(parts, p)
	}
	start := time.Now()
	apply(t, xr(t, hubXR(ns, "hub", hub.URL)))
	for i, p := range parts {
		apply(t, xr(t, partitionXR(ns, fmt.Sprintf("partition-%d", i), p.URL, hub.URL)))
	}
	endpoints := []string{parts[0].URL, parts[1].URL, parts[2].URL}
	sort.Strings(endpoints)

	eventually(t, 3*time.Minute, "entity groups and functions for every partition table", func() (bool, string) {
		fns := hub.Functions("Metrics")
		got := members(hub, "Metrics")
		return len(fns) == 4 && strings.Join(got, ",") == strings.Join(endpoints, ","), fmt.Sprintf("functions %v, members %v", len(fns), got)
	})
	t.Logf("kubectl apply to hub functions ready: %s", time.Since(start).Round(100*time.Millisecond))

	t.Run("a new partition table reaches the hub", func(t *testing.T) {
		mustExec(t, parts[0], "Metrics", ".create table ['gpu'] (['v']:real)")
		eventually(t, 30*time.Second, "function gpu", func() (bool, string) {
			_, ok := hub.Functions("Metrics")["gpu"]
			return ok, "not yet"
		})
	})

	t.Run("crossplane beta trace shows every resource Ready", func(t *testing.T) {
		eventually(t, time.Minute, "every XR and composed resource Ready", func() (bool, string) {
			for _, n := range []string{"hub", "partition-0", "partition-1", "partition-2"} {
				out, err := env.Trace("adxcluster", n, ns, "-o", "wide")
				if err != nil || strings.Contains(out, "False") || !strings.Contains(out, "True") {
					return false, fmt.Sprintf("%s: %v\n%s", n, err, out)
				}
			}
			return true, ""
		})
		out, _ := env.Trace("adxcluster", "hub", ns)
		t.Logf("crossplane beta trace adxcluster hub:\n%s", out)
		for _, kind := range []string{"Table/", "Federation/"} {
			if !strings.Contains(out, kind) {
				t.Errorf("trace lacks %s:\n%s", kind, out)
			}
		}
	})

	t.Run("a blocked partition leaves the groups", func(t *testing.T) {
		h := getXR(t, ns, "hub")
		if err := unstructured.SetNestedStringSlice(h.Object, []string{parts[2].URL}, "spec", "federation", "blockedClusters", "static"); err != nil {
			t.Fatal(err)
		}
		if err := env.Kube.Update(context.Background(), h); err != nil {
			t.Fatal(err)
		}
		want := []string{parts[0].URL, parts[1].URL}
		sort.Strings(want)
		eventually(t, time.Minute, "partition-2 out of MetricsSpoke", func() (bool, string) {
			got := members(hub, "Metrics")
			_, mem2 := hub.Functions("Metrics")["mem2"]
			return strings.Join(got, ",") == strings.Join(want, ",") && !mem2, fmt.Sprintf("members %v, mem2 %v", got, mem2)
		})
	})

	s, r, _ := condition(getXR(t, ns, "hub"), "adxcluster.fleetplane.io")
	if s != string(corev1.ConditionTrue) || r != "ProvisioningSkipped" {
		t.Errorf("hub condition = %s/%s", s, r)
	}
	_ = xpv2.TypeReady
}
