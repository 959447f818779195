package federation

import (
	"maps"
	"slices"
	"unsafe"

	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
)

// planMemo is the last plan a Schemas made, with what it was made from,
// by identity: partitions' database lists and the hub's databases are the
// cache's own, shared from cycle to cycle and never changed, so the same
// list is the same content.
type planMemo struct {
	valid  bool
	parts  []memoPart
	held   []Member
	hub    map[string]*Database
	limits Limits
	dbs    []string
	plan   Plan
}

type memoPart struct {
	endpoint string
	dbs      *heartbeat.DatabaseSchema
	n        int
}

// Plan plans a cycle as in.Plan does, but returns the last plan without
// planning again when in is what that plan was made from: the same
// partitions (by endpoint and database lists), nothing held or the same
// held, the same hub databases as ReadHub returned them, the same limits
// and granted databases.
// A steady cycle, where nothing changed, then plans in time proportional
// to the partitions and allocates nothing. The plan returned may be an
// earlier cycle's: it is read-only.
func (s *Schemas) Plan(in Input) Plan {
	if s.memo.valid && s.memo.same(in) {
		return s.memo.plan
	}
	plan := in.Plan()
	m := planMemo{valid: true, held: slices.Clone(in.Held), limits: in.Limits, dbs: slices.Clone(in.Databases), plan: plan, hub: make(map[string]*Database, len(in.Hub.Databases))}
	m.parts = make([]memoPart, len(in.Partitions))
	for i, p := range in.Partitions {
		m.parts[i] = memoPart{endpoint: p.Endpoint, dbs: unsafe.SliceData(p.Databases), n: len(p.Databases)}
	}
	maps.Copy(m.hub, in.Hub.Databases)
	s.memo = m
	return plan
}

func (m *planMemo) same(in Input) bool {
	if in.Limits != m.limits || (in.Databases == nil) != (m.dbs == nil) || !slices.Equal(in.Databases, m.dbs) || len(in.Partitions) != len(m.parts) || len(in.Hub.Databases) != len(m.hub) || len(in.Held) != len(m.held) {
		return false
	}
	for i, p := range in.Partitions {
		if k := m.parts[i]; k.endpoint != p.Endpoint || k.dbs != unsafe.SliceData(p.Databases) || k.n != len(p.Databases) {
			return false
		}
	}
	for name, db := range in.Hub.Databases {
		if have, ok := m.hub[name]; !ok || have != db {
			return false
		}
	}
	for i, h := range in.Held {
		if k := m.held[i]; k.Endpoint != h.Endpoint || !slices.Equal(k.Databases, h.Databases) {
			return false
		}
	}
	return true
}
