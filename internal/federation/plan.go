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
	"sort"
	"strings"

	"github.com/fleetplane/fleetplane/internal/heartbeat"
	"github.com/fleetplane/fleetplane/internal/kql"
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
	entities  map[kql.Entity]struct{}
	tables    map[string]struct{} // tables and views: hub tables
	functions map[string]struct{} // base tables only
}

// Compute plans a cycle. Partitions must be decoded heartbeats (names and
// endpoints validated) with blocked ones already removed.
func Compute(partitions []heartbeat.Partition, hub Hub) Plan {
	// Kusto database names are case-insensitive: key everything by the
	// lower-case name and plan under the hub's spelling.
	want := map[string]*desired{}
	spelling := map[string]string{}
	for _, p := range partitions {
		for _, d := range p.Databases {
			key := strings.ToLower(d.Database)
			w := want[key]
			if w == nil {
				w = &desired{entities: map[kql.Entity]struct{}{}, tables: map[string]struct{}{}, functions: map[string]struct{}{}}
				want[key] = w
			}
			if s, ok := spelling[key]; !ok || d.Database < s {
				spelling[key] = d.Database
			}
			w.entities[kql.Entity{Endpoint: p.Endpoint, Database: d.Database}] = struct{}{}
			for _, t := range d.Tables {
				w.tables[t] = struct{}{}
				w.functions[t] = struct{}{}
			}
			for _, v := range d.Views {
				w.tables[v] = struct{}{}
			}
		}
	}

	plan := Plan{Commands: map[string][]string{}}
	live := map[string]string{}
	keys := map[string]bool{}
	for name := range hub.Databases {
		live[strings.ToLower(name)] = name
		keys[strings.ToLower(name)] = true
	}
	for key := range want {
		keys[key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		hubName, ok := live[key]
		if !ok {
			plan.MissingDatabases = append(plan.MissingDatabases, spelling[key])
			continue
		}
		if cmds := planDatabase(hubName, want[key], hub.Databases[hubName], &plan); len(cmds) > 0 {
			plan.Commands[hubName] = cmds
		}
	}
	return plan
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
	wanted := w != nil && len(w.entities) > 0
	if wanted {
		plan.Databases++
		plan.Tables += len(w.tables)
	}

	// Tables first, then the group, then the functions that use both.
	if wanted {
		for _, t := range slices.Sorted(maps.Keys(w.tables)) {
			if !live.Tables[t] {
				add(kql.CreateTable(t, OTLPColumns))
			}
		}
		ents := sortedEntities(w.entities)
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

	// Then what is no longer desired, functions before the group.
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

func docstring(table, group string) string {
	return "Union of " + table + " across the partitions in entity group " + group + ". Managed by fleetplane: edits are overwritten."
}

func sortedEntities(set map[kql.Entity]struct{}) []kql.Entity {
	out := make([]kql.Entity, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Endpoint != out[j].Endpoint {
			return out[i].Endpoint < out[j].Endpoint
		}
		return out[i].Database < out[j].Database
	})
	return out
}

// sameEntities compares a live group with the desired entities as sets of
// (endpoint, database), whatever quoting Kusto lists them with.
func sameEntities(live []string, want []kql.Entity) bool {
	if len(live) != len(want) {
		return false
	}
	set := make(map[kql.Entity]struct{}, len(live))
	for _, s := range live {
		e, err := kql.ParseEntity(s)
		if err != nil {
			return false
		}
		e.Endpoint = kql.NormalizeEndpoint(e.Endpoint)
		set[e] = struct{}{}
	}
	for _, e := range want {
		if _, ok := set[e]; !ok {
			return false
		}
	}
	return len(set) == len(want)
}

// sameText compares two pieces of KQL by their tokens, so that a body Kusto
// hands back with other spacing still counts as unchanged.
func sameText(a, b string) bool {
	if a == b {
		return true
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
