package provider

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/support"
)

// TestNewTableLatency measures how long a new table on a partition takes
// to become a function on the hub when the partition heartbeats every 10s
// and the Federation's interval is ten minutes: the provider checks the
// hub's heartbeat digests at its poll (2s here) and runs a cycle early, so
// each new table arrives within a heartbeat interval plus a poll and a
// cycle; the wait allows half a minute more for a loaded machine, still
// far short of the scheduled cycle. The latencies are logged (go test -v)
// as a distribution.
func TestNewTableLatency(t *testing.T) {
	const heartbeatEvery, poll = 10 * time.Second, 2 * time.Second
	ns := namespace(t)
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	part := support.KustoServer(t, "Metrics")
	support.KustoExec(t, part, "Metrics", ".create table ['cpu'] (['v']:real)")
	hb := heartbeat(ns, "p1", part.URL, hub.URL)
	hb.Spec.ForProvider.Interval = every(heartbeatEvery)
	fed := federation(ns, hub.URL, "1h")
	fed.Spec.ForProvider.Interval = every(10 * time.Minute)
	create(t, heartbeatTable(ns, hub.URL), hb, fed)
	// The first cycle runs at once; a heartbeat that raced the hub's
	// table retries within its backoff.
	eventually(t, 60*time.Second, "function cpu on the hub", func() (bool, string) {
		_, ok := hub.Functions("Metrics")["cpu"]
		return ok, "not yet"
	})

	var took []time.Duration
	for i := range 3 {
		name := fmt.Sprintf("t%d", i)
		start := time.Now()
		support.KustoExec(t, part, "Metrics", fmt.Sprintf(".create table ['%s'] (['v']:real)", name))
		eventually(t, heartbeatEvery+poll+30*time.Second, "function "+name+" on the hub", func() (bool, string) {
			_, ok := hub.Functions("Metrics")[name]
			return ok, "not yet"
		})
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("new table to hub function, heartbeat every %s, poll %s, federation every 10m: min %s, median %s, max %s (%v)",
		heartbeatEvery, poll, took[0].Round(100*time.Millisecond), took[1].Round(100*time.Millisecond), took[2].Round(100*time.Millisecond), took)
}
