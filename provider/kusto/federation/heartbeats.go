package federation

import (
	"bytes"
	"context"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// DigestRow is what the hub says of a partition's latest heartbeat when
// asked only what changed: its time and the digest of its content.
type DigestRow struct {
	Timestamp time.Time
	Endpoint  string
	Digest    string
}

// HeartbeatRow is a partition's latest heartbeat, whole, with its digest.
// Schema and Metadata are the dynamic columns' JSON in the answer itself,
// valid only while its row is read (a fleet's Schema columns are most of
// what a fresh cycle reads).
type HeartbeatRow struct {
	Timestamp time.Time
	Endpoint  string
	Digest    string
	Schema    []byte
	Metadata  []byte
}

// ReadStats says what a read cost.
type ReadStats struct {
	// Partitions with a heartbeat in the window.
	Partitions int
	// Fetched is how many whole rows the hub sent; Decoded how many of
	// them were decoded (the rest were already known by digest).
	Fetched, Decoded int
	// Queries sent to the hub.
	Queries int
	// Bytes of the values read: endpoints, digests, schemas and metadata
	// (the wire adds framing to each).
	Bytes int
}

// Schemas keeps the partitions a hub's cycles decoded, by endpoint and
// digest of the latest heartbeat, so that a cycle reads digests, fetches
// and decodes whole rows only for partitions whose digest is new, and
// reuses the rest. It holds only the partitions the last cycle saw.
//
// Equal lists of table and view names are shared between partitions
// (fleets run the same schema everywhere), which keeps a large fleet
// small in memory and lets planning union each distinct list once.
//
// A Schemas is used by one cycle at a time.
type Schemas struct {
	// read is what the entries were read with; another read starts over.
	read    readKey
	entries map[string]entry // by ClusterEndpoint as stored
	names   map[uint64][]string
	// sets are the lists kept as sets over the names a cycle's decoder
	// had seen (heartbeat.Set), shared like names.
	sets map[uint64]*heartbeat.Set
	// words holds one copy of every name the kept lists hold, so that
	// equal names are one string however many partitions list them.
	words map[string]string
	seed  uint64
	// hub is the hub's databases as the last ReadHub read them.
	hub map[string]hubDatabase
	// memo is the last plan Plan made.
	memo planMemo
	// last is what the last cycle returned: a cycle that finds every
	// partition as it was starts from it (timestamps aside).
	last struct {
		parts    []heartbeat.Partition
		rejected []heartbeat.Rejection
		filled   []bool
	}
}

type readKey struct {
	db, table string
	allowHTTP bool
}

// entry is one partition's decoded heartbeat.
type entry struct {
	// endpoint is the partition's ClusterEndpoint as stored, the key the
	// entry is kept under: a copy of its own, not a substring of a digest
	// answer that would keep the whole answer in memory.
	endpoint  string
	digest    string
	partition heartbeat.Partition
	rejected  []heartbeat.Rejection
	// refused is set when the whole row was refused.
	refused bool
	// order is the entry's place in the last cycle's partitions, which
	// are in endpoint order; -1 for a refused one.
	order int
}

// NewSchemas makes an empty cache.
func NewSchemas() *Schemas {
	return &Schemas{entries: map[string]entry{}, names: map[uint64][]string{}, sets: map[uint64]*heartbeat.Set{}, words: map[string]string{}, seed: maphash.Comparable(maphash.MakeSeed(), 0)}
}

// Len is how many partitions the cache holds.
func (s *Schemas) Len() int { return len(s.entries) }

// Warm reports whether a Read has filled the cache, if only with nothing.
func (s *Schemas) Warm() bool { return s.read != readKey{} }

// Read reads the latest heartbeat of every partition within window and
// decodes each whose content is new. Rows that fail validation are
// returned as rejections and never reach the plan; they are rejected again
// every cycle for as long as they are the partition's latest.
func (s *Schemas) Read(ctx context.Context, c Kusto, db, table string, window time.Duration, allowHTTP bool) ([]heartbeat.Partition, []heartbeat.Rejection, ReadStats, error) {
	q, err := kql.HeartbeatDigests(table, window)
	if err != nil {
		return nil, nil, ReadStats{}, err
	}
	digests := make([]DigestRow, 0, len(s.entries))
	err = c.Query(ctx, db, q, func(r frames.Row) error {
		return readDigests(r, func(d DigestRow) error {
			digests = append(digests, d)
			return nil
		})
	})
	if err != nil {
		return nil, nil, ReadStats{Queries: 1}, err
	}
	fetch := func(endpoints []string, fn func(HeartbeatRow, error)) error {
		q, err := kql.HeartbeatRows(table, window, endpoints)
		if err != nil {
			return err
		}
		return c.Query(ctx, db, q, func(r frames.Row) error {
			fn(readHeartbeatRow(r))
			return nil
		})
	}
	parts, rejected, stats, err := s.cycle(readKey{db: db, table: table, allowHTTP: allowHTTP}, digests, fetch)
	stats.Queries++
	return parts, rejected, stats, err
}

// readHeartbeatRow reads one row of kql.HeartbeatRows. Schema and
// Metadata are the row's JSON in place, valid while the row is: decoded
// during the call, never kept.
func readHeartbeatRow(r frames.Row) (HeartbeatRow, error) {
	var h HeartbeatRow
	var err error
	if h.Timestamp, err = r.Time("Timestamp"); err != nil {
		return h, err
	}
	if h.Endpoint, err = r.String("ClusterEndpoint"); err != nil {
		return h, err
	}
	if h.Digest, err = r.String("Digest"); err != nil {
		return h, err
	}
	if h.Schema, err = r.DynamicInPlace("Schema"); err != nil {
		return h, err
	}
	h.Metadata, err = r.DynamicInPlace("PartitionMetadata")
	return h, err
}

// cycle is Read after the digests are in: it fetches the rows it needs
// through fetch (nil endpoints: every row) and decodes them. fetch passes
// a row that could not be read with its error.
func (s *Schemas) cycle(key readKey, digests []DigestRow, fetch func(endpoints []string, fn func(HeartbeatRow, error)) error) ([]heartbeat.Partition, []heartbeat.Rejection, ReadStats, error) {
	if key != s.read {
		s.read, s.entries, s.names, s.sets, s.words = key, map[string]entry{}, map[uint64][]string{}, map[uint64]*heartbeat.Set{}, map[string]string{}
		s.last.filled = nil
	}
	stats := ReadStats{Partitions: len(digests)}
	for _, d := range digests {
		stats.Bytes += len(d.Endpoint) + len(d.Digest)
	}
	if parts, rejected, ok := s.unchanged(digests); ok {
		return parts, rejected, stats, nil
	}
	var rejected []heartbeat.Rejection
	var need []string
	wanted := make(map[string]bool, len(digests))
	refused := map[string]entry{}
	for _, d := range digests {
		if e, ok := s.entries[d.Endpoint]; ok && e.digest == d.Digest && validDigest(d.Digest) {
			continue
		}
		// An endpoint no query can name is refused here, as decoding
		// would refuse it, and remembered by digest like the rest.
		if _, err := kql.Endpoint(d.Endpoint, key.allowHTTP); err != nil {
			refused[d.Endpoint] = entry{endpoint: strings.Clone(d.Endpoint), digest: strings.Clone(d.Digest), refused: true, rejected: []heartbeat.Rejection{{Endpoint: strings.Clone(boundEndpoint(d.Endpoint)), Reason: err.Error()}}}
			continue
		}
		if !wanted[d.Endpoint] {
			wanted[d.Endpoint] = true
			need = append(need, d.Endpoint)
		}
	}

	fetched, err := s.fetchRows(key, need, wanted, len(need) == len(digests), fetch, &stats, &rejected)
	if err != nil {
		return nil, nil, stats, err
	}

	next := make(map[string]entry, len(digests))
	var parts []heartbeat.Partition
	for _, d := range digests {
		e, ts := s.entries[d.Endpoint], d.Timestamp
		if r, ok := refused[d.Endpoint]; ok {
			e = r
		} else if f, ok := fetched[d.Endpoint]; ok {
			// The row may be newer than its digest: a heartbeat landed
			// between the two queries. Its own digest keys it.
			e, ts = f.e, f.ts
		} else if e.digest != d.Digest || !validDigest(d.Digest) {
			// Gone from the window between the queries.
			continue
		}
		if validDigest(e.digest) {
			next[e.endpoint] = e
		}
		rejected = append(rejected, e.rejected...)
		if e.refused {
			continue
		}
		p := e.partition
		p.LastHeartbeat = ts
		parts = append(parts, p)
	}
	s.entries = next
	s.prune()
	// In endpoint order, as planning wants them and status shows them;
	// the hub's order is its own.
	slices.SortFunc(parts, byEndpoint)
	slices.SortStableFunc(rejected, func(a, b heartbeat.Rejection) int { return strings.Compare(a.Endpoint, b.Endpoint) })
	s.remember(parts, rejected)
	return parts, rejected, stats, nil
}

// decoded is a row fetched and decoded, with its own time.
type decoded struct {
	e  entry
	ts time.Time
}

// fetchRows fetches the rows of the endpoints a cycle needs (every row when
// they are all or too many to name) and decodes each as it comes, while
// its JSON is the answer's: a row is never copied whole. A row that
// cannot be read is rejected and the rest are read.
func (s *Schemas) fetchRows(key readKey, need []string, wanted map[string]bool, all bool, fetch func([]string, func(HeartbeatRow, error)) error, stats *ReadStats, rejected *[]heartbeat.Rejection) (map[string]decoded, error) {
	fetched := map[string]decoded{}
	if len(need) == 0 {
		return fetched, nil
	}
	// One decoder for the cycle: its memory is reused from row to row,
	// and what partitions keep goes through the cache's shared lists.
	dec := &heartbeat.Decoder{Keep: s.intern, KeepSet: s.internSet, Name: s.word}
	meta := &metadataMemo{}
	names := need
	// A long list costs the hub more than reading every row; rows
	// already known are then skipped by digest, undecoded.
	if all || len(need) > kql.MaxEndpointsInQuery {
		names = nil
	}
	stats.Queries++
	return fetched, fetch(names, func(h HeartbeatRow, err error) {
		stats.Fetched++
		stats.Bytes += len(h.Endpoint) + len(h.Digest) + len(h.Schema) + len(h.Metadata)
		if err != nil {
			*rejected = append(*rejected, heartbeat.Rejection{Reason: "unreadable row: " + err.Error()})
			return
		}
		if !wanted[h.Endpoint] {
			return
		}
		if prev, ok := fetched[h.Endpoint]; !ok || h.Timestamp.After(prev.ts) {
			fetched[h.Endpoint] = decoded{s.decode(dec, meta, h, key.allowHTTP), h.Timestamp}
			stats.Decoded++
		}
	})
}

// remember keeps what a cycle returned, and each entry's place in it, for
// the next cycle's unchanged.
func (s *Schemas) remember(parts []heartbeat.Partition, rejected []heartbeat.Rejection) {
	s.last.filled = nil
	pos := make(map[string]int, len(parts))
	for i, p := range parts {
		pos[p.Endpoint] = i
	}
	for k, e := range s.entries {
		e.order = -1
		if !e.refused {
			i, ok := pos[e.partition.Endpoint]
			if !ok {
				return
			}
			e.order = i
		}
		s.entries[k] = e
	}
	s.last.parts, s.last.rejected = slices.Clone(parts), slices.Clone(rejected)
	s.last.filled = make([]bool, len(parts))
}

// unchanged is the cycle when every partition the hub lists has the
// digest it had and no other partition came or went, the common case:
// the last cycle's partitions with this cycle's times, without a map
// built or a list sorted. ok is false for anything else, which the whole
// cycle handles: a new digest, a partition more or less, a refused one,
// an endpoint listed twice.
func (s *Schemas) unchanged(digests []DigestRow) ([]heartbeat.Partition, []heartbeat.Rejection, bool) {
	if s.last.filled == nil || len(digests) != len(s.entries) || len(s.entries) != len(s.last.parts) {
		return nil, nil, false
	}
	filled := s.last.filled
	clear(filled)
	parts := slices.Clone(s.last.parts)
	for _, d := range digests {
		e, ok := s.entries[d.Endpoint]
		if !ok || e.digest != d.Digest || e.order < 0 || filled[e.order] {
			return nil, nil, false
		}
		filled[e.order] = true
		parts[e.order].LastHeartbeat = d.Timestamp
	}
	return parts, slices.Clone(s.last.rejected), true
}

// Changed asks the hub for the digests alone and reports whether any
// partition's differs from what the last Read decoded, or a partition came
// or went: a cheap check a hub can make far more often than it plans.
// Before the first Read, or after one with other settings, everything has
// changed; after a Read that found no partition, the first one is a change.
func (s *Schemas) Changed(ctx context.Context, c Kusto, db, table string, window time.Duration, allowHTTP bool) (bool, error) {
	if !s.Warm() || s.read != (readKey{db: db, table: table, allowHTTP: allowHTTP}) {
		return true, nil
	}
	q, err := kql.HeartbeatDigests(table, window)
	if err != nil {
		return false, err
	}
	n, changed := 0, false
	err = c.Query(ctx, db, q, func(r frames.Row) error {
		return readDigests(r, func(d DigestRow) error {
			n++
			if e, ok := s.entries[d.Endpoint]; !ok || e.digest != d.Digest {
				changed = true
			}
			return nil
		})
	})
	return changed || n != len(s.entries), err
}

// decode validates one whole row.
func (s *Schemas) decode(dec *heartbeat.Decoder, meta *metadataMemo, h HeartbeatRow, allowHTTP bool) entry {
	e := entry{endpoint: h.Endpoint, digest: h.Digest}
	p, rej, err := dec.DecodeBytes(time.Time{}, h.Endpoint, h.Schema, allowHTTP)
	e.rejected = rej
	if err != nil {
		e.refused = true
		e.rejected = append(e.rejected, heartbeat.Rejection{Endpoint: boundEndpoint(h.Endpoint), Reason: err.Error()})
		return e
	}
	// Metadata only describes the partition: refused, it is reported and
	// left out, and the partition is still federated.
	if p.Metadata, err = meta.decode(h.Metadata); err != nil {
		e.rejected = append(e.rejected, heartbeat.Rejection{Endpoint: p.Endpoint, Reason: err.Error()})
	}
	e.partition = p
	return e
}

// metadataMemo is heartbeat.DecodeMetadata for a cycle's rows, which a
// fleet writes alike ({"region": ...}): a row whose metadata is, byte for
// byte, the last one decoded gets a copy of what that gave, not decoded
// again. Each partition has a map of its own.
type metadataMemo struct {
	text []byte
	m    map[string]string
	ok   bool
}

func (mm *metadataMemo) decode(raw []byte) (map[string]string, error) {
	if mm.ok && bytes.Equal(raw, mm.text) {
		return maps.Clone(mm.m), nil
	}
	m, err := heartbeat.DecodeMetadata(raw)
	if err != nil {
		mm.ok = false
		return m, err
	}
	// The row's bytes are the answer's, reused once it is read.
	mm.text, mm.m, mm.ok = append(mm.text[:0], raw...), maps.Clone(m), true
	return m, nil
}

func (s *Schemas) hash(l []string) uint64 {
	// The names are the cache's words, one string per name, so a list is
	// known by where its names are: equal lists hash alike without a byte
	// of them read. (A list whose names are other copies only misses the
	// sharing; intern compares content before it shares.)
	h := uint64(len(l)) ^ s.seed
	for _, n := range l {
		h = mix(mix(h, uint64(uintptr(unsafe.Pointer(unsafe.StringData(n))))), uint64(len(n)))
	}
	return h
}

// mix folds v into the hash h, a word at a time in FNV-1a's way.
func mix(h, v uint64) uint64 { return (h ^ v) * 0x100000001b3 }

// intern returns the cache's list equal to l, or keeps a copy of l: l is
// the decoder's, which it reuses, while the names in it are its copies.
func (s *Schemas) intern(l []string) []string {
	k := s.hash(l)
	if have, ok := s.names[k]; ok {
		if slices.Equal(have, l) {
			return have
		}
		return slices.Clone(l) // a collision: keep this one unshared
	}
	l = slices.Clone(l)
	s.names[k] = l
	return l
}

// internSet returns the cache's set equal to l, or keeps a copy of l,
// whose bits are the decoder's.
func (s *Schemas) internSet(l heartbeat.Set) *heartbeat.Set {
	h := mix(uint64(len(l.Of))^s.seed, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(l.Of)))))
	for _, w := range l.Bits {
		h = mix(h, w)
	}
	if have, ok := s.sets[h]; ok {
		if have.Equal(&l) {
			return have
		}
		return &heartbeat.Set{Of: l.Of, Bits: slices.Clone(l.Bits)}
	}
	kept := &heartbeat.Set{Of: l.Of, Bits: slices.Clone(l.Bits)}
	s.sets[h] = kept
	return kept
}

// word returns the cache's copy of name n, a slice of a row.
func (s *Schemas) word(n string) string {
	if w, ok := s.words[n]; ok {
		return w
	}
	w := strings.Clone(n)
	s.words[w] = w
	return w
}

// prune forgets name lists no partition uses any more, once they are as
// many as those in use: a fleet whose schemas churn keeps only what it has.
func (s *Schemas) prune() {
	if len(s.names)+len(s.sets) < 64 {
		return
	}
	inUse := map[*string]bool{}
	setsInUse := map[*heartbeat.Set]bool{}
	for _, e := range s.entries {
		for _, d := range e.partition.Databases {
			if len(d.Tables) > 0 {
				inUse[&d.Tables[0]] = true
			}
			if len(d.Views) > 0 {
				inUse[&d.Views[0]] = true
			}
			for _, set := range []*heartbeat.Set{d.TableSet, d.ViewSet} {
				if set != nil {
					setsInUse[set] = true
				}
			}
		}
	}
	if len(s.names)+len(s.sets) <= 2*(len(inUse)+len(setsInUse)) {
		return
	}
	for k, l := range s.names {
		if !inUse[&l[0]] {
			delete(s.names, k)
		}
	}
	for k, set := range s.sets {
		if !setsInUse[set] {
			delete(s.sets, k)
		}
	}
	// And the names only forgotten lists held.
	s.words = map[string]string{}
	for _, l := range s.names {
		for _, n := range l {
			s.words[n] = n
		}
	}
	for _, set := range s.sets {
		for n := range set.All() {
			s.words[n] = n
		}
	}
}

// validDigest is a SHA-256 in hex as Kusto's hash_sha256 writes it; any
// other value is never trusted to stand for a row's content.
func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := range len(d) {
		if c := d[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}
