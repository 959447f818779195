package runmetrics

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/metrics"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func setup(t *testing.T) (*Metrics, *prometheus.Registry, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)}
	m := New(c.now)
	r := prometheus.NewPedanticRegistry()
	r.MustRegister(m.Collectors()...)
	return m, r, c
}

func TestDefs(t *testing.T) {
	if err := metrics.Check(Defs); err != nil {
		t.Fatal(err)
	}
	if err := metrics.Describe(Defs, New(nil).Collectors()); err != nil {
		t.Error(err)
	}
}

func TestRuns(t *testing.T) {
	m, r, _ := setup(t)
	m.Run("Placement", time.Millisecond, compose.ResultNormal)
	m.Run("Placement", time.Millisecond, compose.ResultWarning)
	m.Run(compose.UnknownKind, time.Millisecond, "something else")
	s := support.Gather(t, r)
	for labels, want := range map[[2]string]float64{{"Placement", "normal"}: 1, {"Placement", "warning"}: 1, {"unknown", "fatal"}: 1} {
		if got, _ := s.Value("fleetplane_function_runs_total", map[string]string{"kind": labels[0], "result": labels[1]}); got != want {
			t.Errorf("runs %v = %v, want %v", labels, got, want)
		}
	}
	if got, _ := s.Value("fleetplane_function_run_duration_seconds", map[string]string{"kind": "Placement"}); got != 2 {
		t.Errorf("%v Placement durations observed, want 2", got)
	}
}

func TestCopiesExpire(t *testing.T) {
	m, r, c := setup(t)
	m.Copies("team-a", "web", compose.Copies{Desired: 6, Delivered: 4, Held: 1, Failed: 1})
	s := support.Gather(t, r)
	for state, want := range map[string]float64{"desired": 6, "delivered": 4, "held": 1, "failed": 1} {
		if got, _ := s.Value("fleetplane_placement_copies", map[string]string{"namespace": "team-a", "name": "web", "state": state}); got != want {
			t.Errorf("%s = %v, want %v", state, got, want)
		}
	}
	c.t = c.t.Add(Expiry + time.Second)
	if n := support.Gather(t, r).Series("fleetplane_placement_copies"); n != 0 {
		t.Errorf("%d series of a Placement not composed for %s", n, Expiry)
	}
}

// TestCopiesBounded: Placements past MaxPlacements are counted, not
// kept, so a tenant cannot grow the shared function without end; once
// the old ones expire, new ones are kept again.
func TestCopiesBounded(t *testing.T) {
	m, r, c := setup(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range MaxPlacements + 500 {
		m.Copies("team-a", fmt.Sprintf("p%d", i), compose.Copies{Desired: 1})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// What the function keeps for a full table: about 1.6 MiB measured.
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > 4<<20 {
		t.Errorf("%d Placements keep %d bytes", MaxPlacements, kept)
	}
	s := support.Gather(t, r)
	if n := s.Series("fleetplane_placement_copies"); n != 4*MaxPlacements {
		t.Errorf("%d series, want %d", n, 4*MaxPlacements)
	}
	if got, _ := s.Value("fleetplane_function_placements_untracked_total", nil); got != 500 {
		t.Errorf("untracked = %v, want 500", got)
	}
	// An XR already tracked is updated even when full.
	m.Copies("team-a", "p0", compose.Copies{Desired: 2})
	if got, _ := support.Gather(t, r).Value("fleetplane_placement_copies", map[string]string{"name": "p0", "state": "desired"}); got != 2 {
		t.Errorf("a tracked Placement was not updated when full: %v", got)
	}
	c.t = c.t.Add(Expiry + time.Second)
	m.Copies("team-b", "new", compose.Copies{Desired: 1})
	if n := support.Gather(t, r).Series("fleetplane_placement_copies"); n != 4 {
		t.Errorf("%d series after the others expired, want 4", n)
	}
}

// BenchmarkRecord is what the metrics add to one RunFunction call of a
// Placement: the call counted and timed, its copies kept.
func BenchmarkRecord(b *testing.B) {
	m := New(nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Run("Placement", time.Millisecond, compose.ResultNormal)
		m.Copies("team-a", "web", compose.Copies{Desired: 8, Delivered: 8})
	}
}
