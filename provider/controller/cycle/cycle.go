// Package cycle is what provider-fleetplane's periodic managed resources
// (Heartbeat, Federation) share: an interval, an Observe that reports the
// resource out of date when the next cycle is due, a poll hook that comes
// back at that moment, and a bound on how long one cycle may take.
//
// # Where a cycle runs
//
// A cycle runs inside Update, synchronously. It holds one of the
// controller's workers (there are --max-reconcile-rate of them) for as
// long as it takes, which Timeout bounds; each of its steps has a deadline
// of its own, so a hung cluster costs one step, not the worker. Running
// cycles in the background instead would free the worker, but needs a
// second record of "a cycle is running" that a provider restart loses,
// and gains nothing a bounded cycle does not already have: Kusto commands
// are bounded and the cycle's writes are idempotent.
//
// What a synchronous cycle must not do is make noise. crossplane-runtime
// records an UpdatedExternalResource event after every successful Update:
// for a periodic kind that is one event per resource per cycle, forever
// (1,000 heartbeats at 10 minutes is 100 Event writes a minute that say
// nothing). Quiet drops that one event; failures are still recorded, as
// are the cycle's own conditions.
package cycle

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
)

// Timeout bounds one reconcile of a periodic resource, cycle included.
const Timeout = 10 * time.Minute

// minimumWait keeps a due resource from being polled in a tight loop.
const minimumWait = time.Second

// Interval is a spec's interval, or DefaultInterval when it sets none.
func Interval(d *metav1.Duration) time.Duration {
	if d != nil && d.Duration > 0 {
		return d.Duration
	}
	return v1alpha1.DefaultInterval
}

// Optional is an optional duration of a spec, 0 when it sets none: for
// Kind.Check, where 0 means no check.
func Optional(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

// Due reports whether a cycle that last ran at last is due again at now,
// and how long until it is. A cycle that never ran is due.
func Due(last *metav1.Time, interval time.Duration, now time.Time) (bool, time.Duration) {
	if last == nil || last.IsZero() {
		return true, 0
	}
	next := last.Add(interval)
	if !now.Before(next) {
		return true, 0
	}
	return false, next.Sub(now)
}

// A Kind says where a periodic resource keeps its last run and interval.
type Kind[T resource.Managed] struct {
	// Last is when the resource's last cycle ran, nil if never.
	Last func(T) *metav1.Time
	// Interval between cycles.
	Interval func(T) time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Idle says the kind has nothing to observe between cycles, so it
	// comes back when the next cycle is due rather than at every poll.
	// Spec changes still arrive at once, as watch events.
	Idle bool
	// Check, when not nil and positive for a resource, is how often it is
	// looked at between cycles whatever the poll interval or Idle say: for
	// kinds whose Observe asks, cheaply, whether a cycle should run early.
	Check func(T) time.Duration
	// Hold, when not nil and positive for a resource, is how long its
	// next cycle is held back (its namespace spent its share): it comes
	// back then, checks included, rather than when the cycle is due.
	Hold func(T) time.Duration
}

func (k Kind[T]) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// Due reports whether mg's next cycle is due.
func (k Kind[T]) Due(mg T) bool {
	due, _ := Due(k.Last(mg), k.Interval(mg), k.now())
	return due
}

// PollHook comes back when the next cycle is due, or at the poll interval
// if that is sooner and the kind is not Idle, or at the resource's check
// interval if that is sooner still; but not before a hold ends.
func (k Kind[T]) PollHook(mg resource.Managed, poll time.Duration) time.Duration {
	m, ok := mg.(T)
	if !ok {
		return poll
	}
	_, until := Due(k.Last(m), k.Interval(m), k.now())
	if !k.Idle {
		until = min(until, poll)
	}
	if k.Check != nil {
		if c := k.Check(m); c > 0 {
			until = min(until, c)
		}
	}
	if k.Hold != nil {
		until = max(until, k.Hold(m))
	}
	return max(until, minimumWait)
}

// Options are the reconciler options of a periodic kind.
func (k Kind[T]) Options() shared.Options {
	return shared.Options{
		Reconciler: []managed.ReconcilerOption{managed.WithPollIntervalHook(k.PollHook), managed.WithTimeout(Timeout)},
		Recorder:   Quiet,
	}
}

// Quiet wraps a recorder so that it drops the event crossplane-runtime
// records after each successful Update, which for a periodic kind is each
// cycle. It wraps rather than using the recorder's own filters because
// APIRecorder.WithAnnotations, which the reconciler calls for every
// event, returns a recorder without them.
func Quiet(r event.Recorder) event.Recorder { return quiet{r} }

// updated is crossplane-runtime's reason for a successful Update.
const updated event.Reason = "UpdatedExternalResource"

type quiet struct{ event.Recorder }

func (q quiet) Event(obj runtime.Object, e event.Event) {
	if e.Type == event.TypeNormal && e.Reason == updated {
		return
	}
	q.Recorder.Event(obj, e)
}

func (q quiet) WithAnnotations(keysAndValues ...string) event.Recorder {
	return quiet{q.Recorder.WithAnnotations(keysAndValues...)}
}
