package combine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func collector(t testing.TB, s string) Collector {
	t.Helper()
	var c Collector
	if err := yaml.UnmarshalStrict([]byte(s), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return c
}

// rows are three clusters' reports of one Deployment, augmented with the
// inventory and propagation facts.
func rows() []map[string]any {
	row := func(name string, replicas, available int64, phase string, stale bool) map[string]any {
		return map[string]any{
			"inventory":   map[string]any{"name": name},
			"propagation": map[string]any{"stale": stale},
			"spec":        map[string]any{"replicas": replicas},
			"status":      map[string]any{"availableReplicas": available, "phase": phase},
		}
	}
	return []map[string]any{
		row("wec1", 3, 3, "Running", false),
		row("wec2", 3, 1, "Pending", true),
		row("wec3", 3, 3, "Running", false),
	}
}

// TestSeedExamples runs every example of the seed verbatim (the bodies of
// its NamedStatusCombiners, without name).
func TestSeedExamples(t *testing.T) {
	cases := map[string]struct {
		spec string
		want Result
	}{
		"number of WECs": {`
combinedFields:
   - name: count
     type: COUNT
`, Result{Columns: []string{"count"}, Rows: [][]any{{int64(3)}}}},
		"list of stale WECs": {`
filter:
   op: Path
   path: "$.propagation.stale"
select:
   - name: wec
     def:
        op: Path
        path: "$.inventory.name"
`, Result{Columns: []string{"wec"}, Rows: [][]any{{"wec2"}}}},
		"histogram of pod phase": {`
groupBy:
   - name: phase
     def:
        op: Path
        path: "$.status.phase"
combinedFields:
   - name: count
     type: COUNT
`, Result{Columns: []string{"phase", "count"}, Rows: [][]any{{"Pending", int64(1)}, {"Running", int64(2)}}}},
		"histogram of available replicas": {`
groupBy:
   - name: numAvailable
     def:
        op: Path
        path: "$.status.availableReplicas"
combinedFields:
   - name: count
     type: COUNT
`, Result{Columns: []string{"numAvailable", "count"}, Rows: [][]any{{int64(1), int64(1)}, {int64(3), int64(2)}}}},
		"WECs where the Deployment is not fully available": {`
filter:
   op: Not
   args:
      - op: Equal
        args:
           - op: Path
             path: "$.spec.replicas"
           - op: Path
             path: "$.status.availableReplicas"
select:
   - name: wec
     def:
        op: Path
        path: "$.inventory.name"
`, Result{Columns: []string{"wec"}, Rows: [][]any{{"wec2"}}}},
		"full status from each WEC": {`
select:
   - name: wec
     def:
        op: Path
        path: "$.inventory.name"
   - name: status
     def:
        op: Path
        path: "$.status"
`, Result{Columns: []string{"wec", "status"}, Rows: [][]any{
			{"wec1", map[string]any{"availableReplicas": int64(3), "phase": "Running"}},
			{"wec2", map[string]any{"availableReplicas": int64(1), "phase": "Pending"}},
			{"wec3", map[string]any{"availableReplicas": int64(3), "phase": "Running"}},
		}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := Combine(collector(t, c.spec), rows())
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v\nwant %#v", got, c.want)
			}
		})
	}
}

func TestAggregatesAndLimit(t *testing.T) {
	c := collector(t, `
filter: {op: Or, args: [{op: Path, path: "$.propagation.stale"}, {op: Equal, args: [{op: Path, path: "$.status.phase"}, {op: Path, path: "$.status.phase"}]}]}
combinedFields:
- {name: clusters, type: COUNT}
- {name: total, type: SUM, subject: {op: Path, path: "$.status.availableReplicas"}}
- {name: mean, type: AVG, subject: {op: Path, path: "$.status.availableReplicas"}}
- {name: least, type: MIN, subject: {op: Path, path: "$.status.availableReplicas"}}
- {name: most, type: MAX, subject: {op: Path, path: "$.status.availableReplicas"}}
- {name: none, type: MAX, subject: {op: Path, path: "$.status.phase"}}
`)
	got := Combine(c, rows())
	want := Result{Columns: []string{"clusters", "total", "mean", "least", "most", "none"}, Rows: [][]any{{int64(3), 7.0, 7.0 / 3, 1.0, 3.0, nil}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	// No rows: one row of aggregates, COUNT and SUM 0 as in KubeStellar;
	// AVG, MIN and MAX of nothing have no value.
	if got := Combine(c, nil); !reflect.DeepEqual(got.Rows, [][]any{{int64(0), 0.0, nil, nil, nil, nil}}) {
		t.Errorf("no rows: %#v", got.Rows)
	}
	lim := collector(t, `{select: [{name: wec, def: {op: Path, path: "$.inventory.name"}}], limit: 2}`)
	if got := Combine(lim, rows()); len(got.Rows) != 2 || got.Omitted != 1 {
		t.Errorf("limit 2: %#v", got)
	}
}

// TestGroupsInValueOrder: numeric group keys sort as numbers, not as
// their text ("10" after "9"); mixed types in a fixed order, null last.
func TestGroupsInValueOrder(t *testing.T) {
	c := collector(t, `{groupBy: [{name: v, def: {op: Path, path: "$.status.v"}}], combinedFields: [{name: n, type: COUNT}]}`)
	var rs []map[string]any
	for _, v := range []any{int64(10), "b", 9.5, nil, true, int64(2), "a", false, int64(10)} {
		rs = append(rs, map[string]any{"status": map[string]any{"v": v}})
	}
	var got []any
	for _, r := range Combine(c, rs).Rows {
		got = append(got, r[0])
	}
	want := []any{false, true, int64(2), 9.5, int64(10), "a", "b", nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups in order %v, want %v", got, want)
	}
}

// TestGroupByListIsAnError: KubeStellar panics when a groupBy value is a
// list or an object (kubestellar#3897); here the row is left out and its
// cluster named.
func TestGroupByListIsAnError(t *testing.T) {
	c := collector(t, `{groupBy: [{name: s, def: {op: Path, path: "$.status"}}], combinedFields: [{name: num, type: COUNT}]}`)
	got := Combine(c, rows())
	want := Result{Columns: []string{"s", "num"}, Errors: []string{
		"cluster wec1: groupBy s is a list or an object, not a single value; the row is left out",
		"cluster wec2: groupBy s is a list or an object, not a single value; the row is left out",
		"cluster wec3: groupBy s is a list or an object, not a single value; the row is left out",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	r := rows()
	r[1]["status"].(map[string]any)["phase"] = []any{"Pending"}
	c = collector(t, `{groupBy: [{name: phase, def: {op: Path, path: "$.status.phase"}}], combinedFields: [{name: num, type: COUNT}]}`)
	got = Combine(c, r)
	want = Result{Columns: []string{"phase", "num"}, Rows: [][]any{{"Running", int64(2)}}, Errors: []string{"cluster wec2: groupBy phase is a list or an object, not a single value; the row is left out"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestCheck(t *testing.T) {
	bad := map[string]string{
		`{select: [{name: a, def: {op: Path, path: "$.a b"}}]}`:                                         "path",
		`{select: [{name: a, def: {op: Path, path: "$.items[*]"}}]}`:                                    "path",
		`{select: [{name: a, def: {op: Equal, args: [{op: Path, path: "$.a"}]}}]}`:                      "Equal takes 2 argument(s), not 1",
		`{select: [{name: a, def: {op: Like}}]}`:                                                        `unknown op "Like"`,
		`{select: [{name: a, def: {op: And}}]}`:                                                         "at least one argument",
		`{combinedFields: [{name: c, type: MEDIAN}]}`:                                                   `unknown type "MEDIAN"`,
		`{combinedFields: [{name: c, type: SUM}]}`:                                                      "SUM needs a subject",
		`{select: [{name: a, def: {op: Path, path: "$.a"}}], combinedFields: [{name: c, type: COUNT}]}`: "cannot be combined",
		`{}`: "needs select",
		`{select: [{name: a, def: {op: Path, path: "$.a"}}, {name: a, def: {op: Path, path: "$.b"}}]}`: "named twice",
		`{filter: {op: Not, args: []}, select: [{name: a, def: {op: Path, path: "$.a"}}]}`:             "Not takes 1",
		`{select: [{name: a, def: {op: Path, path: "$.a"}}], limit: -1}`:                               "negative",
	}
	for in, want := range bad {
		var c Collector
		if err := yaml.UnmarshalStrict([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want %q", in, err, want)
		}
	}
}

// FuzzCollector: any collector that passes Check combines any rows
// without panicking, within its limit.
func FuzzCollector(f *testing.F) {
	for _, s := range []string{
		`{"combinedFields":[{"name":"count","type":"COUNT"}]}`,
		`{"filter":{"op":"Not","args":[{"op":"Equal","args":[{"op":"Path","path":"$.spec.replicas"},{"op":"Path","path":"$.status.availableReplicas"}]}]},"select":[{"name":"wec","def":{"op":"Path","path":"$.inventory.name"}}]}`,
		`{"groupBy":[{"name":"p","def":{"op":"Path","path":"$.status.phase"}}],"combinedFields":[{"name":"m","type":"MAX","subject":{"op":"Path","path":"$.spec.replicas"}}],"limit":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var c Collector
		if err := json.Unmarshal([]byte(s), &c); err != nil || c.Check() != nil {
			return
		}
		res := Combine(c, rows())
		limit := c.Limit
		if limit == 0 {
			limit = DefaultLimit
		}
		if len(res.Rows) > limit {
			t.Fatalf("%d rows over the limit %d", len(res.Rows), limit)
		}
	})
}

// BenchmarkCombine1000Clusters evaluates the seed's not-fully-available
// list and a histogram over 1,000 clusters' rows.
func BenchmarkCombine1000Clusters(b *testing.B) {
	sad := collector(b, `{filter: {op: Not, args: [{op: Equal, args: [{op: Path, path: "$.spec.replicas"}, {op: Path, path: "$.status.availableReplicas"}]}]}, select: [{name: wec, def: {op: Path, path: "$.inventory.name"}}], limit: 100}`)
	hist := collector(b, `{groupBy: [{name: numAvailable, def: {op: Path, path: "$.status.availableReplicas"}}], combinedFields: [{name: count, type: COUNT}]}`)
	var rows []map[string]any
	for i := range 1000 {
		rows = append(rows, map[string]any{
			"inventory":   map[string]any{"name": fmt.Sprintf("wec%04d", i)},
			"propagation": map[string]any{"stale": false},
			"spec":        map[string]any{"replicas": 3.0},
			"status":      map[string]any{"availableReplicas": float64(i % 4)},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		Combine(sad, rows)
		Combine(hist, rows)
	}
}
