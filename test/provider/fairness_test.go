package provider

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	fedcontroller "github.com/fleetplane/fleetplane/provider/controller/federation"
	hb "github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// TestFairFederation: a noisy namespace federating a slow hub of large
// rows at interval 1s (its quota allows it) is held back once it has spent
// its share of cycle time (the provider's default, 6 s a minute), and says
// so, while a quiet namespace's Federation beside it keeps cycling at its
// interval: its longest gap between cycles is measured and bounded.
func TestFairFederation(t *testing.T) {
	noisyNS, quietNS := support.NamespaceNamed(t, kube, "noisy"), support.NamespaceNamed(t, kube, "quiet")

	// Six partitions of 2,000 long table names each (about 2.5 MB),
	// blocked so that the hub gets no functions to write, on a hub that
	// takes 2 s to answer each heartbeat read: every cycle holds a
	// worker for over 2 s, as the 6 × 7 MiB rows did for 1.7 s.
	// (A steady hub's rows are read as digests, and large rows cost
	// little once decoded; slowness is what a cycle cannot avoid.)
	big := support.KustoServer(t, "FleetDiscovery", "Metrics")
	support.KustoExec(t, big, "FleetDiscovery", support.HeartbeatTable)
	tables := make([]string, 2000)
	for i := range tables {
		tables[i] = fmt.Sprintf("t%05d_%s", i, strings.Repeat("x", 200))
	}
	var blocked []string
	for p := range 6 {
		endpoint := fmt.Sprintf("https://noisy%d.kusto.windows.net", p)
		blocked = append(blocked, endpoint)
		support.IngestHeartbeat(t, big, "FleetDiscovery", hb.Row{Timestamp: time.Now().UTC(), Endpoint: endpoint,
			Schema: []hb.DatabaseSchema{{Database: "Metrics", Tables: tables}}})
	}
	if err := big.InjectFault(kustoserver.Fault{Match: "Heartbeats", Delay: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	small := support.KustoServer(t, "FleetDiscovery", "Metrics")
	support.KustoExec(t, small, "FleetDiscovery", support.HeartbeatTable)
	support.IngestHeartbeat(t, small, "FleetDiscovery", hb.Row{Timestamp: time.Now().UTC(), Endpoint: "https://quiet.kusto.windows.net",
		Schema: []hb.DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu"}}}})

	noisy := federation(noisyNS, big.URL, "1h")
	noisy.Spec.ForProvider.BlockedClusters = &kustov1alpha1.BlockedClusters{Static: blocked}
	quiet := federation(quietNS, small.URL, "1h")
	quiet.Spec.ForProvider.Interval = every(2 * time.Second)
	create(t, noisy, quiet)

	eventually(t, 3*time.Minute, "the noisy namespace held back", func() (bool, string) {
		get(t, noisy)
		c := noisy.GetCondition(fedcontroller.TypeCycleScheduled)
		return c.Status == corev1.ConditionFalse && c.Reason == fedcontroller.ReasonOverShare, fmt.Sprintf("%s %s: %s (synced: %s)", c.Status, c.Reason, c.Message, noisy.GetCondition(xpv2.TypeSynced).Message)
	})
	c := noisy.GetCondition(fedcontroller.TypeCycleScheduled)
	t.Logf("noisy: %s", c.Message)
	if !strings.Contains(c.Message, "namespace "+noisyNS+"'s federation cycles took") {
		t.Errorf("the held-back message does not name the namespace: %q", c.Message)
	}

	// The quiet Federation meanwhile, for half a minute.
	var cycles []time.Time
	noisyCycles := map[time.Time]bool{}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		get(t, quiet)
		if at := quiet.Status.AtProvider.LastCycleTime; at != nil && (len(cycles) == 0 || !at.Time.Equal(cycles[len(cycles)-1])) {
			cycles = append(cycles, at.Time)
		}
		get(t, noisy)
		if at := noisy.Status.AtProvider.LastCycleTime; at != nil {
			noisyCycles[at.Time] = true
		}
	}
	var gaps []time.Duration
	for i := 1; i < len(cycles); i++ {
		gaps = append(gaps, cycles[i].Sub(cycles[i-1]))
	}
	if len(gaps) == 0 {
		t.Fatal("the quiet Federation ran no cycle in 30 s")
	}
	slices.Sort(gaps)
	longest := gaps[len(gaps)-1]
	t.Logf("quiet (interval 2s): %d cycles in 30 s, gaps median %s, longest %s; noisy (interval 1s): %d cycles", len(cycles), gaps[len(gaps)/2], longest, len(noisyCycles))
	// The bound docs/reliability.md states: the interval plus the
	// provider's poll (2 s here) and a second of slack.
	if bound := 2*time.Second + 2*time.Second + time.Second; longest > bound {
		t.Errorf("the quiet Federation waited %s between cycles, more than %s", longest, bound)
	}
	if len(noisyCycles) > 20 {
		t.Errorf("the noisy Federation ran %d cycles in 30 s while held back", len(noisyCycles))
	}
}
