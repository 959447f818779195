// Package fleetmetrics is provider-fleetplane's fleet-health metrics: what
// federation cycles, heartbeats and autoscalers did (counters and
// histograms, recorded as it happens) and where each resource stands
// (gauges, set from its status at every reconcile and removed with it).
//
// Every series is per managed resource (namespace and name) or per
// result; none is per partition, table or hub endpoint, which are
// unbounded and come from users. docs/reference/metrics.md lists them.
package fleetmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/metrics"
	"github.com/fleetplane/fleetplane/internal/scaling"
)

// Results of a federation cycle.
const (
	// CycleSynced ran every command it planned.
	CycleSynced = "synced"
	// CycleCommandsFailed reached the hub, but some commands failed.
	CycleCommandsFailed = "commands_failed"
	// CycleError could not read or plan, or its script could not run.
	CycleError = "error"
)

// Results of a heartbeat send.
const (
	SendSuccess = "success"
	SendFailure = "failure"
)

// Partition states of a federation.
const (
	StateFederated = "federated"
	StateHeldBack  = "held_back"
	StatePastTTL   = "past_ttl"
	StateBlocked   = "blocked"
	StateRejected  = "rejected"
)

const perResource = "one per managed resource"

var (
	mr = []string{"namespace", "name"}
	// cycleBuckets span a converged cycle on a small fleet (tens of
	// milliseconds) to cycle.Timeout (10 minutes).
	cycleBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	// sendBuckets span one ingestion command to the send timeout.
	sendBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
)

// The provider's metrics.
var (
	FederationCycles = metrics.Def{
		Name: "fleetplane_federation_cycles_total", Type: metrics.Counter, Labels: append(mr, "result"),
		Help:   "Federation cycles run, by result: synced, commands_failed (the hub was reached, some commands failed) or error (nothing ran).",
		Series: perResource + " and result (3)",
	}
	FederationCycleDuration = metrics.Def{
		Name: "fleetplane_federation_cycle_duration_seconds", Type: metrics.Histogram, Labels: []string{"result"}, Buckets: cycleBuckets,
		Help:   "How long federation cycles took, from reading heartbeats to the last command, by result.",
		Series: "3 results × 14 buckets, whatever the fleet's size",
	}
	FederationCommands = metrics.Def{
		Name: "fleetplane_federation_commands_total", Type: metrics.Counter, Labels: mr,
		Help:   "Mutating Kusto commands federation cycles ran on their hub.",
		Series: perResource,
	}
	FederationCommandFailures = metrics.Def{
		Name: "fleetplane_federation_command_failures_total", Type: metrics.Counter, Labels: mr,
		Help:   "Federation commands the hub refused; status.atProvider.errors says which.",
		Series: perResource,
	}
	FederationPartitions = metrics.Def{
		Name: "fleetplane_federation_partitions", Type: metrics.Gauge, Labels: append(mr, "state"),
		Help:   "Partitions of the last cycle by state: federated (all in the federation, held ones included), held_back (silent but kept by the safety guard), past_ttl (silent past the TTL, kept for the minimum retention), blocked (removed by the block list), rejected (heartbeats that failed validation, so not federated).",
		Series: perResource + " and state (5)",
	}
	FederationNewestHeartbeat = metrics.Def{
		Name: "fleetplane_federation_newest_heartbeat_timestamp_seconds", Type: metrics.Gauge, Labels: mr,
		Help:   "When the newest heartbeat the last cycle read was written; time() minus it is how stale the hub's view of the fleet is. Kept when a cycle reads none; 0 until a cycle has read one.",
		Series: perResource,
	}
	FederationLastCycle = metrics.Def{
		Name: "fleetplane_federation_last_cycle_timestamp_seconds", Type: metrics.Gauge, Labels: mr,
		Help:   "When the last cycle that reached the hub ended.",
		Series: perResource,
	}
	FederationLastSync = metrics.Def{
		Name: "fleetplane_federation_last_sync_timestamp_seconds", Type: metrics.Gauge, Labels: mr,
		Help:   "When the last cycle that ran every planned command ended.",
		Series: perResource,
	}
	HeartbeatSends = metrics.Def{
		Name: "fleetplane_heartbeat_sends_total", Type: metrics.Counter, Labels: append(mr, "result"),
		Help:   "Heartbeat rows sent to hubs, by result (success or failure); a heartbeat with three targets sends three.",
		Series: perResource + " and result (2)",
	}
	HeartbeatSendDuration = metrics.Def{
		Name: "fleetplane_heartbeat_send_duration_seconds", Type: metrics.Histogram, Labels: []string{"result"}, Buckets: sendBuckets,
		Help:   "How long sending one heartbeat row to one hub took, by result.",
		Series: "2 results × 12 buckets",
	}
	HeartbeatLastSuccess = metrics.Def{
		Name: "fleetplane_heartbeat_last_success_timestamp_seconds", Type: metrics.Gauge, Labels: mr,
		Help:   "When the heartbeat last reached every one of its targets: the oldest last success among them; 0 while a target has never been reached.",
		Series: perResource,
	}
	AutoscalerDecisions = metrics.Def{
		Name: "fleetplane_autoscaler_decisions_total", Type: metrics.Counter, Labels: append(mr, "decision"),
		Help:   "Autoscaler evaluations by decision: up, down or hold (an evaluation that could not measure holds).",
		Series: perResource + " and decision (3)",
	}
	AutoscalerMeasured = metrics.Def{
		Name: "fleetplane_autoscaler_measured", Type: metrics.Gauge, Labels: mr,
		Help:   "1 when the last evaluation measured every metric, 0 when one or more had no value (status.atProvider.metrics says why).",
		Series: perResource,
	}
	AutoscalerScore = metrics.Def{
		Name: "fleetplane_autoscaler_score", Type: metrics.Gauge, Labels: mr,
		Help:   "The last evaluation's weighted vote, -1 (scale in) to 1 (scale out); absent when it could not measure.",
		Series: perResource,
	}
	AutoscalerDesiredSize = metrics.Def{
		Name: "fleetplane_autoscaler_desired_size", Type: metrics.Gauge, Labels: mr,
		Help:   "The size the autoscaler decided, which the function composes.",
		Series: perResource,
	}
	AutoscalerObservedSize = metrics.Def{
		Name: "fleetplane_autoscaler_observed_size", Type: metrics.Gauge, Labels: mr,
		Help:   "The target's size at the last evaluation; absent when it could not be read.",
		Series: perResource,
	}
)

// Defs are all of the provider's own metrics.
var Defs = []metrics.Def{
	FederationCycles, FederationCycleDuration, FederationCommands, FederationCommandFailures,
	FederationPartitions, FederationNewestHeartbeat, FederationLastCycle, FederationLastSync,
	HeartbeatSends, HeartbeatSendDuration, HeartbeatLastSuccess,
	AutoscalerDecisions, AutoscalerMeasured, AutoscalerScore, AutoscalerDesiredSize, AutoscalerObservedSize,
}

// Metrics records the provider's metrics. A nil *Metrics records nothing,
// for controllers built without them (unit tests).
type Metrics struct {
	cycles, commands, commandFailures, sends, decisions *prometheus.CounterVec
	cycleDuration, sendDuration                         *prometheus.HistogramVec
	partitions, newest, lastCycle, lastSync, lastSend   *prometheus.GaugeVec
	measured, score, desired, observed                  *prometheus.GaugeVec
}

// New builds the provider's metrics; register them with Collectors.
func New() *Metrics {
	return &Metrics{
		cycles: FederationCycles.Counter(), cycleDuration: FederationCycleDuration.Histogram(),
		commands: FederationCommands.Counter(), commandFailures: FederationCommandFailures.Counter(),
		partitions: FederationPartitions.Gauge(), newest: FederationNewestHeartbeat.Gauge(),
		lastCycle: FederationLastCycle.Gauge(), lastSync: FederationLastSync.Gauge(),
		sends: HeartbeatSends.Counter(), sendDuration: HeartbeatSendDuration.Histogram(), lastSend: HeartbeatLastSuccess.Gauge(),
		decisions: AutoscalerDecisions.Counter(), measured: AutoscalerMeasured.Gauge(), score: AutoscalerScore.Gauge(),
		desired: AutoscalerDesiredSize.Gauge(), observed: AutoscalerObservedSize.Gauge(),
	}
}

// Collectors are the metrics to register, in Defs' order.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.cycles, m.cycleDuration, m.commands, m.commandFailures,
		m.partitions, m.newest, m.lastCycle, m.lastSync,
		m.sends, m.sendDuration, m.lastSend,
		m.decisions, m.measured, m.score, m.desired, m.observed,
	}
}

// FederationCycle records one cycle: how long it took, its result, and
// the commands it ran and saw fail.
func (m *Metrics) FederationCycle(f *v1alpha1.Federation, took time.Duration, result string, commands, failed int) {
	if m == nil {
		return
	}
	m.cycles.WithLabelValues(f.Namespace, f.Name, result).Inc()
	m.cycleDuration.WithLabelValues(result).Observe(took.Seconds())
	m.commands.WithLabelValues(f.Namespace, f.Name).Add(float64(commands))
	m.commandFailures.WithLabelValues(f.Namespace, f.Name).Add(float64(failed))
}

// Federation sets a federation's gauges from its status. A Federation
// that does not own its hub runs no cycle and has none.
func (m *Metrics) Federation(f *v1alpha1.Federation) {
	if m == nil {
		return
	}
	at := f.Status.AtProvider
	if at.Owner != "" || (at.LastCycleTime == nil && at.LastSyncTime == nil) {
		// Its counters stay: they say what it did before.
		forget(f.Namespace, f.Name, m.partitions, m.newest, m.lastCycle, m.lastSync)
		return
	}
	for state, n := range map[string]int32{
		StateFederated: at.PartitionCount, StateHeldBack: at.HeldBackCount, StatePastTTL: at.RetainedCount,
		StateBlocked: at.BlockedMatched, StateRejected: at.RejectedCount,
	} {
		m.partitions.WithLabelValues(f.Namespace, f.Name, state).Set(float64(n))
	}
	m.newest.WithLabelValues(f.Namespace, f.Name).Set(stamp(at.NewestHeartbeatTime))
	m.lastCycle.WithLabelValues(f.Namespace, f.Name).Set(stamp(at.LastCycleTime))
	m.lastSync.WithLabelValues(f.Namespace, f.Name).Set(stamp(at.LastSyncTime))
}

// ForgetFederation removes a federation's series, when it is deleted.
func (m *Metrics) ForgetFederation(namespace, name string) {
	if m == nil {
		return
	}
	forget(namespace, name, m.cycles, m.commands, m.commandFailures, m.partitions, m.newest, m.lastCycle, m.lastSync)
}

// HeartbeatSend records one row sent to one target.
func (m *Metrics) HeartbeatSend(h *v1alpha1.Heartbeat, took time.Duration, err error) {
	if m == nil {
		return
	}
	result := SendSuccess
	if err != nil {
		result = SendFailure
	}
	m.sends.WithLabelValues(h.Namespace, h.Name, result).Inc()
	m.sendDuration.WithLabelValues(result).Observe(took.Seconds())
}

// Heartbeat sets a heartbeat's gauge from its status.
func (m *Metrics) Heartbeat(h *v1alpha1.Heartbeat) {
	if m == nil {
		return
	}
	targets := h.Status.AtProvider.Targets
	if len(targets) == 0 {
		forget(h.Namespace, h.Name, m.lastSend)
		return
	}
	oldest := 0.0
	for i, t := range targets {
		s := stamp(t.LastSuccessTime)
		if i == 0 || s < oldest {
			oldest = s
		}
	}
	m.lastSend.WithLabelValues(h.Namespace, h.Name).Set(oldest)
}

// ForgetHeartbeat removes a heartbeat's series.
func (m *Metrics) ForgetHeartbeat(namespace, name string) {
	if m == nil {
		return
	}
	forget(namespace, name, m.sends, m.lastSend)
}

// AutoscalerDecision records one evaluation's decision.
func (m *Metrics) AutoscalerDecision(a *scalingv1alpha1.Autoscaler, decision scaling.Direction) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(a.Namespace, a.Name, decisionLabel(decision)).Inc()
}

// Autoscaler sets an autoscaler's gauges from its status.
func (m *Metrics) Autoscaler(a *scalingv1alpha1.Autoscaler) {
	if m == nil {
		return
	}
	at := a.Status.AtProvider
	if at.LastEvaluationTime == nil {
		forget(a.Namespace, a.Name, m.measured, m.score, m.desired, m.observed)
		return
	}
	ns, name := a.Namespace, a.Name
	m.desired.WithLabelValues(ns, name).Set(float64(at.DesiredSize))
	if at.ObservedSize != nil {
		m.observed.WithLabelValues(ns, name).Set(float64(*at.ObservedSize))
	} else {
		m.observed.DeleteLabelValues(ns, name)
	}
	if at.Score != nil {
		m.measured.WithLabelValues(ns, name).Set(1)
		m.score.WithLabelValues(ns, name).Set(*at.Score)
	} else {
		m.measured.WithLabelValues(ns, name).Set(0)
		m.score.DeleteLabelValues(ns, name)
	}
}

// ForgetAutoscaler removes an autoscaler's series.
func (m *Metrics) ForgetAutoscaler(namespace, name string) {
	if m == nil {
		return
	}
	forget(namespace, name, m.decisions, m.measured, m.score, m.desired, m.observed)
}

// decisionLabel keeps the decision label to its three values.
func decisionLabel(d scaling.Direction) string {
	switch d {
	case scaling.Up:
		return "up"
	case scaling.Down:
		return "down"
	case scaling.Hold:
		return "hold"
	}
	return "hold"
}

type partial interface {
	DeletePartialMatch(labels prometheus.Labels) int
}

func forget(namespace, name string, vecs ...partial) {
	l := prometheus.Labels{"namespace": namespace, "name": name}
	for _, v := range vecs {
		v.DeletePartialMatch(l)
	}
}

// stamp is a status time as a _timestamp_seconds value, 0 when unset.
func stamp(t *metav1.Time) float64 {
	if t == nil {
		return 0
	}
	return metrics.Timestamp(t.Time)
}
