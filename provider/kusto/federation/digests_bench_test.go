package federation

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/test/harness/fleetgen"
)

// digestAnswer is the hub's answer to kql.HeartbeatDigests for a fleet of
// n partitions × 5 databases × 200 tables, as Kusto frames it.
func digestAnswer(n int) string {
	buckets := make([][][3]string, 16)
	for _, r := range fleetgen.Rows(fleet(n, 5, 200)) {
		h := fnv.New32a()
		h.Write([]byte(r.Endpoint))
		b := h.Sum32() % 16
		buckets[b] = append(buckets[b], [3]string{r.Endpoint, r.Digest, r.Timestamp.Format("2006-01-02T15:04:05.0000000Z")})
	}
	var rows []string
	for i, b := range buckets {
		e, _ := json.Marshal(b)
		rows = append(rows, fmt.Sprintf("[%d,%s]", i, e))
	}
	return "[" + `{"FrameType":"DataSetHeader","IsProgressive":false,"Version":"v2.0","IsFragmented":true,"ErrorReportingPlacement":"EndOfTable"}` + "\n" +
		`,{"FrameType":"TableHeader","TableId":1,"TableKind":"PrimaryResult","TableName":"PrimaryResult","Columns":[{"ColumnName":"Bucket","ColumnType":"long"},{"ColumnName":"Entries","ColumnType":"string"}]}` + "\n" +
		`,{"FrameType":"TableFragment","TableFragmentType":"DataAppend","TableId":1,"Rows":[` + strings.Join(rows, ",") + "]}\n" +
		`,{"FrameType":"TableCompletion","TableId":1,"RowCount":16}` + "\n" + `,{"FrameType":"DataSetCompletion","HasErrors":false,"Cancelled":false}` + "\n]\n"
}

// BenchmarkDigestAnswer reads the heartbeat digests of 1,000 partitions
// from the answer's bytes, in process: the frames alone, the digests out
// of them, and the whole steady read with its cycle, where nothing
// changed. BenchmarkSteadyCycle adds the round trip.
func BenchmarkDigestAnswer(b *testing.B) {
	text := digestAnswer(1000)
	b.SetBytes(int64(len(text)))
	b.Run("frames", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = frames.Read(strings.NewReader(text), func(frames.Row) error { return nil })
		}
	})
	b.Run("frames+digests", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			_ = frames.Read(strings.NewReader(text), func(r frames.Row) error {
				return readDigests(r, func(DigestRow) error { n++; return nil })
			})
			if n != 1000 {
				b.Fatal(n)
			}
		}
	})
	s := NewSchemas()
	rows := rowsOf(fleet(1000, 5, 200))
	if _, _, _, err := s.cycle(benchKey, digestsOf(rows), served(rows)); err != nil {
		b.Fatal(err)
	}
	b.Run("cycle", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ds []DigestRow
			_ = frames.Read(strings.NewReader(text), func(r frames.Row) error {
				return readDigests(r, func(d DigestRow) error { ds = append(ds, d); return nil })
			})
			if _, _, _, err := s.cycle(benchKey, ds, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
