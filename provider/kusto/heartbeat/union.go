package heartbeat

import "unsafe"

// Union is the sorted union of u, sorted and without repeats, and names.
// Partitions list mostly the same names, sorted and without repeats (as
// Decode leaves them), so the common case is one walk through
// both that finds nothing new and allocates nothing; and names a Decoder
// shares are one string each, so most names are matched by their address
// without comparing a byte. Names out of order are still added, only at
// the cost of a longer union: the sets made from it are right either way.
func Union(u, names []string) []string {
	j, fresh := 0, 0
	for _, n := range names {
		for j < len(u) && !sameString(u[j], n) && u[j] < n {
			j++
		}
		switch {
		case j == len(u) || (!sameString(u[j], n) && u[j] != n):
			fresh++
		default:
			j++ // the next name starts past this one
		}
	}
	if fresh == 0 {
		return u
	}
	out := make([]string, 0, len(u)+fresh)
	i, j := 0, 0
	for i < len(names) || j < len(u) {
		switch {
		case i < len(names) && i > 0 && names[i] == names[i-1]:
			i++
		case j == len(u) || (i < len(names) && names[i] < u[j]):
			out = append(out, names[i])
			i++
		case i == len(names) || u[j] < names[i]:
			out = append(out, u[j])
			j++
		default: // equal
			out = append(out, u[j])
			i++
			j++
		}
	}
	return out
}

// sameString reports whether a and b are one string in memory: equal
// without a byte compared. False says nothing.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
