package heartbeat

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/race"
)

// adxMonSchema is a Schema column as the adx-mon operator writes it:
// besides names, every table's columns (tableSchemas), which a hub never
// plans with.
func adxMonSchema(dbs, tables int) string {
	type schema struct {
		Database     string            `json:"database"`
		Tables       []string          `json:"tables"`
		TableSchemas map[string]string `json:"tableSchemas,omitempty"`
		Views        []string          `json:"views"`
	}
	var out []schema
	for d := range dbs {
		s := schema{Database: fmt.Sprintf("Db%d", d), TableSchemas: map[string]string{}, Views: []string{"Latest"}}
		for t := range tables {
			name := fmt.Sprintf("Table%03d", t)
			s.Tables = append(s.Tables, name)
			s.TableSchemas[name] = "Timestamp:datetime, ObservedTimestamp:datetime, TraceId:string, SpanId:string, SeverityText:string, SeverityNumber:int, Body:dynamic, Resource:dynamic, Attributes:dynamic"
		}
		out = append(out, s)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func TestDecodeSchema(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []DatabaseSchema
		err  bool
	}{
		"adx-mon's form, columns skipped": {
			in:   `[{"database":"Metrics","tables":["Cpu"],"tableSchemas":{"Cpu":"Timestamp:datetime, \"x\":real"},"views":[]}]`,
			want: []DatabaseSchema{{Database: "Metrics", Tables: []string{"Cpu"}, Views: []string{}}},
		},
		"keys in any case, escapes, nulls, later keys win": {
			in:   ` [ {"DATABASE":"M\u0065trics","Tables":["a",null],"tables":["b"],"views":null,"x":[1,-2.5e+3,true,{"y":null}]}, null ] `,
			want: []DatabaseSchema{{Database: "Metrics", Tables: []string{"b"}}, {}},
		},
		"not ASCII goes through encoding/json": {
			in:   "[{\"database\":\"D\xff\u00e9\"}]",
			want: []DatabaseSchema{{Database: "D\ufffd\u00e9"}},
		},
		"null":                     {in: "null"},
		"empty list":               {in: "[]", want: []DatabaseSchema{}},
		"trailing garbage":         {in: `[] x`, err: true},
		"a number as a name":       {in: `[{"database":1}]`, err: true},
		"tables as an object":      {in: `[{"tables":{}}]`, err: true},
		"an invalid skipped value": {in: `[{"tableSchemas":{"a":01}}]`, err: true},
		"an invalid escape":        {in: `[{"database":"\x"}]`, err: true},
		"unterminated":             {in: `[{"database":"a`, err: true},
		"an object, not a list":    {in: `{}`, err: true},
		"half a null as the list":  {in: `n]`, err: true},
		"half a null as names":     {in: `[{"tables":n]}]`, err: true},
	}
	for name, tc := range cases {
		for decoder, decode := range map[string]func(string) ([]DatabaseSchema, error){"scanner": decodeSchema, "jsontext": jsontextDecode} {
			t.Run(name+"/"+decoder, func(t *testing.T) {
				got, err := decode(tc.in)
				if (err != nil) != tc.err {
					t.Fatalf("error = %v, want error: %v", err, tc.err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %#v, want %#v", got, tc.want)
				}
			})
		}
	}
	// Nesting up to encoding/json's limit, and one level past it.
	deep := `[{"x":` + strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2) + `}]`
	deeper := `[{"x":[` + deep[6:len(deep)-2] + `]}]`
	if _, err := decodeSchema(deep); err != nil {
		t.Errorf("nesting at the limit: %v", err)
	}
	for _, in := range []string{deep, deeper} {
		_, err := decodeSchema(in)
		var v []DatabaseSchema
		if werr := json.Unmarshal([]byte(in), &v); (err != nil) != (werr != nil) {
			t.Errorf("nesting %d: decodeSchema error %v, encoding/json error %v", strings.Count(in, "["), err, werr)
		}
	}
}

// FuzzDecodeSchemaMatchesEncodingJSON holds decodeSchema to
// json.Unmarshal: the same inputs accepted, the same result.
func FuzzDecodeSchemaMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		adxMonSchema(2, 3), `null`, `[]`, `[null]`, `[{"database":"a","tables":null}]`,
		`[{"Database":"\u00e9\ud83d\ude00","views":["\/"]}]`, `[{"database":"d","tables":["t","t"]},{"database":"d","tables":["t"]},{"database":"d"}]`, `[{"x":[1e5,-0,0.5,"\t"]}]`, `[{"x":01}]`, "[{\"database\":\"a\x01\"}]", `n]`, `[{"views":n]}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := decodeSchema(s)
		runtime.ReadMemStats(&after)
		// What a row may cost is a small multiple of its bytes, however
		// many databases or names it claims.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAllocPerByte*uint64(len(s))+64<<10 {
			t.Fatalf("%d bytes of schema allocated %d bytes", len(s), alloc)
		}
		var want []DatabaseSchema
		werr := json.Unmarshal([]byte(s), &want)
		if errors.Is(err, errTooManyDatabases) && werr == nil && len(want) > MaxDatabases {
			return // stopped at the limit, as it must
		}
		if (err != nil) != (werr != nil) {
			t.Fatalf("decodeSchema error %v, encoding/json error %v", err, werr)
		}
		// Past the limit, names are checked, not kept.
		for i := range want {
			if len(want[i].Tables) > MaxTablesPerDatabase+1 {
				want[i].Tables = want[i].Tables[:MaxTablesPerDatabase+1]
			}
			if len(want[i].Views) > MaxTablesPerDatabase+1 {
				want[i].Views = want[i].Views[:MaxTablesPerDatabase+1]
			}
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeSchema %#v, encoding/json %#v", got, want)
		}
	})
}

// maxAllocPerByte bounds what decoding a schema allocates per byte: a
// database is at least 3 bytes ({},) and 56 of DatabaseSchema, a name at
// least 3 ("",) and 16 of string header, each list growing by doubling.
const maxAllocPerByte = 64

// TestHostileSchemasAreBounded: what a heartbeat row claims is stopped
// at its limit while it is read, not after; memory and time are asserted.
func TestHostileSchemasAreBounded(t *testing.T) {
	manyDatabases := "[" + strings.Repeat("{},", (MaxSchemaBytes-10)/3) + "{}]"
	manyTables := `[{"database":"a","tables":[` + strings.Repeat(`"t",`, (MaxSchemaBytes-100)/4) + `"t"]}]`
	for name, tc := range map[string]struct {
		schema string
		want   string
	}{
		"an 8 MiB row of empty databases":    {schema: manyDatabases, want: "lists more than 1000 databases"},
		"two million tables in one database": {schema: manyTables, want: "lists more than 10000 tables"},
	} {
		t.Run(name, func(t *testing.T) {
			_, rejected, took, alloc, err := measuredDecode(tc.schema)
			got := fmt.Sprint(err, rejected)
			if !strings.Contains(got, tc.want) {
				t.Errorf("Decode = %s, want %q", got, tc.want)
			}
			if alloc > 4<<20 {
				t.Errorf("allocated %d KiB for %d KiB of schema", alloc>>10, len(tc.schema)>>10)
			}
			if took > race.TimeScale*time.Second {
				t.Errorf("took %s", took)
			}
			t.Logf("%d KiB refused in %s, %d KiB allocated", len(tc.schema)>>10, took.Round(time.Millisecond), alloc>>10)
		})
	}
}

func BenchmarkDecodeSchema(b *testing.B) {
	// fleetplane's Heartbeat writes names only; the adx-mon operator adds
	// every table's columns, which the decoder skips.
	names, _ := json.Marshal(func() []DatabaseSchema {
		var out []DatabaseSchema
		for d := range 5 {
			db := DatabaseSchema{Database: fmt.Sprintf("Db%d", d), Views: []string{"Latest"}}
			for t := range 200 {
				db.Tables = append(db.Tables, fmt.Sprintf("Table%03d", t))
			}
			out = append(out, db)
		}
		return out
	}())
	for _, in := range []struct{ name, s string }{{"fleetplane", string(names)}, {"adx-mon", adxMonSchema(5, 200)}} {
		for _, bc := range []struct {
			name   string
			decode func(string) ([]DatabaseSchema, error)
		}{
			{"scanner", decodeSchema},
			{"jsontext", jsontextDecode},
			{"encoding-json", func(s string) ([]DatabaseSchema, error) {
				var out []DatabaseSchema
				return out, json.Unmarshal([]byte(s), &out)
			}},
		} {
			b.Run(in.name+"/"+bc.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.s)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := bc.decode(in.s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// anySpecial finds every byte stringSpecial marks, at every place of the
// eight, and reports none in plain text.
func TestAnySpecial(t *testing.T) {
	for b := range 256 {
		for pos := range 8 {
			w := []byte("abcdefgh")
			w[pos] = byte(b)
			if got := anySpecial(binary.LittleEndian.Uint64(w)); got != stringSpecial[b] {
				t.Errorf("byte %#x at %d: anySpecial %v, want %v", b, pos, got, stringSpecial[b])
			}
		}
	}
}

// TestNamesAgainstReference: a list read against a reference gives what
// reading it alone gives, and says it is a run of reference names in
// order, each the reference's own string, exactly when it is one.
func TestNamesAgainstReference(t *testing.T) {
	letters := []string{"A", "B", "C", "D", "E", "F", "G", "H"}
	prefixes := []string{"A", "AB", "ABC", "B"}
	var long []string
	for i := range 130 {
		long = append(long, fmt.Sprintf("T%03d", i))
	}
	quoted := func(names []string) string {
		return `["` + strings.Join(names, `","`) + `"]`
	}
	for _, tc := range []struct {
		name, list string
		fromRef    bool
		ref        []string // letters if nil
	}{
		{"the reference", `["A","B","C","D","E","F","G","H"]`, true, nil},
		{"leaving out one", `["A","C","D","E","F","G","H"]`, true, nil},
		{"leaving out the first and the last", `["B","C","D","E","F","G"]`, true, nil},
		{"leaving out three in a row", `["A","E","F"]`, true, nil},
		{"leaving out more in a row", `["A","G","H"]`, true, nil},
		{"one name", `["H"]`, true, nil},
		{"spaced", ` [ "A" , "C" ] `, true, nil},
		{"escaped", `["\u0041","B"]`, true, nil},
		{"a prefix of a name", `["A","Bx","C"]`, false, nil},
		{"a longer name", `["AB"]`, false, nil},
		{"out of order", `["B","A"]`, false, nil},
		{"twice", `["A","A"]`, false, nil},
		{"null", `["A",null]`, false, nil},
		{"empty", `[]`, false, nil},
		{"null list", `null`, false, nil},
		{"past the reference's last", `["G","H","I"]`, false, nil},
		{"names that are prefixes of the next", `["AB","B"]`, true, prefixes},
		{"the longest of them", `["A","ABC"]`, true, prefixes},
		{"all of them", `["A","AB","ABC","B"]`, true, prefixes},
		{"longer than any", `["A","ABCD"]`, false, prefixes},
		{"a hundred and thirty", quoted(long), true, long},
		{"leaving out the 65th", quoted(slices.Delete(slices.Clone(long), 64, 65)), true, long},
		{"around the 64th", quoted(long[62:67]), true, long},
		{"the last alone", quoted(long[129:]), true, long},
	} {
		ref := tc.ref
		if ref == nil {
			ref = letters
		}
		t.Run(tc.name, func(t *testing.T) {
			alone := schemaDecoder{s: tc.list}
			want, _, err := alone.names(refList{})
			if err != nil {
				t.Fatal(err)
			}
			d := schemaDecoder{s: tc.list, wantBits: true}
			got, fromRef, err := d.names(newRefList(ref))
			if err != nil || !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("names = %q, %v; alone %q", got, err, want)
			}
			if d.ws(); d.i != len(tc.list) {
				t.Errorf("stopped at %d of %d", d.i, len(tc.list))
			}
			if fromRef != tc.fromRef {
				t.Errorf("fromRef = %v, want %v", fromRef, tc.fromRef)
			}
			// Written as writers write it, a list of reference names
			// is read the fast way.
			fast := tc.fromRef && !strings.ContainsAny(tc.list, ` \`)
			r := schemaDecoder{s: tc.list}
			if _, ok := r.refRun(newRefList(ref), nil); ok != fast {
				t.Errorf("read the fast way: %v, want %v", ok, fast)
			}
			// A list read the fast way is also its bits over the
			// reference, the only bits written; any other has none.
			if d.lastBits != nil {
				if set := (&Set{Of: ref, Bits: d.lastBits}); !fromRef || !slices.Equal(set.Names(), got) || len(d.bits) != len(d.lastBits) {
					t.Errorf("bits %b are %q (fromRef %v, %d words written)", d.lastBits, set.Names(), fromRef, len(d.bits))
				}
			} else if len(d.bits) != 0 {
				t.Errorf("%d words of bits left behind", len(d.bits))
			}
			for _, n := range got {
				if i := slices.Index(ref, n); fromRef && !sameString(ref[i], n) {
					t.Errorf("%q is not the reference's string", n)
				}
			}
		})
	}
}

// TestEqualAt holds equalAt to string comparison for names of every
// length around its two-word way, differing at every place.
func TestEqualAt(t *testing.T) {
	for n := range 20 {
		r := strings.Repeat("x", n)
		for at := range 3 {
			s := strings.Repeat("-", at) + r + `"`
			if !equalAt(s, at, r) {
				t.Errorf("equalAt(%q, %d, %q) = false", s, at, r)
			}
			for i := range n {
				other := s[:at+i] + "y" + s[at+i+1:]
				if equalAt(other, at, r) {
					t.Errorf("equalAt(%q, %d, %q) = true", other, at, r)
				}
			}
		}
	}
}

func TestCommonPrefix(t *testing.T) {
	a := strings.Repeat("abcdefgh", 5)
	for n := range len(a) + 1 {
		for _, b := range []string{a[:n], a[:n] + "X" + a[n:]} {
			if got := commonPrefix(a, b); got != n {
				t.Errorf("commonPrefix(%q, %q) = %d, want %d", a, b, got, n)
			}
			if got := commonPrefix(b, a); got != n {
				t.Errorf("commonPrefix(%q, %q) = %d, want %d", b, a, got, n)
			}
		}
	}
}

func TestSetRange(t *testing.T) {
	for lo := range 140 {
		for hi := lo; hi <= 140; hi += 7 {
			b := make([]uint64, 3)
			setRange(b, lo, hi)
			for i := range 192 {
				if got, want := b[i/64]&(1<<(i%64)) != 0, i >= lo && i < hi; got != want {
					t.Fatalf("setRange(%d, %d): bit %d is %v", lo, hi, i, got)
				}
			}
		}
	}
}

func TestNewRefList(t *testing.T) {
	r := newRefList([]string{"a", "bc", "d"})
	if r.text != `"a","bc","d"` || !slices.Equal(r.off, []int{0, 4, 9, 13}) {
		t.Errorf("text %s, offsets %v", r.text, r.off)
	}
	if e := newRefList(nil); e.text != "" || !slices.Equal(e.off, []int{1}) {
		t.Errorf("empty: text %q, offsets %v", e.text, e.off)
	}
}

// TestRepeatedNamesAreLinear: a row may list one database, and one name,
// as often as its bytes allow; what it costs grows with its bytes, not
// with their square. Memory and time are asserted.
func TestRepeatedNamesAreLinear(t *testing.T) {
	repeat := func(n int, list func(i int) string) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"database":"d","tables":[%s]}`, list(i))
		}
		b.WriteString("]")
		return b.String()
	}
	sameTable := strings.TrimSuffix(strings.Repeat(`"t",`, 1000), ",")
	distinct := func(i int) string {
		var b strings.Builder
		for j := range 1000 {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"t%d"`, i*1000+j)
		}
		return b.String()
	}
	for name, tc := range map[string]struct {
		schema string
		// want is the partition's tables, or the rejection.
		want string
	}{
		"database d a thousand times, table t a thousand times each": {
			schema: repeat(1000, func(int) string { return sameTable }), want: "[{d [t] [] <nil> <nil>}] []",
		},
		"database d 700 times, a thousand tables of its own each": {
			schema: repeat(700, distinct), want: `[] [https://p1.kusto.windows.net: database "d" lists more than 10000 tables or views]`,
		},
		"database d 9 times, a thousand tables of its own each": {
			schema: repeat(9, distinct), want: "9000 tables",
		},
		// Before: 2.7 million rejections, 1.1 GiB and 4.6 s.
		"8 MiB of empty names, 300 times nine thousand": {
			schema: repeat(300, func(int) string { return strings.TrimSuffix(strings.Repeat(`"",`, 9000), ",") }),
			want:   "33 rejections, the last: and 2699968 more names or databases refused",
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, rejected, took, alloc, err := measuredDecode(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(p.Databases, rejected)
			switch {
			case len(p.Databases) == 1 && len(p.Databases[0].Tables) > 1:
				got = fmt.Sprintf("%d tables", len(p.Databases[0].Tables))
			case len(rejected) > MaxRejections:
				got = fmt.Sprintf("%d rejections, the last: %s", len(rejected), rejected[len(rejected)-1].Reason)
			}
			if got != tc.want {
				t.Errorf("Decode = %s, want %s", got, tc.want)
			}
			if alloc > maxRepeatAllocPerByte*uint64(len(tc.schema))+2<<20 {
				t.Errorf("allocated %d KiB for %d KiB of schema", alloc>>10, len(tc.schema)>>10)
			}
			// Before: 16 s and 9.6 GiB for the first.
			if took > 3*race.TimeScale*time.Second {
				t.Errorf("took %s", took)
			}
			t.Logf("%d KiB in %s, %d KiB allocated", len(tc.schema)>>10, took.Round(time.Millisecond), alloc>>10)
		})
	}
}

// maxRepeatAllocPerByte bounds what a row of repeated databases costs per
// byte: its names' headers in the row's arena (16 bytes each, a name at
// least 3 bytes, grown by doubling to twice that and more), the merged
// list, bounded by the limit, and no message past MaxRejections.
// Measured: 9 for repeated valid names, 17 for empty ones.
const maxRepeatAllocPerByte = 24

// measuredDecode decodes schema with a fresh Decoder, measuring the time
// and the bytes allocated.
func measuredDecode(schema string) (p Partition, rejected []Rejection, took time.Duration, alloc uint64, err error) {
	var dec Decoder
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	p, rejected, err = dec.Decode(time.Now(), "https://p1.kusto.windows.net", schema, false)
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return p, rejected, took, after.TotalAlloc - before.TotalAlloc, err
}
