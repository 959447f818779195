package heartbeat_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/test/harness/fleetgen"
)

// BenchmarkDecoderFleet decodes every heartbeat of a fleet with one
// Decoder, as a fresh federation cycle does: one schema everywhere, and
// every list distinct (fleetgen). "lists" keeps a copy of every list;
// "sets" keeps lists of names seen before as sets over them
// (Decoder.KeepSet), as a hub's cache does.
func BenchmarkDecoderFleet(b *testing.B) {
	for _, sh := range []fleetgen.Shape{
		{Partitions: 1000, Databases: 5, Tables: 200},
		{Partitions: 1000, Databases: 5, Tables: 200, Distinct: true},
	} {
		rows := fleetgen.Rows(fleetgen.Fleet(sh))
		for _, sets := range []bool{false, true} {
			name := sh.String() + "/lists"
			if sets {
				name = sh.String() + "/sets"
			}
			b.Run(name, func(b *testing.B) {
				names := 0
				b.ReportAllocs()
				for b.Loop() {
					dec := &heartbeat.Decoder{}
					if sets {
						dec.KeepSet = func(s heartbeat.Set) *heartbeat.Set {
							return &heartbeat.Set{Of: s.Of, Bits: slices.Clone(s.Bits)}
						}
					}
					names = 0
					for _, r := range rows {
						p, rej, err := dec.DecodeBytes(time.Time{}, r.Endpoint, r.Schema, false)
						if err != nil || len(rej) > 0 {
							b.Fatal(err, rej)
						}
						for _, d := range p.Databases {
							if d.TableSet != nil {
								names += d.TableSet.Len()
							}
							names += len(d.Tables)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(names), "ns/name")
			})
		}
	}
}
