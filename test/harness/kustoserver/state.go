// Package kustoserver is an in-memory Kusto cluster that speaks the REST
// protocol azkustodata uses: v1 management responses, v2 query frames and
// JSON errors. It holds databases, tables with rows, functions (views
// included), entity groups and ingestion mappings, accepts inline
// ingestion and database scripts, answers as Kusto's single-node
// emulator does (so adx-mon's ingestor ingests inline), logs every command it receives, and injects faults (throttling
// with Retry-After, server errors, refusals, slowness) on request.
//
// It is test and development code: fleetplane's tests and local demo run
// partitions and hubs on it. It understands the KQL fleetplane writes, not
// the whole language, and says so in its errors.
package kustoserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// database is one Kusto database.
type database struct {
	name         string
	tables       map[string]*table
	functions    map[string]*Function
	entityGroups map[string][]string
	// mappings are the ingestion mappings, by name.
	mappings map[string]Mapping
}

func newDatabase(name string) *database {
	return &database{name: name, tables: map[string]*table{}, functions: map[string]*Function{}, entityGroups: map[string][]string{}, mappings: map[string]Mapping{}}
}

// Column of a table.
type Column struct {
	Name string
	Type string
}

type table struct {
	name    string
	folder  string
	doc     string
	columns []Column
	rows    [][]any
}

// Mapping is a table's ingestion mapping, kept as given.
type Mapping struct {
	Name, Kind, Mapping, Table string
	LastUpdatedOn              time.Time
}

// Function is a stored function.
type Function struct {
	Name string
	// Parameters is the parameter list as Kusto lists it, "()" for none.
	Parameters string
	Body       string
	Folder     string
	DocString  string
	// View is true for functions created with view=true.
	View bool
}

func (t *table) column(name string) int {
	for i, c := range t.columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func (t *table) cslSchema() string {
	parts := make([]string, len(t.columns))
	for i, c := range t.columns {
		parts[i] = c.Name + ":" + c.Type
	}
	return strings.Join(parts, ",")
}

// clrTypes are the .NET type names Kusto reports next to CSL types.
var clrTypes = map[string]string{
	"bool": "System.SByte", "datetime": "System.DateTime", "dynamic": "System.Object", "guid": "System.Guid",
	"int": "System.Int32", "long": "System.Int64", "real": "System.Double", "string": "System.String",
	"timespan": "System.TimeSpan", "decimal": "System.Data.SqlTypes.SqlDecimal",
}

// convert turns a CSV field into a value of the column's type; a field
// that does not parse becomes null, as Kusto ingestion does.
func convert(typ, field string) any {
	if field == "" && typ != "string" {
		return nil
	}
	switch typ {
	case "datetime":
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, field); err == nil {
				return t.UTC()
			}
		}
		return nil
	case "dynamic":
		// Stored compact, as Kusto stores a dynamic value encoded rather
		// than as it was written: every dynamic this server holds or
		// computes is compact JSON, so that tostring() and pack_array()
		// copy it instead of scanning it again (an 8 MiB heartbeat row's
		// digest cost 330 ms a query that way, real Kusto's a few tens).
		var c bytes.Buffer
		if json.Compact(&c, []byte(field)) == nil {
			return json.RawMessage(c.Bytes())
		}
		b, _ := json.Marshal(field)
		return json.RawMessage(b)
	case "long", "int":
		var n int64
		if _, err := fmt.Sscan(field, &n); err != nil {
			return nil
		}
		return n
	case "real":
		var f float64
		if _, err := fmt.Sscan(field, &f); err != nil {
			return nil
		}
		return f
	case "bool":
		switch strings.ToLower(field) {
		case "true", "1":
			return true
		case "false", "0":
			return false
		}
		return nil
	default:
		return field
	}
}

// schemaJSON is what .show database schema as json returns for db.
func (db *database) schemaJSON() string {
	type col struct {
		Name    string
		Type    string
		CslType string
	}
	type tbl struct {
		Name           string
		OrderedColumns []col
		Folder         string
		DocString      string
	}
	type fn struct {
		Name            string
		InputParameters []any
		Body            string
		Folder          string
		DocString       string
		FunctionKind    string
		OutputColumns   []any
	}
	tables := map[string]tbl{}
	for _, t := range db.tables {
		cols := make([]col, len(t.columns))
		for i, c := range t.columns {
			cols[i] = col{Name: c.Name, Type: clrTypes[c.Type], CslType: c.Type}
		}
		tables[t.name] = tbl{Name: t.name, OrderedColumns: cols, Folder: t.folder, DocString: t.doc}
	}
	fns := map[string]fn{}
	for _, f := range db.functions {
		kind := "Unknown"
		if f.View {
			kind = "ViewFunction"
		}
		fns[f.Name] = fn{Name: f.Name, InputParameters: []any{}, Body: f.Body, Folder: f.Folder, DocString: f.DocString, FunctionKind: kind, OutputColumns: []any{}}
	}
	doc := map[string]any{
		"Plugins": []any{},
		"Databases": map[string]any{db.name: map[string]any{
			"Name": db.name, "Tables": tables, "ExternalTables": map[string]any{}, "MaterializedViews": map[string]any{},
			"Functions": fns, "EntityGroups": db.entityGroups, "DatabaseAccessMode": "ReadWrite",
			"MajorVersion": 1, "MinorVersion": 0,
		}},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}
