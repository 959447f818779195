package placement_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/placement"
)

// teamPolicy grants the namespace the inventory clusters labelled
// team=a, Deployments and ConfigMaps, and the region property.
func teamPolicy() *fpv1alpha1.ClusterProviderConfig {
	p := ct.Permissive()
	p.Spec.Placement = &fpv1alpha1.PlacementPolicy{
		ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		Kinds:           []string{"apps/Deployment", "ConfigMap"},
		Properties:      []string{"region"},
	}
	return p
}

const policySpec = `
objects:
- {apiVersion: apps/v1, kind: Deployment, names: [web]}
- {apiVersion: apps/v1, kind: DaemonSet, names: [node-agent]}
- {apiVersion: v1, kind: ConfigMap, names: [settings]}
clusters: {matchLabels: {env: prod}}
`

func policyWorkloads(t *testing.T, data string) map[string][]runtime.Object {
	t.Helper()
	return map[string][]runtime.Object{
		"object-0-web": {obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}
`)},
		"object-2-settings": {obj(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a, annotations: {control.kubestellar.io/expand-templates: "true"}}
data: `+data+`
`)},
		"inventory": {
			cluster(t, "mine", "env: prod, team: a, region: eastus", "token: s3cret"),
			cluster(t, "theirs", "env: prod, team: b, region: westus", ""),
		},
		"custom-transforms":        {},
		"customization-properties": {obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: mine, namespace: customization-properties}, data: {password: hunter2}}`)},
	}
}

func TestPolicyGrants(t *testing.T) {
	observed := map[string]*ct.Resource{"mine/Namespace": made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns").Ready())}
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, policySpec), Policy: teamPolicy(), Required: policyWorkloads(t, `{where: "{{.region}}"}`), Observed: observed})
	// Only the granted cluster; the DaemonSet is neither read nor placed.
	rsp.WantNames("mine/Namespace", "mine/Deployment.apps/web", "mine/ConfigMap/settings")
	if _, asked := rsp.GetRequirements().GetResources()["object-1-node-agent"]; asked {
		t.Error("a kind the policy does not grant is not even read")
	}
	rsp.Want("", "status.clusters", []any{"mine"})
	rsp.Want("mine/ConfigMap/settings", "spec.forProvider.manifest.data", map[string]any{"where": "eastus"})
	rsp.Want("mine/Namespace", "spec.forProvider.manifest.metadata.labels", map[string]any{"placement.fleetplane.io/namespace": ns, "pod-security.kubernetes.io/enforce": "restricted"})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotGranted,
		"ClusterProviderConfig default does not let this namespace deliver objects of kind DaemonSet.apps (spec.placement.kinds); 2 objects of other kinds are placed")
}

func TestPolicyRefusesPlacement(t *testing.T) {
	t.Run("no placement granted", func(t *testing.T) {
		p := teamPolicy()
		p.Spec.Placement = nil
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, policySpec), Policy: p, Required: policyWorkloads(t, `{}`)})
		rsp.WantNames()
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotGranted, "ClusterProviderConfig default grants no Placement")
		if len(rsp.GetRequirements().GetResources()) != 2 {
			t.Errorf("nothing but the policy is read: %v", rsp.GetRequirements().GetResources())
		}
	})
	t.Run("only clusters the policy does not grant", func(t *testing.T) {
		x := xr(t, policySpec)
		x.Spec.Clusters.MatchLabels = map[string]string{"team": "b"}
		req := policyWorkloads(t, `{}`)
		req["inventory"] = req["inventory"][1:] // what Crossplane finds for team=b
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: x, Policy: teamPolicy(), Required: req})
		rsp.WantNames()
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotGranted,
			"1 inventory cluster matches spec.clusters.matchLabels {team=b}, but ClusterProviderConfig default does not let this namespace deliver to them (spec.placement.clusterSelector {team=a})")
	})
	t.Run("more copies than the quota", func(t *testing.T) {
		p := teamPolicy()
		p.Spec.Placement.Quota = &fpv1alpha1.PlacementQuota{MaxCopies: ptr.To[int32](1)}
		observed := map[string]*ct.Resource{"mine/Namespace": made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns").Ready())}
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, policySpec), Policy: p, Required: policyWorkloads(t, `{}`), Observed: observed})
		// What was delivered stays; nothing new is.
		rsp.WantNames("mine/Namespace")
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonQuotaExceeded,
			"2 copies (its objects times its clusters) are more than the 1 one Placement may deliver (spec.placement.quota.maxCopies); narrow spec.clusters or split the Placement; copies already delivered stay as they are")
	})
	t.Run("more clusters than the quota", func(t *testing.T) {
		p := teamPolicy()
		p.Spec.Placement.ClusterSelector = metav1.LabelSelector{}
		p.Spec.Placement.Quota = &fpv1alpha1.PlacementQuota{MaxClusters: ptr.To[int32](1)}
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, policySpec), Policy: p, Required: policyWorkloads(t, `{}`)})
		rsp.WantNames()
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonQuotaExceeded,
			"2 clusters are more than the 1 one Placement may deliver to (spec.placement.quota.maxClusters)")
	})
	t.Run("properties the policy does not expose", func(t *testing.T) {
		observed := map[string]*ct.Resource{"mine/Namespace": made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns").Ready())}
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, policySpec), Policy: teamPolicy(), Required: policyWorkloads(t, `{a: "{{.token}}", b: "{{.password}}"}`), Observed: observed})
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonExpansionFailed, "token")
		if rsp.Has("mine/ConfigMap/settings") {
			t.Error("a copy whose template reads hidden properties is not delivered")
		}
	})
}

// TestNeverTakeOverCopies: a copy or namespace already on a cluster, not
// made by fleetplane for this namespace, is observed only and reported.
func TestNeverTakeOverCopies(t *testing.T) {
	object := func(name string) *ct.Resource {
		return ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", name).Ready()
	}
	theirs := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": map[string]any{"owner": "wec-admin"}}}
	t.Run("a namespace that was there", func(t *testing.T) {
		observed := map[string]*ct.Resource{"mine/Namespace": object("ns").AtProvider("manifest", theirs)}
		x, req := grantedOnly(t)
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: x, Policy: teamPolicy(), Required: req, Observed: observed})
		rsp.WantNames("mine/Namespace")
		rsp.Want("mine/Namespace", "spec.managementPolicies", []any{"Observe", "Create"})
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotOwned, "Namespace team-a on cluster mine")
	})
	t.Run("a namespace another Placement of the namespace made", func(t *testing.T) {
		ours := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": map[string]any{placement.LabelNamespace: ns}}}
		observed := map[string]*ct.Resource{"mine/Namespace": object("ns").AtProvider("manifest", ours)}
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, policySpec), Policy: teamPolicy(), Required: policyWorkloads(t, `{}`), Observed: observed})
		rsp.WantNames("mine/Namespace", "mine/Deployment.apps/web", "mine/ConfigMap/settings")
		rsp.Want("mine/Namespace", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})
	})
	t.Run("a copy that was there", func(t *testing.T) {
		observed := map[string]*ct.Resource{
			"mine/Namespace":           made(object("ns")),
			"mine/Deployment.apps/web": object("web").AtProvider("manifest", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}),
			"mine/ConfigMap/settings":  made(object("settings")).AtProvider("manifest", map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}),
		}
		x, req := grantedOnly(t)
		rsp := ct.Run(t, placement.Composer, ct.Call{XR: x, Policy: teamPolicy(), Required: req, Observed: observed})
		rsp.Want("mine/Deployment.apps/web", "spec.managementPolicies", []any{"Observe", "Create"})
		rsp.Want("mine/ConfigMap/settings", "spec.managementPolicies", nil)
		rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotOwned,
			"these were on their clusters before this Placement delivered them: Deployment.apps/web on cluster mine; left as they are")
	})
}

// grantedOnly is policySpec without the DaemonSet the policy refuses.
func grantedOnly(t *testing.T) (*v1alpha1.Placement, map[string][]runtime.Object) {
	t.Helper()
	x := xr(t, policySpec)
	x.Spec.Objects = append(x.Spec.Objects[:1], x.Spec.Objects[2])
	req := policyWorkloads(t, `{}`)
	req["object-1-settings"] = req["object-2-settings"]
	return x, req
}
