package heartbeat

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// FuzzDecode feeds arbitrary heartbeat rows to the hub's decoder: whatever
// it accepts must be a valid endpoint and valid names, nothing else.
func FuzzDecode(f *testing.F) {
	f.Add("https://p1.kusto.windows.net", `[{"database":"Metrics","tables":["a","b"],"views":["v"]}]`)
	f.Add("https://x').database('y", `[{"database":"x'] | .drop table T //","tables":["\n"]}]`)
	f.Add("HTTPS://P1/", `[{"database":"D","tables":null,"views":[1,2]}]`)
	f.Add("https://p1", `[{"database":"","tables":["`+"\u2028"+`"]}]`)
	// A database, and a name, repeated: merged in linear time.
	f.Add("https://p1", `[`+strings.Repeat(`{"database":"d","tables":["t","t","t"],"views":["t"]},`, 40)+`{"database":"d"}]`)
	f.Add("https://p1", `[`+strings.Repeat(`{"database":"d","tables":["","a;",""]},`, 40)+`{"database":"e","tables":[""]}]`)
	f.Fuzz(func(t *testing.T, endpoint, schema string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p, _, err := Decode(time.Unix(0, 0), endpoint, schema, false)
		runtime.ReadMemStats(&after)
		// Whatever repeats, a row costs a small multiple of its bytes.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAllocPerByte*uint64(len(schema))+64<<10 {
			t.Fatalf("%d bytes of schema allocated %d bytes", len(schema), alloc)
		}
		if err != nil {
			return
		}
		if ep, err := kql.Endpoint(p.Endpoint, false); err != nil || ep != p.Endpoint {
			t.Fatalf("accepted endpoint %q is not in normal form: %v", p.Endpoint, err)
		}
		for _, d := range p.Databases {
			for _, n := range append(append([]string{d.Database}, d.Tables...), d.Views...) {
				if err := kql.ValidateName(n); err != nil {
					t.Fatalf("accepted name %q: %v", n, err)
				}
			}
		}
	})
}

// FuzzDecoderReuse decodes two rows with one Decoder: each result is what
// a fresh Decode gives, and the first is untouched by the second, though
// the decoder reused its memory for it.
func FuzzDecoderReuse(f *testing.F) {
	f.Add(`[{"database":"M","tables":["b","a","b"],"views":["v"]},{"database":"M","tables":["c"]}]`, `[{"database":"N","tables":["x","y","z","w"]}]`)
	f.Add(`[{"database":"M","tables":[]}]`, `[{"database":"M","tables":["a;b","c"],"views":null}]`)
	f.Add(`[{"database":"M","tables":["a","b"],"views":["c"]}]`, `[{"database":"N","tables":["c"],"views":["a","b"]},{"database":"M","tables":["b","a"]}]`)
	f.Add(`[{"database":"M","tables":["a","b"]}]`, `[{"database":"M","tables":["a","b"]},{"database":"M","tables":["a"]}]`)
	f.Add(`[{"database":"M","tables":["a","b;c"],"views":[]}]`, `[{"database":"M", "tables": ["a","b;c"] ,"views":[]},{"tables":["a","b;c"],"database":"N"}]`)
	f.Add(`[{"database":"M","tables":["a","b"]},{"database":"N","tables":["a","b"]}]`, `[{"database":"M","tables":["a","b"]}, {"database":"M","tables":["a","b","c"]}]`)
	f.Add(`[{"database":"M","tables":null,"views":["x"]}]`, `[{"database":"M","tables":null,"views":["x"],"tables":["y"]}]`)
	// A later database name wins over the one a list was recognised by.
	f.Add(`[{"database":"M","tables":["a","b;c"],"views":["v"]},{"database":"N","tables":["x"]}]`, `[{"database":"M","tables":["a","b;c"],"views":["v"],"database":"N"},{"database":"N","tables":["x"],"database":"M"}]`)
	// Names read against the reference: a prefix of a reference name,
	// a reference name escaped or followed by an escape, out of order,
	// and names the reference does not hold.
	f.Add(`[{"database":"M","tables":["a","ab","b","d"]}]`, `[{"database":"M","tables":["ab","\u0061","b","c","a","ab\"","d\u0000"]}]`)
	f.Add(`[{"database":"M","tables":["Table1","Table2","Table3"]}]`, `[{"database":"M","tables":["Table1","Table3","Table4"]},{"database":"M","tables":["Table2"]}]`)
	// Lists of names seen before, kept as sets by a decoder that asks.
	f.Add(`[{"database":"M","tables":["a","b","c"],"views":["v","w"]}]`, `[{"database":"M","tables":["a","c"],"views":["w"]}]`)
	// Databases repeated, and more refused names than are described.
	f.Add(`[{"database":"M","tables":["a","b"]},{"database":"M","tables":["b","a"]},{"database":"M","tables":["c"],"views":["a"]}]`, `[{"database":"M","tables":["a","b"]}]`)
	f.Add(`[{"database":"M","tables":[`+strings.Repeat(`"",`, 40)+`"a"]}]`, `[{"database":"N","tables":["x;"]},{"database":"M","tables":[`+strings.Repeat(`"",`, 40)+`"a"]}]`)
	f.Fuzz(func(t *testing.T, a, b string) {
		// A decoder that shares lists, as the hub's cache does, and one
		// that copies them.
		kept := map[string][]string{}
		shared := Decoder{
			Keep: func(l []string) []string {
				k := strings.Join(l, "\x00")
				if _, ok := kept[k]; !ok {
					kept[k] = slices.Clone(l)
				}
				return kept[k]
			},
		}
		// And one that also shares names, as the hub's cache does.
		words := map[string]string{}
		named := shared
		named.Name = func(n string) string {
			if w, ok := words[n]; ok {
				return w
			}
			w := strings.Clone(n)
			words[w] = w
			return w
		}
		// And one that keeps lists of names it saw as sets, as the
		// hub's cache does, sharing equal sets.
		sets := map[string]*Set{}
		asSets := named
		asSets.KeepSet = func(s Set) *Set {
			k := fmt.Sprint(unsafe.SliceData(s.Of), len(s.Of), s.Bits)
			if _, ok := sets[k]; !ok {
				sets[k] = &Set{Of: s.Of, Bits: slices.Clone(s.Bits)}
			}
			return sets[k]
		}
		for _, dec := range []*Decoder{{}, &shared, &named, &asSets} {
			decodeTwice(t, dec, a, b)
		}
		// Decoded from bytes read in place, nothing kept is the row's:
		// overwriting the row changes nothing decoded.
		row := []byte(a)
		var dec Decoder
		p, r, err := dec.DecodeBytes(time.Unix(0, 0), "https://p1", row, false)
		want := fmt.Sprint(p, r, err)
		for i := range row {
			row[i] = 'x'
		}
		if got := fmt.Sprint(p, r, err); got != want {
			t.Fatalf("decoded from bytes %s; after the bytes changed %s", want, got)
		}
		// Nor does the decoder recognise lists by the row's bytes: the
		// same row again, in a buffer of its own, is the same partition.
		again, ra, erra := dec.DecodeBytes(time.Unix(0, 0), "https://p1", []byte(a), false)
		if got := fmt.Sprint(again, ra, erra); got != want {
			t.Fatalf("decoded from bytes %s; the same row again %s", want, got)
		}
	})
}

// decodeTwice decodes a then b with dec and holds both to a fresh Decode,
// a also after b.
func decodeTwice(t *testing.T, dec *Decoder, a, b string) {
	t.Helper()
	pa, ra, ea := dec.Decode(time.Unix(0, 0), "https://p1", a, false)
	wantA := fmt.Sprint(plain(pa), ra, ea)
	pb, rb, eb := dec.Decode(time.Unix(0, 0), "https://p1", b, false)
	pa, pb = plain(pa), plain(pb)
	fa, fra, fea := Decode(time.Unix(0, 0), "https://p1", a, false)
	fb, frb, feb := Decode(time.Unix(0, 0), "https://p1", b, false)
	if got := fmt.Sprint(pa, ra, ea); got != wantA || got != fmt.Sprint(fa, fra, fea) {
		t.Fatalf("first row: %s after the second, %s when decoded, %s fresh", got, wantA, fmt.Sprint(fa, fra, fea))
	}
	if got, want := fmt.Sprint(pb, rb, eb), fmt.Sprint(fb, frb, feb); got != want {
		t.Fatalf("second row: %s, fresh %s", got, want)
	}
	// Again, in both orders: lists the decoder has seen are recognised
	// by their text, and give what reading them gives.
	for _, row := range []string{a, b, b, a} {
		p, r, err := dec.Decode(time.Unix(0, 0), "https://p1", row, false)
		fp, fr, fe := Decode(time.Unix(0, 0), "https://p1", row, false)
		if got, want := fmt.Sprint(plain(p), r, err), fmt.Sprint(fp, fr, fe); got != want {
			t.Fatalf("row %s decoded again: %s, fresh %s", row, got, want)
		}
	}
}

// plain is p with every list held as names: what a decoder that keeps
// sets (Decoder.KeepSet) means by them, to compare with one that does not.
func plain(p Partition) Partition {
	dbs := make([]DatabaseSchema, len(p.Databases))
	for i, d := range p.Databases {
		if d.TableSet != nil && d.Tables != nil || d.ViewSet != nil && d.Views != nil {
			panic("a list held both ways")
		}
		dbs[i] = DatabaseSchema{Database: d.Database, Tables: d.TableNames(), Views: d.ViewNames()}
	}
	if p.Databases == nil {
		dbs = nil
	}
	p.Databases = dbs
	return p
}
