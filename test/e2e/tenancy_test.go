package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	placementfn "github.com/fleetplane/fleetplane/function/placement"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/standin"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// teamConfig is a team's policy: the namespace labelled
// fleetplane.io/policy=<name> is governed by it.
func teamConfig(name string, spec v1alpha1.ClusterProviderConfigSpec) *v1alpha1.ClusterProviderConfig {
	spec.Credentials = v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}
	spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"fleetplane.io/policy": name}}
	return &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// teamClient is a client of a ServiceAccount of ns bound to the tenant
// ClusterRole fleetplane ships (package/rbac/tenant.yaml), and nothing
// else: a team's namespaced rights on a shared control plane.
func teamClient(t *testing.T, ns string) client.Client {
	t.Helper()
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleetplane:tenant"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "team"}}}
	return serviceAccountClient(t, ns, "team", binding)
}

// serviceAccountClient creates objs (the ServiceAccount's grants) and
// returns a client acting as ServiceAccount sa of ns.
func serviceAccountClient(t *testing.T, ns, sa string, objs ...client.Object) client.Client {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if err := env.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	kc, err := env.CP.ServiceAccountKubeconfig(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Kube.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// as applies manifests as a team would, with its own client.
func as(t *testing.T, c client.Client, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatalf("the team applies %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// refused waits until an XR reports that its policy does not grant what
// it asks, naming the grant.
func refused(t *testing.T, apiVersion, kind, ns, name, condType string, want ...string) {
	t.Helper()
	refusedFor(t, "NotGranted", apiVersion, kind, ns, name, condType, want...)
}

// refusedFor waits until an XR reports a refusal with reason, its
// message saying all of want.
func refusedFor(t *testing.T, reason, apiVersion, kind, ns, name, condType string, want ...string) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%s %s refused (%s): %s", kind, name, reason, strings.Join(want, ", ")), func() (bool, string) {
		x := get(t, apiVersion, kind, ns, name)
		if x == nil {
			return false, "not found"
		}
		s, r, msg := condition(x, condType)
		if s != "False" || r != reason {
			return false, s + "/" + r + ": " + msg
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				return false, msg
			}
		}
		return true, msg
	})
}

// TestTenancy is two teams on one control plane, each with namespaced
// rights only (package/rbac/tenant.yaml) and a policy of its own.
// tenancy-b, granted, provisions a cluster in its resource group, places
// its workload on its cluster and runs its experiment on the hub.
// tenancy-a then tries what the first review found it could do with the
// platform's identities: provision into tenancy-b's resource group, take
// over tenancy-b's Azure cluster by its name, deliver to tenancy-b's
// cluster, run a privileged DaemonSet there, deploy onto the hub, create
// other providers' managed resources. Each is refused with a condition
// naming the missing grant, and nothing of tenancy-b's changes.
func TestTenancy(t *testing.T) {
	ctx := context.Background()
	const a, b = "tenancy-a", "tenancy-b"
	suffix := fmt.Sprintf("%x", time.Now().UnixNano()%0xffffff)
	clusterB := "tenancyb" + suffix

	// The admin's part: a namespace and a policy per team, the tenant
	// role, a cluster of the inventory for tenancy-b only.
	if err := env.CP.ApplyRBAC(ctx, filepath.Join(support.Root(), "package", "rbac", "tenant.yaml")); err != nil {
		t.Fatal(err)
	}
	// The Kusto data plane: tenancy-b's hub and partition, tenancy-a's
	// partition; each policy grants its own, tenancy-b's hub as a hub.
	hubB, partB, partA := kusto(t, "FleetDiscovery", "Metrics"), kusto(t, "Metrics"), kusto(t, "Metrics")
	support.KustoExec(t, partB, "Metrics", ".create table ['cpu'] (['v']:real)")
	support.KustoExec(t, partA, "Metrics", ".create table ['loot'] (['v']:real)")
	configB := teamConfig(b, v1alpha1.ClusterProviderConfigSpec{
		Kusto: &v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{
			{Endpoint: partB.URL}, {Endpoint: hubB.URL, Databases: []string{"FleetDiscovery", "Metrics"}, Hub: &v1alpha1.KustoHubGrant{}},
		}, Quota: environment.LocalKustoQuota()},
		Azure: &v1alpha1.AzurePolicy{Provisioning: []v1alpha1.AzureProvisioning{{
			SubscriptionID: environment.TestSubscription, ResourceGroups: []string{"team-b-*"},
			ProviderConfigRef: v1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
		}}},
		ArgoCD:      &v1alpha1.ArgoCDPolicy{Namespace: environment.ArgoCDNamespace, Project: "default"},
		Workflows:   &v1alpha1.WorkflowsPolicy{Namespace: environment.WorkflowsNamespace, AllowedTemplates: []string{"tenancy-validation"}},
		Experiments: &v1alpha1.ExperimentsPolicy{AllowHubTargets: true},
		Placement: &v1alpha1.PlacementPolicy{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
			Kinds:           []string{"apps/Deployment", "/ConfigMap"}, Properties: []string{"region"},
		},
	})
	configA := teamConfig(a, v1alpha1.ClusterProviderConfigSpec{
		Kusto: &v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{{Endpoint: partA.URL}}, Quota: environment.LocalKustoQuota()},
		Azure: &v1alpha1.AzurePolicy{Provisioning: []v1alpha1.AzureProvisioning{{
			SubscriptionID: environment.TestSubscription, ResourceGroups: []string{"team-a-*"},
			ProviderConfigRef: v1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
			// The take-over pushes a large SKU and capacity onto the
			// cluster it names: a quota that allows them, so that what
			// stops it is the proof of creation, not the quota.
			Quota: &v1alpha1.ADXQuota{SKUs: []string{"*"}, MaxCapacity: ptr.To[int32](16)},
		}}},
		Placement: &v1alpha1.PlacementPolicy{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, Kinds: []string{"/ConfigMap"},
		},
	})
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a, Labels: map[string]string{"fleetplane.io/policy": a}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b, Labels: map[string]string{"fleetplane.io/policy": b}}},
		configA, configB,
	} {
		if err := env.Kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Kube.Delete(context.Background(), o) })
	}
	applyComponents(t)
	workflowTemplate(t, "tenancy-validation", "Succeeded")
	wec, err := env.StartWEC(ctx, "tenancy-b-prod", map[string]string{"team": "b", "region": "westeurope"}, map[string]string{"token": "s3cret-of-the-admin"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wec.Stop)
	teamA, teamB := teamClient(t, a), teamClient(t, b)

	// tenancy-b, granted: all three at once.
	start := time.Now()
	as(t, teamB,
		xr(t, fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: metrics, namespace: %s}
spec:
  clusterName: %s
  provision: {subscriptionId: %s, resourceGroup: team-b-prod, location: westeurope, skuName: Standard_E8ads_v5, tier: Standard}
  databases: [{databaseName: Metrics, telemetryType: Metrics}]
`, b, clusterB, environment.TestSubscription)),
		xr(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: tenancy-b, annotations: {control.kubestellar.io/expand-templates: "true"}}
data: {region: "{{.region}}"}
`),
		xr(t, `
apiVersion: placement.fleetplane.io/v1alpha1
kind: Placement
metadata: {name: settings, namespace: tenancy-b}
spec:
  objects: [{apiVersion: v1, kind: ConfigMap, names: [settings]}]
  clusters: {matchLabels: {team: b}}
`),
		xr(t, `
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: smoke, namespace: tenancy-b}
spec:
  targets:
  - name: hub
    cluster: {type: hub}
    components: [{app: gateway-demo, params: {route.hostname: smoke.tenancy-b.example.com}}]
  workflow: {template: tenancy-validation, completion: {mode: workflow}}
`))
	eventually(t, 3*time.Minute, "tenancy-b's cluster provisioned in its resource group", func() (bool, string) {
		s, r, msg := condition(getXR(t, b, "metrics"), "adxcluster.fleetplane.io")
		return s == "True" && r == "ClusterReady", r + ": " + msg
	})
	eventually(t, 3*time.Minute, "tenancy-b's ConfigMap on its cluster, filled in", func() (bool, string) {
		cm := getIn(wec.Kube, "v1", "ConfigMap", b, "settings")
		if cm == nil {
			return false, "not there"
		}
		region, _, _ := unstructured.NestedString(cm.Object, "data", "region")
		return region == "westeurope", "region " + region
	})
	eventually(t, 3*time.Minute, "tenancy-b's experiment Complete", func() (bool, string) {
		x := get(t, experimentAPI, "Experiment", b, "smoke")
		p, msg := phaseOf(x)
		return p == "Complete", p + ": " + msg
	})
	t.Logf("tenancy-b provisioned, placed and ran its experiment in %s", time.Since(start).Round(100*time.Millisecond))

	// Granted Experiments, but not for a year: its policy sets no quota,
	// so the defaults hold (a week at most).
	as(t, teamB, xr(t, `
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: for-a-year, namespace: tenancy-b}
spec:
  ttlDays: 365
  targets: [{name: hub, cluster: {type: hub}}]
  workflow: {template: tenancy-validation}
`))
	refusedFor(t, "QuotaExceeded", experimentAPI, "Experiment", b, "for-a-year", "experiment.fleetplane.io",
		"spec.ttlDays 365 is longer than the 7 days an Experiment may live (spec.experiments.quota.maxTTLDays)")
	if c := composedBy(t, experimentAPI, "Experiment", b, "for-a-year"); len(c) != 0 {
		t.Errorf("an Experiment over its quota composed %v", keysOf(c))
	}
	// Its hub target went to its own namespace on the hub.
	app := composedBy(t, experimentAPI, "Experiment", b, "smoke")["application-hub"]
	if dest, _, _ := unstructured.NestedString(app.Object, "spec", "forProvider", "manifest", "spec", "destination", "namespace"); dest != b {
		t.Errorf("tenancy-b's hub target deploys to namespace %q, not its own", dest)
	}

	// What tenancy-a must not change: tenancy-b's cluster in Azure, its
	// composed resources, its copy on its cluster.
	appliedB := env.Azure.Applied(standin.Cluster.Kind, clusterB)
	if appliedB == nil {
		t.Fatalf("Azure holds no cluster %s", clusterB)
	}
	specsB := composedSpecs(t, b)
	cmB := getIn(wec.Kube, "v1", "ConfigMap", b, "settings")

	// tenancy-a, granted only its own resource groups and clusters.
	start = time.Now()
	as(t, teamA,
		// Provision into tenancy-b's resource group.
		xr(t, fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: intruder, namespace: %s}
spec:
  clusterName: tenancyaintruder%s
  provision: {subscriptionId: %s, resourceGroup: team-b-prod, location: westeurope, skuName: Standard_E8ads_v5, tier: Standard}
`, a, suffix, environment.TestSubscription)),
		// Name tenancy-b's cluster from a resource group of its own, with
		// another SKU and identity: a take-over if it were updated.
		xr(t, fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: takeover, namespace: %s}
spec:
  clusterName: %s
  provision: {subscriptionId: %s, resourceGroup: team-a-prod, location: westeurope, skuName: Standard_L32as_v3, tier: Standard, capacity: 9}
`, a, clusterB, environment.TestSubscription)),
		// Deliver a privileged DaemonSet, and a ConfigMap copying the
		// admin's properties, to tenancy-b's cluster.
		xr(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: loot, namespace: tenancy-a, annotations: {control.kubestellar.io/expand-templates: "true"}}
data: {token: "{{.token}}"}
`),
		xr(t, `
apiVersion: placement.fleetplane.io/v1alpha1
kind: Placement
metadata: {name: node-agent, namespace: tenancy-a}
spec:
  objects:
  - {apiVersion: apps/v1, kind: DaemonSet, names: [node-agent]}
  - {apiVersion: v1, kind: ConfigMap, names: [loot]}
  clusters: {matchLabels: {team: b}}
`),
		// Deploy onto the hub.
		xr(t, `
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: onto-the-hub, namespace: tenancy-a}
spec:
  targets:
  - name: hub
    cluster: {type: hub}
    components: [{app: gateway-demo, params: {route.hostname: x.example.com}}]
  workflow: {template: tenancy-validation, completion: {mode: workflow}}
`))
	refused(t, "adx.fleetplane.io/v1alpha1", "ADXCluster", a, "intruder", "adxcluster.fleetplane.io",
		"ClusterProviderConfig tenancy-a grants no provisioning in resource group team-b-prod", "resourceGroups allows team-a-*")
	refused(t, placementAPI, "Placement", a, "node-agent", "Delivered",
		"1 inventory cluster matches spec.clusters.matchLabels {team=b}, but ClusterProviderConfig tenancy-a does not let this namespace deliver to them (spec.placement.clusterSelector {team=a})")
	refused(t, experimentAPI, "Experiment", a, "onto-the-hub", "experiment.fleetplane.io",
		"ClusterProviderConfig tenancy-a grants no Experiments")
	// Where users look: the refusal, its reason and the condition that
	// tells the whole story are in crossplane beta trace's STATUS (the
	// XR's Synced, which a refusal fails), the story itself with -o wide.
	for _, x := range []struct{ kind, name, cond string }{
		{"adxcluster", "intruder", "adxcluster.fleetplane.io"},
		{"experiment", "onto-the-hub", "experiment.fleetplane.io"},
	} {
		eventually(t, time.Minute, "crossplane beta trace shows "+x.name+" refused", func() (bool, string) {
			out, err := env.Trace(x.kind, x.name, a)
			if err != nil {
				return false, err.Error() + ": " + out
			}
			return strings.Contains(out, "ReconcileError: ") && strings.Contains(out, "(NotGranted: see condition "+x.cond+")"), out
		})
	}
	wide, err := env.Trace("adxcluster", "intruder", a, "-o", "wide")
	if err != nil || !strings.Contains(wide, "ClusterProviderConfig tenancy-a grants no provisioning in resource group team-b-prod") {
		t.Errorf("crossplane beta trace -o wide does not tell why intruder is refused (%v):\n%s", err, wide)
	}
	t.Logf("crossplane beta trace -o wide of a refused ADXCluster:\n%s", wide)
	eventually(t, 2*time.Minute, "the take-over reports the cluster it found, and goes no further", func() (bool, string) {
		s, r, msg := condition(getXR(t, a, "takeover"), "adxcluster.fleetplane.io")
		return s == "False" && r == "AlreadyExists" && strings.Contains(msg, "Azure already has Cluster "+clusterB+", which this ADXCluster did not create"), r + ": " + msg
	})
	t.Logf("tenancy-a refused in %s", time.Since(start).Round(100*time.Millisecond))
	for _, x := range []struct{ api, kind, name string }{
		{"adx.fleetplane.io/v1alpha1", "ADXCluster", "intruder"},
		{experimentAPI, "Experiment", "onto-the-hub"},
		{placementAPI, "Placement", "node-agent"},
	} {
		if c := composedBy(t, x.api, x.kind, a, x.name); len(c) != 0 {
			t.Errorf("%s %s composed %v", x.kind, x.name, keysOf(c))
		}
	}
	// The take-over's cluster only observes what it found (its own
	// resource group, which it created, it may keep in step).
	found := composedBy(t, "adx.fleetplane.io/v1alpha1", "ADXCluster", a, "takeover")["cluster"]
	if p, _, _ := unstructured.NestedStringSlice(found.Object, "spec", "managementPolicies"); strings.Join(p, ",") != "Observe,Create" {
		t.Errorf("the take-over's Cluster %s may %v", found.GetName(), p)
	}

	// Other providers' managed resources, and what only the function
	// composes, are not the team's to make.
	for _, o := range []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object", "metadata": map[string]any{"name": "x", "namespace": a},
			"spec": map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x"}}}}}},
		{Object: map[string]any{"apiVersion": "kusto.azure.m.upbound.io/v1beta1", "kind": "Cluster", "metadata": map[string]any{"name": "x", "namespace": a},
			"spec": map[string]any{"forProvider": map[string]any{"location": "westeurope"}}}},
		{Object: map[string]any{"apiVersion": "placement.m.fleetplane.io/v1alpha1", "kind": "ReportedState", "metadata": map[string]any{"name": "x", "namespace": a},
			"spec": map[string]any{"forProvider": map[string]any{"placement": "node-agent", "cluster": "c", "object": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "loot"}, "status": map[string]any{}}}}},
	} {
		if err := teamA.Create(ctx, o); !kerrors.IsForbidden(err) {
			t.Errorf("tenancy-a creates a %s: %v, want forbidden", o.GetKind(), err)
		}
	}

	// Nothing of tenancy-b's changed while tenancy-a tried.
	if got := env.Azure.Applied(standin.Cluster.Kind, clusterB); fmt.Sprint(got) != fmt.Sprint(appliedB) {
		t.Errorf("tenancy-b's cluster in Azure changed:\nbefore %v\nafter  %v", appliedB, got)
	}
	if n, ok := env.Azure.Capacity(clusterB); !ok || n == 9 {
		t.Errorf("tenancy-b's cluster capacity %d (%v)", n, ok)
	}
	if got := composedSpecs(t, b); !maps.Equal(got, specsB) {
		t.Errorf("tenancy-b's composed resources changed:\nbefore %v\nafter  %v", specsB, got)
	}
	if cm := getIn(wec.Kube, "v1", "ConfigMap", b, "settings"); cm == nil || cm.GetResourceVersion() != cmB.GetResourceVersion() {
		t.Errorf("tenancy-b's copy on its cluster changed")
	}
	if getIn(wec.Kube, "apps/v1", "DaemonSet", a, "node-agent") != nil || getIn(wec.Kube, "v1", "ConfigMap", a, "loot") != nil {
		t.Error("tenancy-a's objects reached tenancy-b's cluster")
	}

	t.Run("Kusto: tenancy-a reaches nothing of tenancy-b's", func(t *testing.T) {
		kustoDataPlane(t, teamA, teamB, a, b, hubB, partB, partA)
	})
	// The namespace tenancy-b's copy lives in says whose it is and
	// enforces the Pod Security Standard its policy sets.
	nsB := getIn(wec.Kube, "v1", "Namespace", "", b)
	if l := nsB.GetLabels(); l[placementfn.LabelNamespace] != b || l["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("tenancy-b's namespace on its cluster: labels %v", l)
	}
}

// kustoDataPlane: tenancy-b federates its partition into its hub; then
// tenancy-a, granted only its own partition, tries with provider-
// fleetplane's resources what the third review found: a Table on
// tenancy-b's heartbeat table carrying the "created here" annotation an
// earlier release trusted (to merge into it and drop it), a Heartbeat
// forging a partition row into tenancy-b's hub, a Federation made to
// squat the hub, and an ADXCluster heartbeating there. Each is refused
// naming the missing grant; tenancy-b's tables, groups and functions are
// as they were, no row of tenancy-a's is in its hub, and its own Table,
// Heartbeat and Federation keep working.
func kustoDataPlane(t *testing.T, teamA, teamB client.Client, a, b string, hubB, partB, partA *kustoserver.Server) {
	t.Helper()
	ctx := context.Background()
	as(t, teamB, xr(t, hubXR(b, "hub", hubB.URL)), xr(t, partitionXR(b, "eu", partB.URL, hubB.URL)))
	eventually(t, 3*time.Minute, "tenancy-b's partition federated into its hub", func() (bool, string) {
		got := members(hubB, "Metrics")
		_, fn := hubB.Functions("Metrics")["cpu"]
		return fn && strings.Join(got, ",") == partB.URL, fmt.Sprintf("members %v, function cpu %v", got, fn)
	})
	snapshot := func() string {
		return fmt.Sprint(hubB.Tables("FleetDiscovery"), hubB.Tables("Metrics"), hubB.EntityGroups("Metrics"), hubB.Functions("Metrics"))
	}
	before := snapshot()

	const kustoAPI = "kusto.m.fleetplane.io/v1alpha1"
	as(t, teamA,
		xr(t, fmt.Sprintf(`
apiVersion: %s
kind: Table
metadata: {name: squat, namespace: %s, annotations: {kusto.fleetplane.io/created-table: FleetDiscovery.Heartbeats}}
spec:
  providerConfigRef: {kind: ClusterProviderConfig, name: %s}
  managementPolicies: ["*"]
  forProvider: {endpoint: '%s', database: FleetDiscovery, table: Heartbeats, columns: [{name: Injected, type: string}]}
`, kustoAPI, a, a, hubB.URL)),
		xr(t, fmt.Sprintf(`
apiVersion: %s
kind: Heartbeat
metadata: {name: forged, namespace: %s}
spec:
  providerConfigRef: {kind: ClusterProviderConfig, name: %s}
  forProvider:
    endpoint: '%s'
    interval: 2s
    targets: [{endpoint: '%s', heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}]
`, kustoAPI, a, a, partA.URL, hubB.URL)),
		xr(t, fmt.Sprintf(`
apiVersion: %s
kind: Federation
metadata: {name: squat, namespace: %s}
spec:
  providerConfigRef: {kind: ClusterProviderConfig, name: %s}
  forProvider: {endpoint: '%s', heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats, heartbeatTTL: 1s, interval: 2s, allowInsecureEndpoints: true}
`, kustoAPI, a, a, hubB.URL)),
		xr(t, partitionXR(a, "forged", partA.URL, hubB.URL)))

	notGranted := "ClusterProviderConfig " + a + " does not grant Kusto endpoint " + hubB.URL
	for _, kind := range []string{"Table", "Federation"} {
		eventually(t, time.Minute, kind+" squat refused", func() (bool, string) {
			s, _, msg := condition(get(t, kustoAPI, kind, a, "squat"), "Synced")
			return s == "False" && strings.Contains(msg, notGranted), s + ": " + msg
		})
	}
	eventually(t, time.Minute, "the forged heartbeat's target refused", func() (bool, string) {
		ts, _, _ := unstructured.NestedSlice(get(t, kustoAPI, "Heartbeat", a, "forged").Object, "status", "atProvider", "targets")
		for _, x := range ts {
			if m, _ := x.(map[string]any); strings.Contains(fmt.Sprint(m["lastError"]), notGranted) {
				return true, ""
			}
		}
		return false, fmt.Sprint(ts)
	})
	refused(t, "adx.fleetplane.io/v1alpha1", "ADXCluster", a, "forged", "adxcluster.fleetplane.io", "heartbeat target "+hubB.URL+": "+notGranted)

	// Deleting the Table drops nothing.
	squat := get(t, kustoAPI, "Table", a, "squat")
	if err := teamA.Delete(ctx, squat); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "tenancy-a's Table gone", func() (bool, string) {
		return get(t, kustoAPI, "Table", a, "squat") == nil, "still there"
	})
	// Two cycles of tenancy-b's Federation and of the attackers' loops.
	eventually(t, time.Minute, "tenancy-b's Federation cycling, Ready", func() (bool, string) {
		f := composedBy(t, "adx.fleetplane.io/v1alpha1", "ADXCluster", b, "hub")["federation"]
		s, _, msg := condition(f, "Ready")
		return s == "True", s + ": " + msg
	})
	if after := snapshot(); after != before {
		t.Errorf("tenancy-b's hub changed:\nbefore %s\nafter  %s", before, after)
	}
	for _, row := range hubB.Rows("FleetDiscovery", "Heartbeats") {
		if slices.ContainsFunc(row, func(v any) bool { return v == partA.URL }) {
			t.Fatalf("a heartbeat row of tenancy-a's partition is in tenancy-b's hub: %v", row)
		}
	}
	for _, n := range []string{"hub", "eu"} {
		eventually(t, time.Minute, "tenancy-b's "+n+" Ready", func() (bool, string) {
			out, err := env.Trace("adxcluster", n, b, "-o", "wide")
			return err == nil && !strings.Contains(out, "False"), fmt.Sprintf("%v\n%s", err, out)
		})
	}
}

// composedSpecs maps what a namespace's XRs of tenancy-b composed to
// their specs, which anything that changes them changes.
func composedSpecs(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, x := range []struct{ api, kind, name string }{
		{"adx.fleetplane.io/v1alpha1", "ADXCluster", "metrics"},
		{placementAPI, "Placement", "settings"},
		{experimentAPI, "Experiment", "smoke"},
	} {
		for name, o := range composedBy(t, x.api, x.kind, ns, x.name) {
			spec, _, _ := unstructured.NestedMap(o.Object, "spec")
			out[x.kind+"/"+name] = fmt.Sprint(spec)
		}
	}
	return out
}

// composedBy maps the composition resource names of what an XR composed,
// as its resourceRefs list them, to the objects.
func composedBy(t *testing.T, apiVersion, kind, ns, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	x := get(t, apiVersion, kind, ns, name)
	if x == nil {
		t.Fatalf("%s %s/%s not found", kind, ns, name)
	}
	refs, _, _ := unstructured.NestedSlice(x.Object, "spec", "crossplane", "resourceRefs")
	for _, r := range refs {
		m, _ := r.(map[string]any)
		api, _ := m["apiVersion"].(string)
		k, _ := m["kind"].(string)
		n, _ := m["name"].(string)
		if o := get(t, api, k, ns, n); o != nil {
			out[o.GetAnnotations()["crossplane.io/composition-resource-name"]] = o
		}
	}
	return out
}
