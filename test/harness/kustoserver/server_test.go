package kustoserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-kusto-go/azkustodata"
	kerrors "github.com/Azure/azure-kusto-go/azkustodata/errors"
	"github.com/Azure/azure-kusto-go/azkustodata/kql"
	"github.com/Azure/azure-kusto-go/azkustodata/query"
)

func start(t *testing.T, dbs ...string) (*Server, *azkustodata.Client) {
	t.Helper()
	s := New(dbs...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c, err := azkustodata.New(azkustodata.NewConnectionStringBuilder(s.URL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return s, c
}

func stmt(s string) azkustodata.Statement { return kql.New("").AddUnsafe(s) }

func mgmtRows(t *testing.T, c *azkustodata.Client, db, cmd string) [][]string {
	t.Helper()
	ds, err := c.Mgmt(context.Background(), db, stmt(cmd))
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	var out [][]string
	for _, r := range ds.Tables()[0].Rows() {
		var row []string
		for _, v := range r.Values() {
			row = append(row, v.String())
		}
		out = append(out, row)
	}
	return out
}

func TestRealClientRoundTrip(t *testing.T) {
	s, c := start(t, "FleetDiscovery", "Metrics")
	ctx := context.Background()

	if rows := mgmtRows(t, c, "FleetDiscovery", ".show databases"); len(rows) != 2 || rows[0][0] != "FleetDiscovery" || rows[1][0] != "Metrics" {
		t.Errorf(".show databases = %v", rows)
	}
	mgmtRows(t, c, "FleetDiscovery", `.create-merge table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic)`)
	now := time.Now().UTC()
	for i, ep := range []string{"https://p1", "https://p2", "https://p1"} {
		ts := now.Add(time.Duration(i-3) * time.Minute).Format(time.RFC3339Nano)
		mgmtRows(t, c, "FleetDiscovery", `.ingest inline into table ['Heartbeats'] <| `+ts+`,`+ep+`,"[{""database"":""Metrics"",""tables"":[""T`+string(rune('0'+i))+`""]}]","{""geo"":""EU""}"`)
	}
	old := now.Add(-3 * time.Hour).Format(time.RFC3339Nano)
	mgmtRows(t, c, "FleetDiscovery", `.ingest inline into table ['Heartbeats'] <| `+old+`,https://gone,"[]","{}"`)

	// The hub's heartbeat query, streamed through the v2 frame reader.
	it, err := c.IterativeQuery(ctx, "FleetDiscovery", stmt(`['Heartbeats'] | where Timestamp > ago(3600s) | summarize arg_max(Timestamp, *) by ClusterEndpoint | project Timestamp, ClusterEndpoint, Schema, PartitionMetadata`))
	if err != nil {
		t.Fatal(err)
	}
	type hb struct {
		Timestamp       time.Time `kusto:"Timestamp"`
		ClusterEndpoint string    `kusto:"ClusterEndpoint"`
		Schema          string    `kusto:"Schema"`
	}
	got := map[string]string{}
	for _, r := range primaryRows(t, it) {
		var h hb
		if err := r.ToStruct(&h); err != nil {
			t.Fatal(err)
		}
		got[h.ClusterEndpoint] = h.Schema
	}
	if len(got) != 2 || !strings.Contains(got["https://p1"], "T2") || !strings.Contains(got["https://p2"], "T1") {
		t.Errorf("latest heartbeats = %v, want p1 (T2) and p2 (T1), not the stale one", got)
	}

	// A database script reports every command's result.
	rows := mgmtRows(t, c, "Metrics", ".execute database script with (ContinueOnErrors=true) <|\n"+
		".create entity_group ['MetricsSpoke'] ifnotexists (cluster('https://p1').database('Metrics'))\n"+
		".drop entity_group ['Missing']\n"+
		".create-or-alter function with (folder='fleetplane', docstring='d') ['T']() { macro-expand isfuzzy=true best_effort=true ['MetricsSpoke'] as X ( X.['T'] ) }\n")
	if len(rows) != 3 || rows[0][3] != "Completed" || rows[1][3] != "Failed" || rows[2][3] != "Completed" {
		t.Errorf("script results = %v", rows)
	}
	if fs := s.Functions("Metrics"); fs["T"].Folder != "fleetplane" || !strings.Contains(fs["T"].Body, "macro-expand") {
		t.Errorf("function = %+v", fs["T"])
	}
	eg := mgmtRows(t, c, "Metrics", ".show entity_groups")
	if len(eg) != 1 || eg[0][1] != `["cluster('https://p1').database('Metrics')"]` {
		t.Errorf(".show entity_groups = %v", eg)
	}

	// Views are told apart in the database schema.
	if err := s.Exec("Metrics", `.create-or-alter function with (view=true) ['V']() { ['T'] }`); err != nil {
		t.Fatal(err)
	}
	schema := mgmtRows(t, c, "Metrics", `.show database ['Metrics'] schema as json`)
	if !strings.Contains(schema[0][0], `"FunctionKind":"ViewFunction"`) {
		t.Errorf("schema json = %s", schema[0][0])
	}
	if n := len(s.Commands()); n < 8 {
		t.Errorf("command log has %d entries", n)
	}
}

func TestErrorsReachTheClient(t *testing.T) {
	s, c := start(t, "Metrics")
	ctx := context.Background()

	_, err := c.Mgmt(ctx, "Metrics", stmt(".frobnicate"))
	var he *kerrors.HttpError
	if !errors.As(err, &he) || he.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "does not support") {
		t.Errorf("unsupported command: %v", err)
	}
	_, err = c.Mgmt(ctx, "Nope", stmt(".show tables"))
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "was not found") {
		t.Errorf("missing database: %v", err)
	}

	if err := s.InjectFault(Fault{Match: `^\.show tables`, Status: 429, RetryAfter: 2 * time.Second, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Mgmt(ctx, "Metrics", stmt(".show tables"))
	if !errors.As(err, &he) || !he.IsThrottled() {
		t.Errorf("throttled: %v", err)
	}
	if _, err := c.Mgmt(ctx, "Metrics", stmt(".show tables")); err != nil {
		t.Errorf("the fault was for one request only: %v", err)
	}

	if err := s.InjectFault(Fault{Status: 403}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Mgmt(ctx, "Metrics", stmt(".show tables"))
	if !errors.As(err, &he) || he.StatusCode != http.StatusForbidden {
		t.Errorf("forbidden: %v", err)
	}
	s.ClearFaults()

	if err := s.InjectFault(Fault{Delay: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := c.Mgmt(short, "Metrics", stmt(".show tables")); err == nil {
		t.Error("a slow answer must hit the client's deadline")
	}
}

// TestOutageAndHeldRequests: a fault tells the test a request is in
// flight, and a restarted server answers at its old address with its old
// state.
func TestOutageAndHeldRequests(t *testing.T) {
	s, c := start(t, "Metrics")
	if _, err := c.Mgmt(context.Background(), "Metrics", stmt(".create table ['cpu'] (['v']:real)")); err != nil {
		t.Fatal(err)
	}
	hits := make(chan string, 1)
	if err := s.InjectFault(Fault{Match: `^\.show tables`, Delay: time.Minute, Hit: hits}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Mgmt(ctx, "Metrics", stmt(".show tables"))
		done <- err
	}()
	select {
	case h := <-hits:
		if h != ".show tables" {
			t.Errorf("hit %q", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held request was never reported")
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a request cancelled while held succeeded")
	}
	s.ClearFaults()

	url := s.URL
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mgmt(context.Background(), "Metrics", stmt(".show tables")); err == nil {
		t.Fatal("a closed server answered")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.URL != url {
		t.Errorf("restarted at %s, was %s", s.URL, url)
	}
	if rows := mgmtRows(t, c, "Metrics", ".show tables"); len(rows) != 1 || rows[0][0] != "cpu" {
		t.Errorf("after the restart: %v", rows)
	}
}

// TestScalarFunctions: the functions the hub's digest query calls give
// Kusto's results (hash_sha256("World") is the documented example).
func TestScalarFunctions(t *testing.T) {
	s, c := start(t, "D")
	if err := s.Exec("D", ".create table ['T'] (['S']:string, ['J']:dynamic)"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec("D", `.ingest inline into table ['T'] <| World,"{ ""a"" : [1, 2] }"`); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec("D", `.ingest inline into table ['T'] <| Other,"""text"""`); err != nil {
		t.Fatal(err)
	}
	it, err := c.IterativeQuery(context.Background(), "D", stmt(`['T'] | where S in ("World", 'none') | project H = hash_sha256(S), J = tostring(J), P = tostring(pack_array(S, J)), S`))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range primaryRows(t, it) {
		var row []string
		for _, v := range r.Values() {
			row = append(row, v.String())
		}
		got = append(got, row)
	}
	want := [][]string{{"78ae647dc5544d227130a0682a51e30bc7777fbb6d8a8f17007463a3ecd1d524", `{"a":[1,2]}`, `["World",{"a":[1,2]}]`, "World"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	_, err = c.Query(context.Background(), "D", stmt(`['T'] | project H = md5(S)`))
	if err == nil || !strings.Contains(err.Error(), "does not support the function md5()") {
		t.Errorf("an unknown function must be named in the error: %v", err)
	}
}

// primaryRows reads the primary result of a streamed query.
func primaryRows(t *testing.T, it query.IterativeDataset) []query.Row {
	t.Helper()
	var rows []query.Row
	for tr := range it.Tables() {
		if tr.Err() != nil {
			t.Fatal(tr.Err())
		}
		if !tr.Table().IsPrimaryResult() {
			continue
		}
		for rr := range tr.Table().Rows() {
			if rr.Err() != nil {
				t.Fatal(rr.Err())
			}
			rows = append(rows, rr.Row())
		}
	}
	return rows
}

// TestSummarizeAfterShow: a management command's rows piped into
// summarize, as the hub digests are asked for: one row whatever the
// input (none included), aggregates nested in scalar functions, and a
// digest of sorted items that depends on content, not order.
func TestSummarizeAfterShow(t *testing.T) {
	s, c := start(t, "Metrics")
	digest := func(cmd string) string {
		t.Helper()
		rows := mgmtRows(t, c, "Metrics", cmd+" | summarize N = count(), Digest = hash_sha256(tostring(array_sort_asc(make_list(TableName))))")
		if len(rows) != 1 || len(rows[0]) != 2 || len(rows[0][1]) != 64 {
			t.Fatalf("%s: %v", cmd, rows)
		}
		return rows[0][0] + " " + rows[0][1]
	}
	empty := digest(".show tables")
	if !strings.HasPrefix(empty, "0 ") {
		t.Errorf("no tables: %s", empty)
	}
	if err := s.Exec("Metrics", ".create table ['b'] (['x']:string)"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec("Metrics", ".create table ['a'] (['x']:string)"); err != nil {
		t.Fatal(err)
	}
	two := digest(".show tables")
	if !strings.HasPrefix(two, "2 ") || two == empty {
		t.Errorf("two tables: %s", two)
	}
	// The same tables created the other way round digest alike.
	other, oc := start(t, "Metrics")
	for _, name := range []string{"a", "b"} {
		if err := other.Exec("Metrics", ".create table ['"+name+"'] (['x']:string)"); err != nil {
			t.Fatal(err)
		}
	}
	rows := mgmtRows(t, oc, "Metrics", ".show tables | summarize N = count(), Digest = hash_sha256(tostring(array_sort_asc(make_list(TableName))))")
	if got := rows[0][0] + " " + rows[0][1]; got != two {
		t.Errorf("same tables, other order: %s, want %s", got, two)
	}
	// pack_array of several columns inside make_list, as for functions.
	if err := s.Exec("Metrics", ".create-or-alter function with (folder = 'f') g() { a }"); err != nil {
		t.Fatal(err)
	}
	fn := mgmtRows(t, c, "Metrics", ".show functions | summarize Digest = hash_sha256(tostring(array_sort_asc(make_list(tostring(pack_array(Name, Folder, Body))))))")
	if len(fn) != 1 || len(fn[0][0]) != 64 {
		t.Errorf("function digest: %v", fn)
	}
	for _, bad := range []string{
		".show tables | summarize Digest = make_list(TableName) by Nope",
		".show tables | summarize Digest = make_list(TableName) by",
		".show tables | summarize Digest = nope(TableName)",
		".show tables | summarize make_list(TableName)",
	} {
		if _, err := c.Mgmt(context.Background(), "Metrics", stmt(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestSummarizeBy: summarize by a column computed with hash(), as the
// heartbeat digests are asked for in buckets: one row per bucket, the
// bucket first, every row in exactly one bucket; none without rows.
func TestSummarizeBy(t *testing.T) {
	s, c := start(t, "D")
	if err := s.Exec("D", ".create table ['T'] (['S']:string, ['N']:long)"); err != nil {
		t.Fatal(err)
	}
	q := `['T'] | project E = pack_array(S, N), B = hash(S, 4) | summarize Es = tostring(make_list(E)), K = count() by B`
	query := func() [][]string {
		t.Helper()
		it, err := c.IterativeQuery(context.Background(), "D", stmt(q))
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, r := range primaryRows(t, it) {
			if got := len(r.Values()); got != 3 {
				t.Fatalf("%d columns, want B, Es, K", got)
			}
			var row []string
			for _, v := range r.Values() {
				row = append(row, v.String())
			}
			out = append(out, row)
		}
		return out
	}
	if rows := query(); len(rows) != 0 {
		t.Errorf("no rows in, %v out", rows)
	}
	for i, v := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		if err := s.Exec("D", ".ingest inline into table ['T'] <| "+v+","+strings.Repeat("1", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	total := 0
	for _, r := range query() {
		var entries [][]any
		if err := json.Unmarshal([]byte(r[1]), &entries); err != nil {
			t.Fatalf("bucket %s: %q is not a list of pairs: %v", r[0], r[1], err)
		}
		for _, e := range entries {
			seen[e[0].(string)]++
		}
		n, _ := strconv.Atoi(r[2])
		total += n
		if b, _ := strconv.Atoi(r[0]); b < 0 || b > 3 || n != len(entries) {
			t.Errorf("bucket %s of 4 with %d rows counted, %d listed", r[0], n, len(entries))
		}
	}
	if len(seen) != 8 || total != 8 {
		t.Errorf("every row once: seen %v, counted %d", seen, total)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s in %d buckets", k, n)
		}
	}
}

// TestAdxMonIngestorStart: what adx-mon's ingestor asks a Kusto cluster
// when it starts, through the real client: the cluster's details (one
// node, named as Kusto's emulator names itself, so that ingestion goes
// straight to the engine), the database's ingestion mappings (none), and
// functions with parameters and bodies past what the server runs, which
// it keeps and lists but does not run.
func TestAdxMonIngestorStart(t *testing.T) {
	_, c := start(t, "Metrics")
	if rows := mgmtRows(t, c, "Metrics", ".show cluster details"); len(rows) != 1 || rows[0][2] != "KustoPersonal" {
		t.Errorf(".show cluster details = %v", rows)
	}
	if rows := mgmtRows(t, c, "Metrics", ".show database Metrics ingestion mappings"); len(rows) != 0 {
		t.Errorf("ingestion mappings = %v", rows)
	}
	// A table, its mapping, a row by column order: what the ingestor
	// does with each batch.
	mgmtRows(t, c, "Metrics", `.create-merge table ['Cpu'] (['Timestamp']:datetime, ['SeriesId']:long, ['Labels']:dynamic, ['Value']:real)`)
	mapping := `[{"Column":"Timestamp","DataType":"datetime","Properties":{"Ordinal":"0"}}]`
	mgmtRows(t, c, "Metrics", `.create-or-alter table ['Cpu'] ingestion csv mapping "Cpu_1" '`+mapping+`'`)
	if rows := mgmtRows(t, c, "Metrics", ".show database Metrics ingestion mappings"); len(rows) != 1 || rows[0][0] != "Cpu_1" || rows[0][1] != "csv" || rows[0][2] != mapping || rows[0][5] != "Cpu" {
		t.Errorf("ingestion mappings = %q", rows)
	}
	mgmtRows(t, c, "Metrics", `.ingest inline into table ['Cpu'] <| 2026-11-26T10:00:00Z,7,"{""host"":""a""}",0.5`)
	if _, err := c.Mgmt(context.Background(), "Metrics", stmt(`.create-or-alter table ['Nope'] ingestion csv mapping "n" '[]'`)); err == nil {
		t.Error("a mapping of a missing table was accepted")
	}
	body := `{
		T
		| invoke prom_increase(interval=interval)
		| extend Value=Value/((Timestamp-prev(Timestamp))/1s)
		| where isnan(Value) == false}`
	mgmtRows(t, c, "Metrics", `.create-or-alter function prom_rate (T:(Timestamp:datetime, SeriesId: long, Labels:dynamic, Value:real), interval:timespan=1m) `+body)
	rows := mgmtRows(t, c, "Metrics", ".show functions")
	if len(rows) != 1 || rows[0][0] != "prom_rate" || rows[0][1] != "(T:(Timestamp:datetime,SeriesId:long,Labels:dynamic,Value:real),interval:timespan=1m)" || rows[0][2] != "{"+strings.TrimSpace(body[1:]) {
		t.Errorf(".show functions = %q", rows)
	}
	// A parameterless function's body is still checked.
	if _, err := c.Mgmt(context.Background(), "Metrics", stmt(`.create-or-alter function f() { T | where x/2 > 1 }`)); err == nil {
		t.Error("a parameterless body past what the server runs was accepted")
	}
}

// TestShowDatabasesEntities: every database's tables, functions and entity
// groups in one listing, and the digest by database fleetplane asks of it.
func TestShowDatabasesEntities(t *testing.T) {
	s, c := start(t, "Metrics", "Logs", "Empty")
	for _, cmd := range []struct{ db, text string }{
		{"Metrics", ".create table ['cpu'] (['x']:string)"},
		{"Metrics", ".create-or-alter function with (folder = 'fleetplane') cpu() { T | take 1 }"},
		{"Logs", ".create entity_group ['LogsSpoke'] (cluster('https://p1.kusto.windows.net').database('Logs'))"},
	} {
		if err := s.Exec(cmd.db, cmd.text); err != nil {
			t.Fatal(err)
		}
	}
	rows := mgmtRows(t, c, "Metrics", ".show databases entities")
	var got []string
	for _, r := range rows {
		got = append(got, r[0]+"/"+r[1]+"/"+r[2]+"/"+r[4]+"/"+r[6])
	}
	want := "Logs/EntityGroup/LogsSpoke//[\"cluster('https://p1.kusto.windows.net').database('Logs')\"] Metrics/Table/cpu// Metrics/Function/cpu/fleetplane/{T | take 1 }"
	if strings.Join(got, " ") != want {
		t.Errorf(".show databases entities =\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	digests := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, r := range mgmtRows(t, c, "", `.show databases entities | where EntityType in ("Table", "Function") | summarize Digest = hash_sha256(tostring(array_sort_asc(make_list(tostring(pack_array(EntityType, EntityName, Folder, Content)))))) by DatabaseName`) {
			out[r[0]] = r[1]
		}
		return out
	}
	before := digests()
	if len(before) != 1 || len(before["Metrics"]) != 64 {
		t.Fatalf("digests by database = %v, want Metrics alone (Logs has only a group, Empty nothing)", before)
	}
	if err := s.Exec("Metrics", ".create-or-alter function with (folder = 'elsewhere') cpu() { T | take 1 }"); err != nil {
		t.Fatal(err)
	}
	if after := digests(); after["Metrics"] == before["Metrics"] {
		t.Error("a function moved to another folder left the digest as it was")
	}
}
