// Package compose is the glue every fleetplane composer shares between a
// RunFunctionRequest and a RunFunctionResponse: reading observed composed
// resources, emitting desired ones with readiness, holding back what must
// wait, keeping what already exists, and reporting one custom condition with
// events only on transitions.
package compose

import (
	"sort"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/internal/observe"
)

// Set accumulates the composed resources a composer wants, in the order of
// a dependency chain: a resource whose predecessors are not ready is held
// back unless it already exists, because dropping an observed resource from
// the desired state would delete it.
type Set struct {
	observed map[resource.Name]resource.ObservedComposed
	desired  map[resource.Name]*resource.DesiredComposed
	held     []resource.Name
}

// NewSet starts a Set over the observed composed resources.
func NewSet(observed map[resource.Name]resource.ObservedComposed) *Set {
	return &Set{observed: observed, desired: map[resource.Name]*resource.DesiredComposed{}}
}

// Observed returns the observed resource of that name, or nil.
func (s *Set) Observed(name resource.Name) *composed.Unstructured {
	o, ok := s.observed[name]
	if !ok {
		return nil
	}
	return o.Resource
}

// ObservedAll returns every observed resource by name.
func (s *Set) ObservedAll() map[resource.Name]*composed.Unstructured {
	out := make(map[resource.Name]*composed.Unstructured, len(s.observed))
	for n, o := range s.observed {
		out[n] = o.Resource
	}
	return out
}

// Exists reports whether a resource of that name has been composed before.
func (s *Set) Exists(name resource.Name) bool {
	_, ok := s.observed[name]
	return ok
}

// Add composes obj under name when gate is open or the resource exists
// already, and reports whether it is in the desired state. Its readiness is
// that of the observed resource: Ready=True.
func (s *Set) Add(name resource.Name, obj *composed.Unstructured, gate bool) bool {
	if !gate && !s.Exists(name) {
		s.held = append(s.held, name)
		return false
	}
	d := &resource.DesiredComposed{Resource: obj, Ready: resource.ReadyFalse}
	if observe.Ready(s.Observed(name)) {
		d.Ready = resource.ReadyTrue
	}
	s.desired[name] = d
	return true
}

// Desired reports whether the named resource is in the desired state.
func (s *Set) Desired(name resource.Name) bool {
	_, ok := s.desired[name]
	return ok
}

// MarkReady marks a desired resource ready whatever its observed state,
// for kinds that have no readiness of their own, such as Usages.
func (s *Set) MarkReady(name resource.Name) {
	if d, ok := s.desired[name]; ok {
		d.Ready = resource.ReadyTrue
	}
}

// Ready reports whether the named resource is desired and ready.
func (s *Set) Ready(name resource.Name) bool {
	d, ok := s.desired[name]
	return ok && d.Ready == resource.ReadyTrue
}

// Held lists, sorted, the resources held back waiting for predecessors.
func (s *Set) Held() []string {
	out := make([]string, len(s.held))
	for i, n := range s.held {
		out[i] = string(n)
	}
	sort.Strings(out)
	return out
}

// Freeze reduces the set to what already exists: nothing new is composed and
// nothing existing is deleted. A resource the composer still renders keeps
// its rendering; one it no longer renders (its spec entry was removed while
// frozen) is kept as observed, see Retain.
func (s *Set) Freeze() {
	for name := range s.desired {
		if !s.Exists(name) {
			delete(s.desired, name)
			s.held = append(s.held, name)
		}
	}
	for name, o := range s.observed {
		if _, ok := s.desired[name]; ok {
			continue
		}
		d := &resource.DesiredComposed{Resource: Retain(o.Resource), Ready: resource.ReadyFalse}
		if observe.Ready(o.Resource) {
			d.Ready = resource.ReadyTrue
		}
		s.desired[name] = d
	}
}

// Write puts the set into the response's desired state, next to what
// earlier pipeline steps desired.
func (s *Set) Write(rsp *fnv1.RunFunctionResponse) error {
	return response.SetDesiredComposedResources(rsp, s.desired)
}

// Retain turns an observed resource back into desired state that leaves it
// as it is: its kind, name, labels, annotations and spec. Crossplane's own
// bookkeeping annotations are left out so that the apply never rewinds them,
// except the external name, which must never be lost.
func Retain(o *composed.Unstructured) *composed.Unstructured {
	out := composed.New()
	out.SetAPIVersion(o.GetAPIVersion())
	out.SetKind(o.GetKind())
	if spec, ok := o.Object["spec"]; ok {
		out.Object["spec"] = spec
	}
	if labels := withoutCrossplaneKeys(o.GetLabels(), ""); len(labels) > 0 {
		out.SetLabels(labels)
	}
	if ann := withoutCrossplaneKeys(o.GetAnnotations(), "crossplane.io/external-name"); len(ann) > 0 {
		out.SetAnnotations(ann)
	}
	return out
}

func withoutCrossplaneKeys(in map[string]string, keep string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if k == keep || !strings.Contains(k, "crossplane.io/") {
			out[k] = v
		}
	}
	return out
}

// Condition is the one custom condition a composer reports on its XR.
type Condition struct {
	Type    string
	Status  corev1.ConditionStatus
	Reason  string
	Message string
	// Warning makes the transition event a Warning instead of Normal.
	Warning bool
}

// Report sets the condition on the XR and, when its reason or status
// differs from the observed XR's, adds a result so Crossplane records one
// event for the transition and none while nothing changes.
func Report(rsp *fnv1.RunFunctionResponse, xr *composite.Unstructured, c Condition) {
	var opt *response.ConditionOption
	switch c.Status {
	case corev1.ConditionTrue:
		opt = response.ConditionTrue(rsp, c.Type, c.Reason)
	case corev1.ConditionFalse:
		opt = response.ConditionFalse(rsp, c.Type, c.Reason)
	default:
		opt = response.ConditionUnknown(rsp, c.Type, c.Reason)
	}
	opt.WithMessage(c.Message).TargetComposite()

	prev := xr.GetCondition(xpv2.ConditionType(c.Type))
	if string(prev.Reason) == c.Reason && prev.Status == c.Status {
		return
	}
	if c.Warning {
		response.Warning(rsp, plainError(c.Message)).WithReason(c.Reason).TargetComposite()
		return
	}
	response.Normal(rsp, c.Message).WithReason(c.Reason).TargetComposite()
}

type plainError string

func (e plainError) Error() string { return string(e) }

// MarkCompositeNotReady overrides the readiness Crossplane would derive
// from the composed resources. Composers call it while they hold resources
// back or cannot proceed, because the resources composed so far may all be
// ready although the XR is not.
func MarkCompositeNotReady(rsp *fnv1.RunFunctionResponse) {
	if rsp.GetDesired() == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
}

// RequireByName asks Crossplane for a cluster-scoped resource by name under
// the given requirement key.
func RequireByName(rsp *fnv1.RunFunctionResponse, key, apiVersion, kind, name string) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[key] = &fnv1.ResourceSelector{
		ApiVersion: apiVersion,
		Kind:       kind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
	}
}

// Typed converts a typed resource into desired state. The zero status a Go
// struct always carries is dropped: functions own no status of the
// resources they compose.
func Typed(o runtime.Object) (*composed.Unstructured, error) {
	u, err := composed.From(o)
	if err != nil {
		return nil, err
	}
	delete(u.Object, "status")
	return u, nil
}
