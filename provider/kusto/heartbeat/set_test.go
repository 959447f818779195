package heartbeat

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	of := make([]string, 130)
	for i := range of {
		of[i] = fmt.Sprintf("T%03d", i)
	}
	pick := []int{0, 1, 63, 64, 65, 127, 128, 129}
	s := &Set{Of: of, Bits: make([]uint64, words(len(of)))}
	var want []string
	for _, i := range pick {
		s.Bits[i/64] |= 1 << (i % 64)
		want = append(want, of[i])
	}
	if got := s.Names(); !slices.Equal(got, want) || s.Len() != len(want) {
		t.Fatalf("Names = %q (Len %d), want %q", got, s.Len(), want)
	}
	for n := range len(want) + 2 {
		first := s.First(n)
		if got := first.Names(); !slices.Equal(got, want[:min(n, len(want))]) {
			t.Errorf("First(%d) = %q", n, got)
		}
		if n >= len(want) && first != s {
			t.Errorf("First(%d) copied a set that has no more", n)
		}
	}
	if got := s.First(3).Names(); !slices.Equal(s.Names(), want) || len(got) != 3 {
		t.Errorf("First changed the set: %q", s.Names())
	}
	same := &Set{Of: of, Bits: slices.Clone(s.Bits)}
	copied := &Set{Of: slices.Clone(of), Bits: slices.Clone(s.Bits)}
	if !s.Equal(same) || s.Equal(copied) || s.SameOf(copied) {
		t.Errorf("Equal over one list = %v, over a copy of it = %v (SameOf %v)", s.Equal(same), s.Equal(copied), s.SameOf(copied))
	}
	d := DatabaseSchema{Tables: []string{"x"}, ViewSet: s}
	if !slices.Equal(d.TableNames(), []string{"x"}) || !slices.Equal(d.ViewNames(), want) {
		t.Errorf("TableNames %q, ViewNames %q", d.TableNames(), d.ViewNames())
	}
}

// TestDecoderKeepsSets decodes a fleet whose partitions each leave out
// their own tables: once the decoder has seen every name, lists are kept
// as sets over them, a list equal to the last as that set, and every partition is what
// a decoder without sets gives.
func TestDecoderKeepsSets(t *testing.T) {
	all := []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"}
	slices.Sort(all)
	row := func(leaveOut ...string) string {
		var names []string
		for _, n := range all {
			if !slices.Contains(leaveOut, n) {
				names = append(names, `"`+n+`"`)
			}
		}
		return `[{"database":"M","tables":[` + strings.Join(names, ",") + `],"views":["V"]}]`
	}
	rows := []string{row("Alpha"), row("Beta"), row("Gamma", "Zeta"), row("Alpha", "Zeta"), row("Gamma", "Zeta"), row("Delta"), row("Delta"), `[{"database":"M","tables":["Beta","New"]}]`, row("Beta")}
	kept := 0
	dec := Decoder{KeepSet: func(s Set) *Set {
		kept++
		return &Set{Of: s.Of, Bits: slices.Clone(s.Bits)}
	}}
	var sets []*Set
	for i, r := range rows {
		p, rej, err := dec.Decode(time.Unix(0, 0), "https://p1", r, false)
		want, wrej, werr := Decode(time.Unix(0, 0), "https://p1", r, false)
		if got, w := fmt.Sprint(plain(p), rej, err), fmt.Sprint(want, wrej, werr); got != w {
			t.Fatalf("row %d: %s, without sets %s", i, got, w)
		}
		sets = append(sets, p.Databases[0].TableSet)
	}
	// The first two rows show every name; the third onwards are sets,
	// but for the row with a name not seen before.
	for i, s := range sets {
		if want := i >= 2 && i != 7; (s != nil) != want {
			t.Errorf("row %d kept as a set: %v, want %v", i, s != nil, want)
		}
	}
	// A list equal to the last kept is that set; one equal to an older
	// set is KeepSet's to share.
	if sets[5] != sets[6] || !sets[2].Equal(sets[4]) {
		t.Error("equal lists were not kept as one set")
	}
	if sets[8].SameOf(sets[2]) {
		t.Error("the set after a new name is over the reference before it")
	}
	if kept != 5 {
		t.Errorf("KeepSet called %d times, want 5 (rows 2, 3, 4, 5 and 8)", kept)
	}
}

// TestDecoderKeepsSetsWorthKeeping: a list written with spaces is a set
// as a compact one is; a list of a few names of a long reference stays a
// list, so that no set keeps a reference far larger than itself alive.
func TestDecoderKeepsSetsWorthKeeping(t *testing.T) {
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf(`"T%03d"`, i))
	}
	dec := Decoder{KeepSet: func(s Set) *Set { return &Set{Of: s.Of, Bits: slices.Clone(s.Bits)} }}
	for i, tc := range []struct {
		row string
		set bool
	}{
		{`[{"database":"M","tables":[` + strings.Join(names, ",") + `]}]`, false},
		{`[{"database":"M","tables":[ ` + strings.Join(names[1:], " , ") + ` ]}]`, true},
		{`[{"database":"M","tables":[` + strings.Join(names[:59], ",") + `]}]`, true},
		{`[{"database":"M","tables":[` + strings.Join(names[:58], ",") + `]}]`, false},
		{`[{"database":"M","tables":["T007"]}]`, false},
	} {
		p, rej, err := dec.Decode(time.Unix(0, 0), "https://p1", tc.row, false)
		want, wrej, werr := Decode(time.Unix(0, 0), "https://p1", tc.row, false)
		if got, w := fmt.Sprint(plain(p), rej, err), fmt.Sprint(want, wrej, werr); got != w {
			t.Fatalf("row %d: %s, without sets %s", i, got, w)
		}
		if got := p.Databases[0].TableSet != nil; got != tc.set {
			t.Errorf("row %d kept as a set: %v, want %v", i, got, tc.set)
		}
	}
}
