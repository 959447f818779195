package experiment

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	lifecyclev1alpha1 "github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// experimentChain is an experiment of n GKE targets, each depending on the
// one before, with every cluster, node pool, registration and application
// observed ready and the validation running: the largest steady state an
// Experiment reaches (16 targets is the schema's maximum).
func experimentChain(n int) ct.Call {
	xr := &v1alpha1.Experiment{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ExperimentKind},
		ObjectMeta: metav1.ObjectMeta{Name: "chain", Namespace: "lab", UID: "0c0c0c0c-1111-2222-3333-444444444444",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))},
		Spec: v1alpha1.ExperimentSpec{Workflow: v1alpha1.WorkflowSpec{Template: "chain-validation", Params: map[string]string{"rps": "100"}}},
	}
	observed := map[string]*ct.Resource{
		"expiry":        ct.Observed(lifecyclev1alpha1.SchemeGroupVersion.String(), "Expiry", "e").Ready(),
		"workflow":      ct.Observed(workflowsv1alpha1.SchemeGroupVersion.String(), "WorkflowRun", "w").Ready().AtProvider("workflowName", "w").AtProvider("phase", "Running"),
		"argocd-access": argocdAccess().Ready(),
	}
	required := map[string][]runtime.Object{}
	for i := range n {
		t := fmt.Sprintf("t%02d", i)
		target := v1alpha1.Target{Name: t, Cluster: v1alpha1.ClusterSpec{Type: v1alpha1.ClusterGKE, Zone: "us-central1-a"},
			Components: []v1alpha1.ComponentRef{{App: fmt.Sprintf("app%02d", i)}}}
		if i > 0 {
			target.Depends = []string{fmt.Sprintf("t%02d", i-1)}
		}
		xr.Spec.Targets = append(xr.Spec.Targets, target)
		required[componentsRequirement(fmt.Sprintf("app%02d", i))] = nil
		observed["cluster-"+t] = ct.Observed(gcpAPIVersion, "Cluster", "chain-"+t).Ready().AtProvider("endpoint", fmt.Sprintf("10.0.0.%d", i+1))
		observed["nodepool-"+t] = ct.Observed(gcpAPIVersion, "NodePool", "chain-"+t+"-nodes").Ready()
		observed["registration-"+t] = ct.Observed(argocdv1alpha1.SchemeGroupVersion.String(), "ClusterRegistration", "r-"+t).Ready()
		observed["application-"+t] = application("a-" + t).Ready()
	}
	return ct.Call{XR: xr, Input: conventionInput, Observed: observed, Required: required}
}

func benchmarkCompose(b *testing.B, c ct.Call, wantResources int) {
	b.Helper()
	ct.BenchmarkCompose(b, Composer, c, wantResources)
}

// Per target: cluster, node pool, registration, application and four
// Usages (of the cluster by node pool and registration, of the
// registration by the application, of the application by the workflow),
// one Usage per dependency, then the expiry, the workflow and Argo CD's
// access to the project: 9n+2.
func BenchmarkComposeExperiment16Targets(b *testing.B) {
	benchmarkCompose(b, experimentChain(16), 9*16+2)
}

func BenchmarkComposeExperiment2Targets(b *testing.B) {
	benchmarkCompose(b, experimentChain(2), 9*2+2)
}

// BenchmarkRunFunctionExperiment16Targets is
// BenchmarkComposeExperiment16Targets behind the function's gRPC service.
func BenchmarkRunFunctionExperiment16Targets(b *testing.B) {
	ct.BenchmarkRunFunction(b, v1alpha1.ExperimentGroupVersionKind.GroupKind(), Composer, experimentChain(16).Request(b))
}

// BenchmarkComposeExperimentAmong100 is BenchmarkComposeExperiment2Targets
// in a namespace of 100 other Experiments, which Crossplane supplies with
// every request so that maxExperiments can count them: what counting
// costs a composition as a namespace fills (it holds no place: all 100
// are older, and Permissive allows 10,000).
func BenchmarkComposeExperimentAmong100(b *testing.B) {
	benchmarkCompose(b, among(100), 9*2+2)
}

// BenchmarkRunFunctionExperimentAmong100 is the same behind the gRPC
// service, decoding the 100 included; BenchmarkRunFunctionExperiment2Targets
// is the namespace of one.
func BenchmarkRunFunctionExperimentAmong100(b *testing.B) {
	ct.BenchmarkRunFunction(b, v1alpha1.ExperimentGroupVersionKind.GroupKind(), Composer, among(100).Request(b))
}

func BenchmarkRunFunctionExperiment2Targets(b *testing.B) {
	ct.BenchmarkRunFunction(b, v1alpha1.ExperimentGroupVersionKind.GroupKind(), Composer, experimentChain(2).Request(b))
}

// among is experimentChain(2) in a namespace of n older Experiments.
func among(n int) ct.Call {
	c := experimentChain(2)
	for i := range n {
		o := gatewayTutorial()
		o.Name, o.UID = fmt.Sprintf("other-%03d", i), ""
		o.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 8, 0, i%60, 0, time.UTC))
		c.Siblings = append(c.Siblings, o)
	}
	return c
}
