package generate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// TestNoFalsePageOnDayOne runs the shipped alert rules with Prometheus'
// rule engine (tools/promcheck eval) over a provider's scrapes, every
// 15 s for 40 minutes: a hub that has heard no heartbeat yet and a
// heartbeat whose target was never reached report 0, which the critical
// staleness alerts once read as 56 years of silence and paged for after
// 5 minutes. Now they warn after 30 minutes, each under its own name, and
// a hub that heard one and then went silent still pages.
func TestNoFalsePageOnDayOne(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	lapsed := start.Add(-time.Hour).Unix()
	dir := t.TempDir()
	var files []string
	for at := start; !at.After(start.Add(40 * time.Minute)); at = at.Add(15 * time.Second) {
		scrape := fmt.Sprintf(`# TYPE fleetplane_federation_newest_heartbeat_timestamp_seconds gauge
fleetplane_federation_newest_heartbeat_timestamp_seconds{namespace="new-hub",name="hub"} 0
fleetplane_federation_newest_heartbeat_timestamp_seconds{namespace="lapsed-hub",name="hub"} %d
fleetplane_federation_newest_heartbeat_timestamp_seconds{namespace="live-hub",name="hub"} %d
# TYPE fleetplane_heartbeat_last_success_timestamp_seconds gauge
fleetplane_heartbeat_last_success_timestamp_seconds{namespace="never-reached",name="p"} 0
fleetplane_heartbeat_last_success_timestamp_seconds{namespace="live-hub",name="p"} %d
`, lapsed, at.Unix(), at.Unix())
		f := filepath.Join(dir, strconv.FormatInt(at.Unix(), 10)+".prom")
		if err := os.WriteFile(f, []byte(scrape), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	active := func(at time.Time) map[string]string {
		t.Helper()
		out, err := support.EvalAlerts(support.Root(), at, files)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	for _, step := range []struct {
		after time.Duration
		want  map[string]string
	}{
		{10 * time.Minute, map[string]string{
			"FleetplaneHubHeartbeatsStale/lapsed-hub":         "firing",
			"FleetplaneHubNoHeartbeatYet/new-hub":             "pending",
			"FleetplaneHeartbeatNeverDelivered/never-reached": "pending",
		}},
		{40 * time.Minute, map[string]string{
			"FleetplaneHubHeartbeatsStale/lapsed-hub":         "firing",
			"FleetplaneHubNoHeartbeatYet/new-hub":             "firing",
			"FleetplaneHeartbeatNeverDelivered/never-reached": "firing",
		}},
	} {
		if got := active(start.Add(step.after)); fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Errorf("after %s: %v, want %v", step.after, got, step.want)
		}
	}
}
