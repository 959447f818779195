package federation

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/fleetgen"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// fleet is n partitions, each reporting dbs databases of tables tables.
func fleet(n, dbs, tables int) []heartbeat.Partition {
	return fleetgen.Fleet(fleetgen.Shape{Partitions: n, Databases: dbs, Tables: tables})
}

func emptyHub(dbs int) Hub {
	h := Hub{Databases: map[string]*Database{}}
	for d := range dbs {
		h.Databases[fmt.Sprintf("Db%d", d)] = &Database{Tables: map[string]bool{}, Functions: map[string]Function{}, EntityGroups: map[string][]string{}}
	}
	return h
}

// converged is the hub state a plan leaves behind, built without Kusto.
func converged(parts []heartbeat.Partition, dbs int) Hub {
	h := emptyHub(dbs)
	for name, live := range h.Databases {
		var ents []kql.Entity
		for _, p := range parts {
			for _, d := range p.Databases {
				if d.Database != name {
					continue
				}
				ents = append(ents, kql.Entity{Endpoint: p.Endpoint, Database: name})
				for _, t := range d.Tables {
					if live.Tables[t] {
						continue
					}
					live.Tables[t] = true
					body, _ := kql.MacroExpandBody(GroupName(name), t)
					live.Functions[t] = Function{Body: body, Folder: FunctionFolder}
				}
			}
		}
		for _, e := range ents {
			r, _ := e.Render()
			live.EntityGroups[GroupName(name)] = append(live.EntityGroups[GroupName(name)], r)
		}
	}
	return h
}

func benchmarkPlan(b *testing.B, parts []heartbeat.Partition, hub Hub) {
	b.Helper()
	var plan Plan
	var peak uint64
	b.ReportAllocs()
	for b.Loop() {
		plan = Compute(parts, hub)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > peak {
			peak = m.HeapAlloc
		}
	}
	b.ReportMetric(float64(plan.Count()), "commands")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkPlanFresh1000x5x200 plans a fleet of 1,000 partitions, 5
// databases each of 200 tables, against an empty hub.
func BenchmarkPlanFresh1000x5x200(b *testing.B) {
	benchmarkPlan(b, fleet(1000, 5, 200), emptyHub(5))
}

// BenchmarkPlanSteady1000x5x200 plans the same fleet against a hub that is
// already converged: the plan must be empty.
func BenchmarkPlanSteady1000x5x200(b *testing.B) {
	parts := fleet(1000, 5, 200)
	hub := converged(parts, 5)
	if n := Compute(parts, hub).Count(); n != 0 {
		b.Fatalf("steady plan has %d commands", n)
	}
	benchmarkPlan(b, parts, hub)
}

// BenchmarkPlanOneNewTable: one partition adds one table.
func BenchmarkPlanOneNewTable1000x5x200(b *testing.B) {
	parts := fleet(1000, 5, 200)
	hub := converged(parts, 5)
	parts[0].Databases[0].Tables = append(append([]string(nil), parts[0].Databases[0].Tables...), "TableNew")
	benchmarkPlan(b, parts, hub)
}

// rowsOf are the heartbeat rows of a fleet as fleetplane's partitions
// write them (names only), with the digests the hub would compute, as the
// Kusto client hands them over: each value the JSON text of its cell, the
// dynamic Schema and PartitionMetadata inline.
func rowsOf(parts []heartbeat.Partition) []frames.Row {
	cols := []frames.Column{{Name: "Timestamp", Type: "datetime"}, {Name: "ClusterEndpoint", Type: "string"},
		{Name: "Digest", Type: "string"}, {Name: "Schema", Type: "dynamic"}, {Name: "PartitionMetadata", Type: "dynamic"}}
	quote := func(s string) jsontext.Value {
		v, _ := jsontext.AppendQuote(nil, s)
		return v
	}
	out := make([]frames.Row, len(parts))
	for i, r := range fleetgen.Rows(parts) {
		out[i] = frames.Row{Columns: cols, Values: []jsontext.Value{
			quote(r.Timestamp.Format(time.RFC3339Nano)), quote(r.Endpoint), quote(r.Digest),
			jsontext.Value(r.Schema), jsontext.Value(r.Metadata),
		}}
	}
	return out
}

func digestsOf(rows []frames.Row) []DigestRow {
	out := make([]DigestRow, len(rows))
	for i, r := range rows {
		h, err := readHeartbeatRow(r)
		if err != nil {
			panic(err)
		}
		out[i] = DigestRow{Timestamp: h.Timestamp, Endpoint: h.Endpoint, Digest: h.Digest}
	}
	return out
}

// served answers a cycle's fetch from rows in memory, as the hub would,
// read as Read reads them.
func served(rows []frames.Row) func([]string, func(HeartbeatRow, error)) error {
	return func(endpoints []string, fn func(HeartbeatRow, error)) error {
		want := map[string]bool{}
		for _, e := range endpoints {
			want[e] = true
		}
		for _, r := range rows {
			ep, _ := r.String("ClusterEndpoint")
			if len(want) == 0 || want[ep] {
				fn(readHeartbeatRow(r))
			}
		}
		return nil
	}
}

var benchKey = readKey{db: "FleetDiscovery", table: "Heartbeats"}

// cycleOnce reads and plans one federation cycle from the hub's rows.
func cycleOnce(b *testing.B, s *Schemas, rows []frames.Row, hub Hub) (Plan, ReadStats) {
	b.Helper()
	parts, rej, stats, err := s.cycle(benchKey, digestsOf(rows), served(rows))
	if err != nil || len(rej) > 0 {
		b.Fatal(err, rej)
	}
	return s.Plan(Input{Partitions: parts, Hub: hub}), stats
}

// benchmarkCycle measures cycles of a fleet whose rows are versions[i%2]
// in iteration i, with s warmed by versions[1] first (unless fresh, when
// every cycle starts with an empty cache). After timing it runs one more
// cycle to sample the heap's peak, and reports the heap still live with
// input, cache and plan held.
func benchmarkCycle(b *testing.B, versions [2][]frames.Row, hub Hub, fresh bool) {
	b.Helper()
	s := NewSchemas()
	if !fresh {
		cycleOnce(b, s, versions[1], hub)
	}
	commands, decoded, read := 0, 0, 0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if fresh {
			s = NewSchemas()
		}
		plan, stats := cycleOnce(b, s, versions[i%2], hub)
		commands, decoded, read = max(commands, plan.Count()), max(decoded, stats.Decoded), max(read, stats.Bytes)
		i++
	}
	b.StopTimer()
	if fresh {
		s = NewSchemas()
	}
	peak := peakHeap(func() { cycleOnce(b, s, versions[i%2], hub) })
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "live-MB")
	b.ReportMetric(float64(commands), "commands")
	b.ReportMetric(float64(decoded), "decoded")
	b.ReportMetric(float64(read)/(1<<10), "read-KiB")
	runtime.KeepAlive(s)
	runtime.KeepAlive(versions)
}

// peakHeap is the most heap that objects, live or not yet collected,
// took while f ran, sampled every 50µs from runtime/metrics, which does
// not stop the world; it starts from a collected heap.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	peak := read()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(50 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return max(peak, read())
}

// changed is a fleet with every step-th partition's first database given
// one more table.
func changed(parts []heartbeat.Partition, step int) []heartbeat.Partition {
	out := slices.Clone(parts)
	for i := 0; i < len(out); i += step {
		p := out[i]
		p.Databases = slices.Clone(p.Databases)
		p.Databases[0].Tables = append(slices.Clone(p.Databases[0].Tables), "Table-new")
		out[i] = p
	}
	return out
}

// BenchmarkCycle measures federation cycles from heartbeat rows, as the
// Kusto client hands them over, to plan, for fleets of partitions ×
// databases × tables: 100, 1,000 and 5,000 partitions of 5 databases of
// 200 tables, and 1,000 partitions with five times the databases or five
// times the tables; "distinct/" fleets are the same sizes with no two lists
// of names equal (fleetOf), the worst case for sharing.
//   - fresh: nothing cached, every row decoded, planned against an empty hub;
//   - steady: the cache warm, nothing changed, against a converged hub;
//   - one-new-table: one partition adds a table (and removes it the next
//     cycle), against a converged hub;
//   - ten-percent: a tenth of the partitions change each cycle.
func BenchmarkCycle(b *testing.B) {
	seen := map[fleetgen.Shape]bool{}
	for _, sh := range fleetgen.Shapes {
		if seen[sh] {
			continue
		}
		seen[sh] = true
		name := sh.String()
		var parts []heartbeat.Partition
		var rows []frames.Row
		var hub Hub
		setup := func() {
			if rows != nil {
				return
			}
			parts = fleetgen.Fleet(sh)
			rows, hub = rowsOf(parts), converged(parts, sh.Databases)
			if sh.Distinct {
				// Its lists, a million names apart from the rows, would
				// stay live through every cycle measured, for the
				// collector to scan; only changed fleets need them.
				parts = nil
			}
		}
		b.Run("fresh/"+name, func(b *testing.B) {
			setup()
			benchmarkCycle(b, [2][]frames.Row{rows, rows}, emptyHub(sh.Databases), true)
		})
		b.Run("steady/"+name, func(b *testing.B) {
			setup()
			benchmarkCycle(b, [2][]frames.Row{rows, rows}, hub, false)
		})
		if sh.Distinct {
			continue
		}
		b.Run("one-new-table/"+name, func(b *testing.B) {
			setup()
			benchmarkCycle(b, [2][]frames.Row{rowsOf(changed(parts, sh.Partitions)), rows}, hub, false)
		})
		b.Run("ten-percent/"+name, func(b *testing.B) {
			setup()
			benchmarkCycle(b, [2][]frames.Row{rowsOf(changed(parts, 10)), rows}, hub, false)
		})
	}
}

// hubProcess is a Kusto server in a process of its own, with a client:
// what the benchmark's process spends is the client's work.
func hubProcess(b *testing.B, dbs ...string) (*support.KustoProcess, *kusto.Client) {
	b.Helper()
	server := support.StartKustoProcess(b, dbs...)
	c, err := kusto.New(server.URL, nil, kusto.Options{Timeout: time.Minute, Attempts: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return server, c
}

// measureReads runs read b.N times and reports, per call, the client's
// processor time, the bytes of results and the requests.
func measureReads(b *testing.B, server *support.KustoProcess, read func()) {
	b.Helper()
	before, cpu := server.Stats(b), support.ClientCPU(b)
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
	b.StopTimer()
	after := server.Stats(b)
	b.ReportMetric(float64(support.ClientCPU(b)-cpu)/float64(b.N)/1e6, "client-CPU-ms")
	b.ReportMetric(float64(after.BytesServed-before.BytesServed)/float64(b.N)/(1<<10), "read-KiB")
	b.ReportMetric(float64(after.Requests-before.Requests)/float64(b.N), "requests")
}

// BenchmarkReadHub reads a converged hub of 5 databases, each with 200
// tables, 200 functions and a group of 1,000 partitions, from the
// in-memory Kusto server in its own process: whole (the package's
// ReadHub), and by digest with nothing changed since the last read
// (Schemas.ReadHub). ns/op is the wall time of the round trips, the
// server's work included; client-CPU-ms is this process's alone.
func BenchmarkReadHub(b *testing.B) {
	parts := fleet(1000, 5, 200)
	server, c := hubProcess(b, "Db0", "Db1", "Db2", "Db3", "Db4")
	ctx := context.Background()
	plan := Compute(parts, emptyHub(5))
	if failures, err := Apply(ctx, c, Plan{Commands: plan.Commands}); err != nil || len(failures) > 0 {
		b.Fatal(failures, err)
	}
	b.Run("whole", func(b *testing.B) {
		measureReads(b, server, func() {
			if hub, err := ReadHub(ctx, c); err != nil || len(hub.Databases) != 5 {
				b.Fatal(err)
			}
		})
	})
	b.Run("by-digest", func(b *testing.B) {
		s := NewSchemas()
		if _, _, err := s.ReadHub(ctx, c); err != nil {
			b.Fatal(err)
		}
		measureReads(b, server, func() {
			if _, stats, err := s.ReadHub(ctx, c); err != nil || stats.Read != 0 {
				b.Fatalf("a steady hub read %d databases whole: %v", stats.Read, err)
			}
		})
	})
}

// BenchmarkSteadyCycle is a whole steady cycle as the provider runs it:
// the heartbeats' digests, the hub's state by digest, and the plan, for a
// converged hub of 1,000 partitions × 5 databases × 200 tables on the
// in-memory Kusto server in its own process. The plan must be empty.
func BenchmarkSteadyCycle(b *testing.B) {
	server, c := hubProcess(b, "FleetDiscovery", "Db0", "Db1", "Db2", "Db3", "Db4")
	server.Exec(b, "FleetDiscovery", support.HeartbeatTable)
	for _, r := range fleetgen.Rows(fleet(1000, 5, 200)) {
		rec := fmt.Sprintf("%s,%s,%s,%s", r.Timestamp.Format(time.RFC3339Nano), r.Endpoint, csvQuote(r.Schema), csvQuote(r.Metadata))
		server.Exec(b, "FleetDiscovery", ".ingest inline into table ['Heartbeats'] <| "+rec)
	}
	ctx := context.Background()
	s := NewSchemas()
	cycle := func() (Plan, HubStats) {
		parts, rej, _, err := s.Read(ctx, c, "FleetDiscovery", "Heartbeats", time.Hour, false)
		if err != nil || len(rej) > 0 || len(parts) != 1000 {
			b.Fatal(err, rej, len(parts))
		}
		hub, stats, err := s.ReadHub(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		return s.Plan(Input{Partitions: parts, Hub: hub}), stats
	}
	plan, _ := cycle()
	if failures, err := Apply(ctx, c, plan); err != nil || len(failures) > 0 {
		b.Fatal(failures, err)
	}
	cycle() // reads the changed databases whole, once
	b.Run("cycle", func(b *testing.B) {
		measureReads(b, server, func() {
			if plan, stats := cycle(); plan.Count() != 0 || stats.Read != 0 {
				b.Fatalf("steady cycle: %d commands, %d databases read whole", plan.Count(), stats.Read)
			}
		})
	})
	// Its parts: the heartbeats' digests, and the hub's.
	b.Run("heartbeats", func(b *testing.B) {
		measureReads(b, server, func() {
			if _, _, stats, err := s.Read(ctx, c, "FleetDiscovery", "Heartbeats", time.Hour, false); err != nil || stats.Decoded != 0 {
				b.Fatal(err, stats)
			}
		})
	})
	b.Run("hub", func(b *testing.B) {
		measureReads(b, server, func() {
			if _, stats, err := s.ReadHub(ctx, c); err != nil || stats.Read != 0 {
				b.Fatal(err, stats)
			}
		})
	})
}

// csvQuote quotes a field of an inline ingestion.
func csvQuote(b []byte) string {
	return `"` + strings.ReplaceAll(string(b), `"`, `""`) + `"`
}
