package scaling

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// The seed's ingestor: queue length weighs 0.7, memory 0.3.
func ingestor(queue, memory float64) []Metric {
	return []Metric{
		{Name: "QueueLength", Up: 1000, Down: 100, Weight: 0.7, Value: queue, ProportionalN: true},
		{Name: "MemoryUsage", Up: 85, Down: 40, Weight: 0.3, Value: memory, ProportionalN: true},
	}
}

var seedPolicy = Policy{Min: 1, Max: 10, Cooldown: 5 * time.Minute}

func TestDecide(t *testing.T) {
	missing := ingestor(2000, 50)
	missing[1].Err = "no ingestor pod answered"
	cases := map[string]struct {
		metrics   []Metric
		current   int32
		lastScale time.Time
		policy    Policy
		want      Direction
		to        int32
		score     float64
		reason    string
	}{
		"queue high outvotes memory":          {metrics: ingestor(2000, 50), current: 2, want: Up, to: 3, score: 0.7, reason: "up: score 0.70 ≥ 0.50"},
		"memory high alone is not enough":     {metrics: ingestor(500, 90), current: 2, want: Hold, to: 2, score: 0.3, reason: "hold: score 0.30 is within ±0.50"},
		"both high":                           {metrics: ingestor(2000, 90), current: 2, want: Up, to: 3, score: 1},
		"both low":                            {metrics: ingestor(10, 10), current: 3, want: Down, to: 2, score: -1, reason: "down: score -1.00 ≤ -0.50"},
		"queue low, memory between":           {metrics: ingestor(10, 50), current: 3, want: Down, to: 2, score: -0.7},
		"queue low, memory high: net 0.4":     {metrics: ingestor(10, 90), current: 3, want: Hold, to: 3, score: -0.4},
		"at the threshold is not above it":    {metrics: ingestor(1000, 85), current: 2, want: Hold, to: 2, score: 0},
		"exactly the bound scales":            {metrics: []Metric{{Name: "a", Up: 1, Down: 0, Weight: 0.5, Value: 2}, {Name: "b", Up: 1, Down: 0, Weight: 0.5, Value: 0.5}}, current: 1, policy: seedPolicy, want: Up, to: 2, score: 0.5},
		"at max":                              {metrics: ingestor(2000, 90), current: 10, want: Hold, to: 10, score: 1, reason: "hold: score 1.00, but at max 10"},
		"at min":                              {metrics: ingestor(10, 10), current: 1, want: Hold, to: 1, score: -1, reason: "hold: score -1.00, but at min 1"},
		"cooling down":                        {metrics: ingestor(2000, 90), current: 2, lastScale: t0.Add(-4 * time.Minute), want: Hold, to: 2, score: 1, reason: "hold: score 1.00, but cooling down until 2026-11-23T12:01:00Z"},
		"cooldown just over":                  {metrics: ingestor(2000, 90), current: 2, lastScale: t0.Add(-5 * time.Minute), want: Up, to: 3, score: 1},
		"a missing metric holds":              {metrics: missing, current: 2, want: Hold, to: 2, reason: "hold: no value for MemoryUsage: no ingestor pod answered"},
		"a missing metric does not stop min":  {metrics: missing, current: 0, want: Up, to: 1, reason: "up: 0 is below min 1"},
		"max lowered: down to it at once":     {metrics: ingestor(2000, 90), current: 14, lastScale: t0, want: Down, to: 10, reason: "down: 14 is above max 10"},
		"min raised: up to it at once":        {metrics: ingestor(10, 10), current: 1, lastScale: t0, policy: Policy{Min: 3, Max: 10, Cooldown: time.Minute}, want: Up, to: 3},
		"down within the load":                {metrics: ingestor(90, 30), current: 2, want: Down, to: 1, score: -1},
		"down would rebound past up":          {metrics: []Metric{{Name: "QueueLength", Up: 1000, Down: 600, Weight: 1, Value: 550, ProportionalN: true}}, current: 2, want: Hold, to: 2, score: -1, reason: "QueueLength would be 1100 at 1, above its scale-up threshold"},
		"down that stays below up proceeds":   {metrics: []Metric{{Name: "QueueLength", Up: 1000, Down: 600, Weight: 1, Value: 550, ProportionalN: true}}, current: 4, want: Down, to: 3, score: -1},
		"a whole-cluster metric never blocks": {metrics: []Metric{{Name: "CPU", Up: 80, Down: 30, Weight: 1, Value: 29}}, current: 2, policy: Policy{Min: 1, Max: 3}, want: Down, to: 1, score: -1},
		"no weight: hold":                     {metrics: []Metric{{Name: "a", Up: 1, Down: 0, Weight: 0, Value: 5}}, current: 2, want: Hold, to: 2, score: 0},
		"a custom bound":                      {metrics: ingestor(500, 90), current: 2, policy: Policy{Min: 1, Max: 10, Bound: 0.3}, want: Up, to: 3, score: 0.3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tc.policy
			if p.Max == 0 {
				p = seedPolicy
			}
			d := Decide(tc.metrics, tc.current, tc.lastScale, t0, p)
			if d.Direction != tc.want || d.To != tc.to || d.From != tc.current || fmt.Sprintf("%.2f", d.Score) != fmt.Sprintf("%.2f", tc.score) {
				t.Errorf("Decide = %+v, want %s to %d with score %.2f", d, tc.want, tc.to, tc.score)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", d.Reason, tc.reason)
			}
		})
	}
}

// TestNoFlap drives a component through time with a load that hovers
// around each threshold and checks that it never scales one way and then
// straight back. With the seed's wide band (100 to 1000) the hysteresis
// alone keeps it steady; with a narrow one (600 to 1000) a load of 1,100
// is 550 a replica at 2 (below 600) and 1,100 at 1 (above 1000), which
// only the no-rebound guard holds.
func TestNoFlap(t *testing.T) {
	cases := []struct {
		up, down, perReplica float64
	}{
		{1000, 100, 999}, {1000, 100, 1001}, {1000, 100, 99}, {1000, 100, 101},
		{1000, 600, 550}, {1000, 600, 590},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v in %v..%v", tc.perReplica, tc.down, tc.up), func(t *testing.T) {
			n, last := int32(2), time.Time{}
			total := tc.perReplica * float64(n) // the load, spread over the replicas
			var moves []Direction
			for i := range 100 {
				now := t0.Add(time.Duration(i) * 5 * time.Minute)
				jitter := []float64{-0.01, 0.01}[i%2] * total
				per := (total + jitter) / float64(n)
				d := Decide([]Metric{{Name: "QueueLength", Up: tc.up, Down: tc.down, Weight: 1, Value: per, ProportionalN: true}}, n, last, now, seedPolicy)
				if d.Direction != Hold {
					moves = append(moves, d.Direction)
					n, last = d.To, now
				}
			}
			for i := 1; i < len(moves); i++ {
				if moves[i] != moves[i-1] {
					t.Fatalf("flapped: %v", moves)
				}
			}
		})
	}
}

func BenchmarkDecideTenMetrics(b *testing.B) {
	metrics := make([]Metric, 10)
	for i := range metrics {
		metrics[i] = Metric{Name: fmt.Sprintf("m%d", i), Up: 80, Down: 20, Weight: 0.1, Value: float64(i * 10), ProportionalN: true}
	}
	b.ReportAllocs()
	for b.Loop() {
		Decide(metrics, 5, t0.Add(-time.Hour), t0, seedPolicy)
	}
}
