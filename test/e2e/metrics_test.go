package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// fleetHealth is the operator's view of TestFederatedFleet: the fleet
// in the provider's and the function's metrics, then a lapse of every
// heartbeat (the hub refuses ingestion) that moves the staleness metric
// and fires the shipped alert when Prometheus' rule engine evaluates it.
func fleetHealth(t *testing.T, ns string, hub *kustoserver.Server, partitions int) {
	t.Helper()
	ctx := context.Background()
	mine := map[string]string{"namespace": ns}
	scrape := func() ([]byte, support.Samples, time.Time) {
		t.Helper()
		at := time.Now()
		url, err := env.ProviderMetrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		raw, s, err := support.Scrape(ctx, url, env.ScrapeToken)
		if err != nil {
			t.Fatalf("scrape the provider: %v", err)
		}
		return raw, s, at
	}
	// age is how stale the hub's view of ns's fleet was at a scrape.
	age := func(s support.Samples, at time.Time) time.Duration {
		v, ok := s.Value("fleetplane_federation_newest_heartbeat_timestamp_seconds", mine)
		if !ok || v == 0 {
			return time.Duration(1<<63 - 1)
		}
		return at.Sub(time.Unix(0, int64(v*1e9)))
	}

	var healthy []byte
	var healthyAt time.Time
	eventually(t, time.Minute, "the fleet in the provider's metrics", func() (bool, string) {
		raw, s, at := scrape()
		federated, _ := s.Value("fleetplane_federation_partitions", map[string]string{"namespace": ns, "state": "federated"})
		sent, _ := s.Value("fleetplane_heartbeat_sends_total", map[string]string{"namespace": ns, "result": "success"})
		cycles, _ := s.Value("fleetplane_federation_cycles_total", map[string]string{"namespace": ns, "result": "synced"})
		healthy, healthyAt = raw, at
		return int(federated) == partitions && sent > 0 && cycles > 0 && age(s, at) < 30*time.Second,
			fmt.Sprintf("federated %v, heartbeats sent %v, synced cycles %v, newest heartbeat %s old", federated, sent, cycles, age(s, at))
	})
	fnURL, err := env.FunctionMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fnURL != "" {
		_, fn, err := support.Scrape(ctx, fnURL, env.ScrapeToken)
		if err != nil {
			t.Fatalf("scrape the function: %v", err)
		}
		if n, _ := fn.Value("fleetplane_function_runs_total", map[string]string{"kind": "ADXCluster", "result": "normal"}); n == 0 {
			t.Error("the function's metrics count no ADXCluster composed")
		}
	}

	// The lapse: the hub refuses every heartbeat.
	if err := hub.InjectFault(kustoserver.Fault{Match: `^\.ingest`, Status: 403}); err != nil {
		t.Fatal(err)
	}
	defer hub.ClearFaults()
	var lapsed []byte
	var lapsedAt time.Time
	eventually(t, 2*time.Minute, "the staleness metric to grow through the lapse", func() (bool, string) {
		raw, s, at := scrape()
		failed, _ := s.Value("fleetplane_heartbeat_sends_total", map[string]string{"namespace": ns, "result": "failure"})
		lapsed, lapsedAt = raw, at
		return failed > 0 && age(s, at) > 20*time.Second, fmt.Sprintf("failed sends %v, newest heartbeat %s old", failed, age(s, at))
	})

	// Prometheus' rule engine on these scrapes. The alert wants half an
	// hour of silence, for five minutes: the lapse's last scrape stands for
	// every scrape of the next 36 minutes (a provider whose heartbeats
	// stay refused serves the same newest heartbeat at every cycle).
	dir := t.TempDir()
	write := func(at time.Time, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, strconv.FormatInt(at.Unix(), 10)+".prom"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(healthyAt, healthy)
	if got := alerts(t, healthyAt, dir); got["FleetplaneHubHeartbeatsStale/"+ns] != "" {
		t.Errorf("the stale-heartbeat alert is %s on a healthy fleet", got["FleetplaneHubHeartbeatsStale/"+ns])
	}
	end := lapsedAt.Add(36 * time.Minute)
	for at := lapsedAt; !at.After(end); at = at.Add(30 * time.Second) {
		write(at, lapsed)
	}
	if got := alerts(t, end, dir); got["FleetplaneHubHeartbeatsStale/"+ns] != "firing" {
		t.Errorf("after the lapse FleetplaneHubHeartbeatsStale is %q for %s; alerts: %v", got["FleetplaneHubHeartbeatsStale/"+ns], ns, got)
	}

	// Heartbeats resume, and so does the metric.
	hub.ClearFaults()
	eventually(t, time.Minute, "the newest heartbeat to be fresh again", func() (bool, string) {
		_, s, at := scrape()
		return age(s, at) < 30*time.Second, fmt.Sprintf("newest heartbeat %s old", age(s, at))
	})
}

// alerts runs the shipped alert rules over the scrapes in dir up to at,
// and returns the state of each active alert by name/namespace.
func alerts(t *testing.T, at time.Time, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.prom"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := support.EvalAlerts(env.Root, at, files)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
