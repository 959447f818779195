package federation

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
)

// federating is a hub whose Metrics group holds the endpoints.
func federating(endpoints ...string) Hub {
	var ents []string
	for _, ep := range endpoints {
		ents = append(ents, fmt.Sprintf("cluster('%s').database('Metrics')", ep))
	}
	return Hub{Databases: map[string]*Database{"Metrics": {
		Tables:       map[string]bool{"cpu": true},
		Functions:    map[string]Function{"cpu": {Body: "{ macro-expand isfuzzy=true best_effort=true ['MetricsSpoke'] as X ( X.['cpu'] ) }", Folder: FunctionFolder}},
		EntityGroups: map[string][]string{"MetricsSpoke": ents},
	}}}
}

func endpoints(ms []Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Endpoint)
	}
	return out
}

func TestDown(t *testing.T) {
	now := time.Now()
	s := Safety{StallAfter: time.Minute}
	for _, tc := range []struct {
		ev   Evidence
		down bool
	}{
		{Evidence{Read: 0, Now: now}, true},
		{Evidence{Read: 2, Newest: now.Add(-2 * time.Minute), Now: now}, true},
		{Evidence{Read: 2, Newest: now.Add(-30 * time.Second), Now: now}, false},
	} {
		if got := s.Down(tc.ev); got != tc.down {
			t.Errorf("Down(%+v) = %v", tc.ev, got)
		}
	}
	if (Safety{}).Down(Evidence{Read: 1, Now: now}) {
		t.Error("StallAfter zero turns the age check off")
	}
}

func TestGuard(t *testing.T) {
	four := federating("https://p1", "https://p2", "https://p3", "https://p4")
	p := func(ep string) heartbeat.Partition { return part(ep, db("Metrics", []string{"cpu"})) }
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	heard := func(n int, ago time.Duration) Evidence { return Evidence{Read: n, Newest: now.Add(-ago), Now: now} }
	cases := map[string]struct {
		ev      Evidence
		kept    []heartbeat.Partition
		blocked Blocklist
		safety  Safety
		want    []string
		reason  string
	}{
		"everyone heartbeats: nothing held": {
			ev: heard(4, time.Minute), kept: []heartbeat.Partition{p("https://p1"), p("https://p2"), p("https://p3"), p("https://p4")}, safety: Safety{MaxLeaveFraction: 0.5},
		},
		"no heartbeat read: everyone stays": {
			ev: heard(0, time.Minute), safety: Safety{MaxLeaveFraction: 1},
			want: []string{"https://p1", "https://p2", "https://p3", "https://p4"}, reason: "no heartbeat was read",
		},
		"half may leave at once": {
			ev: heard(1, time.Minute), kept: []heartbeat.Partition{p("https://p1")}, safety: Safety{MaxLeaveFraction: 0.5},
			want: []string{"https://p4"}, reason: "3 of 4 federated partitions stopped heartbeating; at most 2 leave per cycle",
		},
		"heard from recently enough: the cap applies": {
			ev: heard(1, time.Minute), kept: []heartbeat.Partition{p("https://p1")}, safety: Safety{MaxLeaveFraction: 0.5, StallAfter: 5 * time.Minute},
			want: []string{"https://p4"}, reason: "at most 2 leave per cycle",
		},
		"the newest heartbeat is old: the path looks down, everyone stays": {
			ev: heard(1, 6*time.Minute), kept: []heartbeat.Partition{p("https://p1")}, safety: Safety{MaxLeaveFraction: 1, StallAfter: 5 * time.Minute},
			want: []string{"https://p2", "https://p3", "https://p4"}, reason: "the newest heartbeat is 6m0s old, more than 5m0s: the heartbeat path looks down",
		},
		"the path was down a moment ago: everyone stays until it settles": {
			ev: Evidence{Read: 1, Newest: now, Now: now, LastDown: now.Add(-time.Minute)}, kept: []heartbeat.Partition{p("https://p1")},
			safety: Safety{MaxLeaveFraction: 1, StallAfter: 5 * time.Minute, Settle: time.Hour},
			want:   []string{"https://p2", "https://p3", "https://p4"}, reason: "the heartbeat path was down at 2026-11-22T11:59:00Z; nothing leaves the hub for silence before 2026-11-22T12:59:00Z",
		},
		"settled since: the cap applies": {
			ev: Evidence{Read: 1, Newest: now, Now: now, LastDown: now.Add(-61 * time.Minute)}, kept: []heartbeat.Partition{p("https://p1")},
			safety: Safety{MaxLeaveFraction: 0.5, StallAfter: 5 * time.Minute, Settle: time.Hour},
			want:   []string{"https://p4"}, reason: "at most 2 leave per cycle",
		},
		"the cap off": {
			ev: heard(1, time.Minute), kept: []heartbeat.Partition{p("https://p1")}, safety: Safety{MaxLeaveFraction: 1},
		},
		"blocked partitions leave at once, uncounted": {
			ev: heard(4, time.Minute), kept: []heartbeat.Partition{p("https://p1")}, blocked: NewBlocklist([]string{"https://P2:443", "https://p3", "https://p4/"}), safety: Safety{MaxLeaveFraction: 0.25},
		},
		"blocking everyone with no heartbeat read still blocks": {
			ev: heard(0, time.Minute), blocked: NewBlocklist([]string{"https://p1", "https://p2", "https://p3", "https://p4"}), safety: Safety{MaxLeaveFraction: 0.5},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			held := Guard(tc.ev, tc.kept, tc.blocked, four, tc.safety)
			if got := endpoints(held); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("held %v, want %v", got, tc.want)
			}
			for _, m := range held {
				if !strings.Contains(m.Reason, tc.reason) || !reflect.DeepEqual(m.Databases, []string{"Metrics"}) {
					t.Errorf("held %+v, want reason %q in Metrics", m, tc.reason)
				}
			}
		})
	}
}

// TestHeldPartitionsKeepTheHub: what a held partition may back is not
// dropped, and it stays in its group.
func TestHeldPartitionsKeepTheHub(t *testing.T) {
	hub := federating("https://p1", "https://p2")
	held := Guard(Evidence{}, nil, nil, hub, Safety{MaxLeaveFraction: 1})
	plan := Input{Hub: hub, Held: held}.Plan()
	if plan.Count() != 0 {
		t.Errorf("a cycle that read no heartbeat planned %v", plan.Commands)
	}
	// Without the guard the same cycle would drop the federation.
	if bare := Compute(nil, hub); bare.Count() == 0 {
		t.Fatal("test setup: an unguarded empty cycle should drop")
	}
	// One partition still heartbeats: the held one stays beside it.
	plan = Input{Partitions: []heartbeat.Partition{part("https://p1", db("Metrics", []string{"mem"}))}, Hub: hub, Held: Guard(Evidence{Read: 1, Newest: time.Now(), Now: time.Now()}, []heartbeat.Partition{part("https://p1")}, nil, hub, Safety{MaxLeaveFraction: 0})}.Plan()
	for _, c := range plan.Commands["Metrics"] {
		if strings.HasPrefix(c, ".drop") || (strings.HasPrefix(c, ".alter entity_group") && !strings.Contains(c, "https://p2")) {
			t.Errorf("held partition lost something: %s", c)
		}
	}
}

func TestLimits(t *testing.T) {
	lim := Limits{Partitions: 2, DatabasesPerPartition: 1, TablesPerPartitionDatabase: 3, TablesPerHubDatabase: 4, Commands: 1000}
	hub := Hub{Databases: map[string]*Database{"Metrics": {}, "Logs": {}}}
	parts := []heartbeat.Partition{
		part("https://p3", db("Metrics", []string{"a"})),
		part("https://p1", db("Metrics", []string{"a", "b", "c", "d", "e"}), db("Logs", []string{"l"})),
		part("https://p2", db("Metrics", []string{"f", "g"}, "v")),
	}
	plan := Input{Partitions: parts, Hub: hub, Limits: lim}.Plan()
	problems := strings.Join(plan.Problems, "\n")
	for _, want := range []string{
		"3 partitions heartbeat, more than the 2 one cycle federates",
		"partition https://p1 reports 2 databases; the first 1",
		"partition https://p1 database Metrics reports 5 tables and views; the first 3",
		"database Metrics: partitions report 6 tables and views; the first 4",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	if _, ok := plan.Commands["Logs"]; ok {
		t.Error("a database beyond the per-partition limit was planned")
	}
	if plan.Tables != 4 || plan.Functions != 4 {
		t.Errorf("planned %d tables and %d functions, want the 4 within the limit", plan.Tables, plan.Functions)
	}

	// A command limit runs a prefix now and the rest later.
	lim.Commands = 3
	plan = Input{Partitions: parts, Hub: hub, Limits: lim}.Plan()
	if plan.Count() != 3 || !strings.Contains(strings.Join(plan.Problems, "\n"), "run in the next cycles") {
		t.Errorf("commands %d, problems %v", plan.Count(), plan.Problems)
	}
	if !strings.HasPrefix(plan.Commands["Metrics"][0], ".create table") {
		t.Errorf("the prefix must start with what the rest depends on: %v", plan.Commands["Metrics"])
	}
}

func TestOneMemberPerSpelling(t *testing.T) {
	plan := Compute([]heartbeat.Partition{part("https://p1", db("Metrics", []string{"cpu"}), db("metrics", []string{"mem"}))}, Hub{Databases: map[string]*Database{"Metrics": {}}})
	for _, c := range plan.Commands["Metrics"] {
		if strings.HasPrefix(c, ".create entity_group") && strings.Count(c, "cluster(") != 1 {
			t.Errorf("one partition listing two spellings of a database is one member: %s", c)
		}
	}
}
