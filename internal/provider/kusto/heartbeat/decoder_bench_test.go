package heartbeat_test

import (
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/internal/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/test/harness/fleetgen"
)

// BenchmarkDecoderFleet decodes every heartbeat of a fleet with one
// Decoder, as a fresh federation cycle does, keeping copies of the lists:
// one schema everywhere, and every list distinct (fleetgen).
func BenchmarkDecoderFleet(b *testing.B) {
	for _, sh := range []fleetgen.Shape{
		{Partitions: 1000, Databases: 5, Tables: 200},
		{Partitions: 1000, Databases: 5, Tables: 200, Distinct: true},
	} {
		rows := fleetgen.Rows(fleetgen.Fleet(sh))
		b.Run(sh.String(), func(b *testing.B) {
			names := 0
			b.ReportAllocs()
			for b.Loop() {
				dec := &heartbeat.Decoder{}
				names = 0
				for _, r := range rows {
					p, rej, err := dec.DecodeBytes(time.Time{}, r.Endpoint, r.Schema, false)
					if err != nil || len(rej) > 0 {
						b.Fatal(err, rej)
					}
					for _, d := range p.Databases {
						names += len(d.Tables)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(names), "ns/name")
		})
	}
}
