package heartbeat

import (
	"slices"
	"testing"
)

func TestUnion(t *testing.T) {
	for _, tc := range []struct {
		u, names, want []string
	}{
		{nil, []string{"a"}, []string{"a"}},
		{[]string{"a", "c"}, []string{"a", "c"}, []string{"a", "c"}},
		{[]string{"a", "c"}, []string{"c"}, []string{"a", "c"}},
		{[]string{"b"}, []string{"a", "c"}, []string{"a", "b", "c"}},
		{[]string{"a", "c"}, []string{"b", "b", "d"}, []string{"a", "b", "c", "d"}},
		{[]string{"a", "b"}, []string{}, []string{"a", "b"}},
	} {
		names := slices.Clone(tc.names)
		if got := Union(tc.u, tc.names); !slices.Equal(got, tc.want) {
			t.Errorf("Union(%q, %q) = %q, want %q", tc.u, tc.names, got, tc.want)
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf("union changed its input %q to %q", names, tc.names)
		}
	}
	// Out of order, the union is longer than it need be but holds every
	// name, which is all the sets made from it need.
	got := Union([]string{"b"}, []string{"c", "a", "c"})
	for _, n := range []string{"a", "b", "c"} {
		if !slices.Contains(got, n) {
			t.Errorf("union of unsorted names %q lacks %q", got, n)
		}
	}
}
