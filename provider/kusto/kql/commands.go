package kql

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Read-only management commands. They take no input, so they are constants.
const (
	ShowDatabases    = ".show databases"
	ShowTables       = ".show tables"
	ShowFunctions    = ".show functions"
	ShowEntityGroups = ".show entity_groups"

	// ShowEntityGroupsDigest is the digest of what ShowEntityGroups
	// lists of a database, computed by the hub: one row with a Digest
	// column, which changes whenever a group comes or goes or its
	// entities change. Sorted before hashing, so the order Kusto lists
	// them in does not count; each group is its JSON array, so no two
	// differ only in where one field ends.
	ShowEntityGroupsDigest = ShowEntityGroups + " | summarize Digest = hash_sha256(tostring(array_sort_asc(make_list(tostring(pack_array(Name, Entities))))))"

	// ShowEntitiesDigests is, in one command for every database of a
	// cluster, what ShowTablesDigest and ShowFunctionsDigest say of one:
	// a row per database that has tables or functions (DatabaseName,
	// Digest) over each one's type, name, folder and content (a
	// function's body). .show databases entities also lists entity
	// groups, but what it says of their entities is not documented, so
	// they keep ShowEntityGroupsDigest.
	ShowEntitiesDigests = `.show databases entities | where EntityType in ("Table", "Function") | summarize Digest = hash_sha256(tostring(array_sort_asc(make_list(tostring(pack_array(EntityType, EntityName, Folder, Content)))))) by DatabaseName`
)

// ColumnTypes are the Kusto scalar types a column may have.
var ColumnTypes = map[string]bool{
	"bool": true, "datetime": true, "dynamic": true, "guid": true, "int": true,
	"long": true, "real": true, "string": true, "timespan": true, "decimal": true,
}

// Column is a table column.
type Column struct {
	Name string
	Type string
}

// ShowDatabaseSchemaJSON lists a database's tables and functions (with
// their kind, which tells views apart) as one JSON document.
func ShowDatabaseSchemaJSON(db string) (string, error) {
	id, err := Ident(db)
	if err != nil {
		return "", fmt.Errorf("database: %w", err)
	}
	return ".show database " + id + " schema as json", nil
}

// ShowTableSchema returns a table's schema as name:type pairs.
func ShowTableSchema(table string) (string, error) {
	id, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	return ".show table " + id + " cslschema", nil
}

func columns(cols []Column) (string, error) {
	if len(cols) == 0 {
		return "", errors.New("a table needs at least one column")
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		id, err := Ident(c.Name)
		if err != nil {
			return "", fmt.Errorf("column %d: %w", i, err)
		}
		if !ColumnTypes[c.Type] {
			return "", fmt.Errorf("column %s: unknown type %q", id, c.Type)
		}
		parts[i] = id + ":" + c.Type
	}
	return strings.Join(parts, ", "), nil
}

// CreateMergeTable creates a table or adds the columns it lacks; existing
// columns and data are kept.
func CreateMergeTable(table string, cols []Column) (string, error) {
	return tableCommand(".create-merge table ", table, cols)
}

// CreateTable creates a table. For a table that exists Kusto succeeds
// and changes nothing, whatever the schema, so it never alters data.
func CreateTable(table string, cols []Column) (string, error) {
	return tableCommand(".create table ", table, cols)
}

// CreateTableDocumented is CreateTable with the table's docstring. A
// table that existed keeps its own docstring, so reading the docstring
// back tells whether this command created the table.
func CreateTableDocumented(table string, cols []Column, docstring string) (string, error) {
	cmd, err := tableCommand(".create table ", table, cols)
	if err != nil {
		return "", err
	}
	doc, err := Literal(docstring)
	if err != nil {
		return "", fmt.Errorf("docstring: %w", err)
	}
	return cmd + " with (docstring = " + doc + ")", nil
}

// ColumnList is a table schema rendered once, for the many tables a
// federation plan creates with it.
type ColumnList struct{ text string }

// NewColumnList checks and renders cols.
func NewColumnList(cols []Column) (ColumnList, error) {
	c, err := columns(cols)
	return ColumnList{c}, err
}

// CreateTableOf is CreateTable with the schema rendered already.
func CreateTableOf(table string, cols ColumnList) (string, error) {
	if cols.text == "" {
		return "", errors.New("a table needs at least one column")
	}
	id, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	return ".create table " + id + " (" + cols.text + ")", nil
}

func tableCommand(verb, table string, cols []Column) (string, error) {
	id, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	c, err := columns(cols)
	if err != nil {
		return "", err
	}
	return verb + id + " (" + c + ")", nil
}

// DropTable drops a table and its data if it exists.
func DropTable(table string) (string, error) {
	id, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	return ".drop table " + id + " ifexists", nil
}

// IngestInline ingests one CSV record into a table. The record must be a
// single line: a line break would start another record.
func IngestInline(table, record string) (string, error) {
	id, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	if strings.ContainsAny(record, "\r\n") {
		return "", errors.New("an inline record must be a single line")
	}
	return ".ingest inline into table " + id + " <| " + record, nil
}

// Entity is one database of one cluster, a member of an entity group.
type Entity struct {
	Endpoint string
	Database string
}

// Render writes the entity as cluster('endpoint').database('db'). The
// endpoint must already be validated with Endpoint.
func (e Entity) Render() (string, error) {
	var b strings.Builder
	if err := e.render(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// render is Render into b, which a group of a thousand entities is
// written into whole.
func (e Entity) render(b *strings.Builder) error {
	if _, err := Endpoint(e.Endpoint, true); err != nil {
		return err
	}
	if err := ValidateName(e.Database); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	b.WriteString("cluster(")
	if err := writeLiteral(b, e.Endpoint); err != nil {
		return err
	}
	b.WriteString(").database(")
	if err := writeLiteral(b, e.Database); err != nil {
		return err
	}
	b.WriteByte(')')
	return nil
}

// writeLiteral writes Literal(s) to b.
func writeLiteral(b *strings.Builder, s string) error {
	if plainLiteral(s) {
		b.WriteByte('\'')
		b.WriteString(s)
		b.WriteByte('\'')
		return nil
	}
	lit, err := escapedLiteral(s)
	b.WriteString(lit)
	return err
}

// ParseEntity reads an entity written as cluster('x').database('y'), the
// form Render writes and Kusto returns from .show entity_groups.
func ParseEntity(s string) (Entity, error) {
	if e, ok := plainEntity(s); ok {
		return e, nil
	}
	toks, err := Tokenize(s)
	if err != nil {
		return Entity{}, err
	}
	want := []TokenKind{Word, Punct, String, Punct, Punct, Word, Punct, String, Punct}
	if len(toks) != len(want) {
		return Entity{}, fmt.Errorf("not an entity reference: %q", s)
	}
	for i, k := range want {
		if toks[i].Kind != k {
			return Entity{}, fmt.Errorf("not an entity reference: %q", s)
		}
	}
	if !strings.EqualFold(toks[0].Value, "cluster") || !strings.EqualFold(toks[5].Value, "database") || toks[4].Value != "." {
		return Entity{}, fmt.Errorf("not an entity reference: %q", s)
	}
	return Entity{Endpoint: toks[2].Value, Database: toks[7].Value}, nil
}

// plainEntity reads the form Render writes for names without quotes or
// backslashes, which is how Kusto lists a fleet's entity groups, without
// tokenizing: a hub cycle compares thousands of them. ok is false for any
// other form, which ParseEntity then tokenizes.
func plainEntity(s string) (Entity, bool) {
	rest, ok := strings.CutPrefix(s, "cluster('")
	if !ok {
		return Entity{}, false
	}
	ep, rest, ok := strings.Cut(rest, "').database('")
	if !ok {
		return Entity{}, false
	}
	db, ok := strings.CutSuffix(rest, "')")
	if !ok || !plainLiteral(ep) || !plainLiteral(db) {
		return Entity{}, false
	}
	return Entity{Endpoint: ep, Database: db}, true
}

// plainLiteral is the content of a string literal that needs no escape.
func plainLiteral(s string) bool {
	for i := range len(s) {
		if c := s[i]; c == '\'' || c == '\\' || c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// compareEntities orders entities by endpoint, then database.
func compareEntities(a, b Entity) int {
	if c := strings.Compare(a.Endpoint, b.Endpoint); c != 0 {
		return c
	}
	return strings.Compare(a.Database, b.Database)
}

// writeEntityList writes entities, sorted, comma separated, to b.
func writeEntityList(b *strings.Builder, entities []Entity) error {
	if len(entities) == 0 {
		return errors.New("an entity group needs at least one entity")
	}
	// A plan hands them over sorted already.
	if !slices.IsSortedFunc(entities, compareEntities) {
		entities = slices.SortedFunc(slices.Values(entities), compareEntities)
	}
	for i, e := range entities {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := e.render(b); err != nil {
			return fmt.Errorf("entity %d: %w", i, err)
		}
	}
	return nil
}

// CreateEntityGroup creates a stored entity group unless it exists. The
// entities are written in sorted order.
func CreateEntityGroup(name string, entities []Entity) (string, error) {
	return entityGroupCommand(".create entity_group ", " ifnotexists", name, entities)
}

// AlterEntityGroup replaces a stored entity group's entities in one step,
// so queries that use it never see it missing.
func AlterEntityGroup(name string, entities []Entity) (string, error) {
	return entityGroupCommand(".alter entity_group ", "", name, entities)
}

func entityGroupCommand(verb, flag, name string, entities []Entity) (string, error) {
	id, err := Ident(name)
	if err != nil {
		return "", fmt.Errorf("entity group: %w", err)
	}
	var b strings.Builder
	size := len(verb) + len(id) + len(flag) + 3
	for _, e := range entities {
		size += len(e.Endpoint) + len(e.Database) + len("cluster('').database(''), ")
	}
	b.Grow(size)
	b.WriteString(verb)
	b.WriteString(id)
	b.WriteString(flag)
	b.WriteString(" (")
	if err := writeEntityList(&b, entities); err != nil {
		return "", err
	}
	b.WriteByte(')')
	return b.String(), nil
}

// DropEntityGroup drops a stored entity group.
func DropEntityGroup(name string) (string, error) {
	id, err := Ident(name)
	if err != nil {
		return "", fmt.Errorf("entity group: %w", err)
	}
	return ".drop entity_group " + id, nil
}

// MacroExpandBody is the body of a hub function that unions table across
// every database of an entity group. isfuzzy and best_effort keep it
// working when some partitions lack the table or are unreachable.
func MacroExpandBody(group, table string) (string, error) {
	g, err := Ident(group)
	if err != nil {
		return "", fmt.Errorf("entity group: %w", err)
	}
	t, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	return "{ macro-expand isfuzzy=true best_effort=true " + g + " as X ( X." + t + " ) }", nil
}

// CreateOrAlterFunction defines a parameterless function with a folder and
// a docstring. body must come from a builder of this package.
func CreateOrAlterFunction(name, folder, docstring, body string) (string, error) {
	id, err := Ident(name)
	if err != nil {
		return "", fmt.Errorf("function: %w", err)
	}
	f, err := Literal(folder)
	if err != nil {
		return "", fmt.Errorf("folder: %w", err)
	}
	d, err := Literal(docstring)
	if err != nil {
		return "", fmt.Errorf("docstring: %w", err)
	}
	return ".create-or-alter function with (folder=" + f + ", docstring=" + d + ") " + id + "() " + body, nil
}

// DropFunction drops a function if it exists.
func DropFunction(name string) (string, error) {
	id, err := Ident(name)
	if err != nil {
		return "", fmt.Errorf("function: %w", err)
	}
	return ".drop function " + id + " ifexists", nil
}

// HeartbeatDigest is the expression a hub computes for each partition's
// latest heartbeat: a SHA-256 of its Schema and PartitionMetadata, so a
// cycle learns what changed from a 64-character string per partition and
// reads whole rows only for those. pack_array keeps the two apart.
const HeartbeatDigest = "hash_sha256(tostring(pack_array(Schema, PartitionMetadata)))"

// MaxEndpointsInQuery is the most partitions HeartbeatRows names in one
// query; past it the query reads every partition instead, which costs the
// hub less than a long list.
const MaxEndpointsInQuery = 256

// latestHeartbeats is the newest heartbeat of every partition within
// window, summarised on the server so the hub reads one row per partition
// however many heartbeats the table holds.
func latestHeartbeats(table string, window time.Duration, endpoints []string) (string, error) {
	id, err := Ident(table)
	if err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	secs := int64(window / time.Second)
	if secs < 1 {
		return "", fmt.Errorf("heartbeat TTL %s is shorter than a second", window)
	}
	q := fmt.Sprintf("%s | where Timestamp > ago(%ds)", id, secs)
	if len(endpoints) > MaxEndpointsInQuery {
		return "", fmt.Errorf("%d endpoints in one query, more than %d", len(endpoints), MaxEndpointsInQuery)
	}
	if len(endpoints) > 0 {
		lits := make([]string, len(endpoints))
		for i, e := range endpoints {
			if lits[i], err = Literal(e); err != nil {
				return "", fmt.Errorf("endpoint: %w", err)
			}
		}
		q += " | where ClusterEndpoint in (" + strings.Join(lits, ", ") + ")"
	}
	return q + " | summarize arg_max(Timestamp, *) by ClusterEndpoint", nil
}

// DigestBuckets is how many rows HeartbeatDigests answers with at most,
// whatever the fleet's size: a row per partition costs the client more to
// decode than the values it carries (a steady cycle reads nothing else),
// one row for the whole fleet would grow without bound.
const DigestBuckets = 16

// HeartbeatDigests is the hub query for the endpoint, digest and time of
// every partition's latest heartbeat within window, packed: at most
// DigestBuckets rows (Bucket, Entries), each a dynamic list of
// [endpoint, digest, time] triples, partitions spread over the rows by
// their endpoint's hash. Dynamic rather than tostring: a query's answer
// carries a dynamic as JSON in place, with no quoting to undo.
func HeartbeatDigests(table string, window time.Duration) (string, error) {
	q, err := latestHeartbeats(table, window, nil)
	if err != nil {
		return "", err
	}
	return q + fmt.Sprintf(" | project Entry = pack_array(ClusterEndpoint, %s, Timestamp), Bucket = hash(ClusterEndpoint, %d) | summarize Entries = make_list(Entry) by Bucket", HeartbeatDigest, DigestBuckets), nil
}

// HeartbeatRows is the hub query for the latest heartbeats within window,
// whole and with their digests, of the partitions whose ClusterEndpoint is
// one of endpoints (as stored, not normalized), or of every partition when
// endpoints is empty.
func HeartbeatRows(table string, window time.Duration, endpoints []string) (string, error) {
	q, err := latestHeartbeats(table, window, endpoints)
	if err != nil {
		return "", err
	}
	return q + " | project Timestamp, ClusterEndpoint, Digest = " + HeartbeatDigest + ", Schema, PartitionMetadata", nil
}

// CallFunction invokes a parameterless function.
func CallFunction(name string) (string, error) {
	id, err := Ident(name)
	if err != nil {
		return "", fmt.Errorf("function: %w", err)
	}
	return id + "()", nil
}

// ScriptHeader starts a database script whose commands each run even when
// an earlier one fails; callers read the per-command results.
const ScriptHeader = ".execute database script with (ContinueOnErrors=true) <|\n"

// MaxScriptBytes is the largest script fleetplane sends in one request.
const MaxScriptBytes = 1 << 20

// Scripts packs commands, in order, into as few database scripts as fit
// within maxBytes each. Commands are single-line by construction; a command
// too large for any script is an error, never a truncated command.
func Scripts(commands []string, maxBytes int) ([]string, error) {
	var out []string
	var b strings.Builder
	for i, c := range commands {
		if strings.ContainsAny(c, "\r\n") {
			return nil, fmt.Errorf("command %d spans lines", i)
		}
		if len(ScriptHeader)+len(c)+1 > maxBytes {
			return nil, fmt.Errorf("command %d is %d bytes, more than a %d-byte script holds", i, len(c), maxBytes)
		}
		if b.Len() > 0 && b.Len()+len(c)+1 > maxBytes {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(ScriptHeader)
		}
		b.WriteString(c)
		b.WriteByte('\n')
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out, nil
}
