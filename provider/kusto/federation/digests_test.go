package federation

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestEachDigest(t *testing.T) {
	digest := strings.Repeat("a", 64)
	ts := "2026-11-27T05:16:11.1234567Z"
	for _, tc := range []struct {
		name, in string
		want     []string // endpoint|digest|time
		err      string
	}{
		{"none", `[]`, nil, ""},
		{"one", `[["https://p1.kusto.windows.net","` + digest + `","` + ts + `"]]`, []string{"https://p1.kusto.windows.net|" + digest + "|2026-11-27T05:16:11.1234567Z"}, ""},
		{"spaces between", " [ [ \"e\" , \"d\" , \"" + ts + "\" ] , [\"f\",\"d\",\"" + ts + "\"] ] ", []string{"e|d|" + ts, "f|d|" + ts}, ""},
		{"an escape in an endpoint", `[["a\"b\u0041","d","` + ts + `"]]`, []string{`a"bA|d|` + ts}, ""},
		{"not a list", `{"a":1}`, nil, "not a list"},
		{"two items", `[["e","d"]]`, nil, "not a list"},
		{"four items", `[["e","d","` + ts + `","x"]]`, nil, "not a list"},
		{"a number", `[["e",1,"` + ts + `"]]`, nil, "not a list"},
		{"trailing data", `[]x`, nil, "trailing data"},
		{"unterminated", `[["e","d","` + ts, nil, "not a list"},
		{"a control character", "[[\"e\n\",\"d\",\"" + ts + "\"]]", nil, "not a list"},
		{"a bad escape", `[["e\x","d","` + ts + `"]]`, nil, "not a list"},
		{"no time", `[["e","d","yesterday"]]`, nil, `heartbeat time "yesterday"`},
		{"missing comma", `[["e","d","` + ts + `"]["f","d","` + ts + `"]]`, nil, "not a list"},
		{"empty", ``, nil, "not a list"},
	} {
		var got []string
		err := eachDigest(tc.in, func(d DigestRow) error {
			got = append(got, d.Endpoint+"|"+d.Digest+"|"+d.Timestamp.Format(time.RFC3339Nano))
			return nil
		})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case tc.err == "" && fmt.Sprint(got) != fmt.Sprint(tc.want):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestEachDigestAllocatesNothing: a bucket of 1,000 triples without
// escapes is read without a single allocation: endpoints and digests are
// substrings of the answer, times parsed in place.
func TestEachDigestAllocatesNothing(t *testing.T) {
	var b strings.Builder
	b.WriteByte('[')
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `["https://p%d.westeurope.kusto.windows.net","%064d","2026-11-27T05:16:%02d.1234567Z"]`, i, i, i%60)
	}
	b.WriteByte(']')
	in := b.String()
	n := 0
	allocs := testing.AllocsPerRun(10, func() {
		n = 0
		if err := eachDigest(in, func(DigestRow) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	})
	if n != 1000 || allocs != 0 {
		t.Errorf("%d triples read with %.0f allocations, want 1000 with none", n, allocs)
	}
}

// FuzzEachDigest: whatever the hub answers, parsing neither panics nor
// passes on a triple after an error, and what it passes has the shape
// asked for.
func FuzzEachDigest(f *testing.F) {
	f.Add(`[["https://p1.kusto.windows.net","` + strings.Repeat("a", 64) + `","2026-11-27T05:16:11.1234567Z"]]`)
	f.Add(`[["a\"b","d","2026-11-27T05:16:11Z"],["e","d","2026-11-27T05:16:11Z"]]`)
	f.Add(`[[`)
	f.Fuzz(func(t *testing.T, s string) {
		err := eachDigest(s, func(d DigestRow) error {
			if d.Timestamp.IsZero() && !strings.Contains(s, "0001-01-01") {
				t.Errorf("a triple without its time from %q", s)
			}
			return nil
		})
		if err == nil && !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "[") {
			t.Errorf("%q accepted", s)
		}
	})
}
