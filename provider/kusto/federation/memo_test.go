package federation

import (
	"reflect"
	"slices"
	"testing"

	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
)

// Schemas.Plan gives what Input.Plan gives, and plans again exactly when
// an input differs.
func TestPlanMemo(t *testing.T) {
	parts := fleet(4, 2, 3)
	hub := emptyHub(2)
	s := NewSchemas()
	same := func(a, b Plan) bool {
		return reflect.ValueOf(a.Commands).Pointer() == reflect.ValueOf(b.Commands).Pointer()
	}
	check := func(name string, in Input, wantHit bool) {
		t.Helper()
		before := s.memo.plan
		got := s.Plan(in)
		if want := in.Plan(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: plan %v, want %v", name, got.Commands, want.Commands)
		}
		if hit := s.memo.valid && same(got, before); hit != wantHit {
			t.Errorf("%s: reused the last plan = %v, want %v", name, hit, wantHit)
		}
	}
	in := Input{Partitions: parts, Hub: hub}
	check("first", in, false)
	check("again", in, true)
	check("the same partitions in another slice", Input{Partitions: slices.Clone(parts), Hub: hub}, true)
	moved := Hub{Databases: map[string]*Database{"Db0": hub.Databases["Db0"], "Db1": hub.Databases["Db1"]}}
	check("the same hub databases in another map", Input{Partitions: parts, Hub: moved}, true)

	changed := slices.Clone(parts)
	changed[1].Databases = slices.Clone(changed[1].Databases)
	changed[1].Databases[0].Tables = append(slices.Clone(changed[1].Databases[0].Tables), "TableNew")
	check("a partition's new list", Input{Partitions: changed, Hub: hub}, false)
	check("back", in, false)
	check("one partition less", Input{Partitions: parts[1:], Hub: hub}, false)
	check("back again", in, false)
	renamed := slices.Clone(parts)
	renamed[0].Endpoint = "https://other.kusto.windows.net"
	check("another endpoint", Input{Partitions: renamed, Hub: hub}, false)
	converged := converged(parts, 2)
	check("a hub database read again", Input{Partitions: parts, Hub: converged}, false)
	check("steady", Input{Partitions: parts, Hub: converged}, true)
	held := []Member{{Endpoint: "https://held.kusto.windows.net", Databases: []string{"Db0"}, Reason: "r"}}
	check("a partition held", Input{Partitions: parts, Hub: converged, Held: held}, false)
	check("held, steady", Input{Partitions: parts, Hub: converged, Held: slices.Clone(held)}, true)
	check("held elsewhere", Input{Partitions: parts, Hub: converged, Held: []Member{{Endpoint: held[0].Endpoint, Databases: []string{"Db1"}}}}, false)
	check("other limits", Input{Partitions: parts, Hub: converged, Limits: Limits{Partitions: 2, DatabasesPerPartition: 1, TablesPerPartitionDatabase: 1, TablesPerHubDatabase: 1, Commands: 1}}, false)
	var none []heartbeat.Partition
	check("no partitions", Input{Partitions: none, Hub: converged}, false)
	check("no partitions, steady", Input{Partitions: none, Hub: converged}, true)
}
