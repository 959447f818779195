// Package metrics describes fleetplane's own Prometheus metrics as data:
// a name, a type, labels, help and the bound on how many series each may
// have. The function and the provider build their collectors from these
// definitions, docs/reference/metrics.md is generated from them, and the
// shipped dashboard and alerts are checked against them, so a metric
// cannot be renamed without the check failing.
package metrics

import (
	"fmt"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Type is a Prometheus metric type.
type Type string

// The types fleetplane uses.
const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
)

// A Def is one metric.
type Def struct {
	Name string
	Type Type
	Help string
	// Labels in order. Each takes values from a closed set or names one
	// Kubernetes object (namespace and name); none takes free text.
	Labels []string
	// Series says how many series the metric may have, in words: the
	// bound its labels put on it.
	Series string
	// Buckets of a histogram; prometheus.DefBuckets when nil.
	Buckets []float64
}

// Counter builds d as a counter; it panics when d is not one, a
// programming error found by the package's tests.
func (d Def) Counter() *prometheus.CounterVec {
	d.must(Counter)
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
}

// Gauge builds d as a gauge.
func (d Def) Gauge() *prometheus.GaugeVec {
	d.must(Gauge)
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
}

// Histogram builds d as a histogram.
func (d Def) Histogram() *prometheus.HistogramVec {
	d.must(Histogram)
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: d.Buckets}, d.Labels)
}

// Desc is d's descriptor, for collectors that build their samples at
// scrape time.
func (d Def) Desc() *prometheus.Desc {
	return prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
}

func (d Def) must(t Type) {
	if d.Type != t {
		panic(fmt.Sprintf("metric %s is a %s, not a %s", d.Name, d.Type, t))
	}
}

// Samples names the sample series of d as Prometheus
// exposes them: a histogram is _bucket, _sum and _count.
func (d Def) Samples() []string {
	if d.Type == Histogram {
		return []string{d.Name + "_bucket", d.Name + "_sum", d.Name + "_count"}
	}
	return []string{d.Name}
}

var nameRE = regexp.MustCompile(`^fleetplane_[a-z][a-z0-9_]*[a-z0-9]$`)

// Labels are the only labels a fleetplane metric may have, and what bounds
// each: a label outside them, such as an endpoint or a table, would grow
// with the fleet or carry what a user wrote.
var Labels = map[string]string{
	"namespace": "the namespace of one Kubernetes object",
	"name":      "the name of that object",
	"result":    "a closed set of outcomes",
	"state":     "a closed set of states",
	"decision":  "up, down or hold",
	"kind":      "a kind the function composes, or unknown",
}

// Check holds defs to Prometheus' naming conventions: a fleetplane_
// prefix, counters ending _total and nothing else ending so, histograms
// of time in _seconds, only the bounded Labels, help text, a stated series
// bound, and no name twice.
func Check(defs []Def) error {
	seen := map[string]bool{}
	for _, d := range defs {
		switch {
		case !nameRE.MatchString(d.Name):
			return fmt.Errorf("metric %q: names are fleetplane_ and snake case", d.Name)
		case seen[d.Name]:
			return fmt.Errorf("metric %q is defined twice", d.Name)
		case d.Type != Counter && d.Type != Gauge && d.Type != Histogram:
			return fmt.Errorf("metric %q has type %q", d.Name, d.Type)
		case (d.Type == Counter) != hasSuffix(d.Name, "_total"):
			return fmt.Errorf("metric %q: counters, and only counters, end in _total", d.Name)
		case d.Type == Histogram && !hasSuffix(d.Name, "_seconds"):
			return fmt.Errorf("metric %q: fleetplane's histograms measure time and end in _seconds", d.Name)
		case d.Help == "" || d.Series == "":
			return fmt.Errorf("metric %q needs help and a stated series bound", d.Name)
		}
		seen[d.Name] = true
		for _, l := range d.Labels {
			if _, ok := Labels[l]; !ok {
				return fmt.Errorf("metric %q: label %q is not one of the bounded labels (metrics.Labels)", d.Name, l)
			}
		}
	}
	return nil
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// Timestamp is t in seconds since the epoch, as _timestamp_seconds
// gauges carry it; 0 for a zero time, which PromQL reads as "never".
func Timestamp(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// Describe checks that collectors are defs, one each and in order, as a
// binary registers them: what the reference and the dashboard checks read
// is then what is served.
func Describe(defs []Def, collectors []prometheus.Collector) error {
	if len(collectors) != len(defs) {
		return fmt.Errorf("%d collectors for %d definitions", len(collectors), len(defs))
	}
	for i, c := range collectors {
		ch := make(chan *prometheus.Desc, 1)
		c.Describe(ch)
		if got, want := (<-ch).String(), defs[i].Desc().String(); got != want {
			return fmt.Errorf("collector %d is %s, want %s", i, got, want)
		}
	}
	return nil
}
