package federation

import (
	"context"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

func part(ep string, dbs ...heartbeat.DatabaseSchema) heartbeat.Partition {
	return heartbeat.Partition{Endpoint: ep, LastHeartbeat: time.Now(), Databases: dbs}
}

func db(name string, tables []string, views ...string) heartbeat.DatabaseSchema {
	return heartbeat.DatabaseSchema{Database: name, Tables: tables, Views: views}
}

// hub is a Kusto server standing in for the hub, and a client to it.
type hub struct {
	t *testing.T
	s *kustoserver.Server
	c *kusto.Client
}

func newHub(t *testing.T, dbs ...string) *hub {
	t.Helper()
	s := kustoserver.New(dbs...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c, err := kusto.New(s.URL, nil, kusto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &hub{t: t, s: s, c: c}
}

// cycle plans against the live hub, applies the plan, and returns it.
func (h *hub) cycle(parts ...heartbeat.Partition) Plan {
	h.t.Helper()
	ctx := context.Background()
	live, err := ReadHub(ctx, h.c)
	if err != nil {
		h.t.Fatal(err)
	}
	plan := Compute(parts, live)
	failures, err := Apply(ctx, h.c, plan)
	if err != nil || len(failures) > 0 {
		h.t.Fatalf("apply: %v %v", failures, err)
	}
	return plan
}

func TestConvergesAndThenIssuesNothing(t *testing.T) {
	h := newHub(t, "FleetDiscovery", "Metrics", "Logs")
	p1 := part("https://p1.kusto.windows.net", db("Metrics", []string{"cpu", "mem"}, "hot"), db("Logs", []string{"app"}))
	p2 := part("https://p2.kusto.windows.net", db("Metrics", []string{"cpu", "disk"}))
	p3 := part("https://p3.kusto.windows.net", db("Metrics", []string{"cpu"}))

	first := h.cycle(p1, p2, p3)
	if first.Count() == 0 {
		t.Fatal("a fresh hub needs commands")
	}
	if first.Databases != 2 || first.Functions != 4 || first.Tables != 5 {
		t.Errorf("desired counts = %d dbs, %d functions, %d tables", first.Databases, first.Functions, first.Tables)
	}
	groups := h.s.EntityGroups("Metrics")
	if got := groups["MetricsSpoke"]; len(got) != 3 || got[0] != "cluster('https://p1.kusto.windows.net').database('Metrics')" {
		t.Errorf("MetricsSpoke = %v", got)
	}
	if _, ok := h.s.EntityGroups("Logs")["MetricsSpoke"]; ok {
		t.Error("a group must live only in the database whose functions use it")
	}
	fns := h.s.Functions("Metrics")
	for _, name := range []string{"cpu", "mem", "disk"} {
		if f, ok := fns[name]; !ok || f.Folder != FunctionFolder || !strings.Contains(f.Body, "['MetricsSpoke'] as X ( X.['"+name+"'] )") {
			t.Errorf("function %s = %+v", name, f)
		}
	}
	if _, ok := fns["hot"]; ok {
		t.Error("views get hub tables, not functions")
	}
	if tables := h.s.Tables("Metrics"); !strings.HasPrefix(tables["hot"], "Timestamp:datetime,ObservedTimestamp:datetime") {
		t.Errorf("hub table for a view = %q", tables["hot"])
	}

	h.s.ResetCommands()
	if again := h.cycle(p1, p2, p3); again.Count() != 0 {
		t.Errorf("steady cycle planned %d commands: %v", again.Count(), again.Commands)
	}
	if n := h.s.ScriptCommands(); n != 0 {
		t.Errorf("steady cycle ran %d mutating commands", n)
	}
}

func TestChanges(t *testing.T) {
	h := newHub(t, "Metrics")
	p1 := part("https://p1", db("Metrics", []string{"cpu"}))
	p2 := part("https://p2", db("Metrics", []string{"cpu", "gpu"}))
	h.cycle(p1, p2)

	// A new table on one partition: its hub table and function, nothing else.
	p1b := part("https://p1", db("Metrics", []string{"cpu", "net"}))
	plan := h.cycle(p1b, p2)
	want := []string{
		".create table ['net'] (['Timestamp']:datetime, ['ObservedTimestamp']:datetime, ['TraceId']:string, ['SpanId']:string, ['SeverityText']:string, ['SeverityNumber']:int, ['Body']:dynamic, ['Resource']:dynamic, ['Attributes']:dynamic)",
		".create-or-alter function with (folder='fleetplane', docstring='Union of net across the partitions in entity group MetricsSpoke. Managed by fleetplane: edits are overwritten.') ['net']() { macro-expand isfuzzy=true best_effort=true ['MetricsSpoke'] as X ( X.['net'] ) }",
	}
	if !reflect.DeepEqual(plan.Commands["Metrics"], want) {
		t.Errorf("new table planned\n%q\nwant\n%q", plan.Commands["Metrics"], want)
	}

	// p2 stops reporting (blocked or past the TTL): it leaves the group,
	// and gpu, which only p2 had, loses its function but keeps its table.
	plan = h.cycle(p1b)
	want = []string{
		".alter entity_group ['MetricsSpoke'] (cluster('https://p1').database('Metrics'))",
		".drop function ['gpu'] ifexists",
	}
	if !reflect.DeepEqual(plan.Commands["Metrics"], want) {
		t.Errorf("partition gone planned\n%q\nwant\n%q", plan.Commands["Metrics"], want)
	}
	if _, ok := h.s.Tables("Metrics")["gpu"]; !ok {
		t.Error("hub tables hold data and are never dropped")
	}

	// Nobody left: functions, then the group, go.
	plan = h.cycle()
	want = []string{".drop function ['cpu'] ifexists", ".drop function ['net'] ifexists", ".drop entity_group ['MetricsSpoke']"}
	if !reflect.DeepEqual(plan.Commands["Metrics"], want) {
		t.Errorf("fleet gone planned\n%q\nwant\n%q", plan.Commands["Metrics"], want)
	}
	if len(h.s.EntityGroups("Metrics")) != 0 || len(h.s.Functions("Metrics")) != 0 {
		t.Error("the hub still has groups or functions")
	}
}

func TestLeavesOthersAlone(t *testing.T) {
	h := newHub(t, "Metrics")
	for _, c := range []string{
		".create-or-alter function with (folder='dashboards') ['cpu']() { ['cpu_raw'] }",
		".create-or-alter function with (folder='dashboards') ['mine']() { ['x'] }",
		".create table ['cpu_raw'] (['v']:real)",
	} {
		if err := h.s.Exec("Metrics", c); err != nil {
			t.Fatal(err)
		}
	}
	plan := h.cycle(part("https://p1", db("Metrics", []string{"cpu", "mem"})))
	if len(plan.Problems) != 1 || !strings.Contains(plan.Problems[0], "function cpu exists outside folder") {
		t.Errorf("problems = %v", plan.Problems)
	}
	fns := h.s.Functions("Metrics")
	if fns["cpu"].Folder != "dashboards" || fns["mine"].Folder != "dashboards" {
		t.Error("functions outside the fleetplane folder were changed")
	}
	if fns["mem"].Folder != FunctionFolder {
		t.Error("mem should be federated")
	}
}

// TestOnlyGrantedDatabases: a cycle writes only the hub databases the
// namespace is granted; another team's database keeps its groups and
// functions, and names partitions report outside the grant are never
// asked for as missing.
func TestOnlyGrantedDatabases(t *testing.T) {
	h := newHub(t, "Metrics", "TeamA")
	// team-a's own federation in its own database.
	own := Compute([]heartbeat.Partition{part("https://a1", db("TeamA", []string{"cpu"}))}, mustReadHub(t, h))
	if _, err := Apply(context.Background(), h.c, own); err != nil {
		t.Fatal(err)
	}
	before := h.s.Functions("TeamA")
	if len(before) == 0 {
		t.Fatal("team-a's own cycle made no function")
	}

	parts := []heartbeat.Partition{part("https://p1", db("Metrics", []string{"cpu"}), db("TeamA", []string{"mem"}), db("Secret", []string{"x"}))}
	plan := Input{Partitions: parts, Hub: mustReadHub(t, h), Databases: []string{"metr*"}}.Plan()
	if _, ok := plan.Commands["TeamA"]; ok || len(plan.Commands["Metrics"]) == 0 {
		t.Errorf("commands for %v: want Metrics only", slices.Collect(maps.Keys(plan.Commands)))
	}
	if len(plan.MissingDatabases) != 0 {
		t.Errorf("missing = %v: a database not granted is no one's to create", plan.MissingDatabases)
	}
	if len(plan.Problems) != 2 || !strings.Contains(strings.Join(plan.Problems, ";"), "database TeamA, reported by partitions, is not granted on this hub") {
		t.Errorf("problems = %v", plan.Problems)
	}
	if _, err := Apply(context.Background(), h.c, plan); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.s.Functions("TeamA"), before) {
		t.Error("another team's database was changed")
	}
}

func mustReadHub(t *testing.T, h *hub) Hub {
	t.Helper()
	live, err := ReadHub(context.Background(), h.c)
	if err != nil {
		t.Fatal(err)
	}
	return live
}

func TestMissingDatabasesAndCase(t *testing.T) {
	h := newHub(t, "metrics")
	plan := h.cycle(part("https://p1", db("Metrics", []string{"cpu"}), db("Traces", []string{"spans"})))
	if !reflect.DeepEqual(plan.MissingDatabases, []string{"Traces"}) {
		t.Errorf("missing = %v", plan.MissingDatabases)
	}
	if _, ok := h.s.EntityGroups("metrics")["metricsSpoke"]; !ok {
		t.Errorf("Metrics should federate into the hub's metrics: %v", h.s.EntityGroups("metrics"))
	}
}

func TestTokenEqualBodiesAreUnchanged(t *testing.T) {
	body := "{ macro-expand isfuzzy=true best_effort=true ['MetricsSpoke'] as X ( X.['cpu'] ) }"
	hub := Hub{Databases: map[string]*Database{"Metrics": {
		Tables:       map[string]bool{"cpu": true},
		Functions:    map[string]Function{"cpu": {Body: strings.ReplaceAll(body, " ", "  "), Folder: FunctionFolder}},
		EntityGroups: map[string][]string{"MetricsSpoke": {`cluster("HTTPS://P1").database("Metrics")`}},
	}}}
	if plan := Compute([]heartbeat.Partition{part("https://p1", db("Metrics", []string{"cpu"}))}, hub); plan.Count() != 0 {
		t.Errorf("re-spaced body or re-quoted entity planned %v", plan.Commands)
	}
}

func TestDeterministic(t *testing.T) {
	var parts []heartbeat.Partition
	for i := range 20 {
		parts = append(parts, part("https://p"+string(rune('a'+i)), db("Metrics", []string{"t1", "t2", "t" + string(rune('a'+i))}), db("Logs", []string{"l"})))
	}
	hub := Hub{Databases: map[string]*Database{"Metrics": {}, "Logs": {}}}
	first := Compute(parts, hub)
	for range 10 {
		rand.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		if again := Compute(parts, hub); !reflect.DeepEqual(again.Commands, first.Commands) {
			t.Fatal("the same partitions in another order planned other commands")
		}
	}
}

func TestBlocklist(t *testing.T) {
	b := NewBlocklist([]string{" HTTPS://Rogue.kusto.windows.net/ ", ""}, []string{"https://other"})
	kept, matched := b.Filter([]heartbeat.Partition{part("https://rogue.kusto.windows.net"), part("https://ok")})
	if matched != 1 || len(kept) != 1 || kept[0].Endpoint != "https://ok" {
		t.Errorf("kept %v, matched %d", kept, matched)
	}
}

func TestBlockedFromFunction(t *testing.T) {
	h := newHub(t, "FleetDiscovery")
	ctx := context.Background()
	_, found, err := BlockedFromFunction(ctx, h.c, "FleetDiscovery", "GetBlockedPartitions")
	if err != nil || found {
		t.Errorf("missing function: found=%v err=%v, want a warning, not an error", found, err)
	}
	for _, c := range []string{
		".create table ['Quarantine'] (['ClusterEndpoint']:string)",
		".ingest inline into table ['Quarantine'] <| https://Rogue.kusto.windows.net/",
		".create-or-alter function ['GetBlockedPartitions']() { ['Quarantine'] }",
	} {
		if err := h.s.Exec("FleetDiscovery", c); err != nil {
			t.Fatal(err)
		}
	}
	eps, found, err := BlockedFromFunction(ctx, h.c, "FleetDiscovery", "GetBlockedPartitions")
	if err != nil || !found || len(eps) != 1 || eps[0] != "https://Rogue.kusto.windows.net/" {
		t.Errorf("blocked = %v found=%v err=%v", eps, found, err)
	}
	if err := h.s.InjectFault(kustoserver.Fault{Match: "GetBlockedPartitions", Status: 403}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := BlockedFromFunction(ctx, h.c, "FleetDiscovery", "GetBlockedPartitions"); kusto.ClassOf(err) != kusto.Forbidden {
		t.Errorf("a refused block list must stop the cycle: %v", err)
	}
}

// TestResentScriptsAreHarmless: after a 5xx the client sends a script
// again; when its first attempt ran, every command must still succeed.
func TestResentScriptsAreHarmless(t *testing.T) {
	h := newHub(t, "Metrics")
	h.cycle(part("https://p1", db("Metrics", []string{"cpu", "gpu"})), part("https://p2", db("Metrics", []string{"cpu"})))
	for _, parts := range [][]heartbeat.Partition{
		{part("https://p1", db("Metrics", []string{"cpu", "net"}))}, // creates, alters, drops a function
		nil, // drops every function and the group
	} {
		live, err := ReadHub(context.Background(), h.c)
		if err != nil {
			t.Fatal(err)
		}
		plan := Compute(parts, live)
		for range 2 {
			failures, err := Apply(context.Background(), h.c, plan)
			if err != nil || len(failures) > 0 {
				t.Fatalf("running %v twice: %v %v", plan.Commands, failures, err)
			}
		}
	}
}

// TestPlanSharedLists: Schemas shares equal lists between partitions, and
// planning adds each once; a list that is one partition's views and
// another's tables still gives the latter its functions, and a list cut
// short by a limit is not mistaken for the whole.
func TestPlanSharedLists(t *testing.T) {
	shared := []string{"a", "b", "c"}
	parts := []heartbeat.Partition{
		part("https://p1.kusto.windows.net", db("Metrics", []string{}, shared...)),
		part("https://p2.kusto.windows.net", db("Metrics", shared)),
		part("https://p3.kusto.windows.net", db("Logs", shared[:2])),
		part("https://p4.kusto.windows.net", db("Logs", shared)),
	}
	want := wanted(parts, nil, DefaultLimits, func(string, ...any) {})
	for _, name := range []string{"metrics", "logs"} {
		if fns := slices.Sorted(maps.Keys(want[name].functions)); strings.Join(fns, ",") != "a,b,c" {
			t.Errorf("%s functions = %v, want a,b,c", name, fns)
		}
	}
}

// TestReadHubByDigest: a cached read answers what a whole read does, reads
// again only the databases whose digests changed, and finds drift made on
// the hub by hand the next time it reads.
func TestReadHubByDigest(t *testing.T) {
	h := newHub(t, "FleetDiscovery", "Metrics", "Logs")
	ctx := context.Background()
	s := NewSchemas()
	p1 := part("https://p1.kusto.windows.net", db("Metrics", []string{"cpu", "mem"}), db("Logs", []string{"app"}))
	p2 := part("https://p2.kusto.windows.net", db("Metrics", []string{"cpu"}))
	read := func(wantRead int) Hub {
		t.Helper()
		got, stats, err := s.ReadHub(ctx, h.c)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := ReadHub(ctx, h.c)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, whole) {
			t.Fatalf("cached read %+v, whole read %+v", got, whole)
		}
		if stats.Databases != 3 || stats.Read != wantRead || stats.Commands != 1+1+3+3*wantRead {
			t.Fatalf("stats %+v, want %d databases read", stats, wantRead)
		}
		return got
	}
	read(3)
	read(0)
	plan := Compute([]heartbeat.Partition{p1, p2}, read(0))
	if failures, err := Apply(ctx, h.c, plan); err != nil || len(failures) > 0 {
		t.Fatal(failures, err)
	}
	// The cycle changed Metrics and Logs; FleetDiscovery is known.
	live := read(2)
	if n := Compute([]heartbeat.Partition{p1, p2}, live).Count(); n != 0 {
		t.Fatalf("converged hub plans %d commands", n)
	}
	read(0)

	// Someone drops a function, alters a group, adds an unrelated table.
	hubExec(t, h.s, "Metrics", ".drop function ['mem']")
	read(1)
	hubExec(t, h.s, "Logs", ".alter entity_group ['LogsSpoke'] (cluster('https://other.kusto.windows.net').database('Logs'))")
	hubExec(t, h.s, "FleetDiscovery", ".create table ['x'] (['a']:string)")
	live = read(2)
	if plan := Compute([]heartbeat.Partition{p1, p2}, live); plan.Count() != 2 {
		t.Fatalf("drift: plan %v, want the function and the group back", plan.Commands)
	}
	// A body edited by hand is drift too, and so is a folder.
	hubExec(t, h.s, "Metrics", ".create-or-alter function with (folder = 'fleetplane') cpu() { print 1 }")
	read(1)
	hubExec(t, h.s, "Metrics", ".create-or-alter function with (folder = 'elsewhere') cpu() { print 1 }")
	read(1)
	// A table dropped from a database that then has none is a change.
	hubExec(t, h.s, "FleetDiscovery", ".drop table ['x']")
	read(1)
}

func hubExec(t *testing.T, s *kustoserver.Server, db, cmd string) {
	t.Helper()
	if err := s.Exec(db, cmd); err != nil {
		t.Fatal(err)
	}
}

func TestSameText(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"{ T | take 1 }", "{ T | take 1 }", true},
		{"{ T | take 1 }", "{T | take 1}", true},       // spacing inside the braces
		{"{ T | take 1 }", "{ T  |  take   1 }", true}, // spacing between tokens
		{"{ T | take 1 }", "{ T | take 2 }", false},    // a token differs
		{"{ T | take 1 }", "T | take 1", false},        // braced and not
		{"{ print 'a b' }", "{ print 'a  b' }", false}, // inside a literal, space counts
		{"{ print 'a b' }", "{print 'a b'}", true},
	} {
		if got := sameText(tc.a, tc.b); got != tc.want {
			t.Errorf("sameText(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
