package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

func TestRecordRoundTripsThroughKusto(t *testing.T) {
	s := kustoserver.New("FleetDiscovery")
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := kusto.New(s.URL, nil, kusto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create, _ := kql.CreateMergeTable("Heartbeats", []kql.Column{{Name: "Timestamp", Type: "datetime"}, {Name: "ClusterEndpoint", Type: "string"}, {Name: "Schema", Type: "dynamic"}, {Name: "PartitionMetadata", Type: "dynamic"}})
	if _, err := c.Mgmt(ctx, "FleetDiscovery", create); err != nil {
		t.Fatal(err)
	}
	row := Row{
		Timestamp: time.Now().UTC().Truncate(time.Microsecond),
		Endpoint:  "https://p1.westeurope.kusto.windows.net",
		Schema:    []DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu, \"quoted\"", "mem"}, Views: []string{"v"}}},
		Metadata:  map[string]string{"geo": "EU", "note": "a,b\"c"},
	}
	rec, err := row.Record()
	if err != nil {
		t.Fatal(err)
	}
	ingest, err := kql.IngestInline("Heartbeats", rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mgmt(ctx, "FleetDiscovery", ingest); err != nil {
		t.Fatal(err)
	}
	q, _ := kql.HeartbeatRows("Heartbeats", time.Hour, nil)
	var got []Partition
	err = c.Query(ctx, "FleetDiscovery", q, func(r frames.Row) error {
		var h struct {
			Timestamp       time.Time
			ClusterEndpoint string
			Schema, Meta    string
		}
		var err error
		if h.Timestamp, err = r.Time("Timestamp"); err != nil {
			return err
		}
		if h.ClusterEndpoint, err = r.String("ClusterEndpoint"); err != nil {
			return err
		}
		schema, err := r.Dynamic("Schema")
		if err != nil {
			return err
		}
		metadata, err := r.Dynamic("PartitionMetadata")
		if err != nil {
			return err
		}
		h.Schema, h.Meta = string(schema), string(metadata)
		var meta map[string]string
		if err := json.Unmarshal([]byte(h.Meta), &meta); err != nil || meta["note"] != `a,b"c` {
			t.Errorf("metadata = %q, %v", h.Meta, err)
		}
		p, rej, err := Decode(h.Timestamp, h.ClusterEndpoint, h.Schema, false)
		if len(rej) != 1 || !strings.Contains(rej[0].Reason, "cpu") {
			t.Errorf("the table named with a comma and quotes is not a valid Kusto name and must be reported: %v", rej)
		}
		got = append(got, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].LastHeartbeat.Equal(row.Timestamp) || got[0].Endpoint != row.Endpoint ||
		len(got[0].Databases) != 1 || strings.Join(got[0].Databases[0].Tables, ",") != "mem" || got[0].Databases[0].Views[0] != "v" {
		t.Errorf("decoded %+v", got)
	}
}

func TestDecodeRejectsWhatItCannotTrust(t *testing.T) {
	now := time.Now()
	cases := map[string]struct {
		endpoint, schema string
		wantErr          string
		wantRejected     int
		wantTables       string
	}{
		"injection in endpoint": {endpoint: "https://x').database('y')) | .drop table T //", schema: "[]", wantErr: "invalid Kusto endpoint"},
		"plain http":            {endpoint: "http://p1.kusto.windows.net", schema: "[]", wantErr: "plain http"},
		"not JSON":              {endpoint: "https://p1", schema: "{", wantErr: "not a JSON list"},
		"huge schema":           {endpoint: "https://p1", schema: "[" + strings.Repeat(" ", MaxSchemaBytes) + "]", wantErr: "limit"},
		"injection in names":    {endpoint: "https://p1", schema: `[{"database":"Metrics","tables":["ok","x'] | .drop table T //","a\nb"],"views":[]}]`, wantRejected: 2, wantTables: "ok"},
		"bad database skipped":  {endpoint: "https://p1", schema: `[{"database":"M'x","tables":["t"]},{"database":"Logs","tables":["b","a","a"]}]`, wantRejected: 1, wantTables: "a,b"},
		"too many databases":    {endpoint: "https://p1", schema: "[" + strings.Repeat(`{"database":"d"},`, MaxDatabases) + `{"database":"d"}]`, wantErr: "limit"},
		"duplicates are merged": {endpoint: "https://p1", schema: `[{"database":"Logs","tables":["b"]},{"database":"Logs","tables":["a","b"]}]`, wantTables: "a,b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, rej, err := Decode(now, tc.endpoint, tc.schema, false)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rej) != tc.wantRejected {
				t.Errorf("rejected %v, want %d", rej, tc.wantRejected)
			}
			var tables []string
			for _, d := range p.Databases {
				tables = append(tables, d.Tables...)
			}
			if strings.Join(tables, ",") != tc.wantTables {
				t.Errorf("tables = %v, want %s", tables, tc.wantTables)
			}
		})
	}
}

func TestCollect(t *testing.T) {
	s := kustoserver.New("Metrics", "Logs")
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for db, cmds := range map[string][]string{
		"Metrics": {".create table ['cpu'] (['v']:real)", ".create table ['mem'] (['v']:real)", ".create-or-alter function with (view=true) ['hot']() { ['cpu'] }", ".create-or-alter function ['helper']() { ['cpu'] }"},
		"Logs":    {".create table ['app-logs'] (['m']:string)"},
	} {
		for _, c := range cmds {
			if err := s.Exec(db, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, _ := kusto.New(s.URL, nil, kusto.Options{})
	schema, n, err := Collect(context.Background(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []DatabaseSchema{{Database: "Logs", Tables: []string{"app-logs"}, Views: []string{}}, {Database: "Metrics", Tables: []string{"cpu", "mem"}, Views: []string{"hot"}}}
	gj, _ := json.Marshal(schema)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("schema = %s\nwant     %s", gj, wj)
	}
	if n != (Counts{Databases: 2, Tables: 3, Views: 1}) {
		t.Errorf("counts = %+v", n)
	}

	// Only the databases the namespace is granted are read and reported.
	schema, n, err = Collect(context.Background(), c, func(db string) bool { return db == "Logs" })
	if err != nil {
		t.Fatal(err)
	}
	if len(schema) != 1 || schema[0].Database != "Logs" || n != (Counts{Databases: 1, Tables: 1}) {
		t.Errorf("granted Logs only: schema %+v, counts %+v", schema, n)
	}
}

func TestDigest(t *testing.T) {
	schema := func(tables ...string) []DatabaseSchema {
		return []DatabaseSchema{{Database: "Metrics", Tables: tables, Views: []string{}}}
	}
	a, err := Digest(schema("cpu", "mem"))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Digest(schema("cpu", "mem")); again != a {
		t.Error("the same schema has two digests")
	}
	if other, _ := Digest(schema("cpu", "mem", "disk")); other == a {
		t.Error("a new table leaves the digest as it was")
	}
	if none, _ := Digest(nil); none == a || len(none) != 64 {
		t.Errorf("digest of no schema = %q", none)
	}
}

// The texts a Decoder keeps to recognise lists stay within their bound,
// however many databases a fleet names and however long their lists.
func TestKnownListsBounded(t *testing.T) {
	var dec Decoder
	long := make([]string, 1000)
	for i := range long {
		long[i] = fmt.Sprintf(`"Table%04d"`, i)
	}
	for i := range 3000 {
		tables := "[]"
		if i%2 == 0 {
			tables = "[" + strings.Join(long, ",") + "]"
		}
		schema := fmt.Sprintf(`[{"database":"Db%d","tables":%s}]`, i, tables)
		if _, _, err := dec.Decode(time.Unix(0, 0), "https://p1.kusto.windows.net", schema, false); err != nil {
			t.Fatal(err)
		}
		if dec.knownBytes > maxKnownBytes {
			t.Fatalf("after %d rows the decoder keeps %d bytes of known lists, more than %d", i+1, dec.knownBytes, maxKnownBytes)
		}
	}
	text := 0
	for _, k := range dec.known {
		text += len(k.text) + knownOverhead
	}
	if text != dec.knownBytes || len(dec.known) == 0 {
		t.Errorf("%d known lists of %d bytes, counted %d", len(dec.known), text, dec.knownBytes)
	}
}

// The names a Decoder copies into its references stay within their
// bound, however many new names rows bring: one database whose every row
// adds 1,000 names, and many databases, both past the bound.
func TestReferencesBounded(t *testing.T) {
	row := func(db string, from int) string {
		names := make([]string, 1000)
		for i := range names {
			names[i] = fmt.Sprintf(`"Table%07d"`, from+i)
		}
		return fmt.Sprintf(`[{"database":%q,"tables":[%s]}]`, db, strings.Join(names, ","))
	}
	for name, db := range map[string]func(int) string{
		"one database":   func(int) string { return "Db" },
		"many databases": func(i int) string { return fmt.Sprintf("Db%d", i) },
	} {
		t.Run(name, func(t *testing.T) {
			var dec Decoder
			for i := range 1200 {
				p, rej, err := dec.Decode(time.Unix(0, 0), "https://p1.kusto.windows.net", row(db(i), i*1000), false)
				if err != nil || len(rej) > 0 || len(p.Databases) != 1 || len(p.Databases[0].Tables) != 1000 {
					t.Fatalf("row %d: %v %v %d databases", i, err, rej, len(p.Databases))
				}
				if dec.seenCopied > maxSeenCopied {
					t.Fatalf("after %d rows the decoder copied %d names into its references, more than %d", i+1, dec.seenCopied, maxSeenCopied)
				}
				if dec.seenBytes > maxSeenBytes {
					t.Fatalf("after %d rows the decoder wrote %d bytes of reference text, more than %d", i+1, dec.seenBytes, maxSeenBytes)
				}
			}
			held := 0
			for _, ref := range dec.seen {
				names := ref.names
				held += len(names)
			}
			if held == 0 || held > dec.seenCopied {
				t.Errorf("references hold %d names, %d copied", held, dec.seenCopied)
			}
		})
	}
}
