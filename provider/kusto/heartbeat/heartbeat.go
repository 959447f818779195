// Package heartbeat is the record a partition cluster writes to its hubs:
// what it encodes on the partition side and what a hub may believe of it.
//
// A heartbeat row is Timestamp, ClusterEndpoint, Schema and
// PartitionMetadata, as the adx-mon operator writes them, so that hubs and
// partitions of both can share a heartbeat table. On the hub the row is
// untrusted: anyone with ingest rights on the table can write one, so every
// endpoint and name is validated and every size capped before the row is
// used.
package heartbeat

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// DatabaseSchema is what a heartbeat says about one partition database.
type DatabaseSchema struct {
	Database string   `json:"database"`
	Tables   []string `json:"tables"`
	Views    []string `json:"views"`
	// TableSet and ViewSet, when not nil, hold the tables or views in
	// place of Tables or Views, which are then nil: a hub's decoder keeps
	// a list this way when asked to (Decoder.KeepSet). TableNames and
	// ViewNames read either.
	TableSet *Set `json:"-"`
	ViewSet  *Set `json:"-"`
}

// Limits on what a hub accepts from one heartbeat. Kusto allows 10,000
// tables per database; a partition claiming more is lying or broken.
const (
	MaxSchemaBytes       = 8 << 20
	MaxMetadataBytes     = 64 << 10
	MaxDatabases         = 1000
	MaxTablesPerDatabase = 10000
	// MaxRejections is how many refused names or databases of one row
	// are described; the rest are counted in one more.
	MaxRejections = 32
)

// Row is one heartbeat.
type Row struct {
	Timestamp time.Time
	Endpoint  string
	Schema    []DatabaseSchema
	Metadata  map[string]string
}

// Digest is the SHA-256, in hex, of a schema as a heartbeat sends it: two
// schemas have the same digest when a hub would federate the same names.
func Digest(schema []DatabaseSchema) (string, error) {
	if schema == nil {
		schema = []DatabaseSchema{}
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Record renders the row as the single CSV record .ingest inline takes.
// JSON never holds a raw line break and encoding/csv quotes what needs it,
// so the record is one line.
func (r Row) Record() (string, error) {
	schema := r.Schema
	if schema == nil {
		schema = []DatabaseSchema{}
	}
	s, err := json.Marshal(schema)
	if err != nil {
		return "", err
	}
	meta := r.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	m, err := json.Marshal(meta) // map keys marshal sorted
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write([]string{r.Timestamp.UTC().Format(time.RFC3339Nano), r.Endpoint, string(s), string(m)}); err != nil {
		return "", err
	}
	w.Flush()
	rec := strings.TrimSuffix(b.String(), "\n")
	if strings.ContainsAny(rec, "\r\n") {
		return "", errors.New("heartbeat record spans lines")
	}
	return rec, nil
}

// Rejection is a part of a heartbeat the hub refused, and why.
type Rejection struct {
	Endpoint string
	Reason   string
}

func (r Rejection) String() string { return r.Endpoint + ": " + r.Reason }

// Partition is what a hub takes from a partition's latest heartbeat.
type Partition struct {
	Endpoint      string
	LastHeartbeat time.Time
	Databases     []DatabaseSchema
	// Metadata is the partition's PartitionMetadata; empty when it had
	// none or the hub refused it.
	Metadata map[string]string
}

// Decode validates a heartbeat read from the hub's table. A row whose
// endpoint is invalid is rejected whole; a database, table or view with an
// invalid name is left out and reported; the rest is kept, deduplicated and
// sorted.
func Decode(ts time.Time, endpoint, schemaJSON string, allowHTTP bool) (Partition, []Rejection, error) {
	var d Decoder
	return d.Decode(ts, endpoint, schemaJSON, allowHTTP)
}

// Decoder decodes heartbeats one after another into memory it reuses: a
// hub decoding a fleet allocates only the lists it keeps.
//
// Partitions of a fleet list nearly the same names. The decoder keeps, per
// database, the last list it kept as a reference: a list equal to it is
// taken as it is, and a name in it is taken from it, known valid and
// already copied, so that only names the fleet has not shown yet are
// validated and copied out of the row. It also keeps every name the
// database's lists held (seen), which rows are read against: a list of
// those names, in order, is one comparison of bytes per name, nothing
// scanned or checked. A fleet whose every partition lists a different
// selection of the same tables thus costs a comparison per name, not an
// allocation, and its partitions share every name.
type Decoder struct {
	// Keep gets every list of names a partition keeps, validated, sorted
	// and without duplicates, and returns the list to keep in its place:
	// l itself must not be kept (the decoder reuses it), the names in it
	// may (none is a slice of the row). Nil keeps a copy of l.
	Keep func(l []string) []string
	// Name, when set, returns the copy to keep of a valid name that is a
	// slice of the row: a table of names shared across heartbeats keeps
	// one string per name. Nil copies the name.
	Name func(n string) string
	// KeepSet, when set, gets in place of Keep every list whose names
	// the decoder found all among those of earlier rows (its reference
	// for the database, see seen), as a Set over that reference, and
	// returns the set to keep in its place: s.Bits must not be kept (the
	// decoder reuses them), s.Of may (it is never changed). The list is
	// then the DatabaseSchema's TableSet or ViewSet, its Tables or Views
	// nil. A fleet whose every partition lists its own selection of the
	// same tables is kept in a few words a list.
	KeepSet func(s Set) *Set
	arena   []string
	bits    []uint64
	dbs     []decoded
	byName  map[string]int
	ref     map[refKey][]string
	// lastSet is, per database and kind, the last set kept: a list
	// equal to it is taken as it is.
	lastSet map[refKey]*Set
	// seen is, per database and kind, every name its kept lists held,
	// sorted: the reference rows are read against (see
	// schemaDecoder.names), which a fleet whose partitions each leave out
	// different tables matches nearly name for name. seenCopied counts
	// the names written into it, bounded by maxSeenCopied.
	seen       map[refKey]refList
	seenBytes  int
	seenCopied int
	// known is, per database and kind, the JSON text of a list decoded
	// whole and what came of it: a later row with the same text takes
	// that without reading it. At most maxKnownBytes of text.
	known      map[refKey]*knownList
	knownBytes int
	texts      []listText
}

// knownList is a list's JSON text and what decoding it gave.
type knownList struct {
	text    []byte
	kept    []string
	set     *Set
	rejects []string
}

// maxKnownBytes bounds the text a Decoder keeps to recognise lists: a
// fleet's databases take a few KiB each; past this, new lists are read.
const maxKnownBytes = 4 << 20

// knownText is the text of the list known for a database, "" if none.
func (dec *Decoder) knownText(db string, views bool) string {
	if k := dec.known[refKey{db, views}]; k != nil {
		return unsafe.String(unsafe.SliceData(k.text), len(k.text))
	}
	return ""
}

// reference is every name the lists kept for a database held, which
// valid names only make.
func (dec *Decoder) reference(db string, views bool) refList {
	return dec.seen[refKey{db, views}]
}

// bitsArena is where rows' lists are written as bits, when KeepSet wants
// sets.
func (dec *Decoder) bitsArena() *[]uint64 {
	if dec.KeepSet == nil {
		return nil
	}
	return &dec.bits
}

// maxSeenCopied bounds the names a Decoder writes into its references
// (16 MiB of string headers): a fleet's union grows a few times, then
// lists are read against it; rows that keep adding names stop growing it.
const maxSeenCopied = 1 << 20

// maxSeenBytes bounds the text of the references a Decoder writes (a
// reference keeps its list's JSON text, see refList).
const maxSeenBytes = 32 << 20

// maxSeen bounds one reference: merging a list into it costs a walk
// through both, and a fleet's union of one database's tables is a few
// hundred names (past this bound the reference stops growing, and lists
// are read against what it holds).
const maxSeen = 4096

// see adds the names of a kept list to the database's reference.
func (dec *Decoder) see(k refKey, kept []string) {
	have := dec.seen[k].names
	if len(have)+len(kept) > maxSeen {
		return
	}
	u := Union(have, kept)
	if len(u) == len(have) || dec.seenCopied+len(u) > maxSeenCopied {
		return
	}
	ref := newRefList(u)
	if dec.seenBytes+len(ref.text) > maxSeenBytes {
		return
	}
	if dec.seen == nil {
		dec.seen = map[refKey]refList{}
	}
	dec.seen[k] = ref
	dec.seenCopied += len(u)
	dec.seenBytes += len(ref.text)
}

// remember keeps a list's text and what it gave, when the database had
// none yet or the list is its reference as it stands (a fleet's common
// list): a fleet of lists that all differ never copies their texts.
func (dec *Decoder) remember(k refKey, text string, found bool, kept []string, set *Set, rejects []string) {
	have := dec.known[k]
	if have != nil && !found {
		return
	}
	// Each list counts its text and what keeping it costs besides, so
	// that neither long lists nor many short ones pass the bound.
	cost := len(text) + knownOverhead
	if have != nil {
		cost -= len(have.text) + knownOverhead
	}
	if dec.knownBytes+cost > maxKnownBytes {
		return
	}
	if have == nil {
		if dec.known == nil {
			dec.known = map[refKey]*knownList{}
		}
		have = &knownList{}
		dec.known[k] = have
	}
	dec.knownBytes += cost
	have.text = append(have.text[:0], text...)
	have.kept, have.set, have.rejects = kept, set, rejects
}

// knownOverhead is what a known list costs beside its text: its entry
// and its struct.
const knownOverhead = 128

// refKey names a reference list: a database's tables, or its views.
type refKey struct {
	database string
	views    bool
}

// keep hands a decoded list to Keep, or copies it.
func (dec *Decoder) keep(l []string) []string {
	switch {
	case l == nil:
		return nil
	case len(l) == 0:
		return []string{}
	case dec.Keep != nil:
		return dec.Keep(l)
	}
	return slices.Clone(l)
}

// DecodeBytes is Decode of a Schema column as the Kusto client hands it
// over: a dynamic value's bytes, read in place rather than copied into a
// string. The bytes must not change while the decoder holds them (until
// its next call); what the partition keeps is copied out of them.
func (dec *Decoder) DecodeBytes(ts time.Time, endpoint string, schemaJSON []byte, allowHTTP bool) (Partition, []Rejection, error) {
	return dec.Decode(ts, endpoint, unsafe.String(unsafe.SliceData(schemaJSON), len(schemaJSON)), allowHTTP)
}

// Decode is the package's Decode, reusing the decoder's memory.
func (dec *Decoder) Decode(ts time.Time, endpoint, schemaJSON string, allowHTTP bool) (Partition, []Rejection, error) {
	ep, err := kql.Endpoint(endpoint, allowHTTP)
	if err != nil {
		return Partition{}, nil, err
	}
	if len(schemaJSON) > MaxSchemaBytes {
		return Partition{}, nil, fmt.Errorf("schema of %s is %d bytes, the limit is %d", ep, len(schemaJSON), MaxSchemaBytes)
	}
	dec.bits = dec.bits[:0]
	raw, texts, err := decodeSchemaInto(schemaJSON, &dec.arena, dec, &dec.texts)
	if errors.Is(err, errTooManyDatabases) {
		return Partition{}, nil, fmt.Errorf("schema of %s lists more than %d databases, the limit", ep, MaxDatabases)
	}
	if err != nil {
		return Partition{}, nil, fmt.Errorf("schema of %s is not a JSON list of databases: %w", ep, err)
	}
	if len(raw) > MaxDatabases {
		return Partition{}, nil, fmt.Errorf("schema of %s lists %d databases, the limit is %d", ep, len(raw), MaxDatabases)
	}
	rj := &rejections{endpoint: ep}
	reject := rj.addf
	// A row's databases, in memory the decoder reuses: by the name the
	// row spells, to find one listed twice.
	if dec.byName == nil {
		dec.byName = map[string]int{}
	}
	clear(dec.byName)
	dbs := dec.dbs[:0]
	defer func() { clear(dbs); dec.dbs = dbs[:0] }()
	for i, d := range raw {
		if err := kql.ValidateName(d.Database); err != nil {
			reject("database %v", err)
			continue
		}
		if at, ok := dec.byName[d.Database]; ok && dbs[at].refused {
			continue // refused once, whatever it lists again
		}
		if len(d.Tables) > MaxTablesPerDatabase || len(d.Views) > MaxTablesPerDatabase {
			reject("database %q lists more than %d tables or views", d.Database, MaxTablesPerDatabase)
			continue
		}
		text := texts[i]
		// A list's rejections are remembered with it (see remember) only
		// when all were described.
		mark := rj.mark()
		tables := dec.listOf(refKey{d.Database, false}, d.Tables, text.tablesKnown, text.tablesRef, bitsFor(d.Database, text.tablesFor, text.tablesBits), func(n string) { rj.name("table", d.Database, n) }, reject)
		tableRejects, tablesPartial := rj.since(mark)
		mark = rj.mark()
		views := dec.listOf(refKey{d.Database, true}, d.Views, text.viewsKnown, text.viewsRef, bitsFor(d.Database, text.viewsFor, text.viewsBits), func(n string) { rj.name("view", d.Database, n) }, reject)
		viewRejects, viewsPartial := rj.since(mark)
		if at, ok := dec.byName[d.Database]; ok {
			// Listed again: one database with all its lists.
			db := &dbs[at]
			if !db.merge(tables, views) {
				db.refused = true
				reject("database %q lists more than %d tables or views", d.Database, MaxTablesPerDatabase)
			}
			continue
		}
		// The name is a slice of the row; the partition keeps a copy.
		dec.byName[d.Database] = len(dbs)
		dbs = append(dbs, decoded{name: strings.Clone(d.Database), tables: tables, views: views, text: text, tableRejects: tableRejects, viewRejects: viewRejects, tablesPartial: tablesPartial, viewsPartial: viewsPartial})
	}

	// Writers list databases by name; a row that does not is sorted.
	byName := func(a, b decoded) int { return strings.Compare(a.name, b.name) }
	if !slices.IsSortedFunc(dbs, byName) {
		slices.SortFunc(dbs, byName)
	}
	return dec.partition(ep, ts, dbs), rj.done(), nil
}

// rejections are a row's refusals. A row may hold millions of invalid
// names (8 MiB of "",): the first MaxRejections are described, the
// others counted, so that what a row costs is its bytes, not a message
// for each.
type rejections struct {
	endpoint string
	list     []Rejection
	dropped  int
}

// full reports, and counts, a refusal past MaxRejections.
func (r *rejections) full() bool {
	if len(r.list) < MaxRejections {
		return false
	}
	r.dropped++
	return true
}

func (r *rejections) addf(format string, a ...any) {
	if !r.full() {
		r.list = append(r.list, Rejection{Endpoint: r.endpoint, Reason: fmt.Sprintf(format, a...)})
	}
}

// name refuses an invalid table or view name, described only if there
// is room.
func (r *rejections) name(kind, database, n string) {
	if r.full() {
		return
	}
	r.addf("%s in %q: %v", kind, database, kql.ValidateName(n))
}

type rejectionMark struct{ described, dropped int }

func (r *rejections) mark() rejectionMark { return rejectionMark{len(r.list), r.dropped} }

// since are the reasons described since m, and whether some went
// undescribed.
func (r *rejections) since(m rejectionMark) ([]string, bool) {
	return reasons(r.list[m.described:]), r.dropped > m.dropped
}

// done is the row's refusals, the undescribed ones counted in one more.
func (r *rejections) done() []Rejection {
	if r.dropped > 0 {
		r.list = append(r.list, Rejection{Endpoint: r.endpoint, Reason: fmt.Sprintf("and %d more names or databases refused", r.dropped)})
	}
	return r.list
}

// partition is what a row's databases, checked and sorted, keep: each
// list finished and, when it was read, remembered by its text.
func (dec *Decoder) partition(ep string, ts time.Time, dbs []decoded) Partition {
	p := Partition{Endpoint: ep, LastHeartbeat: ts}
	if len(dbs) > 0 {
		p.Databases = make([]DatabaseSchema, 0, len(dbs))
	}
	for i := range dbs {
		db := &dbs[i]
		if db.refused {
			continue
		}
		tk, vk := refKey{db.name, false}, refKey{db.name, true}
		tables, tableSet := dec.finish(tk, db.tables)
		views, viewSet := dec.finish(vk, db.views)
		if !db.twice {
			if !db.text.tablesKnown && !db.tablesPartial {
				dec.remember(tk, db.text.tables, db.tables.found, tables, tableSet, db.tableRejects)
			}
			if !db.text.viewsKnown && !db.viewsPartial {
				dec.remember(vk, db.text.views, db.views.found, views, viewSet, db.viewRejects)
			}
		}
		p.Databases = append(p.Databases, DatabaseSchema{Database: db.name, Tables: tables, Views: views, TableSet: tableSet, ViewSet: viewSet})
	}
	return p
}

// listOf is names, or the list known for k when the row's text was the
// known one, its rejections reported again. fromRef is the row decoder's
// word that l is a run of reference names in order (see
// schemaDecoder.names): nothing in it to check.
//
// bits, when set, are l as bits over the database's reference, written
// as the row was read; otherwise they are found here.
func (dec *Decoder) listOf(k refKey, l []string, known, fromRef bool, bits []uint64, reject func(name string), again func(string, ...any)) list {
	if fromRef {
		return dec.fromRef(k, l, bits)
	}
	if !known {
		return dec.names(k, l, reject)
	}
	kl := dec.known[k]
	for _, r := range kl.rejects {
		again("%s", r)
	}
	return list{names: kl.kept, set: kl.set, found: true}
}

// fromRef is listOf for a list of the reference's names in its order:
// the last list kept if it is that, else the names, as bits too when
// KeepSet wants sets.
func (dec *Decoder) fromRef(k refKey, l []string, bits []uint64) list {
	if ref := dec.ref[k]; len(l) == len(ref) && slices.Equal(ref, l) {
		return list{names: ref, found: true}
	}
	out := list{names: l, sorted: true, fromRef: true}
	if dec.KeepSet == nil {
		return out
	}
	of := dec.seen[k].names
	if !worthASet(len(l), len(of)) {
		return out
	}
	if out.bits = bits; bits == nil {
		out.bits = bitsOf(of, l, &dec.bits)
	}
	if last := dec.lastSet[k]; out.bits != nil && last != nil && last.Equal(&Set{Of: of, Bits: out.bits}) {
		return list{names: l, set: last, found: true}
	}
	return out
}

// worthASet reports whether a list of n names is kept as a set over a
// reference of refLen: a set keeps the whole reference alive, so a few
// names of a long reference stay a list. A kept set then holds on to at
// most four times the string headers its list would, plus 1 KiB, however
// the rows that made the reference were written.
func worthASet(n, refLen int) bool { return refLen <= 4*n+64 }

// bitsFor are the bits a list was read as, if it was read against the
// reference of the database it is kept for: a row may name its database
// again after the list, and the later name wins.
func bitsFor(db, readFor string, bits []uint64) []uint64 {
	if db != readFor {
		return nil
	}
	return bits
}

// bitsOf is a list of the reference's own strings, in its order, as bits
// over the reference, appended to arena; nil if a name is not one of them
// after all.
func bitsOf(ref, l []string, arena *[]uint64) []uint64 {
	start := len(*arena)
	b := newBits(arena, len(ref))
	j := 0
	for _, name := range l {
		for j < len(ref) && !sameString(ref[j], name) {
			j++
		}
		if j == len(ref) {
			*arena = (*arena)[:start]
			return nil
		}
		b[j/64] |= 1 << (j % 64)
		j++
	}
	return b
}

func reasons(rs []Rejection) []string {
	if len(rs) == 0 {
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Reason
	}
	return out
}

// decoded is a database while its heartbeat is decoded.
type decoded struct {
	name          string
	tables, views list
	// twice: the row lists the database more than once, and tables and
	// views are then the decoded's own (see merge).
	twice bool
	// refused: its lists, merged, name more than MaxTablesPerDatabase.
	refused bool
	// tablesUnique and viewsUnique are how many names each list held
	// when last deduplicated.
	tablesUnique, viewsUnique int
	text                      listText
	tableRejects, viewRejects []string
	// tablesPartial and viewsPartial: some of the list's rejections
	// went undescribed (MaxRejections), so it is not remembered.
	tablesPartial, viewsPartial bool
}

// merge adds the lists of the database listed again, and reports whether
// they stay within MaxTablesPerDatabase. A row may repeat a database as
// often as its bytes allow (a thousand times, a thousand tables each, in
// 4 MiB): each repeat costs what it lists, never a copy of what came
// before, and the merged list never holds more than a few times the
// limit (see mergeList).
func (db *decoded) merge(tables, views list) bool {
	if !db.twice {
		// The first lists may be the decoder's reference, its known
		// lists or the row's arena, none of which may change: the merged
		// lists are copies, appended to in place from now on.
		db.tables = list{names: slices.Clone(db.tables.all())}
		db.views = list{names: slices.Clone(db.views.all())}
		db.twice = true
	}
	var ok bool
	if db.tables.names, db.tablesUnique, ok = mergeList(db.tables.names, tables.all(), db.tablesUnique); !ok {
		return false
	}
	db.views.names, db.viewsUnique, ok = mergeList(db.views.names, views.all(), db.viewsUnique)
	return ok
}

// mergeList appends more to into, a list of its own, and deduplicates it
// once it holds more than the limit and twice the names it held unique
// when last deduplicated: a deduplication sorts at most three times the
// limit, and comes after at least half as many appended names as it sorts, so
// repeats cost O(n log n) in what the row lists. False when the list,
// deduplicated, holds more than MaxTablesPerDatabase names.
func mergeList(into, more []string, unique int) ([]string, int, bool) {
	into = append(into, more...)
	if len(into) <= max(MaxTablesPerDatabase, 2*unique) {
		return into, unique, true
	}
	into = uniqueSorted(into)
	return into, len(into), len(into) <= MaxTablesPerDatabase
}

// list is a list of names and whether it is the reference as it stands,
// or at least known sorted without repeats.
type list struct {
	names  []string
	found  bool
	sorted bool
	// fromRef: every name is one the database's reference holds.
	fromRef bool
	// bits are a fromRef list over the reference, for KeepSet; set is
	// the kept set a found list is (its names then may be nil).
	bits []uint64
	set  *Set
}

// all are the list's names, however it is held.
func (l list) all() []string {
	if l.names == nil && l.set != nil {
		return l.set.Names()
	}
	return l.names
}

// names checks a decoded list of names, whose names are slices of the
// row. A list equal to the reference is valid, sorted and without repeats
// as it stands, and taken as found. In any other, a name the reference
// holds is replaced by the reference's copy; the others are validated,
// reported and left out when invalid, and copied out of the row.
func (dec *Decoder) names(k refKey, l []string, reject func(name string)) list {
	ref := dec.ref[k]
	if len(l) > 0 && slices.Equal(ref, l) {
		return list{names: ref, found: true}
	}
	out := l[:0]
	j := 0
	// Whether out is strictly increasing so far, which finish need not
	// check again: names taken from the reference in the walk's order
	// are (the reference is), so only a name from the row is compared
	// with the one before it, and the one after it.
	sorted, lastFromRef := true, false
	for _, n := range l {
		// Lists usually come sorted, as the reference is: one walk
		// through both finds every shared name, one comparison a name.
		// The row's decoder took most names as the strings of seen
		// (schemaDecoder.names), which are the reference's too, found
		// without comparing a byte.
		c := 1
		for j < len(ref) {
			if sameString(ref[j], n) {
				c = 0
				break
			}
			if c = strings.Compare(ref[j], n); c >= 0 {
				break
			}
			j++
		}
		if c == 0 {
			if sorted && !lastFromRef && len(out) > 0 && out[len(out)-1] >= ref[j] {
				sorted = false
			}
			out = append(out, ref[j])
			lastFromRef = true
			j++ // the next name starts past this one
			continue
		}
		if !kql.ValidName(n) {
			reject(n)
			continue
		}
		if sorted && len(out) > 0 && out[len(out)-1] >= n {
			sorted = false
		}
		if dec.Name != nil {
			out = append(out, dec.Name(n))
		} else {
			out = append(out, strings.Clone(n))
		}
		lastFromRef = false
	}
	return list{names: out, sorted: sorted}
}

// finish is the list a partition keeps, which becomes the reference: a
// list of names, or a set when the list was found among the reference's
// names and KeepSet asked for sets.
func (dec *Decoder) finish(k refKey, l list) ([]string, *Set) {
	if l.found {
		if l.set != nil {
			return nil, l.set
		}
		return l.names, nil
	}
	if l.bits != nil {
		s := dec.KeepSet(Set{Of: dec.seen[k].names, Bits: l.bits})
		if dec.lastSet == nil {
			dec.lastSet = map[refKey]*Set{}
		}
		dec.lastSet[k] = s
		return nil, s
	}
	names := l.names
	if !l.sorted {
		names = uniqueSorted(names)
	}
	kept := dec.keep(names)
	if len(kept) > 0 {
		if dec.ref == nil {
			dec.ref = map[refKey][]string{}
		}
		dec.ref[k] = kept
		if !l.fromRef {
			dec.see(k, kept)
		}
	}
	return kept, nil
}

// uniqueSorted sorts s in place and drops repeats. Partitions list their
// names sorted, so one pass usually finds both done.
func uniqueSorted(s []string) []string {
	strict := true
	for i := 1; i < len(s) && strict; i++ {
		strict = s[i-1] < s[i]
	}
	if strict {
		return s
	}
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
