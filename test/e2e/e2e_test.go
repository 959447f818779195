// Package e2e runs fleetplane end to end: real etcd, kube-apiserver and
// Crossplane core; the three packages installed through Crossplane's
// package manager; the function and provider as Crossplane's External
// runtime; stand-ins for the upjet Azure provider; Kusto servers for
// partitions and hubs. Users' actions are kubectl-equivalent API calls.
package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/standin"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

var env *environment.Env

func TestMain(m *testing.M) {
	support.Harness(m, "e2e (a control plane with Crossplane)", run)
}

func run(m *testing.M) int {
	root := support.Root()
	dir, err := os.MkdirTemp("", "fleetplane-e2e-")
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	if os.Getenv("FLEETPLANE_E2E_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: keeping logs in %s\n", dir)
	}
	env, err = environment.Start(context.Background(), root, dir, environment.Options{
		Interval: 2 * time.Second,
		// Two, as the composed ingestor anti-affinity places one
		// ingestor per node and TestADXMon's autoscaler grows to two.
		Nodes: 2,
		Logf:  func(f string, a ...any) { fmt.Fprintf(os.Stderr, "e2e: "+f+"\n", a...) },
	})
	if err != nil {
		support.SetupFailedf("e2e: cannot start the environment: %v", err)
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

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	support.Eventually(t, timeout, what, cond)
}

func namespace(t *testing.T) string { t.Helper(); return support.Namespace(t, env.Kube) }

func kusto(t *testing.T, dbs ...string) *kustoserver.Server {
	t.Helper()
	s, err := env.KustoServer(dbs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
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
	return getIn(env.Kube, apiVersion, kind, ns, name)
}

func getXR(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	return get(t, "adx.fleetplane.io/v1alpha1", "ADXCluster", ns, name)
}

// condition returns the status, reason and message of a condition type.
func condition(u *unstructured.Unstructured, typ string) (string, string, string) {
	m := conditionOf(u, typ)
	s, _ := m["status"].(string)
	r, _ := m["reason"].(string)
	msg, _ := m["message"].(string)
	return s, r, msg
}

// conditionOf is the condition of a type, nil when absent.
func conditionOf(u *unstructured.Unstructured, typ string) map[string]any {
	if u == nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
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
		support.KustoExec(t, p, "Metrics", ".create table ['cpu'] (['v']:real)", fmt.Sprintf(".create table ['mem%d'] (['v']:real)", i))
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
		support.KustoExec(t, parts[0], "Metrics", ".create table ['gpu'] (['v']:real)")
		eventually(t, 30*time.Second, "function gpu", func() (bool, string) {
			_, ok := hub.Functions("Metrics")["gpu"]
			return ok, "not yet"
		})
	})

	t.Run("the provider's pod killed mid-cycle loses nothing", func(t *testing.T) {
		providerPodKilled(t, hub, parts[1], endpoints)
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
		// A merge patch: Crossplane writes the XR too.
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"federation":{"blockedClusters":{"static":[%q]}}}}`, parts[2].URL))
		if err := env.Kube.Patch(context.Background(), getXR(t, ns, "hub"), patch); err != nil {
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

	// Last: the lapse leaves the hub's federation guarding for a while.
	t.Run("the fleet's health in metrics; a heartbeat lapse fires the stale alert", func(t *testing.T) {
		fleetHealth(t, ns, hub, 2)
	})

	s, r, _ := condition(getXR(t, ns, "hub"), "adxcluster.fleetplane.io")
	if s != string(corev1.ConditionTrue) || r != "ProvisioningSkipped" {
		t.Errorf("hub condition = %s/%s", s, r)
	}
	_ = xpv2.TypeReady
}

func provisionedPartitionXR(ns, name, cluster, hub, policy string) string {
	return fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: %s, namespace: %s}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: %s
  allowInsecureEndpoints: true
  deletionPolicy: %s
  provision:
    subscriptionId: 00000000-0000-0000-0000-000000000000
    resourceGroup: rg-%s
    location: westeurope
    skuName: Standard_E8ads_v5
    tier: Standard
  role: Partition
  federation:
    federatedTargets:
    - {endpoint: '%s', heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}
`, name, ns, environment.LocalComposition, cluster, policy, cluster, hub)
}

// composedObjects are an XR's composed resources that exist, by
// kind/external-name.
func composedObjects(t *testing.T, ns, xrName string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	x := getXR(t, ns, xrName)
	if x == nil {
		return out
	}
	refs, _, _ := unstructured.NestedSlice(x.Object, "spec", "crossplane", "resourceRefs")
	for _, r := range refs {
		m, _ := r.(map[string]any)
		api, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		if o := get(t, api, kind, ns, name); o != nil {
			out[kind+"/"+o.GetAnnotations()["crossplane.io/external-name"]] = o
		}
	}
	return out
}

// composed lists an XR's composed resources by kind/external-name with
// their readiness.
func composed(t *testing.T, ns, xrName string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, o := range composedObjects(t, ns, xrName) {
		out[k], _, _ = condition(o, "Ready")
	}
	return out
}

// managementPolicies are the management policies of an XR's composed
// resources, by kind/external-name.
func managementPolicies(t *testing.T, ns, xrName string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for k, o := range composedObjects(t, ns, xrName) {
		out[k], _, _ = unstructured.NestedStringSlice(o.Object, "spec", "managementPolicies")
	}
	return out
}

// TestProvision is scenario 2: resource group, cluster and databases are
// composed in order; the XR reports endpoint and applied state; then the
// cluster federates.
func TestProvision(t *testing.T) {
	ns := namespace(t)
	hub := kusto(t, "FleetDiscovery")
	apply(t, xr(t, hubXR(ns, "hub", hub.URL)))
	apply(t, xr(t, provisionedPartitionXR(ns, "weu", "weu01", hub.URL, "Orphan")))

	// Watch the order: a resource appears only once its predecessor is Ready.
	reasons := map[string]bool{}
	eventually(t, 3*time.Minute, "the cluster ready and its databases composed", func() (bool, string) {
		c := composed(t, ns, "weu")
		if _, ok := c["Cluster/weu01"]; ok && c["ResourceGroup/rg-weu01"] != "True" {
			t.Fatalf("the cluster was composed before the resource group was ready: %v", c)
		}
		for k := range c {
			if strings.HasPrefix(k, "Database/") && c["Cluster/weu01"] != "True" {
				t.Fatalf("a database was composed before the cluster was ready: %v", c)
			}
		}
		_, r, _ := condition(getXR(t, ns, "weu"), "adxcluster.fleetplane.io")
		reasons[r] = true
		return c["Database/Metrics"] == "True" && c["Database/Logs"] == "True", fmt.Sprintf("%v, reason %s", c, r)
	})
	if !reasons["Waiting"] || !reasons["ClusterReady"] {
		t.Errorf("reasons seen %v; want Waiting then ClusterReady", reasons)
	}
	x := getXR(t, ns, "weu")
	ep, _, _ := unstructured.NestedString(x.Object, "status", "endpoint")
	if server := env.Azure.ClusterServer("weu01"); server == nil || ep != server.URL {
		t.Errorf("status.endpoint = %q, want the cluster's URI", ep)
	}
	applied, _, _ := unstructured.NestedMap(x.Object, "status", "appliedProvisionState")
	if applied["skuName"] != "Standard_E8ads_v5" || applied["tier"] != "Standard" {
		t.Errorf("appliedProvisionState = %v", applied)
	}

	eventually(t, time.Minute, "the provisioned cluster's heartbeat on the hub", func() (bool, string) {
		for _, r := range hub.Rows("FleetDiscovery", "Heartbeats") {
			if r[1] == ep {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d rows", len(hub.Rows("FleetDiscovery", "Heartbeats")))
	})

	// Someone scales the SKU up in Azure. With azureChanges Keep, the
	// default, the change stays: the status reports it, and reconciles
	// that could update the cluster leave it.
	wantAzureSKU := func(xrName, cluster, want string) {
		t.Helper()
		eventually(t, time.Minute, xrName+" reporting SKU "+want, func() (bool, string) {
			applied, _, _ := unstructured.NestedString(getXR(t, ns, xrName).Object, "status", "appliedProvisionState", "skuName")
			held, _, _ := unstructured.NestedString(env.Azure.Applied(standin.Cluster.Kind, cluster), "sku", "name")
			return applied == want && held == want, fmt.Sprintf("status %s, Azure %s", applied, held)
		})
	}
	env.Azure.ChangeSKUInAzure("weu01", "Standard_E16ads_v5")
	wantAzureSKU("weu", "weu01", "Standard_E16ads_v5")
	updates := env.Azure.Updates(standin.Cluster.Kind, "weu01")
	eventually(t, time.Minute, "three more reconciles of the cluster", func() (bool, string) {
		n := env.Azure.Updates(standin.Cluster.Kind, "weu01")
		return n >= updates+3, strconv.Itoa(n - updates)
	})
	if held, _, _ := unstructured.NestedString(env.Azure.Applied(standin.Cluster.Kind, "weu01"), "sku", "name"); held != "Standard_E16ads_v5" {
		t.Errorf("azureChanges Keep: Azure's SKU %s was set back to %s", "Standard_E16ads_v5", held)
	}
	// An edit of the spec still applies.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"provision":{"skuName":"Standard_E4ads_v5"}}}`))
	if err := env.Kube.Patch(context.Background(), getXR(t, ns, "weu"), patch); err != nil {
		t.Fatal(err)
	}
	wantAzureSKU("weu", "weu01", "Standard_E4ads_v5")

	// With Revert, the same change is set back to the spec.
	reverting := xr(t, provisionedPartitionXR(ns, "weu-revert", "weu02", hub.URL, "Orphan"))
	if err := unstructured.SetNestedField(reverting.Object, "Revert", "spec", "provision", "azureChanges"); err != nil {
		t.Fatal(err)
	}
	apply(t, reverting)
	wantAzureSKU("weu-revert", "weu02", "Standard_E8ads_v5")
	env.Azure.ChangeSKUInAzure("weu02", "Standard_E16ads_v5")
	eventually(t, time.Minute, "the SKU changed in Azure set back", func() (bool, string) {
		held, _, _ := unstructured.NestedString(env.Azure.Applied(standin.Cluster.Kind, "weu02"), "sku", "name")
		return held == "Standard_E8ads_v5", held
	})
}

// TestCriteria is scenario 3: a false criteriaExpression composes nothing;
// flipping the label composes.
func TestCriteria(t *testing.T) {
	ns := namespace(t)
	hub := kusto(t, "FleetDiscovery")
	part := kusto(t, "Metrics")
	labels := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"metadata": map[string]any{"name": "fleetplane-cluster-labels"},
		"data":     map[string]any{"labels": map[string]any{"geo": "us", "tier": "gold"}},
	}}
	apply(t, labels)
	gated := xr(t, partitionXR(ns, "gated", part.URL, hub.URL))
	if err := unstructured.SetNestedField(gated.Object, `labels["geo"] == "eu" && labels.has("tier")`, "spec", "criteriaExpression"); err != nil {
		t.Fatal(err)
	}
	apply(t, gated)
	eventually(t, time.Minute, "CriteriaExpressionFalse", func() (bool, string) {
		s, r, m := condition(getXR(t, ns, "gated"), "adxcluster.fleetplane.io")
		return s == "False" && r == "CriteriaExpressionFalse", r + ": " + m
	})
	if c := composed(t, ns, "gated"); len(c) != 0 {
		t.Errorf("a false criteria composed %v", c)
	}

	if err := unstructured.SetNestedField(labels.Object, "eu", "data", "labels", "geo"); err != nil {
		t.Fatal(err)
	}
	if err := env.Kube.Update(context.Background(), labels); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the heartbeat composed once the labels match", func() (bool, string) {
		c := composed(t, ns, "gated")
		for k := range c {
			if strings.HasPrefix(k, "Heartbeat/") {
				return true, ""
			}
		}
		_, r, _ := condition(getXR(t, ns, "gated"), "adxcluster.fleetplane.io")
		return false, fmt.Sprintf("%v, reason %s", c, r)
	})
}

// TestInvalidXRsAreRejected is scenario 4: the API server refuses, at
// apply time, each rule of the seeds broken once, naming the field.
func TestInvalidXRsAreRejected(t *testing.T) {
	ns := namespace(t)
	base := func() *unstructured.Unstructured {
		return xr(t, `
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: invalid}
spec:
  clusterName: valid01
  endpoint: https://valid01.westeurope.kusto.windows.net
`)
	}
	set := func(u *unstructured.Unstructured, v any, path ...string) *unstructured.Unstructured {
		if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
			t.Fatal(err)
		}
		return u
	}
	provision := map[string]any{"subscriptionId": "00000000-0000-0000-0000-000000000000", "resourceGroup": "rg", "location": "westeurope", "skuName": "Standard_E8ads_v5", "tier": "Standard"}
	withProvision := func(change func(map[string]any)) *unstructured.Unstructured {
		p := map[string]any{}
		maps.Copy(p, provision)
		change(p)
		u := base()
		unstructured.RemoveNestedField(u.Object, "spec", "endpoint")
		return set(u, p, "spec", "provision")
	}
	cases := map[string]struct {
		obj  *unstructured.Unstructured
		want string
	}{
		"clusterName pattern":  {set(base(), "bad_name", "spec", "clusterName"), "spec.clusterName"},
		"clusterName length":   {set(base(), strings.Repeat("a", 101), "spec", "clusterName"), "spec.clusterName"},
		"endpoint not https":   {set(base(), "http://valid01.kusto.windows.net", "spec", "endpoint"), "spec.endpoint"},
		"endpoint with a path": {set(base(), "https://x.kusto.windows.net/db?x=1", "spec", "endpoint"), "spec.endpoint"},
		"neither endpoint nor provision": {func() *unstructured.Unstructured {
			u := base()
			unstructured.RemoveNestedField(u.Object, "spec", "endpoint")
			return u
		}(), "spec.endpoint"},
		"databaseName pattern":              {set(base(), []any{map[string]any{"databaseName": "my-db", "telemetryType": "Metrics"}}, "spec", "databases"), "spec.databases[0].databaseName"},
		"telemetryType enum":                {set(base(), []any{map[string]any{"databaseName": "db", "telemetryType": "Events"}}, "spec", "databases"), "spec.databases[0].telemetryType"},
		"duplicate databases":               {set(base(), []any{map[string]any{"databaseName": "db", "telemetryType": "Logs"}, map[string]any{"databaseName": "db", "telemetryType": "Logs"}}, "spec", "databases"), "spec.databases[1]"},
		"role enum":                         {set(base(), "Hub", "spec", "role"), "spec.role"},
		"Partition without targets":         {set(base(), "Partition", "spec", "role"), "spec.federation"},
		"Federated without heartbeat table": {set(set(base(), "Federated", "spec", "role"), "FleetDiscovery", "spec", "federation", "heartbeatDatabase"), "spec.federation"},
		"heartbeatDatabase pattern":         {set(base(), "Fleet-Discovery", "spec", "federation", "heartbeatDatabase"), "spec.federation.heartbeatDatabase"},
		"heartbeatTTL format":               {set(base(), "1w", "spec", "federation", "heartbeatTTL"), "spec.federation.heartbeatTTL"},
		"heartbeatTTL over 30 days":         {set(base(), "213504d", "spec", "federation", "heartbeatTTL"), "heartbeatTTL must be at most 30d"},
		"heartbeatTTL clock over 30 days":   {set(base(), "30.00:00:01", "spec", "federation", "heartbeatTTL"), "heartbeatTTL must be at most 30d"},
		"heartbeatTTL under a second":       {set(base(), "0.5s", "spec", "federation", "heartbeatTTL"), "heartbeatTTL must be at least 1s"},
		"heartbeatTTL in words":             {set(base(), "2 days", "spec", "federation", "heartbeatTTL"), "heartbeatTTL is a Kusto timespan: units such as 2d, 4h30m"},
		"partitioning value too long":       {set(base(), map[string]any{"geo": strings.Repeat("v", 257)}, "spec", "federation", "partitioning"), "spec.federation.partitioning.geo"},
		"partitioning key with a newline":   {set(base(), map[string]any{"ge\no": "EU"}, "spec", "federation", "partitioning"), "partitioning keys must be 1 to 63 characters without control characters"},
		"target endpoint not https":         {set(set(base(), "Partition", "spec", "role"), []any{map[string]any{"endpoint": "http://hub", "heartbeatDatabase": "F", "heartbeatTable": "H"}}, "spec", "federation", "federatedTargets"), "federatedTargets"},
		"managedIdentityClientId":           {set(base(), []any{map[string]any{"endpoint": "https://hub", "heartbeatDatabase": "F", "heartbeatTable": "H", "managedIdentityClientId": "me"}}, "spec", "federation", "federatedTargets"), "managedIdentityClientId"},
		"provision missing tier":            {withProvision(func(p map[string]any) { delete(p, "tier") }), "unless provision.auto is true"},
		"database principal role enum": {withProvision(func(p map[string]any) {
			p["databasePrincipals"] = []any{map[string]any{"clientId": "11111111-1111-1111-1111-111111111111", "tenantId": "33333333-3333-3333-3333-333333333333", "role": "Owner"}}
		}), "spec.provision.databasePrincipals[0].role"},
		"provision tier enum":     {withProvision(func(p map[string]any) { p["tier"] = "Premium" }), "spec.provision.tier"},
		"subscriptionId format":   {withProvision(func(p map[string]any) { p["subscriptionId"] = "not-a-guid" }), "spec.provision.subscriptionId"},
		"autoScaleMin above max":  {withProvision(func(p map[string]any) { p["autoScaleMin"] = int64(8); p["autoScaleMax"] = int64(4) }), "autoScaleMin must not exceed"},
		"tier does not match sku": {withProvision(func(p map[string]any) { p["tier"] = "Basic" }), "provision.tier must be Basic for the Dev(No SLA)"},
		"capacity with autoScale": {withProvision(func(p map[string]any) { p["capacity"] = int64(3); p["autoScale"] = true }), "provision.capacity and provision.autoScale exclude each other"},
		"capacity below Standard": {withProvision(func(p map[string]any) { p["capacity"] = int64(1) }), "at least 2 for a Standard one"},
		"Azure cluster name":      {set(withProvision(func(map[string]any) {}), "Valid-01", "spec", "clusterName"), "spec.clusterName"},
		"deletionPolicy enum":     {set(base(), "Retain", "spec", "deletionPolicy"), "spec.deletionPolicy"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.obj.SetNamespace(ns)
			err := env.Kube.Create(context.Background(), tc.obj, client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("apply = %v, want a rejection naming %q", err, tc.want)
			}
		})
	}

	// An ADXMon's autoscaler settings are judged at apply time too.
	monitor := func(change func(spec map[string]any)) *unstructured.Unstructured {
		u := xr(t, `
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXMon
metadata: {name: invalid-autoscaler}
spec:
  namespace: invalid-autoscaler
  adx:
    clusters:
    - {name: adopted, endpoint: "https://adopted.westeurope.kusto.windows.net"}
  ingestor: {}
  autoscaler:
    enabled: true
    ingestor:
      metrics:
      - {type: QueueLength, scaleUpThreshold: 1000, scaleDownThreshold: 100, weight: 1}
`)
		change(u.Object["spec"].(map[string]any))
		return u
	}
	scaler := func(spec map[string]any) map[string]any { return spec["autoscaler"].(map[string]any) }
	for name, tc := range map[string]struct {
		obj  *unstructured.Unstructured
		want string
	}{
		"MemoryUsage without a memory limit": {monitor(func(spec map[string]any) {
			scaler(spec)["ingestor"].(map[string]any)["metrics"] = []any{map[string]any{"type": "MemoryUsage", "scaleUpThreshold": int64(85), "scaleDownThreshold": int64(40), "weight": int64(1)}}
		}), "set spec.ingestor.resources.limits.memory"},
		"an ADX metric for the ingestor": {monitor(func(spec map[string]any) {
			scaler(spec)["ingestor"].(map[string]any)["metrics"] = []any{map[string]any{"type": "CPUUsage", "scaleUpThreshold": int64(80), "scaleDownThreshold": int64(30), "weight": int64(1)}}
		}), "spec.autoscaler.ingestor scales on QueueLength, MemoryUsage, or Custom with a series"},
		"ADX scaling without a provisioned cluster": {monitor(func(spec map[string]any) {
			scaler(spec)["adx"] = map[string]any{"metrics": []any{map[string]any{"type": "CPUUsage", "scaleUpThreshold": int64(80), "scaleDownThreshold": int64(30), "weight": int64(1)}}}
		}), "scales the ADX clusters the stack provisions"},
		"a bad schedule": {monitor(func(spec map[string]any) { scaler(spec)["schedule"] = "every 5 minutes" }), "spec.autoscaler.schedule"},
	} {
		t.Run(name, func(t *testing.T) {
			err := env.Kube.Create(context.Background(), tc.obj, client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("apply = %v, want a rejection naming %q", err, tc.want)
			}
		})
	}

	// A Component's typed defaults and a StatusCollector's expressions,
	// the same way: refused at apply time.
	for name, tc := range map[string]struct {
		manifest, want string
	}{
		"an int parameter with a default that is not a number": {`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Component
metadata: {name: invalid-typed}
spec:
  type: app
  sources: [{repoURL: "https://charts.example.org", chart: c, targetRevision: "1.0.0"}]
  parameters: [{name: replicas, type: int, default: three}]
`, "the default of an int parameter is a whole number"},
		"observability on a port out of range": {`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Component
metadata: {name: invalid-port}
spec:
  type: app
  sources: [{repoURL: "https://charts.example.org", chart: c, targetRevision: "1.0.0"}]
  observability: {podMonitor: true, metricsPort: 70000}
`, "spec.observability.metricsPort"},
		"observability with a pod label value Kubernetes refuses": {`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Component
metadata: {name: invalid-label}
spec:
  type: app
  sources: [{repoURL: "https://charts.example.org", chart: c, targetRevision: "1.0.0"}]
  observability: {podLabels: {app: "not a value"}}
`, "spec.observability.podLabels.app"},
		"an ADXMon cluster to provision without a region, and without auto": {`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXMon
metadata: {name: invalid-provision}
spec:
  adx: {clusters: [{provision: {subscriptionId: 00000000-0000-0000-0000-000000000000, resourceGroup: rg}}]}
`, "provision needs subscriptionId, resourceGroup and region, unless provision.auto is true"},
		"an ingestor Service with source ranges that is no load balancer": {`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXMon
metadata: {name: invalid-exposure}
spec:
  ingestor: {service: {type: ClusterIP, loadBalancerSourceRanges: [10.0.0.0/8]}}
`, "loadBalancerSourceRanges apply to a LoadBalancer Service only"},
		"an ingestor source range that is no CIDR": {`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXMon
metadata: {name: invalid-range}
spec:
  ingestor: {service: {type: LoadBalancer, loadBalancerSourceRanges: [10.0.0.0]}}
`, "loadBalancerSourceRanges are CIDRs"},
		"a CA to verify an ingestor that speaks plain http": {`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXMon
metadata: {name: invalid-ca}
spec:
  collector:
    ingestorEndpoint: http://ingestor.adx-mon.svc.cluster.local
    ingestorCA: {name: ingestor-ca, key: ca.crt}
`, "ingestorCA verifies the ingestor's certificate: the ingestorEndpoint must be https://"},
		"a CA to verify the stack's own ingestor, which serves adx-mon's certificate": {`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXMon
metadata: {name: invalid-own-ca}
spec:
  adx: {clusters: [{name: adopted, endpoint: "https://adopted.westeurope.kusto.windows.net"}]}
  ingestor: {}
  collector: {ingestorCA: {name: ingestor-ca, key: ca.crt}}
`, "set spec.ingestor.tls"},
		"a GKE subnet range that is no network": {`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: invalid-subnet, namespace: default}
spec:
  targets: [{name: app, cluster: {type: gke, zone: us-central1-a, network: {subnetCidr: 10.0.0.1/20}}, components: [{app: a}]}]
  workflow: {template: t}
`, "an IPv4 network in CIDR notation, such as 10.0.0.0/20"},
		"ranges for the project's default network": {`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: invalid-default-network, namespace: default}
spec:
  targets: [{name: app, cluster: {type: gke, zone: us-central1-a, network: {dedicated: false, podsCidr: 10.4.0.0/14}}, components: [{app: a}]}]
  workflow: {template: t}
`, "the ranges apply to a dedicated network only"},
		"a network on a hub target": {`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: invalid-hub-network, namespace: default}
spec:
  targets: [{name: hub, cluster: {type: hub, network: {dedicated: true}}, components: [{app: a}]}]
  workflow: {template: t}
`, "zone, nodeCount, machineType, diskSizeGb and network do not apply"},
		"a ClusterPlacement of a namespaced kind": {`
apiVersion: placement.fleetplane.io/v1alpha1
kind: ClusterPlacement
metadata: {name: invalid-namespaced}
spec:
  objects: [{apiVersion: apps/v1, kind: Deployment, names: [web]}]
  clusters: {}
`, "this kind is namespaced; a ClusterPlacement places cluster-scoped objects"},
		"a Placement of a cluster-scoped kind": {`
apiVersion: placement.fleetplane.io/v1alpha1
kind: Placement
metadata: {name: invalid-cluster-scoped, namespace: default}
spec:
  objects: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, names: [admin]}]
  clusters: {}
`, "this kind is cluster-scoped"},
		"a Placement object selected by neither names nor labels": {`
apiVersion: placement.fleetplane.io/v1alpha1
kind: Placement
metadata: {name: invalid-selector, namespace: default}
spec:
  objects: [{apiVersion: v1, kind: ConfigMap}]
  clusters: {}
`, "an object selector names the objects (names) or selects them by label (matchLabels); it has neither"},
		"an ADXCluster whose provision lacks the location, and says nothing of auto": {`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: invalid-partial, namespace: default}
spec:
  clusterName: partial01
  provision: {subscriptionId: 00000000-0000-0000-0000-000000000000, resourceGroup: rg, skuName: Standard_E8ads_v5, tier: Standard}
`, "spec.provision needs subscriptionId, resourceGroup, location, skuName and tier, unless provision.auto is true"},
		"a StatusCollector expression with both op and cel": {`
apiVersion: placement.fleetplane.io/v1alpha1
kind: StatusCollector
metadata: {name: invalid-expression}
spec:
  select: [{name: wec, def: {op: Path, path: "$.inventory.name", cel: inventory.name}}]
`, "either op (the operator tree) or cel"},
	} {
		t.Run(name, func(t *testing.T) {
			err := env.Kube.Create(context.Background(), xr(t, tc.manifest), client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("apply = %v, want a rejection naming %q", err, tc.want)
			}
			// The reason alone: no CEL evaluation error beside it, and
			// not the message of the opposite mistake.
			if err != nil && (strings.Contains(err.Error(), "no such key") || (strings.Contains(tc.want, "it has neither") && strings.Contains(err.Error(), "not both"))) {
				t.Errorf("apply = %v: more than the reason", err)
			}
		})
	}

	t.Run("identity type cannot switch", func(t *testing.T) {
		u := withProvision(func(map[string]any) {})
		u.SetName("identity-switch")
		u.SetNamespace(ns)
		if err := env.Kube.Create(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"provision":{"userAssignedIdentities":["/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ingest"]}}}`))
		if err := env.Kube.Patch(context.Background(), u, patch); err == nil || !strings.Contains(err.Error(), "cannot switch between empty (system-assigned identity) and non-empty") {
			t.Errorf("update = %v, want the identity type switch refused", err)
		}
	})

	t.Run("clusterName is immutable", func(t *testing.T) {
		u := base()
		u.SetNamespace(ns)
		if err := env.Kube.Create(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		// A patch, as kubectl apply sends, so Crossplane's own writes to the
		// XR cannot turn the answer into a conflict.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"clusterName":"other01"}}`))
		if err := env.Kube.Patch(context.Background(), u, patch); err == nil || !strings.Contains(err.Error(), "clusterName is immutable") {
			t.Errorf("update = %v, want clusterName is immutable", err)
		}
	})
}

// TestDeletion is scenario 5: deleting an ADXCluster orphans its Azure
// resources unless it says deletionPolicy: Delete, and even then a
// resource group that was there before stays.
func TestDeletion(t *testing.T) {
	ns := namespace(t)
	hub := kusto(t, "FleetDiscovery")
	for _, tc := range []struct {
		name, policy, cluster string
		groupExisted          bool
		wantGroup, want       string
	}{
		{"Orphan", "Orphan", "keep01", false, "exists", "exists"},
		{"Delete", "Delete", "drop01", false, "deleted", "deleted"},
		{"Delete in a resource group found in Azure", "Delete", "inrg01", true, "exists", "deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.groupExisted {
				env.Azure.Exists("ResourceGroup", "rg-"+tc.cluster)
			}
			name := tc.cluster
			apply(t, xr(t, provisionedPartitionXR(ns, name, tc.cluster, hub.URL, tc.policy)))
			eventually(t, 3*time.Minute, "databases ready", func() (bool, string) {
				c := composed(t, ns, name)
				return c["Database/Metrics"] == "True" && c["Database/Logs"] == "True", fmt.Sprintf("%v", c)
			})
			origin := map[bool]string{false: "Created", true: "Existing"}[tc.groupExisted]
			eventually(t, time.Minute, "the resource group's origin in status", func() (bool, string) {
				got, _, _ := unstructured.NestedString(getXR(t, ns, name).Object, "status", "appliedProvisionState", "resourceGroupOrigin")
				return got == origin, got
			})
			if tc.policy == "Delete" {
				// Delete reaches a resource once the XR has seen that it
				// created it (crossplane-runtime's external-create-succeeded),
				// in the composition after its creation: a resource that is
				// Ready may not have it yet (docs/adxcluster.md).
				eventually(t, time.Minute, "Delete in the management policies of what the XR created", func() (bool, string) {
					p := managementPolicies(t, ns, name)
					return slices.Contains(p["Cluster/"+tc.cluster], "Delete") && slices.Contains(p["Database/Metrics"], "Delete") &&
						slices.Contains(p["Database/Logs"], "Delete"), fmt.Sprintf("%v", p)
				})
			}
			x := getXR(t, ns, name)
			if err := env.Kube.Delete(context.Background(), x, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
				t.Fatal(err)
			}
			eventually(t, 2*time.Minute, "the ADXCluster and its managed resources gone", func() (bool, string) {
				return getXR(t, ns, name) == nil && len(composedOf(t, ns, name)) == 0, fmt.Sprintf("left: %v", composedOf(t, ns, name))
			})
			for _, r := range []struct{ kind, ext, want string }{{"ResourceGroup", "rg-" + tc.cluster, tc.wantGroup}, {"Cluster", tc.cluster, tc.want}, {"Database", tc.cluster + "/Metrics", tc.want}} {
				if got := env.Azure.State(r.kind, r.ext); got != r.want {
					t.Errorf("Azure %s %s is %q after deleting the ADXCluster, want %q", r.kind, r.ext, got, r.want)
				}
			}
		})
	}
}

// composedOf lists the managed resources that still name an XR as their
// composite.
func composedOf(t *testing.T, ns, xrName string) []string {
	t.Helper()
	var left []string
	for _, gvk := range []struct{ api, kind string }{
		{"azure.m.upbound.io/v1beta1", "ResourceGroupList"}, {"kusto.azure.m.upbound.io/v1beta1", "ClusterList"},
		{"kusto.azure.m.upbound.io/v1beta1", "DatabaseList"}, {"kusto.m.fleetplane.io/v1alpha1", "HeartbeatList"},
	} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(gvk.api)
		l.SetKind(gvk.kind)
		if err := env.Kube.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{"crossplane.io/composite": xrName}); err != nil {
			t.Fatal(err)
		}
		for _, i := range l.Items {
			left = append(left, i.GetKind()+"/"+i.GetName())
		}
	}
	return left
}

// providerPodKilled: the provider's pod goes, with no grace (as a node
// lost, or an eviction that cannot wait), while the hub holds the
// federation script a new partition table caused. The Deployment's next
// pod carries on: the new table's function reaches the hub, every other
// function and every member stay, each once.
func providerPodKilled(t *testing.T, hub, part *kustoserver.Server, endpoints []string) {
	t.Helper()
	ctx := t.Context()
	before := hub.Functions("Metrics")
	hits := make(chan string, 1)
	if err := hub.InjectFault(kustoserver.Fault{Match: `create-or-alter function`, Delay: 5 * time.Minute, Hit: hits}); err != nil {
		t.Fatal(err)
	}
	support.KustoExec(t, part, "Metrics", ".create table ['disk'] (['v']:real)")
	select {
	case <-hits:
	case <-time.After(time.Minute):
		hub.ClearFaults()
		t.Fatal("the hub never held the federation script")
	}
	pod, err := env.PackagePod(ctx, environment.ProviderName)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Kube.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	hub.ClearFaults()
	eventually(t, 3*time.Minute, "function disk on the hub, from the provider's next pod", func() (bool, string) {
		fns := hub.Functions("Metrics")
		_, ok := fns["disk"]
		return ok && len(fns) == len(before)+1, fmt.Sprintf("%d functions (%d before)", len(fns), len(before))
	})
	t.Logf("the new table's function reached the hub %s after the pod was killed", time.Since(killed).Round(100*time.Millisecond))
	for name := range before {
		if _, ok := hub.Functions("Metrics")[name]; !ok {
			t.Errorf("function %s is gone", name)
		}
	}
	if got := members(hub, "Metrics"); strings.Join(got, ",") != strings.Join(endpoints, ",") {
		t.Errorf("members %v, want %v", got, endpoints)
	}
	// The held script died with the pod: its connection closed unanswered.
	eventually(t, time.Minute, "the held script abandoned by the killed pod", func() (bool, string) {
		for _, c := range hub.Commands() {
			if c.Status == 499 && strings.Contains(c.Text, "create-or-alter function") {
				return true, ""
			}
		}
		return false, "no abandoned script recorded"
	})
	if next, err := env.PackagePod(ctx, environment.ProviderName); err != nil || next.UID == pod.UID {
		t.Errorf("the provider's pod after the kill: %v (the killed one was %s)", err, pod.Name)
	}
}
