package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestCheck(t *testing.T) {
	ok := Def{Name: "fleetplane_things_total", Type: Counter, Help: "Things.", Series: "one", Labels: []string{"namespace", "name"}}
	cases := map[string]struct {
		mutate func(*Def)
		want   string
	}{
		"conventional":              {mutate: func(*Def) {}},
		"no prefix":                 {mutate: func(d *Def) { d.Name = "things_total" }, want: "fleetplane_"},
		"camel case":                {mutate: func(d *Def) { d.Name = "fleetplane_Things_total" }, want: "snake case"},
		"a counter without _total":  {mutate: func(d *Def) { d.Name = "fleetplane_things" }, want: "_total"},
		"a gauge with _total":       {mutate: func(d *Def) { d.Type = Gauge }, want: "_total"},
		"a histogram not of time":   {mutate: func(d *Def) { d.Type, d.Name = Histogram, "fleetplane_sizes" }, want: "_seconds"},
		"no help":                   {mutate: func(d *Def) { d.Help = "" }, want: "help"},
		"no series bound":           {mutate: func(d *Def) { d.Series = "" }, want: "series bound"},
		"a reserved label":          {mutate: func(d *Def) { d.Labels = []string{"le"} }, want: `label "le"`},
		"a label not in snake case": {mutate: func(d *Def) { d.Labels = []string{"Namespace"} }, want: "label"},
		"an unknown type":           {mutate: func(d *Def) { d.Type = "summary" }, want: "type"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := ok
			d.Labels = append([]string(nil), ok.Labels...)
			tc.mutate(&d)
			err := Check([]Def{d})
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if err := Check([]Def{ok, ok}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a name defined twice: %v", err)
	}
}

func TestBuildPanicsOnTheWrongType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a counter built as a gauge")
		}
	}()
	Def{Name: "fleetplane_things_total", Type: Counter}.Gauge()
}

func TestDescribe(t *testing.T) {
	a := Def{Name: "fleetplane_a_total", Type: Counter, Help: "A.", Labels: []string{"kind"}}
	b := Def{Name: "fleetplane_b", Type: Gauge, Help: "B."}
	if err := Describe([]Def{a, b}, []prometheus.Collector{a.Counter(), b.Gauge()}); err != nil {
		t.Error(err)
	}
	if err := Describe([]Def{a, b}, []prometheus.Collector{b.Gauge(), a.Counter()}); err == nil {
		t.Error("collectors out of order passed")
	}
	if err := Describe([]Def{a}, []prometheus.Collector{a.Counter(), b.Gauge()}); err == nil {
		t.Error("a collector without a definition passed")
	}
}
