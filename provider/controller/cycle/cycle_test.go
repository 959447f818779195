package cycle

import (
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
)

func TestDue(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	cases := map[string]struct {
		last      *metav1.Time
		wantDue   bool
		wantUntil time.Duration
	}{
		"never ran":                {last: nil, wantDue: true},
		"zero time":                {last: &metav1.Time{}, wantDue: true},
		"half way":                 {last: at(-30 * time.Second), wantUntil: 30 * time.Second},
		"exactly one interval ago": {last: at(-time.Minute), wantDue: true},
		"long ago":                 {last: at(-time.Hour), wantDue: true},
		"clock went back":          {last: at(time.Minute), wantUntil: 2 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			due, until := Due(tc.last, time.Minute, now)
			if due != tc.wantDue || until != tc.wantUntil {
				t.Errorf("Due = %v, %s; want %v, %s", due, until, tc.wantDue, tc.wantUntil)
			}
		})
	}
}

func TestInterval(t *testing.T) {
	if got := Interval(nil); got != v1alpha1.DefaultInterval {
		t.Errorf("Interval(nil) = %s, want the default", got)
	}
	if got := Interval(&metav1.Duration{Duration: 5 * time.Second}); got != 5*time.Second {
		t.Errorf("Interval(5s) = %s", got)
	}
	if Optional(nil) != 0 || Optional(&metav1.Duration{Duration: time.Second}) != time.Second {
		t.Error("Optional: 0 when unset, else the duration")
	}
}

func TestPollHook(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	k := Kind[*v1alpha1.Heartbeat]{
		Last:     func(h *v1alpha1.Heartbeat) *metav1.Time { return h.Status.AtProvider.LastHeartbeatTime },
		Interval: func(h *v1alpha1.Heartbeat) time.Duration { return Interval(h.Spec.ForProvider.Interval) },
		Now:      func() time.Time { return now },
	}
	hb := func(ago time.Duration, interval time.Duration) *v1alpha1.Heartbeat {
		h := &v1alpha1.Heartbeat{}
		h.Spec.ForProvider.Interval = &metav1.Duration{Duration: interval}
		if ago >= 0 {
			h.Status.AtProvider.LastHeartbeatTime = &metav1.Time{Time: now.Add(-ago)}
		}
		return h
	}
	idle := k
	idle.Idle = true
	checked := idle
	checked.Check = cycle5s
	cases := map[string]struct {
		k    Kind[*v1alpha1.Heartbeat]
		mg   resource.Managed
		want time.Duration
	}{
		"due: soon, never in a tight loop":          {k: k, mg: hb(-1, time.Minute), want: time.Second},
		"next cycle before the poll":                {k: k, mg: hb(20*time.Second, 30*time.Second), want: 10 * time.Second},
		"poll before the next cycle":                {k: k, mg: hb(0, time.Hour), want: time.Minute},
		"another kind":                              {k: k, mg: &v1alpha1.Federation{}, want: time.Minute},
		"idle: the next cycle, past the poll":       {k: idle, mg: hb(0, time.Hour), want: time.Hour},
		"idle and due: soon, never in a tight loop": {k: idle, mg: hb(-1, time.Hour), want: time.Second},
		"idle, next cycle before the poll":          {k: idle, mg: hb(20*time.Second, 30*time.Second), want: 10 * time.Second},
		"a check sooner than the cycle":             {k: checked, mg: hb(0, time.Hour), want: 5 * time.Second},
		"a cycle sooner than the check":             {k: checked, mg: hb(58*time.Second, time.Minute), want: 2 * time.Second},
		"a check the resource does not ask for":     {k: checked, mg: hb(0, 30*time.Second), want: 30 * time.Second},
		"a check sooner than the poll, not idle":    {k: withCheck(k), mg: hb(0, time.Hour), want: 5 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.k.PollHook(tc.mg, time.Minute); got != tc.want {
				t.Errorf("PollHook = %s, want %s", got, tc.want)
			}
		})
	}
}

// cycle5s checks every 5s a resource whose interval is at least a minute.
func cycle5s(h *v1alpha1.Heartbeat) time.Duration {
	if Interval(h.Spec.ForProvider.Interval) >= time.Minute {
		return 5 * time.Second
	}
	return 0
}

func withCheck(k Kind[*v1alpha1.Heartbeat]) Kind[*v1alpha1.Heartbeat] {
	k.Check = cycle5s
	return k
}

type recorded struct{ events []event.Event }

func (r *recorded) Event(_ runtime.Object, e event.Event)    { r.events = append(r.events, e) }
func (r *recorded) WithAnnotations(...string) event.Recorder { return r }

func TestQuietDropsOnlyTheUpdateEvent(t *testing.T) {
	r := &recorded{}
	q := Quiet(r).WithAnnotations("external-name", "x")
	q.Event(nil, event.Normal(updated, "Successfully requested update of external resource"))
	q.Event(nil, event.Warning("CannotUpdateExternalResource", errors.New("hub unreachable")))
	q.Event(nil, event.Normal("CreatedExternalResource", "created"))
	if len(r.events) != 2 || r.events[0].Reason != "CannotUpdateExternalResource" || r.events[1].Reason != "CreatedExternalResource" {
		t.Errorf("recorded %v; want the failure and the creation, not the update", r.events)
	}
}
