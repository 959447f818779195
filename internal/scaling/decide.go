// Package scaling decides, from measured metrics, whether a component grows
// or shrinks by one unit. It only decides: the provider measures and
// reports, the function applies what it reports.
//
// The rule, computable by hand:
//
//  1. Every metric votes against its own thresholds: +1 when its value is
//     above scaleUpThreshold, -1 when below scaleDownThreshold, 0 between
//     (the band between them is the hysteresis that keeps a metric
//     hovering at one threshold from voting both ways).
//  2. The score is the weighted mean of the votes, Σ(weight·vote)/Σ(weight),
//     from -1 to +1.
//  3. Up by one when score ≥ +bound, down by one when score ≤ -bound
//     (bound default 0.5: more than half the weight, net, agrees).
//  4. Hold instead when: a metric has no value (never guess), the last
//     scale was less than the cooldown ago, up at max or down at min, or a
//     down would push a metric above its scale-up threshold once its load
//     is spread over one unit fewer (value·n/(n-1) > up), which is what
//     would otherwise scale right back up.
//  5. A size outside [min, max] (the bounds were changed) moves to the
//     nearest bound at once, whatever the metrics and the cooldown.
package scaling

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Direction of a decision.
type Direction string

// Directions.
const (
	Up   Direction = "Up"
	Down Direction = "Down"
	Hold Direction = "Hold"
)

// DefaultBound is the weighted vote a decision needs.
const DefaultBound = 0.5

// Metric is one weighted input, with its measured value if there is one.
type Metric struct {
	Name          string
	Up, Down      float64 // scale-up and scale-down thresholds; Down < Up
	Weight        float64 // 0 to 1
	Value         float64
	Err           string // why there is no value; empty when there is one
	ProportionalN bool   // the value is a per-unit load: it grows as n/(n-1) when one unit goes
}

// Missing reports whether the metric has no value.
func (m Metric) Missing() bool { return m.Err != "" }

// Vote is the metric's vote: +1, -1 or 0.
func (m Metric) Vote() int {
	switch {
	case m.Missing():
		return 0
	case m.Value > m.Up:
		return 1
	case m.Value < m.Down:
		return -1
	}
	return 0
}

// Policy bounds and paces decisions.
type Policy struct {
	Min, Max int32
	Cooldown time.Duration
	Bound    float64 // 0 < Bound ≤ 1; zero means DefaultBound
}

// Decision is what to do and why.
type Decision struct {
	Direction Direction
	From, To  int32
	Score     float64 // weighted vote, -1 to +1; 0 when not computed
	Reason    string
}

// Decide applies the rule to a component of size current, last scaled at
// lastScale (zero: never), at now.
func Decide(metrics []Metric, current int32, lastScale, now time.Time, p Policy) Decision {
	d := Decision{Direction: Hold, From: current, To: current}
	switch {
	case current < p.Min:
		return Decision{Direction: Up, From: current, To: p.Min, Reason: fmt.Sprintf("up: %d is below min %d", current, p.Min)}
	case current > p.Max:
		return Decision{Direction: Down, From: current, To: p.Max, Reason: fmt.Sprintf("down: %d is above max %d", current, p.Max)}
	}
	var missing []string
	for _, m := range metrics {
		if m.Missing() {
			missing = append(missing, m.Name+": "+m.Err)
		}
	}
	if len(missing) > 0 {
		d.Reason = "hold: no value for " + strings.Join(missing, "; ")
		return d
	}
	d.Score = Score(metrics)
	bound := p.Bound
	if bound <= 0 {
		bound = DefaultBound
	}
	want := Hold
	switch {
	case d.Score >= bound:
		want = Up
	case d.Score <= -bound:
		want = Down
	}
	score := "score " + formatScore(d.Score)
	switch {
	case want == Hold:
		d.Reason = fmt.Sprintf("hold: %s is within ±%s", score, formatScore(bound))
	case want == Up && current >= p.Max:
		d.Reason = fmt.Sprintf("hold: %s, but at max %d", score, p.Max)
	case want == Down && current <= p.Min:
		d.Reason = fmt.Sprintf("hold: %s, but at min %d", score, p.Min)
	case !lastScale.IsZero() && now.Before(lastScale.Add(p.Cooldown)):
		d.Reason = fmt.Sprintf("hold: %s, but cooling down until %s", score, lastScale.Add(p.Cooldown).UTC().Format(time.RFC3339))
	case want == Down:
		if m, v, ok := reboundsAfterDown(metrics, current); ok {
			d.Reason = fmt.Sprintf("hold: %s, but %s would be %s at %d, above its scale-up threshold", score, m, formatValue(v), current-1)
			return d
		}
		d.Direction, d.To = Down, current-1
		d.Reason = fmt.Sprintf("down: %s ≤ -%s", score, formatScore(bound))
	default:
		d.Direction, d.To = Up, current+1
		d.Reason = fmt.Sprintf("up: %s ≥ %s", score, formatScore(bound))
	}
	return d
}

// Score is the weighted mean of the metrics' votes; 0 when no metric
// carries weight.
func Score(metrics []Metric) float64 {
	var sum, weights float64
	for _, m := range metrics {
		sum += m.Weight * float64(m.Vote())
		weights += m.Weight
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// reboundsAfterDown finds a per-unit metric that one unit fewer would push
// above its scale-up threshold.
func reboundsAfterDown(metrics []Metric, current int32) (string, float64, bool) {
	if current <= 1 {
		return "", 0, false
	}
	for _, m := range metrics {
		if !m.ProportionalN {
			continue
		}
		if v := m.Value * float64(current) / float64(current-1); v > m.Up {
			return m.Name, v, true
		}
	}
	return "", 0, false
}

// formatScore prints a score to two decimals, without a negative zero.
func formatScore(f float64) string {
	if math.Abs(f) < 0.005 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", f)
}

func formatValue(f float64) string { return fmt.Sprintf("%.4g", f) }
