package compose_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/fnwire"
)

// toy is the smallest XR type a plan can have.
type toy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitzero"`
	Spec              struct {
		Size int `json:"size"`
	} `json:"spec"`
	Status toyStatus `json:"status,omitzero"`
}

type toyStatus struct {
	Seen int `json:"seen,omitempty"`
}

func toyXR(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.org/v1", "kind": "Toy",
		"metadata": map[string]any{"name": "t", "namespace": "ns"},
		"spec":     spec,
	}}
}

func thing(size int) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion("example.org/v1")
	o.SetKind("Thing")
	o.Object["spec"] = map[string]any{"size": int64(size)}
	return o
}

const condType = "toy.example.org"

func TestRunWritesWhatThePlanDecided(t *testing.T) {
	var plan compose.Plan[toy] = func(r *compose.Request[toy]) (compose.Outcome, error) {
		r.Resources.Add("thing", thing(r.XR.Spec.Size))
		return compose.Outcome{
			Status:     &toyStatus{Seen: r.XR.Spec.Size},
			Conditions: []compose.Condition{{Type: condType, Status: corev1.ConditionTrue, Reason: "Fine", Message: "all fine"}},
		}, nil
	}
	rsp := composetest.Run(t, compose.Run(plan), composetest.Call{XR: toyXR(map[string]any{"size": int64(3)})})

	want := &fnv1.RunFunctionResponse{
		// The thing is not ready yet: composed again soon, not at the
		// default TTL.
		Meta: &fnv1.ResponseMeta{Tag: "test", Ttl: durationpb.New(compose.RecheckWhileWaiting)},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{Resource: mustStruct(t, map[string]any{"status": map[string]any{"seen": 3}})},
			Resources: map[string]*fnv1.Resource{"thing": {
				Resource: mustStruct(t, map[string]any{"apiVersion": "example.org/v1", "kind": "Thing", "spec": map[string]any{"size": 3}}),
				Ready:    fnv1.Ready_READY_FALSE,
			}},
		},
		Conditions: []*fnv1.Condition{{
			Type: condType, Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: "Fine",
			Message: new("all fine"), Target: fnv1.Target_TARGET_COMPOSITE.Enum(),
		}},
		// A first report of the condition is a transition: one event.
		Results: []*fnv1.Result{{
			Severity: fnv1.Severity_SEVERITY_NORMAL, Message: "all fine", Reason: new("Fine"),
			Target: fnv1.Target_TARGET_COMPOSITE.Enum(),
		}},
	}
	if diff := cmp.Diff(want, rsp.RunFunctionResponse, protocmp.Transform()); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// TestRunReadiness checks the XR's readiness and how soon Crossplane is
// asked to compose it again: within RecheckWhileWaiting while anything is
// not ready (Crossplane's circuit breaker may drop the watch event that
// would have said so) or while that breaker is open, within
// RecheckWhileDeaf while both hold, at the SDK's default TTL otherwise.
func TestRunReadiness(t *testing.T) {
	composeA := func(r *compose.Request[toy]) (compose.Outcome, error) {
		r.Resources.Add("a", thing(1))
		return compose.Outcome{}, nil
	}
	ready := map[string]*composetest.Resource{"a": composetest.Observed("example.org/v1", "Thing", "a").Ready()}
	cases := map[string]struct {
		plan      compose.Plan[toy]
		observed  map[string]*composetest.Resource
		xrConds   []composetest.Condition
		wantReady fnv1.Ready
		wantTTL   time.Duration
	}{
		"derived from composed resources, all ready": {
			plan:      composeA,
			observed:  ready,
			wantReady: fnv1.Ready_READY_UNSPECIFIED,
			wantTTL:   time.Minute,
		},
		"all ready, but Crossplane's circuit breaker drops the XR's events": {
			plan:      composeA,
			observed:  ready,
			xrConds:   []composetest.Condition{{Type: "Responsive", Status: "False", Reason: "WatchCircuitOpen"}},
			wantReady: fnv1.Ready_READY_UNSPECIFIED,
			wantTTL:   compose.RecheckWhileWaiting,
		},
		"all ready, the breaker closed": {
			plan:      composeA,
			observed:  ready,
			xrConds:   []composetest.Condition{{Type: "Responsive", Status: "True", Reason: "WatchCircuitClosed"}},
			wantReady: fnv1.Ready_READY_UNSPECIFIED,
			wantTTL:   time.Minute,
		},
		"derived from composed resources, one not ready yet": {
			plan:      composeA,
			wantReady: fnv1.Ready_READY_UNSPECIFIED,
			wantTTL:   compose.RecheckWhileWaiting,
		},
		"one not ready yet, and the breaker drops the event that it turned ready": {
			plan:      composeA,
			xrConds:   []composetest.Condition{{Type: "Responsive", Status: "False", Reason: "WatchCircuitOpen"}},
			wantReady: fnv1.Ready_READY_UNSPECIFIED,
			wantTTL:   compose.RecheckWhileDeaf,
		},
		"the plan has more to do, and the breaker is open": {
			plan: func(*compose.Request[toy]) (compose.Outcome, error) {
				return compose.Outcome{Pending: true}, nil
			},
			xrConds:   []composetest.Condition{{Type: "Responsive", Status: "False", Reason: "WatchCircuitOpen"}},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   compose.RecheckWhileDeaf,
		},
		"a plan's own shorter TTL stands while the breaker is open": {
			plan: func(r *compose.Request[toy]) (compose.Outcome, error) {
				r.ComposeAgainWithin(2 * time.Second)
				return compose.Outcome{Pending: true}, nil
			},
			xrConds:   []composetest.Condition{{Type: "Responsive", Status: "False", Reason: "WatchCircuitOpen"}},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   2 * time.Second,
		},
		"not ready while a resource is held": {
			plan: func(r *compose.Request[toy]) (compose.Outcome, error) {
				r.Resources.Add("a", thing(1))
				r.Resources.Add("b", thing(1), "a")
				return compose.Outcome{}, nil
			},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   compose.RecheckWhileWaiting,
		},
		"not ready while the plan has more to do": {
			plan: func(*compose.Request[toy]) (compose.Outcome, error) {
				return compose.Outcome{Pending: true}, nil
			},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   compose.RecheckWhileWaiting,
		},
		"settled: a failed run waits for an edit, not for its resources": {
			plan: func(r *compose.Request[toy]) (compose.Outcome, error) {
				r.Resources.Add("a", thing(1))
				return compose.Outcome{Pending: true, Settled: true}, nil
			},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   time.Minute,
		},
		"settled, but the breaker drops the edit that would unsettle it": {
			plan: func(*compose.Request[toy]) (compose.Outcome, error) {
				return compose.Outcome{Pending: true, Settled: true}, nil
			},
			xrConds:   []composetest.Condition{{Type: "Responsive", Status: "False", Reason: "WatchCircuitOpen"}},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   compose.RecheckWhileWaiting,
		},
		"a plan's own shorter TTL stands": {
			plan: func(r *compose.Request[toy]) (compose.Outcome, error) {
				r.ComposeAgainWithin(5 * time.Second)
				return compose.Outcome{Pending: true}, nil
			},
			wantReady: fnv1.Ready_READY_FALSE,
			wantTTL:   5 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := composetest.Run(t, compose.Run(tc.plan), composetest.Call{XR: toyXR(nil), Observed: tc.observed, XRConditions: tc.xrConds})
			if got := rsp.GetDesired().GetComposite().GetReady(); got != tc.wantReady {
				t.Errorf("XR readiness = %s, want %s", got, tc.wantReady)
			}
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.wantTTL {
				t.Errorf("TTL = %s, want %s", got, tc.wantTTL)
			}
		})
	}
}

func TestRunEventsOnlyOnTransitions(t *testing.T) {
	report := func(status corev1.ConditionStatus, reason string, warning bool) compose.Plan[toy] {
		return func(*compose.Request[toy]) (compose.Outcome, error) {
			return compose.Outcome{Conditions: []compose.Condition{{Type: condType, Status: status, Reason: reason, Message: "m", Warning: warning}}}, nil
		}
	}
	cases := map[string]struct {
		observed []composetest.Condition
		plan     compose.Plan[toy]
		want     fnv1.Severity
	}{
		"same reason and status: no event": {
			observed: []composetest.Condition{{Type: condType, Status: "True", Reason: "Fine"}},
			plan:     report(corev1.ConditionTrue, "Fine", false),
		},
		"new reason: a Normal event": {
			observed: []composetest.Condition{{Type: condType, Status: "Unknown", Reason: "Creating"}},
			plan:     report(corev1.ConditionTrue, "Fine", false),
			want:     fnv1.Severity_SEVERITY_NORMAL,
		},
		"same reason, new status: an event": {
			observed: []composetest.Condition{{Type: condType, Status: "True", Reason: "Fine"}},
			plan:     report(corev1.ConditionFalse, "Fine", true),
			want:     fnv1.Severity_SEVERITY_WARNING,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := composetest.Run(t, compose.Run(tc.plan), composetest.Call{XR: toyXR(nil), XRConditions: tc.observed})
			rs := rsp.GetResults()
			switch {
			case tc.want == fnv1.Severity_SEVERITY_UNSPECIFIED && len(rs) != 0:
				t.Errorf("want no event, got %v", rs)
			case tc.want != fnv1.Severity_SEVERITY_UNSPECIFIED && (len(rs) != 1 || rs[0].GetSeverity() != tc.want):
				t.Errorf("want one %s event, got %v", tc.want, rs)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	ok := compose.Run[toy](func(*compose.Request[toy]) (compose.Outcome, error) { return compose.Outcome{}, nil })
	failing := compose.Run[toy](func(*compose.Request[toy]) (compose.Outcome, error) {
		return compose.Outcome{}, errors.New("input is broken")
	})
	// The first object that does not convert fails the composition, after
	// the plan and before anything is written, however many follow.
	unconvertible := compose.Run[toy](func(r *compose.Request[toy]) (compose.Outcome, error) {
		r.Resources.AddObject("first", &stray{})
		r.Resources.Add("fine", thing(1))
		r.Resources.AddObject("second", &stray{})
		return compose.Outcome{}, nil
	})
	cases := map[string]struct {
		c    compose.Composer
		xr   *unstructured.Unstructured
		want string
	}{
		"an XR that does not decode":      {c: ok, xr: toyXR(map[string]any{"size": "three"}), want: "cannot decode the observed Toy: spec.size is a string, where a whole number is expected"},
		"a plan error":                    {c: failing, xr: toyXR(nil), want: "input is broken"},
		"an object that does not convert": {c: unconvertible, xr: toyXR(nil), want: "cannot compose first"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := composetest.Call{XR: tc.xr}.Wire(t)
			_, err := tc.c.Compose(req, fnwire.NewResponse(req, time.Minute), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Compose error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestRequirementsAndTTL(t *testing.T) {
	var resolved bool
	plan := func(r *compose.Request[toy]) (compose.Outcome, error) {
		_, resolved = r.Require("labels", compose.Selector{APIVersion: "example.org/v1", Kind: "Labels", Name: "cluster"})
		_, _ = r.Require("all", compose.Selector{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team-a", Labels: map[string]string{}})
		r.ComposeAgainWithin(20 * time.Second)
		r.ComposeAgainWithin(time.Hour) // never lengthens
		return compose.Outcome{}, nil
	}
	rsp := composetest.Run(t, compose.Run[toy](plan), composetest.Call{XR: toyXR(nil)})
	if resolved {
		t.Error("a requirement Crossplane has not answered is unresolved")
	}
	sel := rsp.GetRequirements().GetResources()["labels"]
	if sel.GetKind() != "Labels" || sel.GetMatchName() != "cluster" {
		t.Errorf("requirement = %v", sel)
	}
	all := rsp.GetRequirements().GetResources()["all"]
	if all.GetMatchLabels() == nil || len(all.GetMatchLabels().GetLabels()) != 0 || all.GetNamespace() != "team-a" {
		t.Errorf("every ConfigMap of team-a: requirement = %v", all)
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl != 20*time.Second {
		t.Errorf("TTL = %s, want 20s", ttl)
	}
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunPassesOnWhatItDoesNotKnow: fields a newer Crossplane or an
// earlier step sets on the desired state, the desired XR or a resource
// this step leaves alone reach the next step unchanged.
func TestRunPassesOnWhatItDoesNotKnow(t *testing.T) {
	var plan compose.Plan[toy] = func(r *compose.Request[toy]) (compose.Outcome, error) {
		r.Resources.Add("thing", thing(r.XR.Spec.Size))
		return compose.Outcome{Status: &toyStatus{Seen: 1}}, nil
	}
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "newer")
	req := composetest.Call{XR: toyXR(map[string]any{"size": int64(1)})}.Request(t)
	req.Desired.Resources = map[string]*fnv1.Resource{"earlier": {Resource: mustStruct(t, map[string]any{"kind": "Earlier"})}}
	for _, m := range []proto.Message{req.GetDesired(), req.GetDesired().GetComposite(), req.GetDesired().GetResources()["earlier"]} {
		m.ProtoReflect().SetUnknown(unknown)
	}
	w := composetest.Wire(t, req)
	rsp := fnwire.NewResponse(w, time.Minute)
	if _, err := compose.Run(plan).Compose(w, rsp, nil); err != nil {
		t.Fatal(err)
	}
	got := composetest.Proto(t, rsp).GetDesired()
	for what, m := range map[string]proto.Message{"state": got, "composite": got.GetComposite(), "earlier step's resource": got.GetResources()["earlier"]} {
		if u := m.ProtoReflect().GetUnknown(); string(u) != string(unknown) {
			t.Errorf("the desired %s's unknown fields = %q, want %q", what, u, unknown)
		}
	}
}

// stray is a typed object no scheme knows, so it cannot be composed.
type stray struct{ metav1.TypeMeta }

func (s *stray) DeepCopyObject() runtime.Object { c := *s; return &c }
