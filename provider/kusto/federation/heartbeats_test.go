package federation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/fleetgen"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// beat writes a heartbeat row to the hub's table, as partitions do.
func beat(t *testing.T, hub *kustoserver.Server, ts time.Time, endpoint string, tables ...string) {
	t.Helper()
	support.IngestHeartbeat(t, hub, "FleetDiscovery", heartbeat.Row{Timestamp: ts, Endpoint: endpoint, Schema: []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: tables}}, Metadata: map[string]string{"region": "westeurope"}})
}

// queries are the hub queries sent since the last call.
func queries(hub *kustoserver.Server) []string {
	var out []string
	for _, c := range hub.Commands() {
		if c.API == "query" {
			out = append(out, c.Text)
		}
	}
	hub.ResetCommands()
	return out
}

func TestSchemasReadOnlyWhatChanged(t *testing.T) {
	hub := support.KustoServer(t, "FleetDiscovery")
	support.KustoExec(t, hub, "FleetDiscovery", support.HeartbeatTable)
	c, err := kusto.New(hub.URL, nil, kusto.Options{Timeout: 5 * time.Second, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-time.Minute)
	beat(t, hub, t0, "https://p1.kusto.windows.net", "cpu", "mem")
	beat(t, hub, t0, "https://p2.kusto.windows.net", "cpu")
	beat(t, hub, t0, "https://p3.kusto.windows.net", "cpu", "mem", "bad;name")
	beat(t, hub, t0, "not an endpoint", "cpu")
	hub.ResetCommands()

	s := NewSchemas()
	var sent []string // the queries of the last read
	var bytes int     // and the bytes of values it read
	read := func(allowHTTP bool) ([]heartbeat.Partition, []heartbeat.Rejection, ReadStats) {
		t.Helper()
		hub.ResetCommands()
		parts, rej, stats, err := s.Read(ctx, c, "FleetDiscovery", "Heartbeats", time.Hour, allowHTTP)
		if err != nil {
			t.Fatal(err)
		}
		sent = queries(hub)
		bytes, stats.Bytes = stats.Bytes, 0
		// Whatever was cached, the result is what decoding every row
		// afresh gives.
		fresh, frej, _, err := NewSchemas().Read(ctx, c, "FleetDiscovery", "Heartbeats", time.Hour, allowHTTP)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(endpointMap(parts), endpointMap(fresh)) || !reflect.DeepEqual(rej, frej) {
			t.Errorf("cached read differs from a fresh one:\n%+v %v\n%+v %v", parts, rej, fresh, frej)
		}
		return parts, rej, stats
	}
	tables := func(parts []heartbeat.Partition, ep string) string {
		for _, p := range parts {
			if p.Endpoint == ep {
				return strings.Join(p.Databases[0].Tables, ",")
			}
		}
		return "<absent>"
	}

	parts, rej, stats := read(false)
	if stats != (ReadStats{Partitions: 4, Fetched: 3, Decoded: 3, Queries: 2}) || len(parts) != 3 {
		t.Errorf("first read: %+v, %d partitions", stats, len(parts))
	}
	if len(rej) != 2 || !strings.Contains(rej[0].String(), "not an endpoint") || !strings.Contains(rej[1].String(), "bad;name") {
		t.Errorf("rejections = %v", rej)
	}
	if &endpointMap(parts)["https://p1.kusto.windows.net"].Databases[0].Tables[0] != &endpointMap(parts)["https://p3.kusto.windows.net"].Databases[0].Tables[0] {
		t.Error("equal table lists of two partitions are not shared")
	}

	changed := func() bool {
		t.Helper()
		ch, err := s.Changed(ctx, c, "FleetDiscovery", "Heartbeats", time.Hour, false)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	if changed() {
		t.Error("nothing changed since the read, the refused row included")
	}

	// Nothing changed but time: digests only, and the new heartbeat's time.
	t1 := t0.Add(30 * time.Second)
	beat(t, hub, t1, "https://p1.kusto.windows.net", "cpu", "mem")
	if changed() {
		t.Error("a heartbeat with the same content is no change")
	}
	parts, rej, stats = read(false)
	if stats != (ReadStats{Partitions: 4, Queries: 1}) {
		t.Errorf("steady read: %+v", stats)
	}
	if want := 3*len("https://p1.kusto.windows.net") + len("not an endpoint") + 4*64; bytes != want {
		t.Errorf("a steady read took %d bytes of values, want %d: endpoints and digests", bytes, want)
	}
	if digests, _ := kql.HeartbeatDigests("Heartbeats", time.Hour); len(sent) != 1 || sent[0] != digests {
		t.Errorf("a steady read must ask for digests only: %q", sent)
	}
	if p1 := endpointMap(parts)["https://p1.kusto.windows.net"]; !p1.LastHeartbeat.Equal(t1.Truncate(100 * time.Nanosecond)) {
		t.Errorf("p1's heartbeat time = %s, want %s", p1.LastHeartbeat, t1)
	}
	if len(rej) != 2 {
		t.Errorf("rejections must be reported every cycle: %v", rej)
	}

	// One partition changes: its row alone is fetched, by name.
	beat(t, hub, t1, "https://p2.kusto.windows.net", "cpu", "disk")
	if !changed() {
		t.Error("p2's new table is a change")
	}
	parts, _, stats = read(false)
	if stats != (ReadStats{Partitions: 4, Fetched: 1, Decoded: 1, Queries: 2}) || tables(parts, "https://p2.kusto.windows.net") != "cpu,disk" {
		t.Errorf("read after p2 changed: %+v, p2 has %s", stats, tables(parts, "https://p2.kusto.windows.net"))
	}
	if len(sent) != 2 || !strings.Contains(sent[1], "where ClusterEndpoint in ('https://p2.kusto.windows.net')") {
		t.Errorf("the changed row must be fetched by endpoint: %q", sent)
	}

	if changed() {
		t.Error("no change after the read that decoded p2's")
	}
	beat(t, hub, t1, "https://p4.kusto.windows.net", "cpu")
	if !changed() {
		t.Error("a new partition is a change")
	}

	// Reading with other settings starts over.
	if _, _, stats = read(true); stats.Decoded != 4 {
		t.Errorf("a read allowing http must decode every row again: %+v", stats)
	}
	if s.Len() != 5 {
		t.Errorf("cache holds %d partitions (the refused one included), want 5", s.Len())
	}
}

func endpointMap(parts []heartbeat.Partition) map[string]heartbeat.Partition {
	m := map[string]heartbeat.Partition{}
	for _, p := range parts {
		m[p.Endpoint] = p
	}
	return m
}

const (
	digestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// rows serves whole rows to a cycle and counts what it was asked.
type rows struct {
	byEndpoint map[string]HeartbeatRow
	asked      [][]string
}

func (r *rows) fetch(endpoints []string, fn func(HeartbeatRow, error)) error {
	r.asked = append(r.asked, endpoints)
	for ep, h := range r.byEndpoint {
		if endpoints == nil || slices.Contains(endpoints, ep) {
			fn(h, nil)
		}
	}
	return nil
}

func TestSchemasCycle(t *testing.T) {
	const p1, p2 = "https://p1.kusto.windows.net", "https://p2.kusto.windows.net"
	ts := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	row := func(ep, digest, tables string) HeartbeatRow {
		return HeartbeatRow{Timestamp: ts, Endpoint: ep, Digest: digest, Schema: []byte(`[{"database":"Metrics","tables":["` + tables + `"]}]`)}
	}
	key := readKey{db: "FleetDiscovery", table: "Heartbeats"}

	t.Run("a heartbeat newer than its digest is kept under its own", func(t *testing.T) {
		s := NewSchemas()
		src := &rows{byEndpoint: map[string]HeartbeatRow{p1: row(p1, digestB, "new"), p2: row(p2, digestA, "cpu")}}
		parts, _, _, _ := s.cycle(key, []DigestRow{{ts, p1, digestA}, {ts, p2, digestA}}, src.fetch)
		if len(parts) != 2 || parts[0].Databases[0].Tables[0] != "new" {
			t.Fatalf("parts = %+v", parts)
		}
		_, _, stats, _ := s.cycle(key, []DigestRow{{ts, p1, digestB}, {ts, p2, digestA}}, src.fetch)
		if stats.Fetched != 0 {
			t.Errorf("the row fetched with digest B must be reused when the hub reports B: %+v", stats)
		}
		_, _, stats, _ = s.cycle(key, []DigestRow{{ts, p1, digestA}, {ts, p2, digestA}}, src.fetch)
		if stats.Decoded != 1 || !reflect.DeepEqual(src.asked[len(src.asked)-1], []string{p1}) {
			t.Errorf("a digest other than the cached one must fetch that partition alone: %+v, asked %v", stats, src.asked)
		}
	})

	t.Run("a digest that is not a SHA-256 is never trusted", func(t *testing.T) {
		s := NewSchemas()
		src := &rows{byEndpoint: map[string]HeartbeatRow{p1: row(p1, "", "cpu")}}
		for range 2 {
			if _, _, stats, _ := s.cycle(key, []DigestRow{{ts, p1, ""}}, src.fetch); stats.Decoded != 1 {
				t.Errorf("an empty digest must mean decoding every time: %+v", stats)
			}
		}
	})

	t.Run("a partition gone between the two queries is left out", func(t *testing.T) {
		s := NewSchemas()
		src := &rows{byEndpoint: map[string]HeartbeatRow{p2: row(p2, digestA, "cpu")}}
		parts, _, _, err := s.cycle(key, []DigestRow{{ts, p1, digestA}, {ts, p2, digestA}}, src.fetch)
		if err != nil || len(parts) != 1 || parts[0].Endpoint != p2 || s.Len() != 1 {
			t.Errorf("parts = %+v, cached %d, err %v", parts, s.Len(), err)
		}
	})

	t.Run("many changed partitions are read without a list", func(t *testing.T) {
		s := NewSchemas()
		src := &rows{byEndpoint: map[string]HeartbeatRow{}}
		var digests []DigestRow
		for i := range kql.MaxEndpointsInQuery + 2 {
			ep := fmt.Sprintf("https://p%d.kusto.windows.net", i)
			src.byEndpoint[ep] = row(ep, digestA, "cpu")
			digests = append(digests, DigestRow{ts, ep, digestA})
		}
		if _, _, _, err := s.cycle(key, digests[:1], src.fetch); err != nil {
			t.Fatal(err)
		}
		if _, _, stats, _ := s.cycle(key, digests, src.fetch); src.asked[1] != nil || stats.Decoded != kql.MaxEndpointsInQuery+1 {
			t.Errorf("asked %d endpoints, decoded %d", len(src.asked[1]), stats.Decoded)
		}
	})

	t.Run("an unreadable row is reported and not kept", func(t *testing.T) {
		s := NewSchemas()
		parts, rej, _, _ := s.cycle(key, []DigestRow{{ts, p1, digestA}}, func(_ []string, fn func(HeartbeatRow, error)) error {
			fn(HeartbeatRow{}, errTest)
			return nil
		})
		if len(parts) != 0 || len(rej) != 1 || !strings.Contains(rej[0].Reason, "unreadable row") || s.Len() != 0 {
			t.Errorf("parts %v, rejections %v, cached %d", parts, rej, s.Len())
		}
	})
}

var errTest = errors.New("column Schema is not a string")

// TestRejectionsHideCredentials: an endpoint a heartbeat row claims is
// untrusted, and may carry credentials; the warning that refuses it,
// which whoever reads the Federation sees, shows neither.
func TestRejectionsHideCredentials(t *testing.T) {
	hub := support.KustoServer(t, "FleetDiscovery")
	support.KustoExec(t, hub, "FleetDiscovery", support.HeartbeatTable)
	c, err := kusto.New(hub.URL, nil, kusto.Options{Timeout: 5 * time.Second, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	t0 := time.Now().UTC().Add(-time.Minute)
	beat(t, hub, t0, "https://user:s3cret@p9.kusto.windows.net", "cpu")
	beat(t, hub, t0, "https://p8.kusto.windows.net/?sig=s3cret", "cpu")
	_, rej, _, err := NewSchemas().Read(context.Background(), c, "FleetDiscovery", "Heartbeats", time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rej) != 2 {
		t.Fatalf("rejections = %v", rej)
	}
	for _, r := range rej {
		if s := r.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "REDACTED") {
			t.Errorf("rejection %q", s)
		}
	}
}

// A cycle that finds the fleet unchanged takes the last cycle's partitions
// with new times; whatever happens between cycles, what it returns is what
// a whole cycle from an empty cache returns.
func TestUnchangedCycleIsAWholeCycle(t *testing.T) {
	base := fleet(6, 2, 4)
	at := func(parts []heartbeat.Partition, d time.Duration) []heartbeat.Partition {
		out := slices.Clone(parts)
		for i := range out {
			out[i].LastHeartbeat = out[i].LastHeartbeat.Add(d)
		}
		return out
	}
	newTable := slices.Clone(base)
	newTable[2].Databases = slices.Clone(newTable[2].Databases)
	newTable[2].Databases[0].Tables = append(slices.Clone(newTable[2].Databases[0].Tables), "TableNew")
	upper := slices.Clone(base)
	upper = append(upper, upper[3])
	upper[len(upper)-1].Endpoint = strings.ToUpper(upper[3].Endpoint[:12]) + upper[3].Endpoint[12:]
	refused := append(slices.Clone(base), heartbeat.Partition{Endpoint: "not an endpoint", Databases: base[0].Databases, LastHeartbeat: base[0].LastHeartbeat})
	twice := append(slices.Clone(base[1:]), base[1])
	steps := []struct {
		name      string
		parts     []heartbeat.Partition
		unchanged bool
	}{
		{"first", base, false},
		{"later heartbeats", at(base, time.Minute), true},
		{"later still", at(base, 2*time.Minute), true},
		{"a new table", at(newTable, 3*time.Minute), false},
		{"as it was", at(newTable, 4*time.Minute), true},
		{"a partition gone", at(newTable[1:], 5*time.Minute), false},
		{"it is back", at(newTable, 6*time.Minute), false},
		{"an endpoint in other case", at(upper, 7*time.Minute), false},
		{"again", at(upper, 8*time.Minute), false}, // two entries, one partition endpoint: never unchanged
		{"a refused endpoint", at(refused, 9*time.Minute), false},
		{"still refused", at(refused, 10*time.Minute), false},
		{"listed twice", at(twice, 11*time.Minute), false},
		{"back to the fleet", at(base, 12*time.Minute), false},
		{"and steady", at(base, 13*time.Minute), true},
	}
	s := NewSchemas()
	for _, step := range steps {
		rows := rowsOf(step.parts)
		hadLast := s.last.filled != nil
		_, _, fast := s.unchanged(digestsOf(rows))
		if fast != step.unchanged || (fast && !hadLast) {
			t.Errorf("%s: unchanged = %v, want %v", step.name, fast, step.unchanged)
		}
		parts, rej, _, err := s.cycle(benchKey, digestsOf(rows), served(rows))
		if err != nil {
			t.Fatal(step.name, err)
		}
		wantParts, wantRej, _, err := NewSchemas().cycle(benchKey, digestsOf(rows), served(rows))
		if err != nil {
			t.Fatal(step.name, err)
		}
		if !reflect.DeepEqual(parts, wantParts) || !reflect.DeepEqual(rej, wantRej) {
			t.Errorf("%s: cycle gave\n%+v %v\na whole cycle gives\n%+v %v", step.name, parts, rej, wantParts, wantRej)
		}
		// What a cycle returns is the caller's: changing it changes
		// nothing the next cycle returns.
		for i := range parts {
			parts[i].Endpoint = "changed by the caller"
		}
	}
}

// TestMetadataMemo: rows decode to what DecodeMetadata gives, whatever
// came before them, each partition with a map of its own, and a row's
// bytes reused afterwards change nothing remembered.
func TestMetadataMemo(t *testing.T) {
	var mm metadataMemo
	rows := []string{
		`{"region":"westeurope"}`, `{"region":"westeurope"}`, `{"region":"eastus"}`,
		`{"region":{"nested":1}}`, `{"region":{"nested":1}}`, `{"region":"eastus"}`, ``, `null`, `{"n":1}`,
	}
	var kept []map[string]string
	for i, text := range rows {
		raw := []byte(text)
		got, err := mm.decode(raw)
		want, wantErr := heartbeat.DecodeMetadata([]byte(text))
		if fmt.Sprint(got, err) != fmt.Sprint(want, wantErr) {
			t.Fatalf("row %d %s: %v, %v; DecodeMetadata gives %v, %v", i, text, got, err, want, wantErr)
		}
		for j := range raw {
			raw[j] = 'x'
		}
		if got != nil {
			got["mine"] = "yes"
			kept = append(kept, got)
		}
	}
	for i, m := range kept {
		if m["mine"] != "yes" || len(m) > 2 {
			t.Errorf("partition %d's map %v was changed by another's", i, m)
		}
	}
	first, _ := mm.decode([]byte(`{"region":"eastus"}`))
	second, _ := mm.decode([]byte(`{"region":"eastus"}`))
	first["mine"], second["mine"] = "yes", "yes"
	if again, _ := mm.decode([]byte(`{"region":"eastus"}`)); len(again) != 1 {
		t.Errorf("remembered metadata changed by a partition: %v", again)
	}
}

// TestPlansListsKeptAsSets: a fleet whose partitions each list their own
// selection of the same tables is kept mostly as sets (heartbeat.Set), and
// plans exactly as the same partitions with every list held as names do,
// within the limits and past them (a partition's list cut to its first
// names).
func TestPlansListsKeptAsSets(t *testing.T) {
	plain := fleetgen.Fleet(fleetgen.Shape{Partitions: 60, Databases: 3, Tables: 20, Distinct: true})
	rows := rowsOf(plain)
	s := NewSchemas()
	parts, rej, _, err := s.cycle(readKey{db: "FleetDiscovery", table: "Heartbeats"}, digestsOf(rows), served(rows))
	if err != nil || len(rej) > 0 {
		t.Fatal(err, rej)
	}
	sets := 0
	for i, p := range parts {
		for j, d := range p.Databases {
			if d.TableSet != nil {
				sets++
			}
			if got, want := d.TableNames(), plain[i].Databases[j].Tables; !slices.Equal(got, want) {
				t.Fatalf("%s %s: tables %q, want %q", p.Endpoint, d.Database, got, want)
			}
		}
	}
	if sets < len(parts)*3*9/10 {
		t.Errorf("%d of %d lists kept as sets", sets, len(parts)*3)
	}
	hub := emptyHub(3)
	for _, lim := range []Limits{DefaultLimits, {Partitions: 50, DatabasesPerPartition: 2, TablesPerPartitionDatabase: 7, TablesPerHubDatabase: 15, Commands: 5000}} {
		got, want := Input{Partitions: parts, Hub: hub, Limits: lim}.Plan(), Input{Partitions: plain, Hub: hub, Limits: lim}.Plan()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("limits %+v: planned from sets\n%v\nfrom lists\n%v", lim, got, want)
		}
		if got.Count() == 0 {
			t.Errorf("limits %+v: nothing planned", lim)
		}
	}
}

// TestSetsOutliveTheirLists: sets kept in an earlier cycle still count
// once the lists whose names they were drawn from changed: the union is
// every set's names, word by word.
func TestSetsOutliveTheirLists(t *testing.T) {
	ts := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	row := func(ep, digest, tables string) HeartbeatRow {
		return HeartbeatRow{Timestamp: ts, Endpoint: ep, Digest: digest, Schema: []byte(`[{"database":"Metrics","tables":[` + tables + `]}]`)}
	}
	const a, b, c = "https://a.kusto.windows.net", "https://b.kusto.windows.net", "https://c.kusto.windows.net"
	// Served in this order: a's list shows the decoder every name.
	served := []HeartbeatRow{row(a, digestA, `"T1","T2","T3","T4"`), row(b, digestA, `"T1","T2"`), row(c, digestA, `"T3","T4"`)}
	fetch := func(endpoints []string, fn func(HeartbeatRow, error)) error {
		for _, h := range served {
			if endpoints == nil || slices.Contains(endpoints, h.Endpoint) {
				fn(h, nil)
			}
		}
		return nil
	}
	s := NewSchemas()
	key := readKey{db: "FleetDiscovery", table: "Heartbeats"}
	digests := []DigestRow{{ts, a, digestA}, {ts, b, digestA}, {ts, c, digestA}}
	if _, _, _, err := s.cycle(key, digests, fetch); err != nil {
		t.Fatal(err)
	}
	served[0] = row(a, digestB, `"T1"`)
	digests[0].Digest = digestB
	parts, _, stats, err := s.cycle(key, digests, fetch)
	if err != nil || stats.Decoded != 1 {
		t.Fatal(err, stats)
	}
	if parts[1].Databases[0].TableSet == nil || parts[2].Databases[0].TableSet == nil {
		t.Fatalf("b and c were not kept as sets: %+v", parts)
	}
	want := wanted(parts, nil, DefaultLimits, func(string, ...any) {})["metrics"]
	if got := slices.Sorted(maps.Keys(want.tables)); strings.Join(got, ",") != "T1,T2,T3,T4" {
		t.Errorf("tables %v, want T1 to T4", got)
	}
}
