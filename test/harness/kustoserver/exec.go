package kustoserver

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// cursor walks the tokens of one command.
type cursor struct {
	toks []kql.Token
	i    int
	text string
}

func (c *cursor) peek() kql.Token {
	if c.i >= len(c.toks) {
		return kql.Token{}
	}
	return c.toks[c.i]
}

func (c *cursor) next() kql.Token {
	t := c.peek()
	c.i++
	return t
}

func (c *cursor) done() bool { return c.i >= len(c.toks) }

// accept consumes the next token when it is the word or punctuation v.
func (c *cursor) accept(v string) bool {
	t := c.peek()
	if (t.Kind == kql.Word || t.Kind == kql.Punct) && strings.EqualFold(t.Value, v) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) expect(v string) error {
	if !c.accept(v) {
		return badRequest("Syntax error: expected %q at token %d of %q", v, c.i, c.text)
	}
	return nil
}

// items reads a comma-separated list up to and including its closing
// parenthesis, the opening one already read, calling item for each.
func (c *cursor) items(item func() error) error {
	for !c.accept(")") {
		if err := item(); err != nil {
			return err
		}
		if !c.accept(",") {
			return c.expect(")")
		}
	}
	return nil
}

// name reads an identifier, bracket-quoted or bare.
func (c *cursor) name() (string, error) {
	t := c.next()
	if t.Kind == kql.Name || t.Kind == kql.Word {
		return t.Value, nil
	}
	return "", badRequest("Syntax error: expected a name at token %d of %q", c.i-1, c.text)
}

func (c *cursor) str() (string, error) {
	t := c.next()
	if t.Kind != kql.String {
		return "", badRequest("Syntax error: expected a string literal at token %d of %q", c.i-1, c.text)
	}
	return t.Value, nil
}

// properties reads an optional with (name = value, ...) of the names
// allowed, for an entity of kind.
func (c *cursor) properties(kind string, allowed ...string) (map[string]string, error) {
	props := map[string]string{}
	if !c.accept("with") {
		return props, nil
	}
	if err := c.expect("("); err != nil {
		return nil, err
	}
	for !c.accept(")") {
		if len(props) > 0 {
			if err := c.expect(","); err != nil {
				return nil, err
			}
		}
		key := strings.ToLower(c.next().Value)
		if !slices.Contains(allowed, key) {
			return nil, badRequest("Syntax error: unknown %s property %q", kind, key)
		}
		if err := c.expect("="); err != nil {
			return nil, err
		}
		v := c.next()
		if v.Kind != kql.String {
			return nil, badRequest("Syntax error: %s property %s takes a string literal", kind, key)
		}
		props[key] = v.Value
	}
	return props, nil
}

func (c *cursor) end() error {
	if !c.done() {
		return badRequest("Syntax error: unexpected %s at token %d of %q", c.peek(), c.i, c.text)
	}
	return nil
}

// mgmt runs a management command against db. The caller holds s.mu.
func (s *Server) mgmt(dbName, text string) (*result, error) {
	// A function's body is kept as text (createFunction), so only its
	// head is tokenized: bodies use more of KQL than the tokenizer knows.
	head := text
	if i := strings.IndexByte(text, '{'); i >= 0 && strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), ".create-or-alter function") {
		head = text[:i+1]
	}
	toks, err := kql.Tokenize(head)
	if err != nil {
		return nil, badRequest("Syntax error: %v", err)
	}
	c := &cursor{toks: toks, text: text}
	cmd := c.next()
	if cmd.Kind != kql.Command {
		return nil, badRequest("Syntax error: a management command starts with a dot: %q", text)
	}
	if cmd.Value == ".show" && c.accept("databases") {
		if c.accept("entities") {
			return s.showEntities(c)
		}
		if err := c.end(); err != nil {
			return nil, err
		}
		r := newResult("DatabaseName", "string", "PersistentStorage", "string", "Version", "string", "IsCurrent", "bool",
			"DatabaseAccessMode", "string", "PrettyName", "string")
		for _, k := range slices.Sorted(maps.Keys(s.dbs)) {
			n := s.dbs[k].name
			r.add(n, "", "v1.0", strings.EqualFold(n, dbName), "ReadWrite", "")
		}
		return r, nil
	}
	db, ok := s.dbs[strings.ToLower(dbName)]
	if !ok {
		return nil, notFound("Entity ID '%s' of kind 'Database' was not found.", dbName)
	}
	switch strings.ToLower(cmd.Value) {
	case ".show":
		return s.show(db, c)
	case ".create", ".create-merge":
		switch {
		case c.accept("table"):
			return s.createTable(db, c, cmd.Value == ".create-merge")
		case c.accept("entity_group"):
			return s.entityGroup(db, c, false)
		}
	case ".alter":
		if c.accept("entity_group") {
			return s.entityGroup(db, c, true)
		}
	case ".create-or-alter":
		switch {
		case c.accept("function"):
			return s.createFunction(db, c)
		case c.accept("table"):
			return s.ingestionMapping(db, c)
		}
	case ".drop":
		return s.drop(db, c)
	case ".ingest":
		return s.ingestInline(db, c)
	case ".execute":
		return s.script(db, c)
	}
	return nil, badRequest("Syntax error: this server does not support %q", text)
}

// showEntities lists every database's tables, functions and entity
// groups as .show databases entities does (its documented columns; a
// table's Content is empty, a function's its body, an entity group's its
// entities as JSON, which fleetplane does not rely on).
func (s *Server) showEntities(c *cursor) (*result, error) {
	r := newResult("DatabaseName", "string", "EntityType", "string", "EntityName", "string", "DocString", "string", "Folder", "string",
		"CslInputSchema", "string", "Content", "string", "CslOutputSchema", "string", "Properties", "dynamic")
	for _, k := range slices.Sorted(maps.Keys(s.dbs)) {
		db := s.dbs[k]
		for _, n := range slices.Sorted(maps.Keys(db.tables)) {
			t := db.tables[n]
			r.add(db.name, "Table", t.name, t.doc, t.folder, "", "", "", json.RawMessage("{}"))
		}
		for _, n := range slices.Sorted(maps.Keys(db.functions)) {
			f := db.functions[n]
			r.add(db.name, "Function", f.Name, f.DocString, f.Folder, cmp.Or(f.Parameters, "()"), f.Body, "", json.RawMessage("{}"))
		}
		for _, n := range slices.Sorted(maps.Keys(db.entityGroups)) {
			b, _ := json.Marshal(db.entityGroups[n])
			r.add(db.name, "EntityGroup", n, "", "", "", string(b), "", json.RawMessage("{}"))
		}
	}
	return pipeline(r, c)
}

func (s *Server) show(db *database, c *cursor) (*result, error) {
	switch {
	case c.accept("tables"):
		r := newResult("TableName", "string", "DatabaseName", "string", "Folder", "string", "DocString", "string")
		for _, n := range slices.Sorted(maps.Keys(db.tables)) {
			t := db.tables[n]
			r.add(t.name, db.name, t.folder, t.doc)
		}
		return pipeline(r, c)
	case c.accept("functions"):
		r := newResult("Name", "string", "Parameters", "string", "Body", "string", "Folder", "string", "DocString", "string")
		for _, n := range slices.Sorted(maps.Keys(db.functions)) {
			f := db.functions[n]
			r.add(f.Name, cmp.Or(f.Parameters, "()"), f.Body, f.Folder, f.DocString)
		}
		return pipeline(r, c)
	case c.accept("cluster"):
		// One node, named as Kusto's single-node emulator names itself,
		// which is how clients such as adx-mon's ingestor tell that
		// ingestion goes straight to the engine (.ingest), with no data
		// management service beside it.
		if err := c.expect("details"); err != nil {
			return nil, err
		}
		r := newResult("NodeId", "string", "Address", "string", "Name", "string", "StartTime", "datetime", "AssignedHotExtents", "int",
			"IsAdmin", "bool", "MachineTotalMemory", "long", "MachineAvailableMemory", "long", "ProcessorCount", "int",
			"HotExtentsOriginalSize", "long", "HotExtentsSize", "long", "EnvironmentDescription", "string", "ProductVersion", "string",
			"Reserved0", "int", "ClockDescription", "string", "RuntimeDescription", "string")
		r.add("node-0", "net.tcp://127.0.0.1:23107/", "KustoPersonal", s.started, 0, true, int64(0), int64(0), 1, int64(0), int64(0), "{}", "fleetplane-kustoserver", 0, "", "")
		return r, c.end()
	case c.accept("entity_groups"):
		r := newResult("Name", "string", "Entities", "dynamic")
		for _, n := range slices.Sorted(maps.Keys(db.entityGroups)) {
			b, _ := json.Marshal(db.entityGroups[n])
			r.add(n, json.RawMessage(b))
		}
		return pipeline(r, c)
	case c.accept("database"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		target, ok := s.dbs[strings.ToLower(name)]
		if !ok {
			return nil, notFound("Entity ID '%s' of kind 'Database' was not found.", name)
		}
		if c.accept("ingestion") {
			if err := c.expect("mappings"); err != nil {
				return nil, err
			}
			r := mappingsResult()
			for _, n := range slices.Sorted(maps.Keys(target.mappings)) {
				m := target.mappings[n]
				r.add(m.Name, m.Kind, m.Mapping, m.LastUpdatedOn, target.name, m.Table)
			}
			return r, c.end()
		}
		for _, w := range []string{"schema", "as", "json"} {
			if err := c.expect(w); err != nil {
				return nil, err
			}
		}
		r := newResult("DatabaseSchema", "string")
		r.add(target.schemaJSON())
		return r, c.end()
	case c.accept("table"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		if err := c.expect("cslschema"); err != nil {
			return nil, err
		}
		t, ok := db.tables[name]
		if !ok {
			return nil, notFound("Table '%s' was not found in database '%s'.", name, db.name)
		}
		r := newResult("TableName", "string", "Schema", "string", "DatabaseName", "string", "Folder", "string", "DocString", "string")
		r.add(t.name, t.cslSchema(), db.name, t.folder, t.doc)
		return r, c.end()
	}
	return nil, badRequest("Syntax error: unsupported .show command %q", c.text)
}

func (s *Server) createTable(db *database, c *cursor, merge bool) (*result, error) {
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	if err := kql.ValidateName(name); err != nil {
		return nil, badRequest("%v", err)
	}
	if err := c.expect("("); err != nil {
		return nil, err
	}
	var cols []Column
	for !c.accept(")") {
		if len(cols) > 0 {
			if err := c.expect(","); err != nil {
				return nil, err
			}
		}
		cn, err := c.name()
		if err != nil {
			return nil, err
		}
		if err := c.expect(":"); err != nil {
			return nil, err
		}
		ct := c.next()
		if ct.Kind != kql.Word || !kql.ColumnTypes[ct.Value] {
			return nil, badRequest("Syntax error: unknown column type %q", ct.Value)
		}
		cols = append(cols, Column{cn, ct.Value})
	}
	props, err := c.properties("table", "folder", "docstring")
	if err != nil {
		return nil, err
	}
	if err := c.end(); err != nil {
		return nil, err
	}
	t, exists := db.tables[name]
	switch {
	case !exists:
		t = &table{name: name, columns: cols, folder: props["folder"], doc: props["docstring"]}
		db.tables[name] = t
	case merge:
		for _, col := range cols {
			i := t.column(col.Name)
			if i < 0 {
				t.columns = append(t.columns, col)
				for r := range t.rows {
					t.rows[r] = append(t.rows[r], nil)
				}
				continue
			}
			if t.columns[i].Type != col.Type {
				return nil, badRequest("Column '%s' of table '%s' is %s, not %s.", col.Name, name, t.columns[i].Type, col.Type)
			}
		}
	default:
		// As Kusto documents it: .create table of a table that exists
		// succeeds and changes nothing, neither its schema nor its
		// folder or docstring, whatever the command says.
	}
	r := newResult("TableName", "string", "Schema", "string", "DatabaseName", "string", "Folder", "string", "DocString", "string")
	r.add(t.name, t.cslSchema(), db.name, t.folder, t.doc)
	return r, nil
}

// entities reads ( cluster('x').database('y'), ... ).
func entities(c *cursor) ([]string, error) {
	if err := c.expect("("); err != nil {
		return nil, err
	}
	var out []string
	for !c.accept(")") {
		if len(out) > 0 {
			if err := c.expect(","); err != nil {
				return nil, err
			}
		}
		if err := c.expect("cluster"); err != nil {
			return nil, err
		}
		var vals [2]string
		for i, w := range []string{"", "database"} {
			if w != "" {
				if err := c.expect("."); err != nil {
					return nil, err
				}
				if err := c.expect(w); err != nil {
					return nil, err
				}
			}
			if err := c.expect("("); err != nil {
				return nil, err
			}
			v, err := c.str()
			if err != nil {
				return nil, err
			}
			vals[i] = v
			if err := c.expect(")"); err != nil {
				return nil, err
			}
		}
		r, err := kql.Entity{Endpoint: vals[0], Database: vals[1]}.Render()
		if err != nil {
			return nil, badRequest("invalid entity: %v", err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, badRequest("an entity group needs at least one entity")
	}
	return out, nil
}

func (s *Server) entityGroup(db *database, c *cursor, alter bool) (*result, error) {
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	ifNotExists := !alter && c.accept("ifnotexists")
	ents, err := entities(c)
	if err != nil {
		return nil, err
	}
	if err := c.end(); err != nil {
		return nil, err
	}
	_, exists := db.entityGroups[name]
	switch {
	case alter && !exists:
		return nil, notFound("Entity group '%s' was not found.", name)
	case !alter && exists && !ifNotExists:
		return nil, badRequest("Entity group '%s' already exists.", name)
	case !alter && exists:
	default:
		db.entityGroups[name] = ents
	}
	r := newResult("Name", "string", "Entities", "dynamic")
	b, _ := json.Marshal(db.entityGroups[name])
	r.add(name, json.RawMessage(b))
	return r, nil
}

func (s *Server) createFunction(db *database, c *cursor) (*result, error) {
	f := &Function{}
	if c.accept("with") {
		if err := c.expect("("); err != nil {
			return nil, err
		}
		for !c.accept(")") {
			c.accept(",")
			key := c.next().Value
			if err := c.expect("="); err != nil {
				return nil, err
			}
			val := c.next()
			switch strings.ToLower(key) {
			case "folder":
				f.Folder = val.Value
			case "docstring":
				f.DocString = val.Value
			case "view":
				f.View = strings.EqualFold(val.Value, "true")
			case "skipvalidation":
			default:
				return nil, badRequest("Syntax error: unknown function property %q", key)
			}
		}
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	if err := kql.ValidateName(name); err != nil {
		return nil, badRequest("%v", err)
	}
	f.Name = name
	params, err := c.parameters()
	if err != nil {
		return nil, err
	}
	f.Parameters = params
	// The body is the text from the opening brace to the end.
	if c.peek().Value != "{" {
		return nil, badRequest("Syntax error: expected a function body in braces")
	}
	_, rest, _ := strings.Cut(c.text, "{")
	body := "{" + strings.TrimSpace(rest)
	if !strings.HasSuffix(body, "}") {
		return nil, badRequest("Syntax error: the function body is not closed")
	}
	// A function with parameters (adx-mon's ingestor creates prom_rate
	// and its siblings) is kept, and listed, but never run: the server
	// runs only bodies it can reason about.
	if params == "()" {
		if err := checkBody(body); err != nil {
			return nil, err
		}
	}
	f.Body = body
	db.functions[name] = f
	r := newResult("Name", "string", "Parameters", "string", "Body", "string", "Folder", "string", "DocString", "string")
	r.add(f.Name, f.Parameters, f.Body, f.Folder, f.DocString)
	return r, nil
}

// ingestionMapping keeps a table's ingestion mapping:
// .create-or-alter table T ingestion csv|json mapping "name" 'json'.
// Ingestion itself goes by column order; the mappings are listed by
// .show database X ingestion mappings, as clients such as adx-mon's
// ingestor read them back at start.
func (s *Server) ingestionMapping(db *database, c *cursor) (*result, error) {
	table, err := c.name()
	if err != nil {
		return nil, err
	}
	if _, ok := db.tables[table]; !ok {
		return nil, notFound("Table '%s' was not found in database '%s'.", table, db.name)
	}
	if err := c.expect("ingestion"); err != nil {
		return nil, err
	}
	kind := strings.ToLower(c.next().Value)
	if kind != "csv" && kind != "json" {
		return nil, badRequest("Syntax error: unsupported ingestion mapping kind %q", kind)
	}
	if err := c.expect("mapping"); err != nil {
		return nil, err
	}
	name, mapping := c.next(), c.next()
	if name.Kind != kql.String || mapping.Kind != kql.String {
		return nil, badRequest("Syntax error: an ingestion mapping takes a quoted name and a quoted JSON mapping")
	}
	if !json.Valid([]byte(mapping.Value)) {
		return nil, badRequest("Ingestion mapping %q is not valid JSON", name.Value)
	}
	if err := c.end(); err != nil {
		return nil, err
	}
	m := Mapping{Name: name.Value, Kind: kind, Mapping: mapping.Value, Table: table, LastUpdatedOn: time.Now().UTC()}
	db.mappings[name.Value] = m
	r := mappingsResult()
	r.add(m.Name, m.Kind, m.Mapping, m.LastUpdatedOn, db.name, m.Table)
	return r, nil
}

func mappingsResult() *result {
	return newResult("Name", "string", "Kind", "string", "Mapping", "string", "LastUpdatedOn", "datetime", "Database", "string", "Table", "string")
}

// parameters reads a function's parameter list, parentheses balanced,
// and returns it as Kusto lists it: "(T:(Timestamp:datetime), n:long)".
func (c *cursor) parameters() (string, error) {
	if err := c.expect("("); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("(")
	for depth := 1; depth > 0; {
		if c.done() {
			return "", badRequest("Syntax error: the parameter list is not closed")
		}
		t := c.next()
		switch t.Value {
		case "(":
			depth++
		case ")":
			depth--
		}
		b.WriteString(t.Value)
	}
	return b.String(), nil
}

// checkBody accepts the function bodies the server can reason about: a
// macro-expand over a stored entity group, a datatable, or a table.
func checkBody(body string) error {
	toks, err := kql.Tokenize(body)
	if err != nil {
		return badRequest("Syntax error in function body: %v", err)
	}
	for _, t := range toks {
		if t.Kind == kql.Command {
			return badRequest("Syntax error: a function body cannot hold a management command")
		}
	}
	return nil
}

func (s *Server) drop(db *database, c *cursor) (*result, error) {
	switch {
	case c.accept("function"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		ifExists := c.accept("ifexists")
		if err := c.end(); err != nil {
			return nil, err
		}
		if _, ok := db.functions[name]; !ok && !ifExists {
			return nil, notFound("Function '%s' was not found.", name)
		}
		delete(db.functions, name)
		r := newResult("Name", "string")
		r.add(name)
		return r, nil
	case c.accept("entity_group"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		if err := c.end(); err != nil {
			return nil, err
		}
		if _, ok := db.entityGroups[name]; !ok {
			return nil, notFound("Entity group '%s' was not found.", name)
		}
		delete(db.entityGroups, name)
		r := newResult("Name", "string", "Entities", "dynamic")
		for _, n := range slices.Sorted(maps.Keys(db.entityGroups)) {
			b, _ := json.Marshal(db.entityGroups[n])
			r.add(n, json.RawMessage(b))
		}
		return r, nil
	case c.accept("table"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		if _, ok := db.tables[name]; !ok {
			return nil, notFound("Table '%s' was not found.", name)
		}
		delete(db.tables, name)
		return newResult("TableName", "string"), nil
	}
	return nil, badRequest("Syntax error: unsupported .drop command %q", c.text)
}

func (s *Server) ingestInline(db *database, c *cursor) (*result, error) {
	for _, w := range []string{"inline", "into", "table"} {
		if err := c.expect(w); err != nil {
			return nil, err
		}
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	if err := c.expect("<|"); err != nil {
		return nil, err
	}
	raw := c.next()
	t, ok := db.tables[name]
	if !ok {
		return nil, notFound("Table '%s' was not found in database '%s'.", name, db.name)
	}
	records, err := csv.NewReader(strings.NewReader(raw.Value)).ReadAll()
	if err != nil {
		return nil, badRequest("Ingestion failed: %v", err)
	}
	for _, rec := range records {
		row := make([]any, len(t.columns))
		for i, col := range t.columns {
			if i < len(rec) {
				row[i] = convert(col.Type, rec[i])
			}
		}
		t.rows = append(t.rows, row)
	}
	r := newResult("ExtentId", "guid", "OriginalSize", "long", "ExtentSize", "long", "RowCount", "long")
	r.add(zeroGUID, int64(len(raw.Value)), int64(len(raw.Value)), int64(len(records)))
	return r, nil
}

// script runs .execute database script with (ContinueOnErrors=true): every
// line is a command, each gets a result row.
func (s *Server) script(db *database, c *cursor) (*result, error) {
	for _, w := range []string{"database", "script"} {
		if err := c.expect(w); err != nil {
			return nil, err
		}
	}
	continueOnErrors := false
	if c.accept("with") {
		if err := c.expect("("); err != nil {
			return nil, err
		}
		for !c.accept(")") {
			c.accept(",")
			key := c.next().Value
			if err := c.expect("="); err != nil {
				return nil, err
			}
			if strings.EqualFold(key, "ContinueOnErrors") {
				continueOnErrors = strings.EqualFold(c.next().Value, "true")
			} else {
				c.next()
			}
		}
	}
	if err := c.expect("<|"); err != nil {
		return nil, err
	}
	body := c.next().Value
	r := newResult("OperationId", "guid", "CommandType", "string", "CommandText", "string", "Result", "string", "Reason", "string")
	failed := false
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		kind := commandType(line)
		if failed && !continueOnErrors {
			r.add(zeroGUID, kind, line, "Skipped", "")
			continue
		}
		s.scriptCommands++
		if f := s.faultLocked(line, true); f != nil && f.Status != 0 {
			failed = true
			r.add(zeroGUID, kind, line, "Failed", faultError(f.Status).Error())
			continue
		}
		if _, err := s.mgmt(db.name, line); err != nil {
			failed = true
			r.add(zeroGUID, kind, line, "Failed", err.Error())
			continue
		}
		r.add(zeroGUID, kind, line, "Completed", "")
	}
	return r, nil
}

// commandType names a command as Kusto's script results do, roughly.
func commandType(line string) string {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return "Unknown"
	}
	return fmt.Sprintf("%s%s", strings.Title(strings.TrimPrefix(fields[0], ".")), strings.Title(fields[1])) //nolint:staticcheck // ASCII keywords only
}
