package placement_test

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/placement"
)

func clusterXR(t *testing.T, spec string, labels map[string]string) *v1alpha1.ClusterPlacement {
	t.Helper()
	p := &v1alpha1.ClusterPlacement{}
	if err := yaml.UnmarshalStrict([]byte(spec), &p.Spec); err != nil {
		t.Fatal(err)
	}
	p.APIVersion, p.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.ClusterPlacementKind
	p.Name, p.Generation, p.Labels = "platform", 1, labels
	return p
}

const clusterSpec = `
objects:
- {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, names: ["widgets:viewer"]}
- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, names: [widgets.example.com]}
- {apiVersion: example.com/v1, kind: Widget, matchLabels: {app: w}}
clusters: {}
`

func clusterWorkloads(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	req := workloads(t)
	for _, k := range []string{"object-0-web", "object-1-web", "object-2-migrate", "objects-3"} {
		delete(req, k)
	}
	req["object-0-widgets:viewer"] = []runtime.Object{obj(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "widgets:viewer", uid: c1, resourceVersion: "4", labels: {app: w}}
rules: [{apiGroups: [example.com], resources: [widgets], verbs: [get, list, watch]}]
`)}
	req["object-1-widgets.example.com"] = []runtime.Object{obj(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com, uid: c2, generation: 1}
spec: {group: example.com, names: {kind: Widget, plural: widgets}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}
status: {acceptedNames: {kind: Widget, plural: widgets}, conditions: [{type: Established, status: "True"}]}
`)}
	// Widgets are namespaced: asked for cluster-wide, they answer from
	// every namespace, and none is a ClusterPlacement's to place.
	req["objects-2"] = []runtime.Object{obj(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: team-a, labels: {app: w}}
`)}
	return req
}

// TestClusterPlacement: the admin's ClusterPlacement delivers
// cluster-scoped objects with the same composer as a Placement: no
// namespace on the clusters, its Objects in the namespace the policy
// names, never taking over, and only what its policy grants.
func TestClusterPlacement(t *testing.T) {
	p := clusterXR(t, clusterSpec, nil)
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: clusterWorkloads(t), Policy: ct.Permissive()})
	rsp.WantNames(
		"wec1/ClusterRole.rbac.authorization.k8s.io/widgets:viewer", "wec2/ClusterRole.rbac.authorization.k8s.io/widgets:viewer",
		"wec1/CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com", "wec2/CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com",
	)
	crd := "wec1/CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com"
	rsp.Want(crd, "metadata.namespace", "crossplane-system")
	rsp.Want(crd, "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "wec1"})
	// Never taken over: until it created the copy, the Object may only
	// observe and create.
	rsp.Want(crd, "spec.managementPolicies", []any{"Observe", "Create"})
	rsp.Want(crd, "spec.forProvider.manifest.status", nil)
	rsp.Want(crd, "spec.forProvider.manifest.metadata", map[string]any{"name": "widgets.example.com"})
	// A name that is no label value is left out of the labels.
	rsp.Want("wec1/ClusterRole.rbac.authorization.k8s.io/widgets:viewer", "metadata.labels", map[string]any{"placement.fleetplane.io/cluster": "wec1", "placement.fleetplane.io/kind": "clusterrole"})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNamespaced,
		"objects of kind Widget.example.com are namespaced", "2 cluster-scoped objects are")
	if objs, _ := rsp.Value("", "status.objects").([]any); len(objs) != 2 {
		t.Errorf("status.objects lists %d objects, want 2", len(objs))
	}
	// Asked for cluster-wide, and the policy by the default name.
	reqs := rsp.GetRequirements().GetResources()
	if r := reqs["object-0-widgets:viewer"]; r == nil || r.Namespace != nil {
		t.Errorf("the ClusterRole is asked for as %v, want cluster-wide", r)
	}
	if got := reqs[compose.PolicyRequirement].GetMatchName(); got != "default" {
		t.Errorf("policy asked for is %q, want default", got)
	}

	// Without the Widgets, and once delivered, it is Delivered.
	req := clusterWorkloads(t)
	p.Spec.Objects = p.Spec.Objects[:2]
	observed := map[string]*ct.Resource{}
	for _, n := range rsp.Names() {
		observed[n] = made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", strings.ReplaceAll(n, "/", "-")).Ready())
	}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed, Policy: ct.Permissive()})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonDelivered, "2 objects delivered to 2 clusters")
	rsp.Want(crd, "spec.managementPolicies", nil)
}

func TestClusterPlacementPolicy(t *testing.T) {
	req := clusterWorkloads(t)

	// The label names the config; asked for by that name.
	p := clusterXR(t, clusterSpec, map[string]string{compose.PolicyLabel: "platform"})
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req})
	if got := rsp.GetRequirements().GetResources()[compose.PolicyRequirement].GetMatchName(); got != "platform" {
		t.Errorf("policy asked for is %q, want platform", got)
	}
	rsp.WantNames()

	// A config without clusterPlacements grants none: nothing composed,
	// the condition names the field.
	none := ct.Permissive()
	none.Spec.Placement.ClusterPlacements = nil
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: clusterXR(t, clusterSpec, nil), Required: req, Policy: none})
	rsp.WantNames()
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotGranted,
		"ClusterProviderConfig default grants no ClusterPlacement", "spec.placement.clusterPlacements")

	// Kinds it does not list are neither read nor delivered; a
	// Placement's kinds do not count for a ClusterPlacement.
	rbacOnly := ct.Permissive()
	rbacOnly.Spec.Placement.Kinds = []string{"apiextensions.k8s.io/*"}
	rbacOnly.Spec.Placement.ClusterPlacements.Kinds = []string{"rbac.authorization.k8s.io/ClusterRole"}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: clusterXR(t, clusterSpec, nil), Required: req, Policy: rbacOnly})
	rsp.WantNames("wec1/ClusterRole.rbac.authorization.k8s.io/widgets:viewer", "wec2/ClusterRole.rbac.authorization.k8s.io/widgets:viewer")
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotGranted,
		"does not let ClusterPlacements deliver objects of kind CustomResourceDefinition.apiextensions.k8s.io, Widget.example.com (spec.placement.clusterPlacements.kinds)")
	if _, asked := rsp.GetRequirements().GetResources()["object-1-widgets.example.com"]; asked {
		t.Error("a kind the policy does not grant was read")
	}

	// The inventory is the policy's clusterSelector, as for Placements.
	east := ct.Permissive()
	east.Spec.Placement.ClusterSelector.MatchLabels = map[string]string{"region": "eastus"}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: clusterXR(t, clusterSpec, nil), Required: req, Policy: east})
	for _, n := range rsp.Names() {
		if strings.HasPrefix(n, "wec2/") {
			t.Errorf("%s composed outside the policy's clusters", n)
		}
	}
}

// TestClusterPlacementDecodesAsPlacement: one composer reads both kinds,
// so every field of a ClusterPlacement's spec must be a Placement's too,
// under the same JSON name.
func TestClusterPlacementDecodesAsPlacement(t *testing.T) {
	p := clusterXR(t, `
objects:
- {apiVersion: v1, kind: Namespace, names: [a], resource: namespaces, statusCollectors: [c]}
- {apiVersion: v1, kind: Namespace, matchLabels: {x: y}}
clusters: {matchLabels: {env: prod}}
statusCollectors: [d]
`, nil)
	b, err := yaml.Marshal(p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var as v1alpha1.PlacementSpec
	if err := yaml.UnmarshalStrict(b, &as); err != nil {
		t.Fatalf("a ClusterPlacement's spec is no Placement's: %v", err)
	}
	back, _ := yaml.Marshal(as)
	if string(back) != string(b) {
		t.Errorf("decoded as a Placement:\n%s\nwant\n%s", back, b)
	}
}
