package federation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Azure/azure-kusto-go/azkustodata/query"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// Kusto is what federation needs of a cluster; *kusto.Client has it.
type Kusto interface {
	Mgmt(ctx context.Context, db, command string) ([]query.Row, error)
	Query(ctx context.Context, db, q string, fn func(frames.Row) error) error
}

var _ Kusto = (*kusto.Client)(nil)

// ReadHub reads the live state of every database of the hub: tables,
// functions and entity groups, three commands per database.
func ReadHub(ctx context.Context, c Kusto) (Hub, error) {
	names, err := hubDatabases(ctx, c)
	if err != nil {
		return Hub{}, err
	}
	hub := Hub{Databases: map[string]*Database{}}
	for _, name := range names {
		db, err := readDatabase(ctx, c, name)
		if err != nil {
			return Hub{}, err
		}
		hub.Databases[name] = db
	}
	return hub, nil
}

func hubDatabases(ctx context.Context, c Kusto) ([]string, error) {
	rows, err := c.Mgmt(kusto.WithLimit(ctx, kusto.MaxListBytes), "", kql.ShowDatabases)
	if err != nil {
		return nil, fmt.Errorf("cannot list hub databases: %w", err)
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		name, err := r.StringByName("DatabaseName")
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// HubStats says what reading the hub cost.
type HubStats struct {
	// Databases on the hub, and how many of them were read whole: the
	// others were known by their digests.
	Databases, Read int
	// Commands sent.
	Commands int
}

// hubDatabase is a database as the last cycle read it, with the digests
// the hub gave just before that read: of its tables and functions, and of
// its entity groups.
type hubDatabase struct {
	digest [2]string
	db     *Database
}

// ReadHub reads the live state of the hub as the package's ReadHub does,
// but reads a database whole only when the digests of its tables and
// functions, or of its entity groups, differ from those of the last read:
// a steady hub costs a command for its databases, one for the digests of
// every database's tables and functions, and a one-row command per
// database for its entity groups. The digests are asked for before the
// objects, so a change that lands in between is read now or, at worst,
// the next cycle; drift (someone drops a function) is found the cycle
// after it happens. The Databases returned may be those of an earlier
// cycle: they are read-only.
func (s *Schemas) ReadHub(ctx context.Context, c Kusto) (Hub, HubStats, error) {
	var stats HubStats
	names, err := hubDatabases(ctx, c)
	stats.Commands++
	if err != nil {
		return Hub{}, stats, err
	}
	stats.Databases = len(names)
	entities, err := entitiesDigests(ctx, c, len(names))
	stats.Commands++
	if err != nil {
		return Hub{}, stats, err
	}
	hub := Hub{Databases: map[string]*Database{}}
	next := make(map[string]hubDatabase, len(names))
	for _, name := range names {
		groups, err := entityGroupsDigest(ctx, c, name)
		stats.Commands++
		if err != nil {
			return Hub{}, stats, err
		}
		digest := [2]string{entities[name], groups}
		known, ok := s.hub[name]
		if !ok || known.digest != digest {
			db, err := readDatabase(ctx, c, name)
			stats.Commands += 3
			if err != nil {
				return Hub{}, stats, err
			}
			known = hubDatabase{digest: digest, db: db}
			stats.Read++
		}
		next[name] = known
		hub.Databases[name] = known.db
	}
	s.hub = next
	return hub, stats, nil
}

// entitiesDigests asks the hub for the digest of each database's tables
// and functions, by database name; a database with neither has none.
func entitiesDigests(ctx context.Context, c Kusto, databases int) (map[string]string, error) {
	// A row of a name and 64 characters per database: a listing's budget.
	rows, err := c.Mgmt(kusto.WithLimit(ctx, kusto.MaxListBytes), "", kql.ShowEntitiesDigests)
	if err != nil {
		return nil, fmt.Errorf("cannot read the digests of the hub's databases: %w", err)
	}
	out := make(map[string]string, databases)
	for _, r := range rows {
		name, err := r.StringByName("DatabaseName")
		if err != nil {
			return nil, fmt.Errorf("the digests of the hub's databases: %w", err)
		}
		d, err := r.StringByName("Digest")
		if err != nil {
			return nil, fmt.Errorf("the digest of %s: %w", name, err)
		}
		if !validDigest(d) {
			return nil, fmt.Errorf("the digest of %s is not a SHA-256 in hex", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("the digests of the hub's databases name %s twice", name)
		}
		out[name] = d
	}
	return out, nil
}

// entityGroupsDigest asks the hub for the digest of a database's entity
// groups.
func entityGroupsDigest(ctx context.Context, c Kusto, name string) (string, error) {
	// One row of 64 characters: read no more than a listing's budget.
	rows, err := c.Mgmt(kusto.WithLimit(ctx, kusto.MaxListBytes), name, kql.ShowEntityGroupsDigest)
	if err != nil {
		return "", fmt.Errorf("cannot read the digests of %s: %w", name, err)
	}
	if len(rows) != 1 {
		return "", fmt.Errorf("the digest of %s came as %d rows, not one", name, len(rows))
	}
	d, err := rows[0].StringByName("Digest")
	if err != nil {
		return "", fmt.Errorf("the digest of %s: %w", name, err)
	}
	if !validDigest(d) {
		return "", fmt.Errorf("the digest of %s is not a SHA-256 in hex", name)
	}
	return d, nil
}

func readDatabase(ctx context.Context, c Kusto, name string) (*Database, error) {
	db := &Database{Tables: map[string]bool{}, Functions: map[string]Function{}, EntityGroups: map[string][]string{}}
	return db, readInto(ctx, c, name, db)
}

func readInto(ctx context.Context, c Kusto, name string, db *Database) error {
	rows, err := c.Mgmt(ctx, name, kql.ShowTables)
	if err != nil {
		return fmt.Errorf("cannot list tables of %s: %w", name, err)
	}
	for _, r := range rows {
		t, err := r.StringByName("TableName")
		if err != nil {
			return err
		}
		db.Tables[t] = true
	}
	rows, err = c.Mgmt(ctx, name, kql.ShowFunctions)
	if err != nil {
		return fmt.Errorf("cannot list functions of %s: %w", name, err)
	}
	for _, r := range rows {
		var f struct {
			Name   string `kusto:"Name"`
			Body   string `kusto:"Body"`
			Folder string `kusto:"Folder"`
		}
		if err := r.ToStruct(&f); err != nil {
			return err
		}
		db.Functions[f.Name] = Function{Body: f.Body, Folder: f.Folder}
	}
	rows, err = c.Mgmt(ctx, name, kql.ShowEntityGroups)
	if err != nil {
		return fmt.Errorf("cannot list entity groups of %s: %w", name, err)
	}
	for _, r := range rows {
		var g struct {
			Name     string `kusto:"Name"`
			Entities string `kusto:"Entities"`
		}
		if err := r.ToStruct(&g); err != nil {
			return err
		}
		var ents []string
		if err := json.Unmarshal([]byte(g.Entities), &ents); err != nil {
			return fmt.Errorf("entity group %s of %s: %w", g.Name, name, err)
		}
		db.EntityGroups[g.Name] = ents
	}
	return nil
}

// Failure is a command of a script that Kusto did not complete.
type Failure struct {
	Database string
	Command  string
	Reason   string
}

func (f Failure) String() string {
	cmd := f.Command
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return fmt.Sprintf("%s: %s: %s", f.Database, cmd, f.Reason)
}

// Apply runs a plan as database scripts of at most kql.MaxScriptBytes,
// reads the result of every command, and returns those that failed. The
// error is for scripts that could not run at all; the other databases are
// still attempted.
func Apply(ctx context.Context, c Kusto, plan Plan) (failures []Failure, err error) {
	var errs []string
	for _, db := range plan.DatabaseNames() {
		scripts, serr := kql.Scripts(plan.Commands[db], kql.MaxScriptBytes)
		if serr != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", db, serr))
			continue
		}
		for _, script := range scripts {
			rows, rerr := c.Mgmt(ctx, db, script)
			if rerr != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", db, rerr))
				break
			}
			for _, r := range rows {
				var res struct {
					CommandText string `kusto:"CommandText"`
					Result      string `kusto:"Result"`
					Reason      string `kusto:"Reason"`
				}
				if err := r.ToStruct(&res); err != nil {
					return failures, err
				}
				if res.Result != "Completed" && !alreadyDone(res.CommandText, res.Reason) {
					failures = append(failures, Failure{Database: db, Command: res.CommandText, Reason: res.Result + ": " + res.Reason})
				}
			}
		}
	}
	if len(errs) > 0 {
		return failures, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return failures, nil
}

// alreadyDone reports whether a failed command failed only because what it
// drops is gone. Every other command a plan holds is idempotent as written
// (.create entity_group ifnotexists, .alter, .create-or-alter, .drop
// function ifexists, .create table of an existing schema), but Kusto has no
// ifexists for .drop entity_group, and a script resent after a 5xx whose
// first attempt did run must not report that drop as failed.
func alreadyDone(command, reason string) bool {
	return strings.HasPrefix(command, ".drop entity_group ") && strings.Contains(strings.ToLower(reason), "not found")
}

// boundEndpoint keeps a rejected, untrusted endpoint printable, short,
// and without the credentials it may carry.
func boundEndpoint(s string) string {
	s = fmt.Sprintf("%q", kql.Redact(s))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// Blocklist is a set of normalized partition endpoints.
type Blocklist map[string]struct{}

// NewBlocklist merges lists of endpoints, normalized; empty entries are
// dropped.
func NewBlocklist(lists ...[]string) Blocklist {
	b := Blocklist{}
	for _, l := range lists {
		for _, e := range l {
			if n := kql.NormalizeEndpoint(e); n != "" {
				b[n] = struct{}{}
			}
		}
	}
	return b
}

// Filter removes blocked partitions and counts them.
func (b Blocklist) Filter(ps []heartbeat.Partition) ([]heartbeat.Partition, int) {
	kept := ps[:0:0]
	matched := 0
	for _, p := range ps {
		if _, blocked := b[kql.NormalizeEndpoint(p.Endpoint)]; blocked {
			matched++
			continue
		}
		kept = append(kept, p)
	}
	return kept, matched
}

// BlockedFromFunction calls the hub's block-list function and reads its
// ClusterEndpoint (or Endpoint) column. A function that does not exist is
// not an error: it reports found=false.
func BlockedFromFunction(ctx context.Context, c Kusto, db, name string) (endpoints []string, found bool, err error) {
	q, err := kql.CallFunction(name)
	if err != nil {
		return nil, false, err
	}
	err = c.Query(ctx, db, q, func(r frames.Row) error {
		for _, col := range []string{"ClusterEndpoint", "Endpoint"} {
			if r.Index(col) < 0 {
				continue
			}
			v, err := r.String(col)
			if err != nil {
				return fmt.Errorf("block-list function %s: %w", name, err)
			}
			if v != "" {
				endpoints = append(endpoints, v)
			}
			return nil
		}
		return fmt.Errorf("block-list function %s returns neither a ClusterEndpoint nor an Endpoint column", name)
	})
	if kusto.ClassOf(err) == kusto.NotFound {
		return nil, false, nil
	}
	return endpoints, err == nil, err
}
