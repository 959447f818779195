package federation

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/fleetplane/fleetplane/internal/heartbeat"
	"github.com/fleetplane/fleetplane/internal/kql"
)

// Safety bounds what one cycle may remove from a hub because partitions
// stopped heartbeating. Blocking is different: a blocked partition leaves
// at once, since blocking is a decision, not an absence.
type Safety struct {
	// MaxLeaveFraction of the partitions the hub federates now may leave in
	// one cycle; the others stay until a later cycle. 1 turns the cap off.
	MaxLeaveFraction float64
}

// Guard decides which partitions, federated now but without a heartbeat in
// this cycle, must stay for now, and why:
//   - when the cycle read no heartbeat at all, every one of them: an
//     outage of the heartbeat path, a wrong table or a TTL too short looks
//     exactly like a fleet that vanished, and a hub must never drop its
//     whole federation on that evidence;
//   - otherwise those beyond MaxLeaveFraction of the current members, so
//     that a partial outage drains the hub over several cycles, in which
//     it can be noticed, instead of at once.
//
// read is how many valid heartbeats the cycle read, blocked ones included;
// kept are the partitions to federate; blocked are the block list.
func Guard(read int, kept []heartbeat.Partition, blocked Blocklist, hub Hub, s Safety) []Member {
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
	if read == 0 {
		hold, reason = leaving, "no heartbeat was read this cycle, so nothing leaves the hub"
	} else {
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
