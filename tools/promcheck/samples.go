package main

import (
	"math"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
)

type sample struct {
	labels labels.Labels
	value  float64
}

// samples are the series one metric of a scraped family stands for, as
// Prometheus stores them: a histogram as _bucket, _sum and _count.
func samples(name string, m *dto.Metric) []sample {
	base := map[string]string{}
	for _, l := range m.GetLabel() {
		base[l.GetName()] = l.GetValue()
	}
	with := func(n string, extra ...string) labels.Labels {
		l := map[string]string{labels.MetricName: n}
		for k, v := range base {
			l[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return labels.FromMap(l)
	}
	switch {
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		out := []sample{{with(name + "_sum"), h.GetSampleSum()}, {with(name + "_count"), float64(h.GetSampleCount())}}
		inf := false
		for _, b := range h.GetBucket() {
			inf = inf || math.IsInf(b.GetUpperBound(), 1)
			out = append(out, sample{with(name+"_bucket", "le", formatLE(b.GetUpperBound())), float64(b.GetCumulativeCount())})
		}
		if !inf {
			out = append(out, sample{with(name+"_bucket", "le", "+Inf"), float64(h.GetSampleCount())})
		}
		return out
	case m.GetSummary() != nil:
		s := m.GetSummary()
		out := []sample{{with(name + "_sum"), s.GetSampleSum()}, {with(name + "_count"), float64(s.GetSampleCount())}}
		for _, q := range s.GetQuantile() {
			out = append(out, sample{with(name, "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)), q.GetValue()})
		}
		return out
	case m.GetCounter() != nil:
		return []sample{{with(name), m.GetCounter().GetValue()}}
	case m.GetGauge() != nil:
		return []sample{{with(name), m.GetGauge().GetValue()}}
	case m.GetUntyped() != nil:
		return []sample{{with(name), m.GetUntyped().GetValue()}}
	}
	return nil
}

func formatLE(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
