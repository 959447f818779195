package heartbeat

import (
	"iter"
	"math/bits"
	"slices"
	"unsafe"
)

// Set is a sorted list of names held as one bit per name of Of, a sorted
// list without repeats that every name of the set is drawn from: bit i of
// Bits[i/64] is Of[i]. A hub keeps a partition's list this way when the
// names are all ones its decoder saw in earlier rows (Decoder.KeepSet):
// 200 names are four words rather than 3,200 bytes of string headers,
// and none of it is a pointer the garbage collector has to follow. Of and
// Bits are never changed once a set is made; sets made over one Of are
// unioned a word at a time.
type Set struct {
	Of   []string
	Bits []uint64
}

// words is how many words of bits a set over n names has.
func words(n int) int { return (n + 63) / 64 }

// newBits appends to arena the cleared bits of a set over n names and
// returns them, capped so that nothing appended after can reach them.
func newBits(arena *[]uint64, n int) []uint64 {
	at, w := len(*arena), words(n)
	*arena = slices.Grow(*arena, w)[:at+w]
	b := (*arena)[at : at+w : at+w]
	clear(b)
	return b
}

// Len is the number of names in the set.
func (s *Set) Len() int {
	n := 0
	for _, w := range s.Bits {
		n += bits.OnesCount64(w)
	}
	return n
}

// All yields the set's names in order.
func (s *Set) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for i, w := range s.Bits {
			for w != 0 {
				if !yield(s.Of[i*64+bits.TrailingZeros64(w)]) {
					return
				}
				w &= w - 1
			}
		}
	}
}

// Names is the set as a list.
func (s *Set) Names() []string {
	return slices.AppendSeq(make([]string, 0, s.Len()), s.All())
}

// First is the set of the first n names, s itself when it has no more.
func (s *Set) First(n int) *Set {
	if s.Len() <= n {
		return s
	}
	out := &Set{Of: s.Of, Bits: make([]uint64, len(s.Bits))}
	for i, w := range s.Bits {
		if c := bits.OnesCount64(w); c <= n {
			out.Bits[i], n = w, n-c
			continue
		}
		for ; n > 0; n-- {
			low := w & -w
			out.Bits[i] |= low
			w &^= low
		}
		break
	}
	return out
}

// SameOf reports whether s and o are drawn from one list in memory, so
// that their bits can be compared or combined.
func (s *Set) SameOf(o *Set) bool {
	return len(s.Of) == len(o.Of) && (len(s.Of) == 0 || unsafe.SliceData(s.Of) == unsafe.SliceData(o.Of))
}

// Equal reports whether s and o are the same set over one list.
func (s *Set) Equal(o *Set) bool { return s.SameOf(o) && slices.Equal(s.Bits, o.Bits) }

// TableNames are the database's tables, however they are held.
func (d DatabaseSchema) TableNames() []string {
	if d.TableSet != nil {
		return d.TableSet.Names()
	}
	return d.Tables
}

// ViewNames are the database's views, however they are held.
func (d DatabaseSchema) ViewNames() []string {
	if d.ViewSet != nil {
		return d.ViewSet.Names()
	}
	return d.Views
}
