package federation

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// Safety bounds what one cycle may remove from a hub because partitions
// stopped heartbeating. Blocking is different: a blocked partition leaves
// at once, since blocking is a decision, not an absence.
type Safety struct {
	// MaxLeaveFraction of the partitions the hub federates now may leave in
	// one cycle; the others stay until a later cycle. 1 turns the cap off.
	MaxLeaveFraction float64
	// StallAfter: when the newest heartbeat read is older than this, the
	// heartbeat path is taken to be down. Zero turns the check off.
	StallAfter time.Duration
	// Settle is how long after the heartbeat path was last down nothing
	// leaves: a partition dropped for silence has been silent this long,
	// and if the path was down meanwhile its silence may be the outage's.
	// Partitions come back one by one after an outage; the first back
	// must not make the others look gone.
	Settle time.Duration
}

// Down reports whether a cycle finds the heartbeat path down.
func (s Safety) Down(ev Evidence) bool {
	return ev.Read == 0 || (s.StallAfter > 0 && ev.Now.Sub(ev.Newest) > s.StallAfter)
}

// Evidence is what a cycle read about the heartbeat path itself.
type Evidence struct {
	// Read is how many valid heartbeats the cycle read, blocked ones
	// included.
	Read int
	// Newest is the time of the newest of them.
	Newest time.Time
	// Now is when the cycle read them.
	Now time.Time
	// LastDown is when an earlier cycle last found the heartbeat path
	// down; zero if none did.
	LastDown time.Time
}

// Guard decides which partitions, federated now but without a heartbeat in
// this cycle, must stay for now, and why:
//   - when the cycle read no heartbeat at all, or only old ones, every one
//     of them: an outage of the heartbeat path, a wrong table or a TTL
//     too short looks exactly like a fleet that vanished, and a hub must
//     never drop its federation on that evidence. Old matters because the
//     partitions of a fleet whose heartbeats all stopped at once expire
//     one by one, a heartbeat interval apart, and each of those cycles
//     still reads the rest: a partition may leave for silence only while
//     the others are heard from (the newest heartbeat within StallAfter);
//   - for Settle after the path was last down, every one of them too;
//   - otherwise those beyond MaxLeaveFraction of the current members, so
//     that a partial outage drains the hub over several cycles, in which
//     it can be noticed, instead of at once.
//
// kept are the partitions to federate; blocked are the block list.
func Guard(ev Evidence, kept []heartbeat.Partition, blocked Blocklist, hub Hub, s Safety) []Member {
	current := Members(hub)
	stay := map[string]bool{}
	for _, p := range kept {
		stay[p.Endpoint] = true
	}
	var leaving []string
	for _, ep := range slices.Sorted(maps.Keys(current)) {
		if _, isBlocked := blocked[ep]; stay[ep] || isBlocked {
			continue
		}
		leaving = append(leaving, ep)
	}
	if len(leaving) == 0 {
		return nil
	}
	var hold []string
	reason := ""
	switch age := ev.Now.Sub(ev.Newest); {
	case ev.Read == 0:
		hold, reason = leaving, "no heartbeat was read this cycle, so nothing leaves the hub"
	case s.StallAfter > 0 && age > s.StallAfter:
		hold = leaving
		reason = fmt.Sprintf("the newest heartbeat is %s old, more than %s: the heartbeat path looks down, so nothing leaves the hub", age.Round(time.Second), s.StallAfter)
	case !ev.LastDown.IsZero() && ev.Now.Sub(ev.LastDown) < s.Settle:
		hold = leaving
		reason = fmt.Sprintf("the heartbeat path was down at %s; nothing leaves the hub for silence before %s", ev.LastDown.UTC().Format(time.RFC3339), ev.LastDown.Add(s.Settle).UTC().Format(time.RFC3339))
	default:
		allowed := int(math.Floor(s.MaxLeaveFraction * float64(len(current))))
		if s.MaxLeaveFraction >= 1 {
			allowed = len(leaving)
		}
		if allowed < len(leaving) {
			hold = leaving[allowed:]
			reason = fmt.Sprintf("%d of %d federated partitions stopped heartbeating; at most %d leave per cycle", len(leaving), len(current), allowed)
		}
	}
	out := make([]Member, 0, len(hold))
	for _, ep := range hold {
		out = append(out, Member{Endpoint: ep, Databases: current[ep], Reason: reason})
	}
	return out
}

// Members are the partitions in the hub's fleetplane entity groups now,
// by canonical endpoint, with the databases they are members of.
func Members(hub Hub) map[string][]string {
	out := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(hub.Databases)) {
		for _, e := range hub.Databases[name].EntityGroups[GroupName(name)] {
			ent, err := kql.ParseEntity(e)
			if err != nil {
				continue
			}
			ep := kql.NormalizeEndpoint(ent.Endpoint)
			if !slices.ContainsFunc(out[ep], func(d string) bool { return strings.EqualFold(d, name) }) {
				out[ep] = append(out[ep], name)
			}
		}
	}
	return out
}
