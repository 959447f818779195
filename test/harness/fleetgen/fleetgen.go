// Package fleetgen makes the heartbeat fleets federation is measured
// with, so that fleetplane's benchmarks and the adx-mon operator's
// (hack/anchorbench) read the very same rows.
package fleetgen

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
)

// Shape is a fleet's size: partitions × databases × tables. Distinct
// fleets have no two lists of names equal.
type Shape struct {
	Partitions, Databases, Tables int
	Distinct                      bool
}

// String names the shape as benchmarks do: "1000x5x200", or
// "distinct/1000x5x200".
func (s Shape) String() string {
	name := fmt.Sprintf("%dx%dx%d", s.Partitions, s.Databases, s.Tables)
	if s.Distinct {
		name = "distinct/" + name
	}
	return name
}

// Fleet is the shape's partitions, each reporting every database. In a
// distinct fleet each database has its own table names and each partition
// leaves its own pair of them out, so nothing can be shared between lists
// while the union, and so the hub's plan, is that of a fleet listing every
// table everywhere.
func Fleet(s Shape) []heartbeat.Partition {
	names := make([][]string, s.Databases)
	for d := range s.Databases {
		for t := range s.Tables {
			name := fmt.Sprintf("Table%03d", t)
			if s.Distinct {
				name = fmt.Sprintf("Db%dTable%03d", d, t)
			}
			names[d] = append(names[d], name)
		}
	}
	if s.Distinct && s.Partitions > s.Tables*((s.Tables-1)/2) {
		panic("fleetgen: too many partitions for distinct pairs of tables")
	}
	parts := make([]heartbeat.Partition, s.Partitions)
	now := time.Now().UTC().Truncate(time.Second)
	for i := range s.Partitions {
		p := heartbeat.Partition{Endpoint: fmt.Sprintf("https://partition%04d.westeurope.kusto.windows.net", i), LastHeartbeat: now}
		for d := range s.Databases {
			list := names[d]
			if s.Distinct {
				// Leave out a and b, a pair no other partition leaves
				// out: b follows a by 1 to (tables-1)/2 (mod tables), so
				// no pair is another's reversed.
				a := i % s.Tables
				b := (a + 1 + (i/s.Tables)%((s.Tables-1)/2)) % s.Tables
				list = slices.DeleteFunc(slices.Clone(list), func(n string) bool { return n == names[d][a] || n == names[d][b] })
			}
			p.Databases = append(p.Databases, heartbeat.DatabaseSchema{Database: fmt.Sprintf("Db%d", d), Tables: list, Views: []string{}})
		}
		parts[i] = p
	}
	return parts
}

// Row is a partition's latest heartbeat as the hub's table holds it, with
// the digest the hub computes of it.
type Row struct {
	Timestamp time.Time       `json:"Timestamp"`
	Endpoint  string          `json:"ClusterEndpoint"`
	Digest    string          `json:"Digest"`
	Schema    json.RawMessage `json:"Schema"`
	Metadata  json.RawMessage `json:"PartitionMetadata"`
}

// Rows are the heartbeat rows of parts as fleetplane's partitions write
// them (names only, a region in the metadata).
func Rows(parts []heartbeat.Partition) []Row {
	out := make([]Row, len(parts))
	for i, p := range parts {
		schema, err := json.Marshal(p.Databases)
		if err != nil {
			panic(err)
		}
		meta := []byte(`{"region":"westeurope"}`)
		sum := sha256.Sum256(append(append(slices.Clone(schema), 0), meta...))
		out[i] = Row{Timestamp: p.LastHeartbeat, Endpoint: p.Endpoint, Digest: hex.EncodeToString(sum[:]), Schema: schema, Metadata: meta}
	}
	return out
}

// WriteRows writes rows as JSON lines, one row a line.
func WriteRows(w io.Writer, rows []Row) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Shapes are the fleets BenchmarkCycle measures: 100, 1,000 and 5,000
// partitions of 5 databases of 200 tables, 1,000 with five times the
// databases or the tables, and the distinct fleets the anchor comparison
// reads (Anchor).
var Shapes = append([]Shape{
	{Partitions: 100, Databases: 5, Tables: 200},
	{Partitions: 5000, Databases: 5, Tables: 200},
	{Partitions: 1000, Databases: 25, Tables: 200},
	{Partitions: 1000, Databases: 5, Tables: 1000},
}, Anchor...)

// Anchor are the fleets measured beside the adx-mon operator: 1,000 and
// 5,000 partitions of 5 databases of 200 tables, one schema everywhere
// and every list distinct.
var Anchor = []Shape{
	{Partitions: 1000, Databases: 5, Tables: 200},
	{Partitions: 1000, Databases: 5, Tables: 200, Distinct: true},
	{Partitions: 5000, Databases: 5, Tables: 200},
	{Partitions: 5000, Databases: 5, Tables: 200, Distinct: true},
}
