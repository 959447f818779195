package placement_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/placement"
)

func customTransform(t *testing.T, name, spec string) *v1alpha1.CustomTransform {
	t.Helper()
	c := &v1alpha1.CustomTransform{}
	if err := yaml.UnmarshalStrict([]byte(spec), &c.Spec); err != nil {
		t.Fatal(err)
	}
	c.APIVersion, c.Kind, c.Name = v1alpha1.SchemeGroupVersion.String(), v1alpha1.CustomTransformKind, name
	return c
}

func TestCustomTransformCheck(t *testing.T) {
	good := customTransform(t, "a", `{apiGroup: rbac.authorization.k8s.io, resource: clusterroles, remove: ['$.metadata.labels["test.kubestellar.io/delete-me"]']}`)
	other := customTransform(t, "b", `{apiGroup: rbac.authorization.k8s.io, resource: clusterroles, remove: ["$.rules"]}`)
	unrelated := customTransform(t, "c", `{resource: clusterroles}`)

	rsp := ct.Run(t, placement.CustomTransformComposer, ct.Call{XR: good, Required: map[string][]runtime.Object{"custom-transforms": {good, unrelated}}})
	rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonValid, "1 fields", "clusterroles.rbac.authorization.k8s.io")

	rsp = ct.Run(t, placement.CustomTransformComposer, ct.Call{XR: good, Required: map[string][]runtime.Object{"custom-transforms": {good, other, unrelated}}})
	rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonShared, "CustomTransforms b also name clusterroles.rbac.authorization.k8s.io")
	rsp.Want("", "status.warnings", []any{"CustomTransforms b also name clusterroles.rbac.authorization.k8s.io; the removals of all of them apply"})

	bad := customTransform(t, "bad", `{apiGroup: apps, resource: deployments, remove: ["$.spec.replicas", "$.items[*]", "$"]}`)
	rsp = ct.Run(t, placement.CustomTransformComposer, ct.Call{XR: bad, Required: map[string][]runtime.Object{"custom-transforms": {bad}}})
	rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonInvalid, "2 of 3 remove paths are invalid", `spec.remove[1] "$.items[*]"`)
	rsp.WantEvent(fnv1.Severity_SEVERITY_WARNING, placement.ReasonInvalid)
	rsp.WantNotReady()
	if errs, _ := rsp.Value("", "status.errors").([]any); len(errs) != 2 {
		t.Errorf("status.errors = %v, want both invalid entries", errs)
	}
}

func TestStatusCollectorCheck(t *testing.T) {
	sc := func(spec string) *v1alpha1.StatusCollector {
		c := &v1alpha1.StatusCollector{}
		if err := yaml.UnmarshalStrict([]byte(spec), &c.Spec); err != nil {
			t.Fatal(err)
		}
		c.APIVersion, c.Kind, c.Name = v1alpha1.SchemeGroupVersion.String(), v1alpha1.StatusCollectorKind, "sc"
		return c
	}
	for name, spec := range seedCollectors {
		t.Run(name, func(t *testing.T) {
			rsp := ct.Run(t, placement.StatusCollectorComposer, ct.Call{XR: sc(spec)})
			rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonValid)
		})
	}
	rsp := ct.Run(t, placement.StatusCollectorComposer, ct.Call{XR: sc(seedCollectors["availablereplicashistogram"])})
	rsp.Want("", "status.columns", []any{"numAvailable", "count"})

	// What the schema cannot say: a path outside the subset.
	rsp = ct.Run(t, placement.StatusCollectorComposer, ct.Call{XR: sc(`{select: [{name: a, def: {op: Path, path: "$.items[0]"}}]}`)})
	rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonInvalid, "column 0 (a)")
	rsp.WantNotReady()

	// CEL is compiled when the collector is: valid as KubeStellar's
	// users write it, and its compiler's message when not.
	rsp = ct.Run(t, placement.StatusCollectorComposer, ct.Call{XR: sc(`{filter: {cel: "returned.status.availableReplicas > 0"}, select: [{name: wec, def: {cel: inventory.name}}]}`)})
	rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonValid)
	rsp = ct.Run(t, placement.StatusCollectorComposer, ct.Call{XR: sc(`{filter: {cel: "returned.status.phase"}, select: [{name: wec, def: {cel: "cluster.name"}}]}`)})
	rsp.WantCondition(v1alpha1.ConditionValid, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonInvalid, "undeclared reference to 'cluster'")
}
