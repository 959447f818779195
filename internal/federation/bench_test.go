package federation

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/internal/heartbeat"
	"github.com/fleetplane/fleetplane/internal/kql"
)

// fleet is n partitions, each reporting dbs databases of tables tables.
func fleet(n, dbs, tables int) []heartbeat.Partition {
	names := make([][]string, dbs)
	for d := range dbs {
		for t := range tables {
			names[d] = append(names[d], fmt.Sprintf("Table%03d", t))
		}
	}
	parts := make([]heartbeat.Partition, n)
	for i := range n {
		p := heartbeat.Partition{Endpoint: fmt.Sprintf("https://partition%04d.westeurope.kusto.windows.net", i), LastHeartbeat: time.Now()}
		for d := range dbs {
			p.Databases = append(p.Databases, heartbeat.DatabaseSchema{Database: fmt.Sprintf("Db%d", d), Tables: names[d], Views: []string{}})
		}
		parts[i] = p
	}
	return parts
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
