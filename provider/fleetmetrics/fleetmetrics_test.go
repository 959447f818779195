package fleetmetrics

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/metrics"
	"github.com/fleetplane/fleetplane/internal/scaling"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

var at = time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)

func registry(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	m := New()
	r := prometheus.NewPedanticRegistry()
	r.MustRegister(m.Collectors()...)
	return m, r
}

// TestDefs holds every definition to the conventions and every collector
// to its definition: what docs/reference/metrics.md and the dashboard
// checks read is what the provider registers.
func TestDefs(t *testing.T) {
	if err := metrics.Check(Defs); err != nil {
		t.Fatal(err)
	}
	if err := metrics.Describe(Defs, New().Collectors()); err != nil {
		t.Error(err)
	}
}

func TestFederation(t *testing.T) {
	m, r := registry(t)
	f := &v1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "hub"}}
	f.Status.AtProvider = v1alpha1.FederationObservation{
		PartitionCount: 5, HeldBackCount: 2, RetainedCount: 1, BlockedMatched: 3, RejectedCount: 4,
		NewestHeartbeatTime: &metav1.Time{Time: at}, LastCycleTime: &metav1.Time{Time: at.Add(time.Minute)},
	}
	m.Federation(f)
	m.FederationCycle(f, 2*time.Second, CycleCommandsFailed, 7, 2)
	m.FederationCycle(f, time.Second, CycleSynced, 3, 0)
	s := support.Gather(t, r)
	want := map[string]float64{
		`fleetplane_federation_partitions/state=federated`:                    5,
		`fleetplane_federation_partitions/state=held_back`:                    2,
		`fleetplane_federation_partitions/state=past_ttl`:                     1,
		`fleetplane_federation_partitions/state=blocked`:                      3,
		`fleetplane_federation_partitions/state=rejected`:                     4,
		`fleetplane_federation_newest_heartbeat_timestamp_seconds/`:           float64(at.Unix()),
		`fleetplane_federation_last_cycle_timestamp_seconds/`:                 float64(at.Unix() + 60),
		`fleetplane_federation_last_sync_timestamp_seconds/`:                  0,
		`fleetplane_federation_cycles_total/result=commands_failed`:           1,
		`fleetplane_federation_cycles_total/result=synced`:                    1,
		`fleetplane_federation_commands_total/`:                               10,
		`fleetplane_federation_command_failures_total/`:                       2,
		`fleetplane_federation_cycle_duration_seconds/result=synced`:          1,
		`fleetplane_federation_cycle_duration_seconds/result=commands_failed`: 1,
	}
	check(t, s, want, map[string]string{"namespace": "team-a", "name": "hub"})

	// A Federation that does not own its hub has no gauges; what it did
	// before is still counted, until it is deleted.
	f.Status.AtProvider.Owner = "team-b/first"
	m.Federation(f)
	s = support.Gather(t, r)
	if s.Series("fleetplane_federation_partitions")+s.Series("fleetplane_federation_last_cycle_timestamp_seconds") != 0 {
		t.Error("gauges kept for a Federation that runs no cycle")
	}
	if _, ok := s.Value("fleetplane_federation_cycles_total", map[string]string{"name": "hub"}); !ok {
		t.Error("counters dropped with the gauges")
	}
	m.ForgetFederation("team-a", "hub")
	s = support.Gather(t, r)
	for _, d := range Defs {
		if strings.HasPrefix(d.Name, "fleetplane_federation_") && d.Type != metrics.Histogram {
			if _, ok := s.Value(d.Name, map[string]string{"name": "hub"}); ok {
				t.Errorf("%s kept for a deleted Federation", d.Name)
			}
		}
	}
}

func TestHeartbeat(t *testing.T) {
	m, r := registry(t)
	h := &v1alpha1.Heartbeat{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p1"}}
	h.Status.AtProvider.Targets = []v1alpha1.HeartbeatTargetStatus{
		{Endpoint: "https://hub1", LastSuccessTime: &metav1.Time{Time: at}},
		{Endpoint: "https://hub2", LastSuccessTime: &metav1.Time{Time: at.Add(-time.Hour)}},
	}
	m.Heartbeat(h)
	m.HeartbeatSend(h, 10*time.Millisecond, nil)
	m.HeartbeatSend(h, time.Second, errors.New("refused"))
	mine := map[string]string{"namespace": "team-a", "name": "p1"}
	check(t, support.Gather(t, r), map[string]float64{
		"fleetplane_heartbeat_last_success_timestamp_seconds/": float64(at.Add(-time.Hour).Unix()),
		"fleetplane_heartbeat_sends_total/result=success":      1,
		"fleetplane_heartbeat_sends_total/result=failure":      1,
	}, mine)

	// A target never reached makes the whole heartbeat "never".
	h.Status.AtProvider.Targets = append(h.Status.AtProvider.Targets, v1alpha1.HeartbeatTargetStatus{Endpoint: "https://hub3", LastError: "refused"})
	m.Heartbeat(h)
	check(t, support.Gather(t, r), map[string]float64{"fleetplane_heartbeat_last_success_timestamp_seconds/": 0}, mine)

	m.ForgetHeartbeat("team-a", "p1")
	if s := support.Gather(t, r); s.Series("fleetplane_heartbeat_sends_total")+s.Series("fleetplane_heartbeat_last_success_timestamp_seconds") != 0 {
		t.Error("a deleted heartbeat's series stay")
	}
}

func TestAutoscaler(t *testing.T) {
	m, r := registry(t)
	a := &scalingv1alpha1.Autoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ingestor"}}
	score, size := 0.5, int32(3)
	a.Status.AtProvider = scalingv1alpha1.AutoscalerObservation{LastEvaluationTime: &metav1.Time{Time: at}, DesiredSize: 4, ObservedSize: &size, Score: &score}
	m.Autoscaler(a)
	for _, d := range []scaling.Direction{scaling.Up, scaling.Hold, "Sideways", ""} {
		m.AutoscalerDecision(a, d)
	}
	mine := map[string]string{"namespace": "team-a", "name": "ingestor"}
	s := support.Gather(t, r)
	check(t, s, map[string]float64{
		"fleetplane_autoscaler_desired_size/": 4, "fleetplane_autoscaler_observed_size/": 3,
		"fleetplane_autoscaler_score/": 0.5, "fleetplane_autoscaler_measured/": 1,
		"fleetplane_autoscaler_decisions_total/decision=up": 1, "fleetplane_autoscaler_decisions_total/decision=hold": 3,
	}, mine)
	if n := s.Series("fleetplane_autoscaler_decisions_total"); n != 2 {
		t.Errorf("%d decision series; a decision label has three values at most", n)
	}

	// An evaluation that could not measure: measured 0, no score.
	a.Status.AtProvider.Score, a.Status.AtProvider.ObservedSize = nil, nil
	m.Autoscaler(a)
	s = support.Gather(t, r)
	check(t, s, map[string]float64{"fleetplane_autoscaler_measured/": 0}, mine)
	for _, n := range []string{"fleetplane_autoscaler_score", "fleetplane_autoscaler_observed_size"} {
		if _, ok := s.Value(n, mine); ok {
			t.Errorf("%s kept without a measurement", n)
		}
	}
}

// TestNil: controllers built without metrics record nothing, and do not
// panic.
func TestNil(t *testing.T) {
	var m *Metrics
	m.Federation(&v1alpha1.Federation{})
	m.FederationCycle(&v1alpha1.Federation{}, 0, CycleSynced, 0, 0)
	m.Heartbeat(&v1alpha1.Heartbeat{})
	m.HeartbeatSend(&v1alpha1.Heartbeat{}, 0, nil)
	m.Autoscaler(&scalingv1alpha1.Autoscaler{})
	m.AutoscalerDecision(&scalingv1alpha1.Autoscaler{}, scaling.Up)
}

// check compares samples named "family/label=value" (the label optional)
// with want, within the labels every sample shares.
func check(t *testing.T, s support.Samples, want map[string]float64, common map[string]string) {
	t.Helper()
	for key, w := range want {
		name, sel, _ := strings.Cut(key, "/")
		labels := maps.Clone(common)
		if k, v, ok := strings.Cut(sel, "="); ok {
			labels[k] = v
		}
		if strings.HasSuffix(name, "_seconds") && strings.Contains(name, "duration") {
			delete(labels, "namespace")
			delete(labels, "name")
		}
		got, ok := s.Value(name, labels)
		if !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, w)
		}
	}
}

// BenchmarkFederation is what the metrics add to one federation
// reconcile: the gauges set from the status and, after a cycle, the cycle
// recorded.
func BenchmarkFederation(b *testing.B) {
	m := New()
	f := &v1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "hub"}}
	f.Status.AtProvider = v1alpha1.FederationObservation{PartitionCount: 1000, LastCycleTime: &metav1.Time{Time: at}, NewestHeartbeatTime: &metav1.Time{Time: at}}
	b.ReportAllocs()
	for b.Loop() {
		m.Federation(f)
		m.FederationCycle(f, time.Second, CycleSynced, 0, 0)
	}
}
