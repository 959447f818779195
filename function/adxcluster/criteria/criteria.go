// Package criteria evaluates criteriaExpression: a CEL expression over the
// labels of the control plane a composite resource is reconciled on.
//
// Labels are offered two ways, so that both documented styles work:
//
//	labels["geo"] == "eu" && labels.has("tier")   // the labels map
//	geo == "eu" && tier != ""                     // one variable per label
//
// A label gets its own variable only when its key is a CEL identifier and
// not a reserved word or "labels"; every label is always in the map.
package criteria

import (
	"fmt"
	"maps"
	"regexp"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// costLimit bounds evaluation. Label maps are small, so any honest
// expression stays far below it; a runaway comprehension does not.
const costLimit = 100_000

// maxExpressionLength matches the XRD's limit for criteriaExpression.
const maxExpressionLength = 4096

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reserved are CEL's reserved words and builtin names a label must not shadow.
var reserved = map[string]bool{
	"labels": true, "true": true, "false": true, "null": true, "in": true,
	"as": true, "break": true, "const": true, "continue": true, "else": true,
	"for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true,
	"var": true, "void": true, "while": true,
	"int": true, "uint": true, "double": true, "bool": true, "string": true,
	"bytes": true, "list": true, "map": true, "type": true, "null_type": true,
	"dyn": true, "has": true,
}

// Evaluate reports whether expr holds for labels. An empty expression holds.
// The error says which stage failed: parse, type-check or evaluation.
func Evaluate(expr string, labels map[string]string) (bool, error) {
	if expr == "" {
		return true, nil
	}
	if len(expr) > maxExpressionLength {
		return false, fmt.Errorf("expression is %d characters long; the limit is %d", len(expr), maxExpressionLength)
	}
	env, err := newEnv(labels)
	if err != nil {
		return false, fmt.Errorf("environment: %w", err)
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return false, fmt.Errorf("parse: %w", iss.Err())
	}
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return false, fmt.Errorf("type-check: %w", iss.Err())
	}
	if !checked.OutputType().IsExactType(types.BoolType) && checked.OutputType() != types.DynType {
		return false, fmt.Errorf("type-check: the expression yields %s, not bool", checked.OutputType())
	}
	prg, err := env.Program(checked, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return false, fmt.Errorf("program: %w", err)
	}
	out, _, err := prg.Eval(activation(labels))
	if err != nil {
		return false, fmt.Errorf("evaluation: %w", err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("evaluation: the expression yields %s, not bool", out.Type())
	}
	return b, nil
}

func newEnv(labels map[string]string) (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.Variable("labels", cel.MapType(cel.StringType, cel.StringType)),
		// labels.has("k") reads naturally and appears in the seed docs,
		// although CEL's own spelling is has(labels.k) or "k" in labels.
		cel.Function("has",
			cel.MemberOverload("labels_has_string",
				[]*cel.Type{cel.MapType(cel.StringType, cel.StringType), cel.StringType}, cel.BoolType,
				cel.BinaryBinding(mapHas))),
	}
	for _, k := range variableKeys(labels) {
		opts = append(opts, cel.Variable(k, cel.StringType))
	}
	return cel.NewEnv(opts...)
}

func mapHas(m, key ref.Val) ref.Val {
	mapper, ok := m.(traits.Mapper)
	if !ok {
		return types.NewErr("has: receiver is not a map")
	}
	_, found := mapper.Find(key)
	return types.Bool(found)
}

// variableKeys are the label keys that become variables, sorted.
func variableKeys(labels map[string]string) []string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if identifier.MatchString(k) && !reserved[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func activation(labels map[string]string) map[string]any {
	vars := make(map[string]any, len(labels)+1)
	m := make(map[string]string, len(labels))
	maps.Copy(m, labels)
	vars["labels"] = m
	for _, k := range variableKeys(labels) {
		vars[k] = labels[k]
	}
	return vars
}
