// Package federation plans a hub cluster's federation: from the latest
// heartbeats of its partitions and the hub's live state, the commands that
// bring the hub to the desired state, and nothing more. It is a pure
// function; the provider reads the live state and runs the plan.
//
// Desired state, per hub database D that some partition reports:
//   - an entity group "DSpoke" listing cluster('p').database('D') of every
//     partition p that reports D;
//   - a table with the OTLP schema for every table and view any partition
//     reports in D (created when missing, never altered or dropped: it may
//     hold data);
//   - a function per base table T, unioning T over the group with
//     macro-expand, in the folder "fleetplane".
//
// Functions in that folder that are no longer desired are dropped, and so
// is a group no partition reports any more. Functions outside the folder
// belong to someone else and are never touched; a name clash is reported.
package federation

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// FunctionFolder marks the functions federation owns.
const FunctionFolder = "fleetplane"

// OTLPColumns is the schema of hub tables.
var OTLPColumns = []kql.Column{
	{Name: "Timestamp", Type: "datetime"}, {Name: "ObservedTimestamp", Type: "datetime"},
	{Name: "TraceId", Type: "string"}, {Name: "SpanId", Type: "string"},
	{Name: "SeverityText", Type: "string"}, {Name: "SeverityNumber", Type: "int"},
	{Name: "Body", Type: "dynamic"}, {Name: "Resource", Type: "dynamic"}, {Name: "Attributes", Type: "dynamic"},
}

// otlpColumns is OTLPColumns rendered, once: a fresh plan creates a
// thousand tables with them.
var otlpColumns = sync.OnceValues(func() (kql.ColumnList, error) { return kql.NewColumnList(OTLPColumns) })

// GroupName is the entity group of hub database db.
func GroupName(db string) string { return db + "Spoke" }

// Hub is the live state of a hub cluster.
type Hub struct {
	// Databases by name.
	Databases map[string]*Database
}

// Database is the live state of one hub database.
type Database struct {
	Tables       map[string]bool
	Functions    map[string]Function
	EntityGroups map[string][]string // entity references as Kusto lists them
}

// Function is a live stored function.
type Function struct {
	Body   string
	Folder string
}

// Plan is what one federation cycle does.
type Plan struct {
	// Commands per hub database, in the order they must run.
	Commands map[string][]string
	// MissingDatabases are reported by partitions but absent on the hub.
	MissingDatabases []string
	// Problems are desired objects that could not be planned.
	Problems []string
	// Desired counts.
	Databases, Tables, Functions int
}

// Count is the number of commands in the plan.
func (p Plan) Count() int {
	n := 0
	for _, c := range p.Commands {
		n += len(c)
	}
	return n
}

// DatabaseNames are the databases with commands, sorted.
func (p Plan) DatabaseNames() []string { return slices.Sorted(maps.Keys(p.Commands)) }

// desired is what the partitions ask of one hub database.
type desired struct {
	// members are the partition endpoints in the database's group; their
	// entities name the database in one spelling, whatever spellings the
	// partitions used (Kusto database names are case-insensitive).
	members map[string]struct{}
	// order lists members as they were added, sorted as long as they
	// came in endpoint order, which saves a sort per database.
	order     []string
	unordered bool
	database  string
	tables    map[string]struct{} // tables and views: hub tables
	functions map[string]struct{} // base tables only
	// held is true when a partition that stopped heartbeating is kept in
	// the group: what only it backed is unknown this cycle, so nothing in
	// the database is dropped.
	held bool
	// base and views are the union of the partitions' lists while they
	// are merged, sorted; tables and functions are made from them.
	base, views []string
	// merged are the lists of names already added: partitions decoded by
	// Schemas share equal lists, so a fleet's tables are added once per
	// distinct list rather than once per partition.
	merged map[sharedList]struct{}
	// bits are the union of the lists held as sets, per list they are
	// drawn from and kind: a word of bits at a time.
	bits []setUnion
}

// setUnion is the union of sets drawn from one list.
type setUnion struct {
	heartbeat.Set
	views bool
}

// mergeSet adds a partition's tables, or its views, held as a set.
func (w *desired) mergeSet(set *heartbeat.Set, views bool) {
	if set == nil {
		return
	}
	for i := range w.bits {
		if u := &w.bits[i]; u.views == views && u.SameOf(set) {
			for k, b := range set.Bits {
				u.Bits[k] |= b
			}
			return
		}
	}
	w.bits = append(w.bits, setUnion{heartbeat.Set{Of: set.Of, Bits: slices.Clone(set.Bits)}, views})
}

// sharedList identifies a list of names by its backing array and length,
// and whether it listed views: one list may be tables of one partition and
// views of another.
type sharedList struct {
	first *string
	n     int
	views bool
}

// merge adds a partition's tables, or its views, unless this very list was
// added as such before.
func (w *desired) merge(names []string, views bool) {
	if len(names) == 0 {
		return
	}
	k := sharedList{&names[0], len(names), views}
	if _, done := w.merged[k]; done {
		return
	}
	w.merged[k] = struct{}{}
	if views {
		w.views = heartbeat.Union(w.views, names)
	} else {
		w.base = heartbeat.Union(w.base, names)
	}
}

// add merges a partition's lists of one database, the first limit of
// its tables and views if it lists more.
func (w *desired) add(endpoint string, d heartbeat.DatabaseSchema, limit int, cut func(string, ...any)) {
	tables, views := d.Tables, d.Views
	tableSet, viewSet := d.TableSet, d.ViewSet
	nt, nv := len(tables), len(views)
	if tableSet != nil {
		nt = tableSet.Len()
	}
	if viewSet != nil {
		nv = viewSet.Len()
	}
	if nt+nv > limit {
		cut("partition %s database %s reports %d tables and views; the first %d are federated", endpoint, d.Database, nt+nv, limit)
		nt = min(nt, limit)
		nv = min(nv, limit-nt)
		tables, views = tables[:min(len(tables), nt)], views[:min(len(views), nv)]
		if tableSet != nil {
			tableSet = tableSet.First(nt)
		}
		if viewSet != nil {
			viewSet = viewSet.First(nv)
		}
	}
	w.merge(tables, false)
	w.merge(views, true)
	w.mergeSet(tableSet, false)
	w.mergeSet(viewSet, true)
}

// sets makes the tables and functions the merged lists ask for.
func (w *desired) sets() {
	for _, u := range w.bits {
		if u.views {
			w.views = heartbeat.Union(w.views, u.Names())
		} else {
			w.base = heartbeat.Union(w.base, u.Names())
		}
	}
	w.bits = nil
	w.tables = make(map[string]struct{}, len(w.base)+len(w.views))
	w.functions = make(map[string]struct{}, len(w.base))
	for _, n := range w.base {
		w.tables[n] = struct{}{}
		w.functions[n] = struct{}{}
	}
	for _, n := range w.views {
		w.tables[n] = struct{}{}
	}
	w.base, w.views = nil, nil
}

// Limits bound what one cycle plans, whatever the heartbeats claim: a
// single row must not make the hub run thousands of commands.
type Limits struct {
	// Partitions federated per cycle, the first by endpoint.
	Partitions int
	// DatabasesPerPartition taken from one heartbeat, the first by name.
	DatabasesPerPartition int
	// TablesPerPartitionDatabase: tables and views taken from one
	// partition's database, the first by name.
	TablesPerPartitionDatabase int
	// TablesPerHubDatabase: hub tables and functions planned in one hub
	// database, the first by name.
	TablesPerHubDatabase int
	// Commands run per cycle; the rest run in the next cycles, in order.
	Commands int
}

// DefaultLimits are generous for real fleets (the largest measured has
// 1,000 partitions of 5 databases of 200 tables, planned in 2,005
// commands) and far below what Kusto itself allows.
var DefaultLimits = Limits{
	Partitions:                 5000,
	DatabasesPerPartition:      100,
	TablesPerPartitionDatabase: 1000,
	TablesPerHubDatabase:       5000,
	Commands:                   5000,
}

// Member is a partition kept in the hub's entity groups although this
// cycle read no heartbeat of it (see Guard).
type Member struct {
	Endpoint  string
	Databases []string
	// Reason it is kept, for status.
	Reason string
}

// Input is what a cycle plans from.
type Input struct {
	// Partitions are decoded heartbeats (names and endpoints validated)
	// with blocked ones removed.
	Partitions []heartbeat.Partition
	// Held are partitions that stopped heartbeating but may not leave yet.
	Held []Member
	// Hub is the hub's live state.
	Hub Hub
	// Limits; the zero value means DefaultLimits.
	Limits Limits
	// Databases, when not nil, are the hub databases the cycle may write,
	// by name or * pattern (the namespace's grant): others are neither
	// planned (their groups and functions are someone else's) nor
	// reported missing.
	Databases []string
}

// Compute plans a cycle with the default limits and nothing held.
func Compute(partitions []heartbeat.Partition, hub Hub) Plan {
	return Input{Partitions: partitions, Hub: hub}.Plan()
}

// Plan plans a cycle.
func (in Input) Plan() Plan {
	lim := in.Limits
	if lim == (Limits{}) {
		lim = DefaultLimits
	}
	plan := Plan{Commands: map[string][]string{}}
	cut := func(format string, a ...any) {
		plan.Problems = append(plan.Problems, fmt.Sprintf(format, a...))
	}
	partitions := in.Partitions
	if len(partitions) > lim.Partitions {
		partitions = slices.SortedFunc(slices.Values(partitions), byEndpoint)
		cut("%d partitions heartbeat, more than the %d one cycle federates; the first %d by endpoint are federated", len(partitions), lim.Partitions, lim.Partitions)
		partitions = partitions[:lim.Partitions]
	}

	// In endpoint order, every database's members come sorted.
	if !slices.IsSortedFunc(partitions, byEndpoint) {
		partitions = slices.SortedFunc(slices.Values(partitions), byEndpoint)
	}
	want := wanted(partitions, in.Held, lim, cut)

	live := map[string]string{}
	keys := map[string]bool{}
	for name := range in.Hub.Databases {
		live[strings.ToLower(name)] = name
		keys[strings.ToLower(name)] = true
	}
	for key := range want {
		keys[key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		hubName, ok := live[key]
		if in.Databases != nil {
			name := hubName
			if !ok {
				name = want[key].database
			}
			if !tenancy.MatchAny(in.Databases, name) {
				if want[key] != nil {
					cut("database %s, reported by partitions, is not granted on this hub (spec.kusto.endpoints[].databases): not federated", name)
				}
				continue
			}
		}
		if !ok {
			plan.MissingDatabases = append(plan.MissingDatabases, want[key].database)
			continue
		}
		if cmds := planDatabase(hubName, want[key], in.Hub.Databases[hubName], &plan); len(cmds) > 0 {
			plan.Commands[hubName] = cmds
		}
	}
	limitCommands(&plan, lim.Commands)
	return plan
}

func byEndpoint(a, b heartbeat.Partition) int { return strings.Compare(a.Endpoint, b.Endpoint) }

// wanted is what the partitions, and the members held, ask of each hub
// database, keyed by the lower-case name: Kusto database names are
// case-insensitive, so every spelling is one database, planned under the
// hub's spelling. What exceeds lim is cut, and cut says so.
func wanted(partitions []heartbeat.Partition, held []Member, lim Limits, cut func(string, ...any)) map[string]*desired {
	want := map[string]*desired{}
	spelling := map[string]string{}
	lower := map[string]string{} // a fleet spells its few databases alike
	entry := func(name string) *desired {
		key, ok := lower[name]
		if !ok {
			key = strings.ToLower(name)
			lower[name] = key
		}
		w := want[key]
		if w == nil {
			w = &desired{members: map[string]struct{}{}, merged: map[sharedList]struct{}{}}
			want[key] = w
		}
		if s, ok := spelling[key]; !ok || name < s {
			spelling[key] = name
		}
		return w
	}
	for _, p := range partitions {
		dbs := p.Databases
		if len(dbs) > lim.DatabasesPerPartition {
			cut("partition %s reports %d databases; the first %d by name are federated", p.Endpoint, len(dbs), lim.DatabasesPerPartition)
			dbs = dbs[:lim.DatabasesPerPartition]
		}
		for _, d := range dbs {
			w := entry(d.Database)
			// A partition listing Metrics and metrics is one member.
			w.member(p.Endpoint)
			w.add(p.Endpoint, d, lim.TablesPerPartitionDatabase, cut)
		}
	}
	for _, m := range held {
		for _, d := range m.Databases {
			w := entry(d)
			w.member(m.Endpoint)
			w.held = true
		}
	}
	for key, w := range want {
		w.database = spelling[key]
		w.sets()
		if len(w.tables) > lim.TablesPerHubDatabase {
			cut("database %s: partitions report %d tables and views; the first %d by name are federated", spelling[key], len(w.tables), lim.TablesPerHubDatabase)
			keep := slices.Sorted(maps.Keys(w.tables))[:lim.TablesPerHubDatabase]
			w.tables = map[string]struct{}{}
			for _, t := range keep {
				w.tables[t] = struct{}{}
			}
			for f := range w.functions {
				if _, ok := w.tables[f]; !ok {
					delete(w.functions, f)
				}
			}
		}
	}

	return want
}

// limitCommands keeps the first n commands, database by database in name
// order. Within a database, commands are ordered so that each depends only
// on those before it, so a prefix is always safe to run; the next cycle
// plans the rest again.
func limitCommands(p *Plan, n int) {
	total := p.Count()
	if total <= n {
		return
	}
	left := n
	for _, db := range p.DatabaseNames() {
		cmds := p.Commands[db]
		switch {
		case left == 0:
			delete(p.Commands, db)
		case len(cmds) > left:
			p.Commands[db] = cmds[:left]
			left = 0
		default:
			left -= len(cmds)
		}
	}
	p.Problems = append(p.Problems, fmt.Sprintf("%d commands planned, more than the %d one cycle runs; the rest run in the next cycles", total, n))
}

// planDatabase diffs one hub database. w is nil when no partition reports
// the database any more.
func planDatabase(db string, w *desired, live *Database, plan *Plan) []string {
	var cmds []string
	problem := func(format string, a ...any) {
		plan.Problems = append(plan.Problems, fmt.Sprintf("database %s: ", db)+fmt.Sprintf(format, a...))
	}
	add := func(cmd string, err error) {
		if err != nil {
			problem("%v", err)
			return
		}
		cmds = append(cmds, cmd)
	}
	group := GroupName(db)
	wanted := w != nil && len(w.members) > 0
	if wanted {
		plan.Databases++
		plan.Tables += len(w.tables)
	}

	// Tables first, then the group, then the functions that use both.
	if wanted {
		for _, t := range slices.Sorted(maps.Keys(w.tables)) {
			if !live.Tables[t] {
				add(createOTLPTable(t))
			}
		}
		ents := w.sortedEntities()
		current, exists := live.EntityGroups[group]
		switch {
		case !exists:
			add(kql.CreateEntityGroup(group, ents))
		case !sameEntities(current, ents):
			add(kql.AlterEntityGroup(group, ents))
		}
		for _, t := range slices.Sorted(maps.Keys(w.functions)) {
			body, err := kql.MacroExpandBody(group, t)
			if err != nil {
				problem("function %s: %v", t, err)
				continue
			}
			f, exists := live.Functions[t]
			if exists && f.Folder != FunctionFolder {
				problem("function %s exists outside folder %q and is left alone", t, FunctionFolder)
				continue
			}
			plan.Functions++
			if !exists || !sameText(f.Body, body) {
				add(kql.CreateOrAlterFunction(t, FunctionFolder, docstring(t, group), body))
			}
		}
	}

	// Then what is no longer desired, functions before the group; nothing
	// while a partition that stopped heartbeating is held in the group.
	if w != nil && w.held {
		return cmds
	}
	for _, name := range slices.Sorted(maps.Keys(live.Functions)) {
		if live.Functions[name].Folder != FunctionFolder {
			continue
		}
		if wanted {
			if _, keep := w.functions[name]; keep {
				continue
			}
		}
		add(kql.DropFunction(name))
	}
	if _, exists := live.EntityGroups[group]; exists && !wanted {
		add(kql.DropEntityGroup(group))
	}
	return cmds
}

// createOTLPTable is the command that creates a hub table.
func createOTLPTable(table string) (string, error) {
	cols, err := otlpColumns()
	if err != nil {
		return "", err
	}
	return kql.CreateTableOf(table, cols)
}

func docstring(table, group string) string {
	return "Union of " + table + " across the partitions in entity group " + group + ". Managed by fleetplane: edits are overwritten."
}

// member adds a partition to the database's group.
func (w *desired) member(endpoint string) {
	if _, ok := w.members[endpoint]; ok {
		return
	}
	w.members[endpoint] = struct{}{}
	if n := len(w.order); n > 0 && w.order[n-1] > endpoint {
		w.unordered = true
	}
	w.order = append(w.order, endpoint)
}

// sortedEntities are the group's members by endpoint.
func (w *desired) sortedEntities() []kql.Entity {
	if w.unordered {
		slices.Sort(w.order)
		w.unordered = false
	}
	out := make([]kql.Entity, 0, len(w.order))
	for _, ep := range w.order {
		out = append(out, kql.Entity{Endpoint: ep, Database: w.database})
	}
	return out
}

// sameEntities compares a live group with the desired entities as sets of
// (endpoint, database), whatever quoting and spelling Kusto lists them
// with. Desired endpoints are canonical, so a live one is normalized only
// when it is not found as listed.
func sameEntities(live []string, want []kql.Entity) bool {
	if len(live) != len(want) {
		return false
	}
	// Kusto lists a group as it was written, and fleetplane writes it
	// sorted: in the steady state the lists match in order, without a
	// set or normalizing a single endpoint.
	inOrder := true
	for i, s := range live {
		if e, err := kql.ParseEntity(s); err != nil || e != want[i] {
			inOrder = false
			break
		}
	}
	if inOrder {
		return true
	}
	set := make(map[kql.Entity]bool, len(want))
	for _, e := range want {
		set[e] = false
	}
	for _, s := range live {
		e, err := kql.ParseEntity(s)
		if err != nil {
			return false
		}
		seen, ok := set[e]
		if !ok {
			e.Endpoint = kql.NormalizeEndpoint(e.Endpoint)
			if seen, ok = set[e]; !ok {
				return false
			}
		}
		if seen {
			return false // listed twice, so another is missing
		}
		set[e] = true
	}
	return true
}

// inBraces is the text of a braced body between its braces, trimmed, and
// whether it was braced.
func inBraces(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return "", false
	}
	return strings.TrimSpace(s[1 : len(s)-1]), true
}

// sameText compares two pieces of KQL by their tokens, so that a body Kusto
// hands back with other spacing still counts as unchanged.
func sameText(a, b string) bool {
	if a == b {
		return true
	}
	// Kusto may keep a body with other spacing inside its braces; the
	// same text between them is the same tokens, found without the
	// tokenizer (a steady cycle compares every federated function).
	if ia, ba := inBraces(a); ba {
		if ib, bb := inBraces(b); bb && ia == ib {
			return true
		}
	}
	ta, err := kql.Tokenize(a)
	if err != nil {
		return false
	}
	tb, err := kql.Tokenize(b)
	if err != nil || len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] != tb[i] {
			return false
		}
	}
	return true
}
