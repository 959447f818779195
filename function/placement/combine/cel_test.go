package combine

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kubestellarRows are rows() as placement builds them: KubeStellar's
// variables beside the reported object.
func kubestellarRows() []map[string]any {
	obj := map[string]any{"metadata": map[string]any{"name": "web", "namespace": "team-a", "labels": map[string]any{"app": "web"}}}
	out := rows()
	for i, r := range out {
		r["obj"] = obj
		r["returned"] = map[string]any{"status": r["status"]}
		r["propagation"].(map[string]any)["lastReturnedUpdateTimestamp"] = []string{"2026-11-26T06:00:00Z", "2026-11-26T06:01:00Z", "2026-11-26T06:02:00Z"}[i]
	}
	// One cluster reports its numbers as JSON doubles.
	out[1]["returned"].(map[string]any)["status"] = map[string]any{"availableReplicas": 1.0, "phase": "Pending"}
	return out
}

// TestCEL: StatusCollectors as KubeStellar's users write them, over
// inventory, obj, returned and propagation.
func TestCEL(t *testing.T) {
	cases := map[string]struct {
		collector string
		want      Result
	}{
		"filter by a comparison, select the cluster and a count": {
			collector: `{filter: {cel: "returned.status.availableReplicas > 2"}, select: [{name: wec, def: {cel: inventory.name}}, {name: available, def: {cel: returned.status.availableReplicas}}]}`,
			want:      Result{Columns: []string{"wec", "available"}, Rows: [][]any{{"wec1", int64(3)}, {"wec3", int64(3)}}},
		},
		"integers and doubles compare by value": {
			collector: `{filter: {cel: "returned.status.availableReplicas >= 1 && returned.status.availableReplicas < 1.5"}, select: [{name: wec, def: {cel: inventory.name}}]}`,
			want:      Result{Columns: []string{"wec"}, Rows: [][]any{{"wec2"}}},
		},
		"the workload object and propagation facts": {
			collector: `{select: [{name: app, def: {cel: "obj.metadata.labels.app + '@' + inventory.name"}}, {name: stale, def: {cel: propagation.stale}}, {name: at, def: {cel: propagation.lastReturnedUpdateTimestamp}}], limit: 1}`,
			want:      Result{Columns: []string{"app", "stale", "at"}, Rows: [][]any{{"web@wec1", false, "2026-11-26T06:00:00Z"}}, Omitted: 2},
		},
		"group by a CEL value, aggregate a CEL subject": {
			// CEL does no arithmetic across types: double() makes the
			// integers of two clusters and the double of one add up.
			collector: `{groupBy: [{name: phase, def: {cel: returned.status.phase}}], combinedFields: [{name: count, type: COUNT}, {name: avail, type: SUM, subject: {cel: "double(returned.status.availableReplicas) * 2.0"}}]}`,
			want:      Result{Columns: []string{"phase", "count", "avail"}, Rows: [][]any{{"Pending", int64(1), 2.0}, {"Running", int64(2), 12.0}}},
		},
		"lists and maps come back as JSON": {
			collector: `{select: [{name: v, def: {cel: "{'n': [inventory.name, 1]}"}}], limit: 1}`,
			want:      Result{Columns: []string{"v"}, Rows: [][]any{{map[string]any{"n": []any{"wec1", 1.0}}}}, Omitted: 2},
		},
		"a field a cluster lacks: the row is left out, and said": {
			collector: `{filter: {cel: "returned.status.ready > 0"}, select: [{name: wec, def: {cel: inventory.name}}]}`,
			want: Result{Columns: []string{"wec"}, Errors: []string{
				"cluster wec1: filter: CEL: no such key: ready", "cluster wec2: filter: CEL: no such key: ready", "cluster wec3: filter: CEL: no such key: ready",
			}},
		},
		"has() guards it": {
			collector: `{filter: {cel: "has(returned.status.ready) && returned.status.ready > 0"}, select: [{name: wec, def: {cel: inventory.name}}]}`,
			want:      Result{Columns: []string{"wec"}},
		},
		"a column that fails is empty, once per cluster": {
			collector: `{select: [{name: wec, def: {cel: inventory.name}}, {name: x, def: {cel: "returned.status.phase + 1"}}, {name: z, def: {cel: "1 / 0"}}], limit: 1}`,
			want: Result{Columns: []string{"wec", "x", "z"}, Rows: [][]any{{"wec1", nil, nil}}, Omitted: 2, Errors: []string{
				"cluster wec1: column x: CEL: no such overload", "cluster wec2: column x: CEL: no such overload", "cluster wec3: column x: CEL: no such overload",
			}},
		},
		"a filter that is not a boolean on a row": {
			collector: `{filter: {cel: "returned.status.phase"}, select: [{name: wec, def: {cel: inventory.name}}]}`,
			want: Result{Columns: []string{"wec"}, Errors: []string{
				"cluster wec1: filter: CEL: yields string, not a boolean; the row is left out", "cluster wec2: filter: CEL: yields string, not a boolean; the row is left out", "cluster wec3: filter: CEL: yields string, not a boolean; the row is left out",
			}},
		},
		"the seed's tree and CEL side by side": {
			collector: `{filter: {op: Not, args: [{op: Path, path: "$.propagation.stale"}]}, select: [{name: wec, def: {op: Path, path: "$.inventory.name"}}, {name: up, def: {cel: "returned.status.phase == 'Running'"}}]}`,
			want:      Result{Columns: []string{"wec", "up"}, Rows: [][]any{{"wec1", true}, {"wec3", true}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Combine(collector(t, tc.collector), kubestellarRows())
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestCELChecked: what cannot work is refused when the collector is
// checked (its Valid condition), not found row by row.
func TestCELChecked(t *testing.T) {
	cases := map[string]struct {
		collector, want string
	}{
		"syntax":                    {`{select: [{name: a, def: {cel: "inventory.name +"}}]}`, "column 0 (a): CEL: ERROR"},
		"an unknown variable":       {`{select: [{name: a, def: {cel: "cluster.name"}}]}`, "undeclared reference to 'cluster'"},
		"a filter that is a string": {`{filter: {cel: "'yes'"}, select: [{name: a, def: {cel: "1"}}]}`, "a filter must be a boolean"},
		"both op and cel":           {`{select: [{name: a, def: {op: Path, path: "$.x", cel: "1"}}]}`, "either cel or op"},
		"neither":                   {`{select: [{name: a, def: {}}]}`, "needs op"},
		"too long":                  {`{select: [{name: a, def: {cel: "` + strings.Repeat("1+", 600) + `1"}}]}`, "the limit is 1024"},
		"a subject":                 {`{combinedFields: [{name: a, type: SUM, subject: {cel: "obj.("}}]}`, "combinedFields[0] subject: CEL"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var c Collector
			if err := yaml.UnmarshalStrict([]byte(tc.collector), &c); err != nil {
				t.Fatal(err)
			}
			if err := c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestCELCostBounded: an expression that would run for long on a large
// status stops at the cost limit, on that row, with an error.
func TestCELCostBounded(t *testing.T) {
	list := make([]any, 2000)
	for i := range list {
		list[i] = int64(i)
	}
	row := map[string]any{"inventory": map[string]any{"name": "wec1"}, "returned": map[string]any{"status": map[string]any{"list": list}}}
	c := collector(t, `{filter: {cel: "returned.status.list.all(a, returned.status.list.all(b, a + b >= 0))"}, select: [{name: wec, def: {cel: inventory.name}}]}`)
	got := Combine(c, []map[string]any{row})
	if len(got.Rows) != 0 || len(got.Errors) != 1 || !strings.Contains(got.Errors[0], "cost limit") {
		t.Errorf("got %#v", got)
	}
}

// TestCELCompiledOnce: an expression is compiled once per process,
// however many objects and calls evaluate it, and the programs kept are
// bounded.
func TestCELCompiledOnce(t *testing.T) {
	a, err := compileCEL("inventory.name == 'wec1'", true)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := compileCEL("inventory.name == 'wec1'", false); a != b {
		t.Error("the same expression compiled twice")
	}
	for i := range maxCompiled + 10 {
		if _, err := compileCEL(strconv.Itoa(i), false); err != nil {
			t.Fatal(err)
		}
	}
	programs.Lock()
	n := len(programs.byExpr)
	programs.Unlock()
	if n > maxCompiled {
		t.Errorf("%d programs kept, more than %d", n, maxCompiled)
	}
}
