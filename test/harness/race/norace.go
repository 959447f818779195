//go:build !race

// Package race stretches the bounds tests assert when the race detector
// is on (make test-unit): its runtime is several times slower and
// allocates more, as sync.Pool drops a share of what is put back and
// pooled buffers (fmt's, encoding/json's) are made again. Bounds on time
// and allocation that hold the code to its design are asserted as
// measured without it, stretched by TimeScale and AllocScale with it.
package race

// TimeScale and AllocScale stretch asserted bounds on time and on bytes
// allocated.
const (
	TimeScale  = 1
	AllocScale = 1
)
