package kustoserver

import (
	"strconv"
	"strings"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// maxFunctionDepth stops a function that calls itself.
const maxFunctionDepth = 8

// query evaluates a query: a table or a function call, then a pipeline of
// where, summarize arg_max(...) by, project, take and count. The caller
// holds s.mu.
func (s *Server) query(dbName, text string, depth int) (*result, error) {
	db, ok := s.dbs[strings.ToLower(dbName)]
	if !ok {
		return nil, notFound("Entity ID '%s' of kind 'Database' was not found.", dbName)
	}
	if depth > maxFunctionDepth {
		return nil, badRequest("Function calls nest deeper than %d.", maxFunctionDepth)
	}
	toks, err := kql.Tokenize(text)
	if err != nil {
		return nil, badRequest("Syntax error: %v", err)
	}
	c := &cursor{toks: toks, text: text}
	if c.peek().Kind == kql.Command {
		return nil, badRequest("Syntax error: management commands go to /v1/rest/mgmt")
	}
	rs, err := s.source(db, c, depth)
	if err != nil {
		return nil, err
	}
	return pipeline(rs, c)
}

// pipeline runs the operators after a query's source or a management
// command's result: where, summarize, project, take and count, to the end
// of the text.
func pipeline(rs *result, c *cursor) (*result, error) {
	var err error
	for c.accept("|") {
		switch op := c.next().Value; op {
		case "where":
			rs, err = where(rs, c)
		case "summarize":
			if c.peek().Value == "arg_max" {
				rs, err = argMax(rs, c)
			} else {
				rs, err = summarize(rs, c)
			}
		case "project":
			rs, err = project(rs, c)
		case "take", "limit":
			n, perr := strconv.Atoi(c.next().Value)
			if perr != nil {
				return nil, badRequest("Syntax error: take needs a number")
			}
			if n < len(rs.rows) {
				rs.rows = rs.rows[:n]
			}
		case "count":
			rs = &result{name: rs.name, columns: []Column{{"Count", "long"}}, rows: [][]any{{int64(len(rs.rows))}}}
		default:
			return nil, badRequest("Syntax error: this server does not support the %q operator", op)
		}
		if err != nil {
			return nil, err
		}
	}
	if !c.done() {
		return nil, badRequest("Syntax error: unexpected %s", c.peek())
	}
	return rs, nil
}

// source reads a table or a function call.
func (s *Server) source(db *database, c *cursor, depth int) (*result, error) {
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	if c.accept("(") {
		if err := c.expect(")"); err != nil {
			return nil, err
		}
		f, ok := db.functions[name]
		if !ok {
			return nil, badRequest("Semantic error: '%s' does not refer to any known function.", name)
		}
		body := strings.TrimSpace(f.Body)
		body = strings.TrimSuffix(strings.TrimPrefix(body, "{"), "}")
		return s.query(db.name, body, depth+1)
	}
	if f, ok := db.functions[name]; ok {
		// A stored function shadows a table of the same name.
		body := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(f.Body), "{"), "}")
		return s.query(db.name, body, depth+1)
	}
	t, ok := db.tables[name]
	if !ok {
		return nil, badRequest("Semantic error: '%s' does not refer to any known table, tabular variable or function.", name)
	}
	rows := make([][]any, len(t.rows))
	copy(rows, t.rows)
	return &result{name: "PrimaryResult", columns: append([]Column(nil), t.columns...), rows: rows}, nil
}

func where(rs *result, c *cursor) (*result, error) {
	col, err := c.name()
	if err != nil {
		return nil, err
	}
	i := columnIndex(rs, col)
	if i < 0 {
		return nil, badRequest("Semantic error: no column '%s'", col)
	}
	op := c.next().Value
	if op == "in" {
		return whereIn(rs, i, c)
	}
	val, err := operand(c)
	if err != nil {
		return nil, err
	}
	out := &result{name: rs.name, columns: rs.columns}
	for _, r := range rs.rows {
		if compare(r[i], op, val) {
			out.rows = append(out.rows, r)
		}
	}
	return out, nil
}

// whereIn keeps the rows whose column i is one of a list of string
// literals: where Col in ("a", "b").
func whereIn(rs *result, i int, c *cursor) (*result, error) {
	if err := c.expect("("); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	err := c.items(func() error {
		v, err := c.str()
		set[v] = true
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &result{name: rs.name, columns: rs.columns}
	for _, r := range rs.rows {
		if s, ok := r[i].(string); ok && set[s] {
			out.rows = append(out.rows, r)
		}
	}
	return out, nil
}

// operand reads ago(Ns), a string literal or a number.
func operand(c *cursor) (any, error) {
	t := c.next()
	switch {
	case t.Kind == kql.Word && t.Value == "ago":
		if err := c.expect("("); err != nil {
			return nil, err
		}
		d, err := timespan(c.next().Value)
		if err != nil {
			return nil, err
		}
		if err := c.expect(")"); err != nil {
			return nil, err
		}
		return time.Now().UTC().Add(-d), nil
	case t.Kind == kql.String:
		return t.Value, nil
	case t.Kind == kql.Number:
		n, err := strconv.ParseInt(t.Value, 10, 64)
		if err != nil {
			return nil, badRequest("Syntax error: bad number %q", t.Value)
		}
		return n, nil
	}
	return nil, badRequest("Syntax error: unsupported operand %s", t)
}

// timespan reads the literal forms fleetplane writes: 30s, 10m, 2h, 1d.
func timespan(s string) (time.Duration, error) {
	units := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	for suffix, unit := range units {
		if n, err := strconv.ParseInt(strings.TrimSuffix(s, suffix), 10, 64); err == nil && strings.HasSuffix(s, suffix) {
			return time.Duration(n) * unit, nil
		}
	}
	return 0, badRequest("Syntax error: unsupported timespan %q", s)
}

func compare(v any, op string, val any) bool {
	switch x := v.(type) {
	case time.Time:
		y, ok := val.(time.Time)
		if !ok {
			return false
		}
		switch op {
		case ">":
			return x.After(y)
		case "<":
			return x.Before(y)
		case "==":
			return x.Equal(y)
		}
	case string:
		y, ok := val.(string)
		return ok && op == "==" && x == y
	case int64:
		y, ok := val.(int64)
		if !ok {
			return false
		}
		switch op {
		case ">":
			return x > y
		case "<":
			return x < y
		case "==":
			return x == y
		}
	}
	return false
}

// argMax reads summarize arg_max(Col, *) by Key: the row with the largest
// Col for every Key, in order of first appearance.
func argMax(rs *result, c *cursor) (*result, error) {
	if err := c.expect("arg_max"); err != nil {
		return nil, err
	}
	if err := c.expect("("); err != nil {
		return nil, err
	}
	col, err := c.name()
	if err != nil {
		return nil, err
	}
	for _, w := range []string{",", "*", ")", "by"} {
		if err := c.expect(w); err != nil {
			return nil, err
		}
	}
	key, err := c.name()
	if err != nil {
		return nil, err
	}
	ci, ki := columnIndex(rs, col), columnIndex(rs, key)
	if ci < 0 || ki < 0 {
		return nil, badRequest("Semantic error: no column '%s' or '%s'", col, key)
	}
	best := map[string]int{}
	var order []string
	for i, r := range rs.rows {
		k, _ := r[ki].(string)
		j, seen := best[k]
		if !seen {
			order = append(order, k)
			best[k] = i
			continue
		}
		if later(r[ci], rs.rows[j][ci]) {
			best[k] = i
		}
	}
	cols := append([]Column{{key, rs.columns[ki].Type}, {col, rs.columns[ci].Type}}, without(rs.columns, ki, ci)...)
	out := &result{name: rs.name, columns: cols}
	for _, k := range order {
		r := rs.rows[best[k]]
		row := []any{r[ki], r[ci]}
		for i, v := range r {
			if i != ki && i != ci {
				row = append(row, v)
			}
		}
		out.rows = append(out.rows, row)
	}
	return out, nil
}

func later(a, b any) bool {
	x, ok1 := a.(time.Time)
	y, ok2 := b.(time.Time)
	return ok1 && (!ok2 || x.After(y))
}

func without(cols []Column, skip ...int) []Column {
	var out []Column
	for i, c := range cols {
		keep := true
		for _, s := range skip {
			keep = keep && i != s
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// summarize computes aggregates: summarize Name = expression, ... over
// all rows, one row out whatever came in (none included), or with
// "by Col" one row per value of the column Col (first), in order of first
// appearance. Expressions call the aggregates count() and make_list()
// (see scalar).
func summarize(rs *result, c *cursor) (*result, error) {
	// The aggregates are compiled per group, and the group is known only
	// from the by clause after them: find it first, at depth 0 before the
	// next operator.
	start, by := c.i, -1
	for i, depth := c.i, 0; i < len(c.toks); i++ {
		switch v := c.toks[i].Value; {
		case v == "(":
			depth++
		case v == ")":
			depth--
		case depth == 0 && v == "|":
			i = len(c.toks)
		case depth == 0 && v == "by" && c.toks[i].Kind == kql.Word:
			by = i
		}
	}
	groups, keys := [][][]any{rs.rows}, []any{nil}
	var key Column
	if by >= 0 {
		c.i = by + 1
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		ki := columnIndex(rs, name)
		if ki < 0 {
			return nil, badRequest("Semantic error: no column '%s'", name)
		}
		key = rs.columns[ki]
		groups, keys = nil, nil
		index := map[string]int{}
		for _, r := range rs.rows {
			k := toString(r[ki])
			g, ok := index[k]
			if !ok {
				g = len(groups)
				index[k] = g
				groups, keys = append(groups, nil), append(keys, r[ki])
			}
			groups[g] = append(groups[g], r)
		}
	}
	end := c.i
	// With by and no rows there is no group and no row out, but the
	// columns still: compiled once against an empty group, kept, and the
	// row dropped.
	empty := len(groups) == 0
	if empty {
		groups, keys = [][][]any{nil}, []any{nil}
	}
	out := &result{name: rs.name}
	for g, group := range groups {
		c.i = start
		var row []any
		if by >= 0 {
			row = append(row, keys[g])
		}
		var cols []Column
		for {
			n, err := c.name()
			if err != nil {
				return nil, err
			}
			if err := c.expect("="); err != nil {
				return nil, err
			}
			e, err := parseScalar(env{rs: rs, group: group, summarize: true}, c)
			if err != nil {
				return nil, err
			}
			cols = append(cols, Column{Name: n, Type: e.typ})
			row = append(row, e.eval(nil))
			if !c.accept(",") {
				break
			}
		}
		if (by >= 0 && c.i != by) || (by < 0 && !c.done() && c.peek().Value != "|") {
			return nil, badRequest("Syntax error: unexpected %s in summarize", c.peek())
		}
		if out.columns == nil {
			if by >= 0 {
				out.columns = append(out.columns, key)
			}
			out.columns = append(out.columns, cols...)
		}
		out.rows = append(out.rows, row)
	}
	if by >= 0 {
		c.i = end
	}
	if empty {
		out.rows = nil
	}
	return out, nil
}

// project keeps, renames or computes columns: Col, or Name = expression
// (see scalar).
func project(rs *result, c *cursor) (*result, error) {
	var exprs []scalar
	out := &result{name: rs.name}
	for {
		n, err := c.name()
		if err != nil {
			return nil, err
		}
		var e scalar
		if c.accept("=") {
			if e, err = parseScalar(env{rs: rs}, c); err != nil {
				return nil, err
			}
		} else if e, err = columnScalar(rs, n); err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		out.columns = append(out.columns, Column{Name: n, Type: e.typ})
		if !c.accept(",") {
			break
		}
	}
	for _, r := range rs.rows {
		row := make([]any, len(exprs))
		for j, e := range exprs {
			row[j] = e.eval(r)
		}
		out.rows = append(out.rows, row)
	}
	return out, nil
}

func columnIndex(rs *result, name string) int {
	for i, c := range rs.columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}
