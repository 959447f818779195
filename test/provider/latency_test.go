package provider

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// TestNewTableLatency measures how long a new table on a partition takes
// to become a function on the hub when the partition heartbeats every 10s
// and the Federation's interval is ten minutes. Both sides look for
// changes every 2s in between: the partition compares its schema with the
// one it last sent and sends a heartbeat at once when it differs, and the
// hub compares its partitions' digests and runs a cycle early. A new table
// therefore arrives within about two checks and a cycle, well inside the
// bound the issue set (one heartbeat interval plus 5s), which is asserted;
// the latencies are logged (go test -v) as a distribution.
func TestNewTableLatency(t *testing.T) {
	const heartbeatEvery, check, bound = 10 * time.Second, 2 * time.Second, 15 * time.Second
	ns := namespace(t)
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	part := support.KustoServer(t, "Metrics")
	support.KustoExec(t, part, "Metrics", ".create table ['cpu'] (['v']:real)")
	hb := heartbeat(ns, "p1", part.URL, hub.URL)
	hb.Spec.ForProvider.Interval = every(heartbeatEvery)
	hb.Spec.ForProvider.SchemaCheckInterval = every(check)
	fed := federation(ns, hub.URL, "1h")
	fed.Spec.ForProvider.Interval = every(10 * time.Minute)
	fed.Spec.ForProvider.ChangeCheckInterval = every(check)
	create(t, heartbeatTable(ns, hub.URL), hb, fed)
	// The first cycle runs at once; a heartbeat that raced the hub's
	// table retries within its backoff.
	eventually(t, 60*time.Second, "function cpu on the hub", func() (bool, string) {
		_, ok := hub.Functions("Metrics")["cpu"]
		return ok, "not yet"
	})

	var took []time.Duration
	for i := range 5 {
		name := fmt.Sprintf("t%d", i)
		start := time.Now()
		support.KustoExec(t, part, "Metrics", fmt.Sprintf(".create table ['%s'] (['v']:real)", name))
		eventually(t, bound+30*time.Second, "function "+name+" on the hub", func() (bool, string) {
			_, ok := hub.Functions("Metrics")[name]
			return ok, "not yet"
		})
		took = append(took, time.Since(start).Round(100*time.Millisecond))
	}
	slices.Sort(took)
	t.Logf("new table to hub function, heartbeat every %s, checks every %s, federation every 10m: min %s, median %s, max %s (%v)",
		heartbeatEvery, check, took[0], took[len(took)/2], took[len(took)-1], took)
	if worst := took[len(took)-1]; worst > bound {
		t.Errorf("a new table took %s to reach the hub, more than a heartbeat interval plus 5s (%s)", worst, bound)
	}
}
