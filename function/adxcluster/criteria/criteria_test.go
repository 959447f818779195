package criteria

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	labels := map[string]string{"geo": "eu", "tier": "gold", "app.kubernetes.io/part-of": "fleet", "in": "x"}
	cases := map[string]struct {
		expr    string
		labels  map[string]string
		want    bool
		wantErr string
	}{
		"empty expression holds":             {expr: "", want: true},
		"map index":                          {expr: `labels["geo"] == "eu"`, labels: labels, want: true},
		"map index false":                    {expr: `labels["geo"] == "us"`, labels: labels, want: false},
		"top-level variable":                 {expr: `geo == "eu"`, labels: labels, want: true},
		"seed example with labels.has":       {expr: `labels["geo"] == "eu" && labels.has("tier")`, labels: labels, want: true},
		"labels.has false":                   {expr: `labels.has("environment")`, labels: labels, want: false},
		"in operator":                        {expr: `"tier" in labels && tier in ["gold", "silver"]`, labels: labels, want: true},
		"has macro":                          {expr: `has(labels.geo)`, labels: labels, want: true},
		"key that is no identifier via map":  {expr: `labels["app.kubernetes.io/part-of"] == "fleet"`, labels: labels, want: true},
		"reserved key only in the map":       {expr: `labels["in"] == "x"`, labels: labels, want: true},
		"unknown variable fails type-check":  {expr: `region == "eu"`, labels: labels, wantErr: "type-check"},
		"missing map key fails evaluation":   {expr: `labels["region"] == "eu"`, labels: labels, wantErr: "evaluation"},
		"syntax error fails parse":           {expr: `geo ==`, labels: labels, wantErr: "parse"},
		"non-bool result":                    {expr: `geo`, labels: labels, wantErr: "not bool"},
		"no labels at all, map check":        {expr: `!labels.has("geo")`, labels: nil, want: true},
		"runaway comprehension hits the cap": {expr: `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))`, labels: labels, wantErr: "cost"},
		"too long":                           {expr: strings.Repeat("a", 5000), labels: labels, wantErr: "limit is 4096"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Evaluate(tc.expr, tc.labels)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Evaluate(%q) error = %v, want one containing %q", tc.expr, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Evaluate(%q): %v", tc.expr, err)
			}
			if got != tc.want {
				t.Errorf("Evaluate(%q) = %v, want %v", tc.expr, got, tc.want)
			}
		})
	}
}

func BenchmarkEvaluate(b *testing.B) {
	labels := map[string]string{"geo": "eu", "tier": "gold", "env": "prod"}
	for b.Loop() {
		if _, err := Evaluate(`labels["geo"] == "eu" && tier == "gold"`, labels); err != nil {
			b.Fatal(err)
		}
	}
}
