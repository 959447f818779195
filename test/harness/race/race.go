//go:build race

package race

// Enabled reports whether the race detector is on.
const Enabled = true

// TimeScale and AllocScale stretch asserted bounds on time and on bytes
// allocated.
const (
	TimeScale  = 10
	AllocScale = 4
)
