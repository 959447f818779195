package heartbeat

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// decodeSchema decodes a heartbeat's Schema column: a JSON list of
// databases, each with its name, tables and views. It reads only those
// three keys and skips everything else unread. The adx-mon operator also
// writes tableSchemas, every table's columns, which is most of the bytes
// and nothing a hub plans with.
//
// It accepts exactly what json.Unmarshal into []DatabaseSchema accepts and
// gives the same result (FuzzDecodeSchemaMatchesEncodingJSON holds it to
// that): keys match case-insensitively, null leaves a field empty, a
// later duplicate key wins, and the whole input must be valid JSON.
// Strings of plain ASCII, which every valid Kusto name is, are sliced
// rather than copied; anything else goes through encoding/json.
func decodeSchema(s string) ([]DatabaseSchema, error) {
	var arena []string
	out, _, err := decodeSchemaInto(s, &arena, nil, nil)
	return out, err
}

// listText is where a database's lists of tables and views were in the
// row, as JSON text, and whether each was the text known for it, its
// names then not read (its DatabaseSchema list is nil).
type listText struct {
	tables, views           string
	tablesKnown, viewsKnown bool
	// tablesRef and viewsRef: every name of the list is a reference
	// name (see names), in the reference's order.
	tablesRef, viewsRef bool
	// tablesBits and viewsBits are such a list as bits over the
	// reference of the database named tablesFor and viewsFor (see
	// earlier.bitsArena), when the decoder asked for them.
	tablesBits, viewsBits []uint64
	tablesFor, viewsFor   string
	// Where each list starts in the row, and the database name its known
	// text was looked up by.
	tablesAt, viewsAt int
	knownFor          string
}

// earlier is what a decoder keeps from the rows it decoded before, which
// decodeSchemaInto reads a row's lists against.
type earlier interface {
	// knownText is the JSON text a database's list had in an earlier
	// row, if any ("" if none): a list whose text is that, byte for
	// byte, is passed over unread, for the caller to take what it made
	// of it then (a fleet's partitions send the same lists, so most of a
	// fresh cycle's rows are then compared rather than scanned).
	knownText(db string, views bool) string
	// reference is a list of valid names, sorted, that a database's list
	// is likely to share most names with: a name of the row that is, byte
	// for byte, the reference's next name is taken as that string without
	// being scanned (see names).
	reference(db string, views bool) refList
	// bitsArena is where a list read against its reference is written
	// as bits over it (reused from row to row), nil if none is wanted.
	bitsArena() *[]uint64
}

// decodeSchemaInto is decodeSchema with every list of names a slice of
// *arena, which grows as needed: a caller decoding many heartbeats reuses
// one arena for all of them.
//
// prev, when set, is what earlier rows left (see earlier). Known texts
// and references are tried only for databases named before their lists,
// as every writer orders them. texts, when set, gets each database's
// listText, in order.
func decodeSchemaInto(s string, arena *[]string, prev earlier, texts *[]listText) ([]DatabaseSchema, []listText, error) {
	// Values are skipped only inside a database object, inside the list:
	// two levels deep, as encoding/json counts them against maxDepth.
	d := schemaDecoder{s: s, depth: 2, arena: (*arena)[:0], prev: prev}
	if texts != nil {
		d.texts = (*texts)[:0]
	}
	var bitsOut *[]uint64
	if prev != nil {
		if bitsOut = prev.bitsArena(); bitsOut != nil {
			d.bits, d.wantBits = *bitsOut, true
		}
	}
	defer func() {
		// The next row reuses the arena, unless a row of millions of
		// names grew it: that one is not kept past this row.
		if *arena = d.arena; cap(d.arena) > maxArenaKept {
			*arena = nil
		}
		if texts != nil {
			*texts = d.texts
		}
		if bitsOut != nil {
			*bitsOut = d.bits
		}
	}()
	out, err := d.databases()
	if err == nil {
		d.ws()
		if d.i < len(d.s) {
			err = d.errorf("unexpected %q after the list", d.s[d.i])
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return out, d.texts, nil
}

// refList is a reference (see earlier.reference): its names, and the JSON
// text of the list of all of them as writers write it ("a","b",… without
// brackets or spaces), with where each name's string starts in it. A row
// that lists a run of the reference's names in order holds that stretch
// of the text byte for byte, which is compared many bytes at a time.
type refList struct {
	names []string
	text  string
	// off[q] is where names[q]'s opening quote is in text;
	// off[len(names)] is one past a comma after the text.
	off []int
}

// newRefList is the reference of names, valid names sorted without
// repeats: none needs an escape, so each is written as it is.
func newRefList(names []string) refList {
	size := 0
	for _, n := range names {
		size += len(n) + 3
	}
	b := make([]byte, 0, size)
	off := make([]int, len(names)+1)
	for q, n := range names {
		if q > 0 {
			b = append(b, ',')
		}
		off[q] = len(b)
		b = append(b, '"')
		b = append(b, n...)
		b = append(b, '"')
	}
	off[len(names)] = len(b) + 1
	return refList{names: names, text: unsafe.String(unsafe.SliceData(b), len(b)), off: off}
}

// commonPrefix is how many bytes a and b start with alike, compared eight
// at a time.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	if n >= 8 {
		pa, pb := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
		for ; i+8 <= n; i += 8 {
			if *(*uint64)(unsafe.Add(pa, i)) != *(*uint64)(unsafe.Add(pb, i)) {
				break
			}
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// maxDepth is encoding/json's nesting limit, which skipped values obey.
const maxDepth = 10000

type schemaDecoder struct {
	s     string
	i     int
	depth int
	arena []string
	prev  earlier
	texts []listText
	// bits, when wantBits, gets every list refRun reads as bits over its
	// reference; lastBits are the last list's, nil if it has none.
	bits     []uint64
	wantBits bool
	lastBits []uint64
}

func (d *schemaDecoder) errorf(format string, a ...any) error {
	return fmt.Errorf("offset %d: %s", d.i, fmt.Sprintf(format, a...))
}

func (d *schemaDecoder) ws() {
	// Writers put no whitespace between values: one look, inlined.
	if d.i < len(d.s) && d.s[d.i] > ' ' {
		return
	}
	d.wsSlow()
}

func (d *schemaDecoder) wsSlow() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (d *schemaDecoder) peek() byte {
	d.ws()
	if d.i == len(d.s) {
		return 0
	}
	return d.s[d.i]
}

// literal consumes null, true or false.
func (d *schemaDecoder) literal(word string) bool {
	if strings.HasPrefix(d.s[d.i:], word) {
		d.i += len(word)
		return true
	}
	return false
}

// list calls item for each element of a JSON array; null is no array,
// reported as false.
func (d *schemaDecoder) list(item func() error) (bool, error) {
	switch d.peek() {
	case 'n':
		if d.literal("null") {
			return false, nil
		}
		// A word that starts like null is not a list; without this the
		// n was taken for the [ (found by FuzzDecodeSchemaMatchesEncodingJSON).
		return false, d.errorf("expected a list")
	case '[':
	default:
		return false, d.errorf("expected a list")
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return true, nil
	}
	for {
		if err := item(); err != nil {
			return false, err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true, nil
		default:
			return false, d.errorf("expected , or ] in a list")
		}
	}
}

// errTooManyDatabases stops a schema at its (MaxDatabases+1)th database:
// an 8 MiB row of [{},{},…] claims millions, and decoding them all first
// cost 975 MiB and 10 s before the limit was checked.
var errTooManyDatabases = fmt.Errorf("lists more than %d databases", MaxDatabases)

func (d *schemaDecoder) databases() ([]DatabaseSchema, error) {
	out := []DatabaseSchema{}
	isList, err := d.list(func() error {
		if len(out) == MaxDatabases {
			return errTooManyDatabases
		}
		db, text, err := d.database()
		out = append(out, db)
		d.texts = append(d.texts, text)
		return err
	})
	if !isList {
		return nil, err
	}
	return out, err
}

// database decodes one database object; null is the zero database.
func (d *schemaDecoder) database() (DatabaseSchema, listText, error) {
	var db DatabaseSchema
	var text listText
	switch d.peek() {
	case 'n':
		if d.literal("null") {
			return db, text, nil
		}
		return db, text, d.errorf("expected a database object")
	case '{':
		d.i++
	default:
		return db, text, d.errorf("expected a database object")
	}
	if d.peek() == '}' {
		d.i++
		return db, text, nil
	}
	for {
		if d.peek() != '"' {
			return db, text, d.errorf("expected a key")
		}
		key, err := d.str()
		if err != nil {
			return db, text, err
		}
		if d.peek() != ':' {
			return db, text, d.errorf("expected : after a key")
		}
		d.i++
		switch {
		case strings.EqualFold(key, "database"):
			if d.peek() == 'n' && d.literal("null") {
				break
			}
			if d.peek() != '"' {
				return db, text, d.errorf("database is not a string")
			}
			if db.Database, err = d.str(); err != nil {
				return db, text, err
			}
			// A later name wins: a list recognised by the earlier one's
			// text is read after all.
			if (text.tablesKnown || text.viewsKnown) && db.Database != text.knownFor {
				err = d.readKnown(&db, &text)
			}
		case strings.EqualFold(key, "tables"):
			text.tablesAt = d.nextAt()
			db.Tables, text.tables, text.tablesKnown, text.tablesRef, err = d.namesOf(db.Database, false)
			text.tablesBits, text.tablesFor = d.lastBits, db.Database
			if text.tablesKnown {
				text.knownFor = db.Database
			}
		case strings.EqualFold(key, "views"):
			text.viewsAt = d.nextAt()
			db.Views, text.views, text.viewsKnown, text.viewsRef, err = d.namesOf(db.Database, true)
			text.viewsBits, text.viewsFor = d.lastBits, db.Database
			if text.viewsKnown {
				text.knownFor = db.Database
			}
		default:
			err = d.skip()
		}
		if err != nil {
			return db, text, err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return db, text, nil
		default:
			return db, text, d.errorf("expected , or } in a database object")
		}
	}
}

// nextAt is where the next value starts.
func (d *schemaDecoder) nextAt() int {
	d.ws()
	return d.i
}

// readKnown reads the lists of db that were passed over as known, from
// where they are in the row.
func (d *schemaDecoder) readKnown(db *DatabaseSchema, text *listText) error {
	at := d.i
	defer func() { d.i = at }()
	var err error
	if text.tablesKnown {
		d.i = text.tablesAt
		if db.Tables, _, err = d.names(refList{}); err != nil {
			return err
		}
		text.tables, text.tablesKnown = d.s[text.tablesAt:d.i], false
	}
	if text.viewsKnown {
		d.i = text.viewsAt
		if db.Views, _, err = d.names(refList{}); err != nil {
			return err
		}
		text.views, text.viewsKnown = d.s[text.viewsAt:d.i], false
	}
	return nil
}

// namesOf decodes a database's list of tables or views, or passes over it
// when its text is the one known for the database (known true, names
// nil). text is the list's JSON text; fromRef is names' (see names).
func (d *schemaDecoder) namesOf(db string, views bool) (names []string, text string, known, fromRef bool, err error) {
	d.ws()
	start := d.i
	d.lastBits = nil
	var ref refList
	if d.prev != nil && db != "" {
		if k := d.prev.knownText(db, views); k != "" && strings.HasPrefix(d.s[d.i:], k) {
			d.i += len(k)
			return nil, k, true, false, nil
		}
		ref = d.prev.reference(db, views)
	}
	names, fromRef, err = d.names(ref)
	return names, d.s[start:d.i], false, fromRef, err
}

// names decodes a list of strings; null elements are empty strings, a
// null list is nil.
//
// ref, when set, is a sorted list of valid names the list likely shares
// most of its names with. A valid name holds no quote, backslash or
// control character, so a string in the row whose bytes are a reference
// name's, followed by a quote, is that name: it is taken as the
// reference's string, compared rather than scanned. The walk through ref
// follows the list as long as the list is sorted; a name the reference
// does not hold, or one out of order, is scanned as usual. What names
// returns is the same either way, only where its strings are differs.
// fromRef reports a list of at least one name, each the reference's
// string, in the reference's order: valid, sorted and without repeats as
// it stands.
// maxArenaKept is the arena a decoder keeps for the next row: 64 Ki names
// (1 MiB), many times a fleet's row.
const maxArenaKept = 64 << 10

// roomForOne is s with room for one more name, doubling when full: append
// grows a large slice by a quarter, which for a row of millions of names
// allocates five times the arena it ends with, doubling twice.
func roomForOne(s []string) []string {
	if len(s) < cap(s) {
		return s
	}
	grown := make([]string, len(s), 2*cap(s)+64)
	copy(grown, s)
	return grown
}

func (d *schemaDecoder) names(reference refList) (names []string, fromRef bool, err error) {
	ref := reference.names
	// Names gather at the end of the arena; the list is that stretch, its
	// capacity capped so that nothing appended to it can reach the next.
	start := len(d.arena)
	d.lastBits = nil
	if len(ref) > 0 {
		if out, ok := d.refRun(reference, d.arena); ok {
			d.arena = out
			return out[start:len(out):len(out)], true, nil
		}
	}
	out := d.arena
	defer func() { d.arena = out }()
	j := 0 // the reference's next name
	fromRef = len(ref) > 0
	isList, err := d.list(func() error {
		switch d.peek() {
		case '"':
			var n string
			if k := refAhead(d.s, d.i, ref, j); k >= 0 {
				n = ref[k]
				d.i += len(n) + 2
				j = k + 1
			} else {
				var err error
				if n, err = d.str(); err != nil {
					return err
				}
				// Past names the list leaves out, to this one if the
				// reference holds it: searched, as a row of names
				// the reference lacks would otherwise walk all of it
				// for each.
				at, found := slices.BinarySearch(ref[j:], n)
				j += at
				if found {
					n = ref[j]
					j++
				} else {
					fromRef = false
				}
			}
			// Past the limit names are checked, not kept: one more than
			// the limit is enough for the database to be refused.
			if len(out)-start <= MaxTablesPerDatabase {
				out = append(roomForOne(out), n)
			}
			return nil
		case 'n':
			if d.literal("null") {
				fromRef = false
				if len(out)-start <= MaxTablesPerDatabase {
					out = append(roomForOne(out), "")
				}
				return nil
			}
		}
		return d.errorf("expected a name")
	})
	switch {
	case !isList:
		return nil, false, err
	case len(out) == start:
		return []string{}, false, err
	}
	return out[start:len(out):len(out)], fromRef && err == nil, err
}

// refRun is names' fast way through a list written as writers write it,
// without whitespace or escapes, whose every name is one of the
// reference's, in order: it appends the reference's strings to out, moves
// past the list and reports true. Any other list it leaves unread, out as
// it was, for the general way.
//
// A list that leaves out a few of the reference's names is, between them,
// the reference's own text: from each name the list and the reference
// have alike, the two texts are compared many bytes at a time, and every
// name whose string and comma lie in the stretch that agrees is the list's
// too. Then the next name is looked for among the few after, or searched
// for further on.
//
// When the decoder wants bits, the list is also written as bits over the
// reference (lastBits).
func (d *schemaDecoder) refRun(reference refList, out []string) ([]string, bool) {
	s, i, n := d.s, d.i, 0
	ref, text, off := reference.names, reference.text, reference.off
	if i+1 >= len(s) || s[i] != '[' || s[i+1] == ']' || len(off) != len(ref)+1 {
		return out, false
	}
	var b []uint64
	at := len(d.bits)
	if d.wantBits {
		b = newBits(&d.bits, len(ref))
	}
	i++
	for k := 0; i < len(s) && s[i] == '"'; {
		q := refAhead(s, i, ref, k)
		if q < 0 {
			if q = refFind(s, i, ref, k); q < 0 {
				break
			}
		}
		// The names from q on that agree, each with its comma.
		agree := off[q] + commonPrefix(s[i:], text[off[q]:])
		m, _ := slices.BinarySearch(off[q+1:], agree+1)
		m += q
		if m == q {
			// Only q itself, the list's last name or one past the
			// reference's last.
			m = q + 1
		}
		if n+m-q > MaxTablesPerDatabase {
			break
		}
		n += m - q
		out = append(out, ref[q:m]...)
		if b != nil {
			setRange(b, q, m)
		}
		i += off[m-1] - off[q] + len(ref[m-1]) + 2
		k = m
		if i >= len(s) {
			break
		}
		if s[i] == ',' {
			i++
			continue
		}
		if s[i] == ']' {
			d.i = i + 1
			d.lastBits = b
			return out, true
		}
		break
	}
	d.bits = d.bits[:at]
	return out[:len(out)-n], false
}

// refFind is the index, k or after, of the reference name that the string
// at the quote s[i] is, written without escapes; -1 if none is. It is
// refAhead for a name further on: the string's end is found and the name
// searched for.
func refFind(s string, i int, ref []string, k int) int {
	n := strings.IndexByte(s[i+1:], '"')
	if n < 0 || strings.IndexByte(s[i+1:i+1+n], '\\') >= 0 {
		return -1
	}
	at, found := slices.BinarySearch(ref[k:], s[i+1:i+1+n])
	if !found {
		return -1
	}
	return k + at
}

// setRange sets bits lo to hi-1 of b.
func setRange(b []uint64, lo, hi int) {
	for lo < hi {
		w, from := lo/64, uint(lo%64)
		to := min(uint(hi-w*64), 64)
		b[w] |= (^uint64(0) >> (64 - (to - from))) << from
		lo = w*64 + int(to)
	}
}

// refAhead is the index of the reference name, among ref[j] and the few
// after it, that the string starting at the quote s[i] is, written
// without escapes; -1 if none is. A list leaves out some of the
// reference's names, so a few are tried; a list that leaves out more in a
// row is read another way.
func refAhead(s string, i int, ref []string, j int) int {
	for k := j; k < len(ref) && k < j+refLookahead; k++ {
		// A valid name holds no quote or backslash: its bytes followed
		// by a quote are the whole string.
		if r := ref[k]; i+1+len(r) < len(s) && s[i+1+len(r)] == '"' && equalAt(s, i+1, r) {
			return k
		}
	}
	return -1
}

// equalAt reports whether s holds r at offset at, which the caller has
// checked s is long enough for. A name of 8 to 16 bytes, as most table
// names are, is two overlapping words compared in place: refRun does this
// for every name of a fresh cycle, a million of them for 1,000 partitions.
func equalAt(s string, at int, r string) bool {
	n := len(r)
	if n < 8 || n > 16 {
		return s[at:at+n] == r
	}
	sp, rp := unsafe.Pointer(unsafe.StringData(s)), unsafe.Pointer(unsafe.StringData(r))
	return *(*uint64)(unsafe.Add(sp, at)) == *(*uint64)(rp) &&
		*(*uint64)(unsafe.Add(sp, at+n-8)) == *(*uint64)(unsafe.Add(rp, n-8))
}

// refLookahead is how many reference names refAhead tries for each name
// of a list.
const refLookahead = 4

// str decodes the string at d.i.
func (d *schemaDecoder) str() (string, error) {
	start := d.i
	plain, err := d.skipString()
	if err != nil {
		return "", err
	}
	tok := d.s[start:d.i]
	if plain {
		return tok[1 : len(tok)-1], nil
	}
	var v string
	if err := json.Unmarshal([]byte(tok), &v); err != nil {
		return "", d.errorf("%v", err)
	}
	return v, nil
}

// skipString moves past the string at d.i, checking its escapes, and
// reports whether it was plain: printable ASCII without escapes.
func (d *schemaDecoder) skipString() (bool, error) {
	d.i++ // the opening quote
	plain := true
	for d.i < len(d.s) {
		// Most bytes need no look: skip them eight at a time, then in a
		// tight loop.
		for d.i+8 <= len(d.s) && !anySpecial(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(d.s[d.i:]), 8))) {
			d.i += 8
		}
		for d.i < len(d.s) && !stringSpecial[d.s[d.i]] {
			d.i++
		}
		if d.i == len(d.s) {
			break
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return plain, nil
		case c == '\\':
			plain = false
			if err := d.skipEscape(); err != nil {
				return false, err
			}
			continue
		case c < 0x20:
			return false, d.errorf("control character in a string")
		case c >= 0x80:
			plain = false
		}
		d.i++
	}
	return false, d.errorf("unterminated string")
}

// stringSpecial marks the bytes skipString must look at inside a string:
// its end, an escape, control characters and bytes outside ASCII.
var stringSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// anySpecial reports whether any of the eight bytes in w is one
// stringSpecial marks: a quote or backslash (a byte equal to it is a zero
// byte of w xor it), a control character (it borrows when 0x20 is taken
// from it) or a byte outside ASCII (its high bit). It may report a byte
// next to a special one as well, never miss one.
func anySpecial(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return ((quote-ones)&^quote|(backslash-ones)&^backslash|(w-ones*0x20)|w)&highs != 0
}

func (d *schemaDecoder) skipEscape() error {
	if d.i+1 >= len(d.s) {
		return d.errorf("unterminated escape")
	}
	switch d.s[d.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		d.i += 2
		return nil
	case 'u':
		if d.i+6 > len(d.s) {
			return d.errorf("short \\u escape")
		}
		for _, h := range []byte(d.s[d.i+2 : d.i+6]) {
			if !isHex(h) {
				return d.errorf("invalid \\u escape")
			}
		}
		d.i += 6
		return nil
	}
	return d.errorf("invalid escape")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skip moves past any JSON value, checking its syntax without decoding it.
func (d *schemaDecoder) skip() error {
	switch c := d.peek(); {
	case c == '"':
		_, err := d.skipString()
		return err
	case c == '{' || c == '[':
		return d.skipContainer(c)
	case c == 't' && d.literal("true"), c == 'f' && d.literal("false"), c == 'n' && d.literal("null"):
		return nil
	case c == '-' || '0' <= c && c <= '9':
		return d.skipNumber()
	}
	return d.errorf("expected a value")
}

func (d *schemaDecoder) skipContainer(open byte) error {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		return errors.New("exceeded max depth")
	}
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	d.i++
	if d.peek() == end {
		d.i++
		return nil
	}
	for {
		if open == '{' {
			if d.peek() != '"' {
				return d.errorf("expected a key")
			}
			if _, err := d.skipString(); err != nil {
				return err
			}
			if d.peek() != ':' {
				return d.errorf("expected : after a key")
			}
			d.i++
		}
		if err := d.skip(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case end:
			d.i++
			return nil
		default:
			return d.errorf("expected , or %c", end)
		}
	}
}

// skipNumber moves past a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *schemaDecoder) skipNumber() error {
	digits := func() int {
		n := 0
		for d.i < len(d.s) && '0' <= d.s[d.i] && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.s[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case digits() == 0:
		return d.errorf("invalid number")
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return d.errorf("invalid number")
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return d.errorf("invalid number")
		}
	}
	return nil
}
