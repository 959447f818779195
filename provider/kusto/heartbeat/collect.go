package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/Azure/azure-kusto-go/azkustodata/query"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// Counts summarise a collected schema.
type Counts struct {
	Databases, Tables, Views int
}

// Mgmt runs management commands; *kusto.Client implements it.
type Mgmt interface {
	Mgmt(ctx context.Context, db, command string) ([]query.Row, error)
}

var _ Mgmt = (*kusto.Client)(nil)

// schemaDocument is the part of .show database schema as json a heartbeat
// needs.
type schemaDocument struct {
	Databases map[string]struct {
		Tables    map[string]struct{} `json:"Tables"`
		Functions map[string]struct {
			FunctionKind string `json:"FunctionKind"`
		} `json:"Functions"`
	} `json:"Databases"`
}

// Collect reads a partition's databases, tables and views: one .show
// databases, then one schema document per database, rather than one
// command per function as the operator this replaces did. Only the
// databases keep accepts are read (all when keep is nil): a partition
// reports what its namespace is granted, not every database the
// provider's identity can see there.
func Collect(ctx context.Context, c Mgmt, keep func(database string) bool) ([]DatabaseSchema, Counts, error) {
	rows, err := c.Mgmt(kusto.WithLimit(ctx, kusto.MaxListBytes), "", kql.ShowDatabases)
	if err != nil {
		return nil, Counts{}, fmt.Errorf("cannot list databases: %w", err)
	}
	var names []string
	for _, r := range rows {
		n, err := r.StringByName("DatabaseName")
		if err != nil {
			return nil, Counts{}, fmt.Errorf("cannot read .show databases: %w", err)
		}
		if kql.ValidateName(n) == nil && (keep == nil || keep(n)) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) > MaxDatabases {
		names = names[:MaxDatabases]
	}

	var out []DatabaseSchema
	var n Counts
	for _, db := range names {
		cmd, err := kql.ShowDatabaseSchemaJSON(db)
		if err != nil {
			continue
		}
		rows, err := c.Mgmt(ctx, db, cmd)
		if err != nil {
			return nil, Counts{}, fmt.Errorf("cannot read the schema of database %s: %w", db, err)
		}
		if len(rows) != 1 {
			return nil, Counts{}, fmt.Errorf("schema of database %s: %d rows, want 1", db, len(rows))
		}
		doc, err := rows[0].StringByName("DatabaseSchema")
		if err != nil {
			return nil, Counts{}, fmt.Errorf("schema of database %s: %w", db, err)
		}
		var parsed schemaDocument
		if err := json.Unmarshal([]byte(doc), &parsed); err != nil {
			return nil, Counts{}, fmt.Errorf("schema of database %s is not JSON: %w", db, err)
		}
		s := DatabaseSchema{Database: db, Tables: []string{}, Views: []string{}}
		for _, d := range parsed.Databases {
			for t := range d.Tables {
				s.Tables = append(s.Tables, t)
			}
			for f, def := range d.Functions {
				if def.FunctionKind == "ViewFunction" {
					s.Views = append(s.Views, f)
				}
			}
		}
		sort.Strings(s.Tables)
		sort.Strings(s.Views)
		n.Databases++
		n.Tables += len(s.Tables)
		n.Views += len(s.Views)
		out = append(out, s)
	}
	return out, n, nil
}
