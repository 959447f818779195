package compose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/internal/observe"
)

// Set accumulates the resources one XR composes, with the order in which
// they may be created expressed as data: each resource names the resources
// it comes after.
//
// The rule, the same for every kind:
//
//   - A resource that does not exist yet is created only once every
//     resource it comes after is Ready (and any extra precondition its
//     composer states holds). Until then it is held, and the XR is not
//     Ready.
//   - A resource that exists is always composed from the current spec,
//     whatever its predecessors' state: a user's edit reaches it at once,
//     because holding it back would let one broken predecessor freeze the
//     fix for everything after it. Order governs creation, not updates.
//   - A resource that exists is never dropped because a predecessor
//     turned unready or the composer cannot render it right now: dropping
//     it from the desired state would delete it. Composers call Keep for
//     those, which re-emits it as observed.
type Set struct {
	observed map[resource.Name]resource.ObservedComposed
	desired  map[resource.Name]*resource.DesiredComposed
	held     []resource.Name
	// err is the first error AddObject or Fail kept.
	err error
}

// NewSet starts a Set over the observed composed resources.
func NewSet(observed map[resource.Name]resource.ObservedComposed) *Set {
	if observed == nil {
		observed = map[resource.Name]resource.ObservedComposed{}
	}
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

// ObservedNames lists the names of every observed resource, sorted.
func (s *Set) ObservedNames() []resource.Name {
	out := make([]resource.Name, 0, len(s.observed))
	for n := range s.observed {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Exists reports whether a resource of that name has been composed before.
func (s *Set) Exists(name resource.Name) bool {
	_, ok := s.observed[name]
	return ok
}

// Add composes obj under name, created only once every resource in after
// is Ready; see Set for the rule. It reports whether obj is in the desired
// state.
func (s *Set) Add(name resource.Name, obj *composed.Unstructured, after ...resource.Name) bool {
	return s.AddWhen(true, name, obj, after...)
}

// AddWhen is Add with a further precondition for creation that is not a
// composed resource's readiness, such as an endpoint being known or the
// inputs a resource is rendered from being resolved.
func (s *Set) AddWhen(ok bool, name resource.Name, obj *composed.Unstructured, after ...resource.Name) bool {
	if !s.Exists(name) {
		for _, a := range after {
			ok = ok && s.Ready(a)
		}
		if !ok {
			s.held = append(s.held, name)
			return false
		}
	}
	s.put(name, obj)
	return true
}

// AddObject is Add for a typed Kubernetes object, converted by
// Kubernetes' JSON rules (Plain).
func (s *Set) AddObject(name resource.Name, obj runtime.Object, after ...resource.Name) bool {
	return s.AddObjectWhen(true, name, obj, after...)
}

// AddObjectWhen is AddWhen for a typed Kubernetes object. A conversion
// that fails is kept, not returned (see Fail), so a plan need not check
// each object it adds.
func (s *Set) AddObjectWhen(ok bool, name resource.Name, obj runtime.Object, after ...resource.Name) bool {
	u, err := Plain(obj)
	if err != nil {
		s.Fail(fmt.Errorf("cannot compose %s: %w", name, err))
		return false
	}
	return s.AddWhen(ok, name, u, after...)
}

// Fail keeps err, the first one only: once the plan returns, Run fails
// the whole composition with it, so that nothing a plan could not render
// is dropped from the desired state (which would delete it). For errors
// no user can fix: a type that does not convert, an embedded manifest
// that does not parse.
func (s *Set) Fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Err is the error Fail kept, nil when none.
func (s *Set) Err() error { return s.err }

// Keep composes, as observed, every named resource that exists: for
// resources the composer cannot render right now. Those that do not exist
// stay absent.
func (s *Set) Keep(names ...resource.Name) {
	for _, n := range names {
		if o := s.Observed(n); o != nil && !s.Desired(n) {
			s.put(n, Retain(o))
		}
	}
}

func (s *Set) put(name resource.Name, obj *composed.Unstructured) {
	d := &resource.DesiredComposed{Resource: obj, Ready: resource.ReadyFalse}
	if observe.Ready(s.Observed(name)) {
		d.Ready = resource.ReadyTrue
	}
	s.desired[name] = d
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

// Waiting reports whether anything composed is not Ready yet: a resource
// held back, or a desired one whose observed state is not ready.
func (s *Set) Waiting() bool {
	if len(s.held) > 0 {
		return true
	}
	for _, d := range s.desired {
		if d.Ready != resource.ReadyTrue {
			return true
		}
	}
	return false
}

// Held lists, sorted, the resources held back waiting for predecessors.
func (s *Set) Held() []string {
	out := make([]string, len(s.held))
	for i, n := range s.held {
		out[i] = string(n)
	}
	slices.Sort(out)
	return out
}

// Freeze reduces the set to what already exists: nothing new is composed
// and nothing existing is deleted. A resource the composer still renders
// keeps its rendering (the Set's rule: edits reach what exists); one it no
// longer renders is kept as observed.
func (s *Set) Freeze() {
	for name := range s.desired {
		if !s.Exists(name) {
			delete(s.desired, name)
			s.held = append(s.held, name)
		}
	}
	s.Keep(s.ObservedNames()...)
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
