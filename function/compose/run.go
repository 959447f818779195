// Package compose is the skeleton every fleetplane composer shares: it
// turns a RunFunctionRequest into a typed XR and a Set of composed
// resources, hands them to the kind's plan, and writes what the plan
// decided (composed resources with readiness, the XR's status, its
// readiness and its custom conditions, with an event only on
// transitions) into the RunFunctionResponse. A kind writes only its plan.
package compose

import (
	"fmt"
	"maps"
	"time"

	apiextv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/fleetplane/fleetplane/apis"
	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	"github.com/fleetplane/fleetplane/function/decode"
	"github.com/fleetplane/fleetplane/function/fnwire"
)

func init() {
	// composed.From, behind Typed, needs the scheme of every typed object
	// it converts.
	if err := apis.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
	// Kinds compose Kubernetes' own kinds too (ADXMon's workloads).
	if err := clientgoscheme.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}

// A Composer composes one kind of composite resource. function-fleetplane
// dispatches each request to the Composer of the XR's kind.
type Composer interface {
	Compose(req *fnwire.Request, rsp *fnwire.Response, in *v1beta1.Input) (Summary, error)
}

// A Summary is what a composition tells the function's metrics, beyond
// the response.
type Summary struct {
	// Copies, of a kind that distributes objects: what it placed.
	Copies *Copies
}

// Copies counts the copies of workload objects a Placement distributes.
type Copies struct {
	// Desired is objects × clusters.
	Desired int
	// Delivered copies are on their cluster and ready.
	Delivered int
	// Held copies wait for what they depend on (Set.Hold).
	Held int
	// Failed copies are left as they were: their templates do not expand,
	// or the cluster had an object of that name first.
	Failed int
}

// A Plan is what one kind decides for its XR X: it adds composed resources
// to r.Resources and says what the XR reports. Errors are for requests it
// cannot make sense of (a broken function input, for example); everything
// a user can fix belongs in the outcome's condition instead.
type Plan[X any] func(r *Request[X]) (Outcome, error)

// Outcome is what a plan reports on its XR.
type Outcome struct {
	// Status, when not nil, is written as the desired XR's status. It is
	// a typed status struct of the XR.
	Status any
	// Conditions are the kind's custom conditions, reported in order:
	// one for most kinds, one per phase for some.
	Conditions []Condition
	// Pending keeps the XR from being Ready although every composed
	// resource is: the kind has more to do (a workflow to finish, a gate
	// that is closed). The XR is also not Ready while resources are held.
	Pending bool
	// Settled says only an edit of the XR changes what it reports now (a
	// failed run, for one), so it is not composed again every
	// RecheckWhileWaiting however unready it or its resources are: an
	// edit is a watch event, and the default TTL still applies.
	Settled bool
	// Copies is reported to the function's metrics.
	Copies *Copies
}

// Request is one call of a plan.
type Request[X any] struct {
	// XR is the observed composite resource.
	XR *X
	// Resources collects what the plan composes, over what is observed.
	Resources *Set
	// Input is the function input; never nil.
	Input *v1beta1.Input

	req *fnwire.Request
	rsp *fnwire.Response
	// kind and namespace of the XR.
	kind, namespace string
}

// Selector says which resources a requirement asks Crossplane for.
type Selector struct {
	APIVersion, Kind string
	// Namespace of a namespaced kind, "" for a cluster-scoped one. A
	// namespaced XR always asks for a namespaced kind in one namespace:
	// without one, Crossplane would list across every namespace, never
	// what a namespaced XR may read. (The admin's cluster-scoped
	// ClusterPlacement asks with "" on purpose, and places nothing
	// namespaced that comes back.)
	Namespace string
	// Name asks for the one resource of that name, when Labels is nil.
	Name string
	// Labels, when not nil, asks for every resource whose labels include
	// these, sorted by name; empty asks for every resource of the kind.
	Labels map[string]string
}

// Require asks Crossplane for the resources sel selects, under key, and
// returns what Crossplane supplied. resolved is false until Crossplane has
// answered for key; only a resolved answer is meaningful, and an empty one
// means nothing matches. (What Crossplane supplied was decoded with the
// request, which fails as a whole if any of it is malformed.)
func (r *Request[X]) Require(key string, sel Selector) (items []resource.Required, resolved bool) {
	s := &fnv1.ResourceSelector{ApiVersion: sel.APIVersion, Kind: sel.Kind}
	if sel.Labels != nil {
		s.Match = &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: sel.Labels}}
	} else {
		s.Match = &fnv1.ResourceSelector_MatchName{MatchName: sel.Name}
	}
	return r.require(key, s, sel.Namespace)
}

func (r *Request[X]) require(key string, sel *fnv1.ResourceSelector, namespace string) ([]resource.Required, bool) {
	rest := r.rsp.Rest
	if rest.GetRequirements() == nil {
		rest.Requirements = &fnv1.Requirements{}
	}
	if rest.Requirements.Resources == nil {
		rest.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	if namespace != "" {
		// A namespaced selector without a namespace would list across
		// every namespace: never what a namespaced XR may read.
		sel.Namespace = &namespace
	}
	rest.Requirements.Resources[key] = sel
	objs, ok := r.req.Required[key]
	if !ok {
		return nil, false
	}
	items := make([]resource.Required, len(objs))
	for i, o := range objs {
		items[i] = resource.Required{Resource: &unstructured.Unstructured{Object: o}}
	}
	return items, true
}

// RecheckWhileWaiting is how soon Crossplane composes an XR again while
// it waits (on a resource not yet Ready, or on its kind's own gate,
// Outcome.Pending) or while Crossplane's circuit breaker drops its watch
// events (Responsive=False). Crossplane v2.4 otherwise relies on watch
// events alone until the response's TTL, a minute: an XR whose composed
// resource turned Ready, or changed, while the breaker was open sat
// unreconciled until the TTL ran out (crossplane/crossplane#7703). One
// RunFunction per such XR every 15 s costs little and bounds the delay.
const RecheckWhileWaiting = 15 * time.Second

// RecheckWhileDeaf is how soon Crossplane composes an XR again while it
// waits and the circuit breaker is open: then the event that would end the
// wait is dropped for certain, not by chance, and the TTL is all that moves
// the XR on. Creating a dozen resources opens the breaker (each produces
// several update events, two tokens each, against a burst of 100), so
// without this every later stage of an Experiment waited out 15 s on
// stand-ins that answer within one.
const RecheckWhileDeaf = 5 * time.Second

// ComposeAgainWithin shortens how long Crossplane may wait before it
// composes the XR again, for state Crossplane does not watch.
func (r *Request[X]) ComposeAgainWithin(d time.Duration) {
	rest := r.rsp.Rest
	if rest.GetMeta() == nil {
		rest.Meta = &fnv1.ResponseMeta{}
	}
	if cur := rest.GetMeta().GetTtl(); cur == nil || cur.AsDuration() > d {
		rest.Meta.Ttl = durationpb.New(d)
	}
}

// Run returns the Composer of the kind whose plan this is.
func Run[X any](plan Plan[X]) Composer {
	return kind[X]{plan: plan}
}

type kind[X any] struct{ plan Plan[X] }

func (k kind[X]) Compose(req *fnwire.Request, rsp *fnwire.Response, in *v1beta1.Input) (Summary, error) {
	oxr := &composite.Unstructured{Unstructured: unstructured.Unstructured{Object: objectOf(req.Observed.Composite)}}
	kindName := oxr.GetKind()
	xr := new(X)
	if err := decode.Into(oxr.Object, xr); err != nil {
		return Summary{}, fmt.Errorf("cannot decode the observed %s: %w", kindName, err)
	}
	if in == nil {
		in = &v1beta1.Input{}
	}
	r := &Request[X]{XR: xr, Resources: NewSet(observedComposed(req.Observed.Resources)), Input: in, req: req, rsp: rsp, kind: kindName, namespace: oxr.GetNamespace()}
	out, err := k.plan(r)
	if err == nil {
		err = r.Resources.Err()
	}
	if err != nil {
		return Summary{}, err
	}

	r.Resources.Write(rsp)
	// The desired XR of earlier steps, with this plan's status: a new
	// top-level map, so the request's is left as it came. Its fields this
	// function does not know go on too (the SDK's SetDesiredComposite
	// would drop them).
	desired := &fnwire.Resource{Object: map[string]any{}}
	if c := req.Desired.Composite; c != nil {
		maps.Copy(desired.Object, c.Object)
		desired.ConnectionDetails = c.ConnectionDetails
		desired.Unknown = c.Unknown
	}
	if out.Status != nil {
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out.Status)
		if err != nil {
			return Summary{}, fmt.Errorf("cannot encode the status of the %s: %w", kindName, err)
		}
		if len(st) > 0 {
			desired.Object["status"] = st
		}
	}
	if out.Pending || len(r.Resources.held) > 0 {
		// Crossplane would derive readiness from the composed resources
		// alone, which may all be ready although the XR is not.
		desired.Ready = fnv1.Ready_READY_FALSE
	}
	rsp.Desired.Composite = desired
	// While the circuit breaker is open even an edit of a settled XR
	// may be dropped, so that case rechecks too.
	waiting, deaf := !out.Settled && (out.Pending || r.Resources.Waiting()), notListening(oxr)
	switch {
	case waiting && deaf:
		r.ComposeAgainWithin(RecheckWhileDeaf)
	case waiting || deaf:
		r.ComposeAgainWithin(RecheckWhileWaiting)
	}
	for _, c := range out.Conditions {
		// A plan that decided nothing yet leaves its condition unset.
		if c.Type != "" {
			Report(rsp.Rest, oxr, c)
		}
	}
	return Summary{Copies: out.Copies}, nil
}

// objectOf is the object of a resource of the request, empty when there
// is none, as the SDK's request helpers give it.
func objectOf(r *fnwire.Resource) map[string]any {
	if r == nil || r.Object == nil {
		return map[string]any{}
	}
	return r.Object
}

func observedComposed(rs map[string]*fnwire.Resource) map[resource.Name]resource.ObservedComposed {
	out := make(map[resource.Name]resource.ObservedComposed, len(rs))
	for name, r := range rs {
		o := resource.ObservedComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: objectOf(r)}}}
		if r != nil {
			// nil when there are none: no composer reads them, and an
			// empty map each would be 55 allocations for a 50-database hub.
			o.ConnectionDetails = r.ConnectionDetails
		}
		out[resource.Name(name)] = o
	}
	return out
}

// notListening reports whether Crossplane's circuit breaker passes on
// none but a probe of the XR's watch events (Responsive=False).
func notListening(xr *composite.Unstructured) bool {
	return xr.GetCondition(apiextv1.TypeResponsive).Status == corev1.ConditionFalse
}

// Write puts the set into the response's desired state, next to what
// earlier pipeline steps desired.
func (s *Set) Write(rsp *fnwire.Response) {
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = make(map[string]*fnwire.Resource, len(s.desired))
	}
	for name, d := range s.desired {
		r := &fnwire.Resource{Object: d.Resource.Object, Ready: fnv1.Ready_READY_UNSPECIFIED}
		switch d.Ready {
		case resource.ReadyTrue:
			r.Ready = fnv1.Ready_READY_TRUE
		case resource.ReadyFalse:
			r.Ready = fnv1.Ready_READY_FALSE
		case resource.ReadyUnspecified:
		}
		rsp.Desired.Resources[string(name)] = r
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

// Plain converts a typed Kubernetes object into desired state by
// Kubernetes' own JSON rules, under which omitempty drops zero numbers and
// false (Typed keeps them, which schemas with minimums reject), and drops
// what the API server owns: status and a zero creationTimestamp.
func Plain(o runtime.Object) (*composed.Unstructured, error) {
	gvks, _, err := composed.Scheme.ObjectKinds(o)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	DropNulls(m)
	u := composed.New()
	u.Object = m
	u.SetGroupVersionKind(gvks[0])
	delete(u.Object, "status")
	return u, nil
}

// DropNulls deletes, in place, the nulls a typed object converts to for
// unset fields (a zero creationTimestamp, for one), which the API server
// would never send, and returns v.
func DropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = DropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = DropNulls(e)
		}
	}
	return v
}
