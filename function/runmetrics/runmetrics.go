// Package runmetrics is function-fleetplane's own metrics: what each
// RunFunction call composed, for which kind, how long it took, and what
// each Placement delivered.
//
// The function is stateless and Crossplane does not call it when an XR is
// deleted, so a Placement's gauges are kept only while the function hears
// of it: a Placement not composed for Expiry (ten TTLs of Crossplane's
// default minute) drops out, and at most MaxPlacements are tracked, so a
// tenant who creates Placements without end cannot grow the shared
// function's memory.
package runmetrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/metrics"
)

const (
	// Expiry is how long a Placement's gauges outlive its last call.
	Expiry = 10 * time.Minute
	// MaxPlacements bounds the Placements whose gauges are kept.
	MaxPlacements = 10000
)

// States of a Placement's copies.
const (
	StateDesired   = "desired"
	StateDelivered = "delivered"
	StateHeld      = "held"
	StateFailed    = "failed"
)

// The function's metrics.
var (
	Runs = metrics.Def{
		Name: "fleetplane_function_runs_total", Type: metrics.Counter, Labels: []string{"kind", "result"},
		Help:   "RunFunction calls by the XR's kind (unknown for a kind the function does not compose) and the most severe result returned: normal, warning, refused (the policy refused the XR) or fatal.",
		Series: "8 kinds × 3 results",
	}
	RunDuration = metrics.Def{
		Name: "fleetplane_function_run_duration_seconds", Type: metrics.Histogram, Labels: []string{"kind"},
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		Help:    "How long composing one XR took, by kind, from the decoded request to the response.",
		Series:  "8 kinds × 13 buckets",
	}
	PlacementCopies = metrics.Def{
		Name: "fleetplane_placement_copies", Type: metrics.Gauge, Labels: []string{"namespace", "name", "state"},
		Help:   "A Placement's copies as its last composition found them: desired (objects × clusters), delivered (on the cluster and ready), held (waiting on what they depend on) and failed (left as they were: a template that does not expand, an object the cluster had first, or a Placement too large to deliver).",
		Series: "4 per Placement composed in the last 10 minutes, at most 10,000 Placements",
	}
	PlacementsUntracked = metrics.Def{
		Name: "fleetplane_function_placements_untracked_total", Type: metrics.Counter,
		Help:   "Placement compositions whose copies were not kept as gauges because 10,000 Placements already were.",
		Series: "one",
	}
)

// Defs are all of the function's own metrics.
var Defs = []metrics.Def{Runs, RunDuration, PlacementCopies, PlacementsUntracked}

// Metrics records the function's metrics; it is a compose.Recorder.
type Metrics struct {
	runs      *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	untracked *prometheus.CounterVec
	copies    *copies
}

var _ compose.Recorder = (*Metrics)(nil)

// New builds the function's metrics; now is the clock, time.Now when nil.
func New(now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	return &Metrics{
		runs: Runs.Counter(), duration: RunDuration.Histogram(), untracked: PlacementsUntracked.Counter(),
		copies: &copies{desc: PlacementCopies.Desc(), now: now, byXR: map[xr]entry{}},
	}
}

// Collectors are the metrics to register, in Defs' order.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.runs, m.duration, m.copies, m.untracked}
}

// Run records one call.
func (m *Metrics) Run(kind string, took time.Duration, result string) {
	switch result {
	case compose.ResultNormal, compose.ResultWarning, compose.ResultRefused, compose.ResultFatal:
	default:
		result = compose.ResultFatal
	}
	m.runs.WithLabelValues(kind, result).Inc()
	m.duration.WithLabelValues(kind).Observe(took.Seconds())
}

// Copies records what a call placed for a Placement.
func (m *Metrics) Copies(namespace, name string, c compose.Copies) {
	if !m.copies.set(xr{namespace, name}, c) {
		m.untracked.WithLabelValues().Inc()
	}
}

type xr struct{ namespace, name string }

type entry struct {
	copies compose.Copies
	seen   time.Time
}

// copies is the fleetplane_placement_copies gauge: a collector that
// builds its samples at scrape time from the entries still fresh.
type copies struct {
	desc *prometheus.Desc
	now  func() time.Time

	mu   sync.Mutex
	byXR map[xr]entry
}

// set keeps c for x; false when x is new and the map is full even after
// expired entries are dropped.
func (c *copies) set(x xr, cp compose.Copies) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.byXR[x]; !ok && len(c.byXR) >= MaxPlacements {
		c.expire(now)
		if len(c.byXR) >= MaxPlacements {
			return false
		}
	}
	c.byXR[x] = entry{copies: cp, seen: now}
	return true
}

// expire drops entries not seen for Expiry; c.mu is held.
func (c *copies) expire(now time.Time) {
	for x, e := range c.byXR {
		if now.Sub(e.seen) > Expiry {
			delete(c.byXR, x)
		}
	}
}

func (c *copies) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *copies) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(c.now())
	for x, e := range c.byXR {
		for state, n := range map[string]int{
			StateDesired: e.copies.Desired, StateDelivered: e.copies.Delivered,
			StateHeld: e.copies.Held, StateFailed: e.copies.Failed,
		} {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), x.namespace, x.name, state)
		}
	}
}
