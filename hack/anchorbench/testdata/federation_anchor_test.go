package operator

// A benchmark of the adx-mon operator's federation cycle, from heartbeat
// rows to the scripts it runs on the hub, over the rows fleetplane's
// BenchmarkCycle reads. hack/anchorbench/run.sh copies this file into a
// copy of adx-mon v0.3.0's operator package (the functions it calls are
// unexported) and runs it there; it is not part of fleetplane's build.

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-kusto-go/azkustodata/query"
	"github.com/Azure/azure-kusto-go/azkustodata/types"
	"github.com/Azure/azure-kusto-go/azkustodata/value"
)

// anchorRows reads one fleet's rows as the Kusto client hands over the
// operator's heartbeat query: Timestamp, ClusterEndpoint, Schema.
func anchorRows(b *testing.B, file string) []query.Row {
	b.Helper()
	f, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cols := query.Columns{
		query.NewColumn(0, "ClusterEndpoint", types.String), query.NewColumn(1, "Timestamp", types.DateTime),
		query.NewColumn(2, "Schema", types.Dynamic),
	}
	byName := func(name string) query.Column {
		for _, c := range cols {
			if c.Name() == name {
				return c
			}
		}
		return nil
	}
	var rows []query.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r struct {
			Timestamp time.Time       `json:"Timestamp"`
			Endpoint  string          `json:"ClusterEndpoint"`
			Schema    json.RawMessage `json:"Schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		rows = append(rows, query.NewRowFromParts(cols, byName, len(rows), value.Values{
			value.NewString(r.Endpoint), value.NewDateTime(r.Timestamp), value.NewDynamic(r.Schema),
		}))
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return rows
}

// BenchmarkAnchorCycle is what the operator computes in each federation
// cycle: every row decoded (streamHeartbeatData's loop), then the entity
// group and function scripts for every hub database. The Kusto round
// trips, and the table existence checks it sends one by one, are not in
// it, as they are not in fleetplane's BenchmarkCycle.
func BenchmarkAnchorCycle(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(os.Getenv("ANCHOR_ROWS"), "*.jsonl"))
	if len(files) == 0 {
		b.Skip("ANCHOR_ROWS names no directory of rows")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		b.Run("fresh/"+strings.Replace(name, "distinct-", "distinct/", 1), func(b *testing.B) {
			rows := anchorRows(b, file)
			commands := 0
			b.ReportAllocs()
			for b.Loop() {
				state := NewFederationState()
				for _, row := range rows {
					var h HeartbeatRow
					if err := row.ToStruct(&h); err != nil {
						b.Fatal(err)
					}
					state.processHeartbeatRow(h)
				}
				commands = 0
				hubDatabases := federationDatabaseNames(state)
				for _, groups := range generateEntityGroupDefinitions(state.SpokeDBEndpoints, hubDatabases) {
					splitKustoScripts(groups, maxKustoScriptSz)
					commands += len(groups)
				}
				for _, funcs := range generateKustoFunctionDefinitions(state.DBTableEndpoints) {
					splitKustoScripts(funcs, maxKustoScriptSz)
					commands += len(funcs)
				}
			}
			b.ReportMetric(float64(commands), "commands")
		})
	}
}
