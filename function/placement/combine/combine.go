// Package combine combines the state an object reports from many
// clusters, as KubeStellar's StatusCollector describes: one row per
// cluster (the object's reported state, with the cluster's inventory and
// propagation facts beside it), an optional filter, then either named
// columns per row or groups with aggregates, and a limit. Expressions are
// the seed's operator tree (Path, Not, Equal, And, Or) or CEL over
// KubeStellar's variables (cel.go).
package combine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/fleetplane/fleetplane/function/placement/jsonpath"
)

// Operators of an expression.
const (
	OpPath  = "Path"
	OpNot   = "Not"
	OpEqual = "Equal"
	OpAnd   = "And"
	OpOr    = "Or"
)

// Aggregates of a combined field.
const (
	Count = "COUNT"
	Sum   = "SUM"
	Avg   = "AVG"
	Min   = "MIN"
	Max   = "MAX"
)

// DefaultLimit bounds the rows of a result unless the collector says.
const DefaultLimit = 20

// Expr is an expression: a Path reads the row at a JSONPath (the
// CustomTransform subset); Not, Equal, And and Or take Args. Or, instead
// of Op, CEL: an expression over inventory, obj, returned and propagation.
type Expr struct {
	Op   string `json:"op,omitempty"`
	Path string `json:"path,omitempty"`
	Args []Expr `json:"args,omitempty"`
	CEL  string `json:"cel,omitempty"`
}

// Named is an output column.
type Named struct {
	Name string `json:"name"`
	Def  Expr   `json:"def"`
}

// Aggregate is an aggregated output column; Subject is what SUM, AVG, MIN
// and MAX aggregate (COUNT needs none).
type Aggregate struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Subject *Expr  `json:"subject,omitempty"`
}

// Collector is a StatusCollector's specification.
type Collector struct {
	Filter         *Expr       `json:"filter,omitempty"`
	Select         []Named     `json:"select,omitempty"`
	GroupBy        []Named     `json:"groupBy,omitempty"`
	CombinedFields []Aggregate `json:"combinedFields,omitempty"`
	Limit          int         `json:"limit,omitempty"`
}

// Check reports the first thing wrong with a collector: an unknown
// operator or aggregate, a bad path, a wrong number of arguments, select
// mixed with aggregation, or a column named twice.
func (c Collector) Check() error {
	if c.Filter != nil {
		if err := c.Filter.check("filter", true); err != nil {
			return err
		}
	}
	aggregating := len(c.GroupBy) > 0 || len(c.CombinedFields) > 0
	if aggregating && len(c.Select) > 0 {
		return errors.New("select lists columns per cluster; it cannot be combined with groupBy or combinedFields")
	}
	if !aggregating && len(c.Select) == 0 {
		return errors.New("a collector needs select, or groupBy and combinedFields")
	}
	names := map[string]bool{}
	column := func(where, name string) error {
		if name == "" {
			return fmt.Errorf("%s: a column needs a name", where)
		}
		if names[name] {
			return fmt.Errorf("%s: column %q is named twice", where, name)
		}
		names[name] = true
		return nil
	}
	for i, n := range append(append([]Named(nil), c.Select...), c.GroupBy...) {
		where := fmt.Sprintf("column %d", i)
		if err := column(where, n.Name); err != nil {
			return err
		}
		if err := n.Def.check(where+" ("+n.Name+")", false); err != nil {
			return err
		}
	}
	for i, a := range c.CombinedFields {
		where := fmt.Sprintf("combinedFields[%d]", i)
		if err := column(where, a.Name); err != nil {
			return err
		}
		switch a.Type {
		case Count:
		case Sum, Avg, Min, Max:
			if a.Subject == nil {
				return fmt.Errorf("%s (%s): %s needs a subject", where, a.Name, a.Type)
			}
			if err := a.Subject.check(where+" subject", false); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s (%s): unknown type %q: use COUNT, SUM, AVG, MIN or MAX", where, a.Name, a.Type)
		}
	}
	if c.Limit < 0 {
		return errors.New("limit must not be negative")
	}
	return nil
}

func (e Expr) check(where string, wantBool bool) error {
	if e.CEL != "" {
		if e.Op != "" || e.Path != "" || len(e.Args) > 0 {
			return fmt.Errorf("%s: an expression is either cel or op, not both", where)
		}
		if _, err := compileCEL(e.CEL, wantBool); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		return nil
	}
	args := func(n int) error {
		if n >= 0 && len(e.Args) != n {
			return fmt.Errorf("%s: %s takes %d argument(s), not %d", where, e.Op, n, len(e.Args))
		}
		if n < 0 && len(e.Args) < 1 {
			return fmt.Errorf("%s: %s takes at least one argument", where, e.Op)
		}
		for i, a := range e.Args {
			if err := a.check(fmt.Sprintf("%s.args[%d]", where, i), false); err != nil {
				return err
			}
		}
		return nil
	}
	switch e.Op {
	case OpPath:
		if len(e.Args) > 0 {
			return fmt.Errorf("%s: Path takes no arguments", where)
		}
		if e.Path == "$" {
			return nil // the whole row
		}
		if _, err := jsonpath.Parse(e.Path); err != nil {
			return fmt.Errorf("%s: path %q: %w", where, e.Path, err)
		}
		return nil
	case OpNot:
		return args(1)
	case OpEqual:
		return args(2)
	case OpAnd, OpOr:
		return args(-1)
	}
	if e.Op == "" {
		return fmt.Errorf("%s: an expression needs op (Path, Not, Equal, And or Or) or cel", where)
	}
	return fmt.Errorf("%s: unknown op %q: use Path, Not, Equal, And or Or", where, e.Op)
}

// Eval evaluates e on a row; a Path to nothing is nil, as is a CEL
// expression that fails. e must have passed Check.
func (e Expr) Eval(row map[string]any) any { return newEvaluator().eval(e, row, "") }

// evaluator parses each distinct path once, however many rows and
// columns use it (CEL expressions are compiled once per process, cel.go),
// and keeps the first error of each row.
type evaluator struct {
	paths map[string]jsonpath.Path
	// failed are the rows with an error, by the identity of their map;
	// errs their first errors, in the order they came.
	failed map[uintptr]bool
	errs   []string
}

func newEvaluator() *evaluator {
	return &evaluator{paths: map[string]jsonpath.Path{}, failed: map[uintptr]bool{}}
}

// fail records err for row, unless the row has one already: at most one
// error per cluster.
func (ev *evaluator) fail(row map[string]any, where string, err error) {
	ev.note(row, where+": "+err.Error())
}

// note records msg as row's error, unless the row has one already.
func (ev *evaluator) note(row map[string]any, msg string) {
	id := reflect.ValueOf(row).Pointer()
	if ev.failed[id] {
		return
	}
	ev.failed[id] = true
	ev.errs = append(ev.errs, rowName(row)+msg)
}

// hasFailed reports whether row has an error.
func (ev *evaluator) hasFailed(row map[string]any) bool {
	return ev.failed[reflect.ValueOf(row).Pointer()]
}

func (ev *evaluator) eval(e Expr, row map[string]any, where string) any {
	if e.CEL != "" {
		return ev.cel(e.CEL, row, where)
	}
	switch e.Op {
	case OpPath:
		if e.Path == "$" {
			return row
		}
		p, ok := ev.paths[e.Path]
		if !ok {
			p, _ = jsonpath.Parse(e.Path)
			ev.paths[e.Path] = p
		}
		return lookup(row, p)
	case OpNot:
		return !truthy(ev.eval(e.Args[0], row, where))
	case OpEqual:
		return equal(ev.eval(e.Args[0], row, where), ev.eval(e.Args[1], row, where))
	case OpAnd:
		for _, a := range e.Args {
			if !truthy(ev.eval(a, row, where)) {
				return false
			}
		}
		return true
	case OpOr:
		for _, a := range e.Args {
			if truthy(ev.eval(a, row, where)) {
				return true
			}
		}
		return false
	}
	return nil
}

// cel evaluates a checked CEL expression on row; what fails is nil, and
// recorded.
func (ev *evaluator) cel(expr string, row map[string]any, where string) any {
	prg, err := compileCEL(expr, false)
	if err != nil {
		ev.fail(row, where, err)
		return nil
	}
	out, _, err := prg.Eval(celActivation(row))
	if err != nil {
		ev.fail(row, where, fmt.Errorf("CEL: %w", err))
		return nil
	}
	v, err := native(out)
	if err != nil {
		ev.fail(row, where, err)
		return nil
	}
	return v
}

func lookup(v any, p jsonpath.Path) any {
	for _, name := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// truthy: false, nil, zero, "" and empty collections are false.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	if f, ok := number(v); ok {
		return f != 0
	}
	return true
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case int32:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	}
	return 0, false
}

// equal compares numbers by value, whatever their Go type, and the rest
// structurally.
func equal(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

// Result is a combined status: column names and rows of values.
type Result struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	// Omitted counts the rows the limit left out.
	Omitted int `json:"omitted,omitempty"`
	// Errors are what went wrong on a row, at most one per cluster, in
	// the order found: rows left out (a filter or groupBy that fails) and
	// values left empty (a column or subject that fails).
	Errors []string `json:"errors,omitempty"`
}

// Combine runs a checked collector over rows, given in a stable order
// (by cluster). Groups come out ordered by their key.
func Combine(c Collector, rows []map[string]any) Result {
	ev := newEvaluator()
	var kept []map[string]any
	for _, r := range rows {
		if c.Filter == nil {
			kept = append(kept, r)
			continue
		}
		v := ev.eval(*c.Filter, r, "filter")
		if _, ok := v.(bool); c.Filter.CEL != "" && !ok {
			ev.fail(r, "filter", fmt.Errorf("CEL: yields %T, not a boolean; the row is left out", v))
		}
		if !ev.hasFailed(r) && truthy(v) {
			kept = append(kept, r)
		}
	}
	var res Result
	if len(c.GroupBy) == 0 && len(c.CombinedFields) == 0 {
		for _, n := range c.Select {
			res.Columns = append(res.Columns, n.Name)
		}
		for _, r := range kept {
			row := make([]any, len(c.Select))
			for i, n := range c.Select {
				row[i] = ev.eval(n.Def, r, "column "+n.Name)
			}
			res.Rows = append(res.Rows, row)
		}
	} else {
		res = aggregate(c, kept, ev)
	}
	limit := c.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if len(res.Rows) > limit {
		res.Omitted = len(res.Rows) - limit
		res.Rows = res.Rows[:limit]
	}
	res.Errors = ev.errs
	return res
}

type group struct {
	key    string
	values []any
	rows   []map[string]any
}

func aggregate(c Collector, rows []map[string]any, ev *evaluator) Result {
	var res Result
	for _, n := range c.GroupBy {
		res.Columns = append(res.Columns, n.Name)
	}
	for _, a := range c.CombinedFields {
		res.Columns = append(res.Columns, a.Name)
	}
	groups := map[string]*group{}
rows:
	for _, r := range rows {
		values := make([]any, len(c.GroupBy))
		for i, n := range c.GroupBy {
			values[i] = ev.eval(n.Def, r, "groupBy "+n.Name)
			if ev.hasFailed(r) {
				continue rows
			}
			// A group is a tuple of atomic values, as in SQL. A list or
			// an object would group by its whole encoding, which is
			// rarely what was meant; say so instead of guessing.
			switch values[i].(type) {
			case []any, map[string]any:
				ev.note(r, fmt.Sprintf("groupBy %s is a list or an object, not a single value; the row is left out", n.Name))
				continue rows
			}
		}
		k, err := json.Marshal(values)
		if err != nil {
			// Rows are decoded JSON, which always encodes; a value that
			// does not still gets a stable key.
			k = fmt.Appendf(nil, "%#v", values)
		}
		g := groups[string(k)]
		if g == nil {
			g = &group{key: string(k), values: values}
			groups[g.key] = g
		}
		g.rows = append(g.rows, r)
	}
	// Without groupBy, aggregates over no rows still make one row (COUNT 0).
	if len(c.GroupBy) == 0 && len(groups) == 0 {
		groups["[]"] = &group{key: "[]"}
	}
	ordered := make([]*group, 0, len(groups))
	for _, g := range groups {
		ordered = append(ordered, g)
	}
	// Groups in the order of their values, numbers as numbers (2 before
	// 10), then by encoding, which breaks every tie deterministically.
	slices.SortFunc(ordered, func(a, b *group) int {
		return cmp.Or(compareTuples(a.values, b.values), cmp.Compare(a.key, b.key))
	})
	for _, g := range ordered {
		row := append([]any(nil), g.values...)
		for _, a := range c.CombinedFields {
			row = append(row, fold(a, g.rows, ev))
		}
		res.Rows = append(res.Rows, row)
	}
	return res
}

// rowName names a row by its cluster, for errors, when it has one.
func rowName(r map[string]any) string {
	if inv, ok := r["inventory"].(map[string]any); ok {
		if n, ok := inv["name"].(string); ok {
			return "cluster " + n + ": "
		}
	}
	return ""
}

// fold aggregates one column over a group; values that are not numbers
// are left out of SUM, AVG, MIN and MAX. COUNT and SUM of nothing are 0,
// as in KubeStellar's API; AVG, MIN and MAX of nothing are nil.
func fold(a Aggregate, rows []map[string]any, ev *evaluator) any {
	if a.Type == Count {
		return int64(len(rows))
	}
	var nums []float64
	for _, r := range rows {
		if f, ok := number(ev.eval(*a.Subject, r, a.Name+" subject")); ok && !math.IsNaN(f) {
			nums = append(nums, f)
		}
	}
	if len(nums) == 0 {
		if a.Type == Sum {
			return 0.0
		}
		return nil
	}
	switch a.Type {
	case Sum:
		var s float64
		for _, f := range nums {
			s += f
		}
		return s
	case Avg:
		var s float64
		for _, f := range nums {
			s += f
		}
		return s / float64(len(nums))
	case Min:
		return slices.Min(nums)
	case Max:
		return slices.Max(nums)
	}
	return nil
}

// compareTuples orders group values element by element: booleans (false
// first), then numbers by value, then strings, then anything else, and
// null last, as SQL's ascending order does in PostgreSQL.
func compareTuples(a, b []any) int {
	for i := range min(len(a), len(b)) {
		if c := compareValues(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareValues(a, b any) int {
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	if x, ok := a.(bool); ok {
		y, _ := b.(bool)
		return cmp.Compare(boolRank(x), boolRank(y))
	}
	if x, ok := number(a); ok {
		y, _ := number(b)
		return cmp.Compare(x, y)
	}
	if x, ok := a.(string); ok {
		y, _ := b.(string)
		return cmp.Compare(x, y)
	}
	return 0
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rank is a group value's place in the order.
func rank(v any) int {
	if v == nil {
		return 4
	}
	if _, ok := v.(bool); ok {
		return 0
	}
	if _, ok := number(v); ok {
		return 1
	}
	if _, ok := v.(string); ok {
		return 2
	}
	return 3
}
