package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	adxv1alpha1 "github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// The composers have their own tests beside them; these cover what the
// function adds: dispatch by kind, and turning errors into Fatal results.

func runFunction(t *testing.T, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := NewFunction(logging.NewNopLogger()).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction returned a gRPC error: %v", err)
	}
	return rsp
}

func fatal(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

func TestDispatchesByKind(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "x", Namespace: "ns"}
	cases := map[string]struct {
		xr            ct.Call
		wantCondition string
	}{
		"ADXCluster": {
			xr: ct.Call{XR: &adxv1alpha1.ADXCluster{
				TypeMeta: metav1.TypeMeta{APIVersion: adxv1alpha1.SchemeGroupVersion.String(), Kind: adxv1alpha1.ADXClusterKind}, ObjectMeta: meta,
				Spec: adxv1alpha1.ADXClusterSpec{ClusterName: "x", Endpoint: "https://x.kusto.windows.net"},
			}},
			wantCondition: adxv1alpha1.ConditionADXCluster,
		},
		"Experiment": {
			xr: ct.Call{XR: &expv1alpha1.Experiment{
				TypeMeta: metav1.TypeMeta{APIVersion: expv1alpha1.SchemeGroupVersion.String(), Kind: expv1alpha1.ExperimentKind}, ObjectMeta: meta,
				Spec: expv1alpha1.ExperimentSpec{Targets: []expv1alpha1.Target{{Name: "a", Cluster: expv1alpha1.ClusterSpec{Type: expv1alpha1.ClusterHub}}}},
			}},
			wantCondition: expv1alpha1.ConditionExperiment,
		},
		"Component": {
			xr: ct.Call{XR: &expv1alpha1.Component{
				TypeMeta: metav1.TypeMeta{APIVersion: expv1alpha1.SchemeGroupVersion.String(), Kind: expv1alpha1.ComponentKind}, ObjectMeta: metav1.ObjectMeta{Name: "c"},
				Spec: expv1alpha1.ComponentSpec{Type: expv1alpha1.ComponentApp},
			}},
			wantCondition: expv1alpha1.ConditionComponent,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := runFunction(t, tc.xr.Request(t))
			if m := fatal(rsp); m != "" {
				t.Fatalf("fatal: %s", m)
			}
			var types []string
			for _, c := range rsp.GetConditions() {
				types = append(types, c.GetType())
			}
			if len(types) != 1 || types[0] != tc.wantCondition {
				t.Errorf("conditions %v, want the %s composer's one", types, tc.wantCondition)
			}
		})
	}
}

func TestFatalResults(t *testing.T) {
	other := ct.Call{XR: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.org/v1", "kind": "Other", "metadata": map[string]any{"name": "x"}}}}
	byo := ct.Call{XR: &adxv1alpha1.ADXCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: adxv1alpha1.SchemeGroupVersion.String(), Kind: adxv1alpha1.ADXClusterKind},
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
		Spec:       adxv1alpha1.ADXClusterSpec{ClusterName: "x", Endpoint: "https://x.kusto.windows.net"},
	}}
	withInput := func(c ct.Call, in map[string]any) *fnv1.RunFunctionRequest {
		req := c.Request(t)
		s, err := structpb.NewStruct(in)
		if err != nil {
			t.Fatal(err)
		}
		req.Input = s
		return req
	}
	cases := map[string]struct {
		req  *fnv1.RunFunctionRequest
		want []string
	}{
		"a kind it does not compose, with the kinds it does": {
			req:  other.Request(t),
			want: []string{"does not compose Other.example.org", "ADXCluster.adx.fleetplane.io, ADXMon.adx.fleetplane.io, ClusterPlacement.placement.fleetplane.io, Component.experiments.fleetplane.io, CustomTransform.placement.fleetplane.io, Experiment.experiments.fleetplane.io, Placement.placement.fleetplane.io, StatusCollector.placement.fleetplane.io"},
		},
		"an input that does not decode": {
			req:  withInput(byo, map[string]any{"apiVersion": "fn.fleetplane.io/v1beta1", "kind": "Input", "kusto": "often"}),
			want: []string{"cannot read the function input"},
		},
		"an input with a field it does not have": {
			req:  withInput(byo, map[string]any{"apiVersion": "fn.fleetplane.io/v1beta1", "kind": "Input", "kustoo": map[string]any{}}),
			want: []string{"cannot read the function input", `unknown field "kustoo"`},
		},
		"an input with settings that moved to the policy": {
			req: withInput(byo, map[string]any{"apiVersion": "fn.fleetplane.io/v1beta1", "kind": "Input",
				"experiments": map[string]any{"argocdProject": "lab", "gcp": map[string]any{"project": "p"}}}),
			want: []string{"cannot read the function input", "experiments.argocdProject moved to spec.argocd.project of the ClusterProviderConfig that governs the namespace", "experiments.gcp moved to spec.experiments.gcp"},
		},
		"an input the composer refuses": {
			req:  withInput(byo, map[string]any{"apiVersion": "fn.fleetplane.io/v1beta1", "kind": "Input", "kusto": map[string]any{"interval": "soon"}}),
			want: []string{`kusto.interval "soon"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := fatal(runFunction(t, tc.req))
			for _, w := range tc.want {
				if !strings.Contains(m, w) {
					t.Errorf("fatal %q lacks %q", m, w)
				}
			}
		})
	}
}

type recorded struct {
	runs   []string
	copies []string
}

func (r *recorded) Run(kind string, took time.Duration, result string) {
	if took <= 0 {
		result += " (no duration)"
	}
	r.runs = append(r.runs, kind+"/"+result)
}

func (r *recorded) Copies(namespace, name string, c compose.Copies) {
	r.copies = append(r.copies, fmt.Sprintf("%s/%s %+v", namespace, name, c))
}

// TestRecordsEveryCall: every call reaches the function's metrics with
// its kind, never a kind the function does not compose, and the most
// severe result it returned.
func TestRecordsEveryCall(t *testing.T) {
	rec := &recorded{}
	fn := NewFunction(logging.NewNopLogger()).WithRecorder(rec)
	for _, xr := range []ct.Call{
		{XR: &adxv1alpha1.ADXCluster{
			TypeMeta: metav1.TypeMeta{APIVersion: adxv1alpha1.SchemeGroupVersion.String(), Kind: adxv1alpha1.ADXClusterKind}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
			Spec: adxv1alpha1.ADXClusterSpec{ClusterName: "x", Endpoint: "https://x.kusto.windows.net"},
		}},
		{XR: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.org/v1", "kind": "Other", "metadata": map[string]any{"name": "x"}}}},
		// Refused by its policy: the tenant's to change, counted apart
		// from the function's own failures, which page.
		{XR: &adxv1alpha1.ADXCluster{
			TypeMeta: metav1.TypeMeta{APIVersion: adxv1alpha1.SchemeGroupVersion.String(), Kind: adxv1alpha1.ADXClusterKind}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
			Spec: adxv1alpha1.ADXClusterSpec{ClusterName: "x", Endpoint: "https://x.kusto.windows.net"},
		}, NamespaceLabels: map[string]string{"fleetplane.io/policy": "Not_A_Name"}},
	} {
		if _, err := fn.RunFunction(context.Background(), xr.Request(t)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"ADXCluster/normal", "unknown/fatal", "ADXCluster/refused"}; !slices.Equal(rec.runs, want) {
		t.Errorf("recorded %v, want %v", rec.runs, want)
	}
	if len(rec.copies) != 0 {
		t.Errorf("copies recorded for kinds that place none: %v", rec.copies)
	}
}
