//go:build race

package race

// TimeScale and AllocScale stretch asserted bounds on time and on bytes
// allocated.
const (
	TimeScale  = 10
	AllocScale = 4
)
