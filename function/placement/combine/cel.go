package combine

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"google.golang.org/protobuf/types/known/structpb"
)

// CEL expressions are written as KubeStellar's StatusCollectors write
// them, over four variables of each row: inventory (the cluster: name),
// obj (the workload object as the control plane holds it), returned (what
// the cluster returned: status) and propagation (stale,
// lastReturnedUpdateTimestamp).
var celVariables = []string{"inventory", "obj", "returned", "propagation"}

const (
	// MaxCEL bounds a CEL expression's length, as the schema does.
	MaxCEL = 1024
	// celCostLimit bounds one evaluation on one row. A row is one object;
	// comparisons and a few lookups cost tens, a comprehension over a
	// status list hundreds; a runaway one stops here.
	celCostLimit = 100_000
)

var celEnv = func() *cel.Env {
	// Reported numbers decode as integers or doubles, whichever their
	// JSON was: compare them by value (2 > 1.5), as KubeStellar's users
	// expect.
	opts := []cel.EnvOption{cel.CrossTypeNumericComparisons(true)}
	for _, v := range celVariables {
		opts = append(opts, cel.Variable(v, cel.DynType))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		panic(err) // fixed options: a programming error
	}
	return env
}()

// compiled is a CEL expression planned, with its result type.
type compiled struct {
	prg cel.Program
	// out is the result's type; a filter needs bool, or dyn, which is
	// decided per row.
	out *cel.Type
	err error
}

// maxCompiled bounds the programs kept. Expressions are written by
// admins, in cluster-scoped StatusCollectors, so there are few; the bound
// only keeps a churn of edits from growing the shared function.
const maxCompiled = 1024

// programs keeps every expression compiled once per process: the same
// collector is checked, then evaluated for each object it combines, at
// every RunFunction. Programs are safe for concurrent use.
var programs = struct {
	sync.Mutex
	byExpr map[string]compiled
}{byExpr: map[string]compiled{}}

// compileCEL parses, checks and plans expr, once; wantBool for a filter,
// whose result must be a boolean.
func compileCEL(expr string, wantBool bool) (cel.Program, error) {
	programs.Lock()
	c, ok := programs.byExpr[expr]
	programs.Unlock()
	if !ok {
		c = compile(expr)
		programs.Lock()
		if len(programs.byExpr) >= maxCompiled {
			clear(programs.byExpr)
		}
		programs.byExpr[expr] = c
		programs.Unlock()
	}
	if c.err != nil {
		return nil, c.err
	}
	if wantBool && !c.out.IsExactType(types.BoolType) && !c.out.IsExactType(types.DynType) {
		return nil, fmt.Errorf("CEL: a filter must be a boolean; this yields %s", c.out)
	}
	return c.prg, nil
}

func compile(expr string) compiled {
	if len(expr) > MaxCEL {
		return compiled{err: fmt.Errorf("CEL expression is %d characters long; the limit is %d", len(expr), MaxCEL)}
	}
	ast, iss := celEnv.Compile(expr)
	if iss.Err() != nil {
		return compiled{err: fmt.Errorf("CEL: %w", iss.Err())}
	}
	prg, err := celEnv.Program(ast, cel.CostLimit(celCostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return compiled{err: fmt.Errorf("CEL: %w", err)}
	}
	return compiled{prg: prg, out: ast.OutputType()}
}

// celActivation is a row as CEL's variables; a variable the row lacks is
// an empty map, so that has(returned.status) answers rather than fails.
func celActivation(row map[string]any) map[string]any {
	act := make(map[string]any, len(celVariables))
	for _, v := range celVariables {
		if m, ok := row[v].(map[string]any); ok {
			act[v] = m
		} else {
			act[v] = map[string]any{}
		}
	}
	return act
}

// native turns a CEL value into the JSON-shaped value rows and results
// hold: integers stay int64, lists and maps become []any and
// map[string]any.
func native(v ref.Val) (any, error) {
	switch t := v.(type) {
	case types.Null:
		return nil, nil //nolint:nilnil // JSON null is a value
	case types.Bool:
		return bool(t), nil
	case types.Int:
		return int64(t), nil
	case types.Uint:
		return float64(t), nil
	case types.Double:
		return float64(t), nil
	case types.String:
		return string(t), nil
	}
	pb, err := v.ConvertToNative(reflect.TypeFor[*structpb.Value]())
	if err != nil {
		return nil, fmt.Errorf("CEL: the result, a %s, is not a JSON value", v.Type())
	}
	return pb.(*structpb.Value).AsInterface(), nil //nolint:forcetypeassert // ConvertToNative returns the type asked for
}
