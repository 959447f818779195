// Package expand customizes a workload object for one cluster, as
// KubeStellar's template expansion does: every leaf string that holds
// "{{" is a Go text/template, expanded with the cluster's properties.
//
// The templates come from users' objects and run in the function every
// tenant shares, so the language is bounded: no sub-templates (define,
// template, block: their recursion is unbounded), range only over the
// properties themselves and at most two deep, printf without huge
// widths, at most MaxOutput bytes per string, and a Budget for all the
// templates of one Placement, spent while they run: every byte written
// or built by a function (print and the others, whose results a variable
// can keep and double), every string compared, every node run, every
// iteration a range may take; and MaxTemplateText of template text for
// a Placement, each leaf parsed once for all its clusters. A template
// that would overspend stops with an error before it allocates. A missing
// property is an error, never "<no value>".
package expand

import (
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/function/placement/jsonpath"
)

// Annotation asks for template expansion when it is exactly "true".
const Annotation = "control.kubestellar.io/expand-templates"

// PropertiesNamespace holds a ConfigMap per cluster whose data are
// properties of highest precedence.
const PropertiesNamespace = "customization-properties"

// Limits on what one template may do.
const (
	MaxOutput     = 64 << 10
	maxRangeDepth = 2
	maxWidth      = 1000
)

// Requested reports whether obj asks for expansion.
func Requested(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	return ann[Annotation] == "true"
}

// Properties merges a cluster's properties in the seed's precedence, from
// lowest: the cluster's name as clusterName, its labels, its annotations,
// then its ConfigMap's data and binary data. Only keys that are Go
// identifiers become properties; others cannot be named in a template.
func Properties(clusterName string, labels, annotations, data map[string]string, binaryData map[string][]byte) map[string]string {
	props := map[string]string{"clusterName": clusterName}
	for _, m := range []map[string]string{labels, annotations, data} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if token.IsIdentifier(k) {
				props[k] = m[k]
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(binaryData)) {
		if token.IsIdentifier(k) {
			props[k] = string(binaryData[k])
		}
	}
	return props
}

// Error is one leaf's failure, at its location in the object.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }

// Object returns a copy of obj with every leaf string expanded for the
// properties, and the errors of the leaves that failed (their strings are
// left as they were). Map keys are never expanded. Every template spends
// from b.
func Object(obj map[string]any, props map[string]string, b *Budget) (map[string]any, []error) {
	out := runtime.DeepCopyJSON(obj)
	var errs []error
	walk(out, "", props, b, &errs)
	return out, errs
}

func walk(v any, path string, props map[string]string, b *Budget, errs *[]error) any {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			t[k] = walk(t[k], path+jsonpath.Segment(k), props, b, errs)
		}
	case []any:
		for i := range t {
			t[i] = walk(t[i], path+"["+strconv.Itoa(i)+"]", props, b, errs)
		}
	case string:
		if !strings.Contains(t, "{{") {
			return t
		}
		s, err := String(t, props, b)
		if err != nil {
			*errs = append(*errs, &Error{Path: "$" + path, Err: err})
			return t
		}
		return s
	}
	return v
}

// String expands one template, spending from b.
func String(text string, props map[string]string, b *Budget) (string, error) {
	t, err := b.parse(text)
	if err != nil {
		return "", err
	}
	// What running it may take is paid for before it runs: every node,
	// a range's body once for each iteration it may take, however little
	// each writes.
	work, err := check(t.Root, 0, int64(len(props)))
	if err != nil {
		return "", err
	}
	if err := b.spend(work); err != nil {
		return "", err
	}
	w := limited{budget: b}
	if err := t.Execute(&w, props); err != nil {
		return "", err
	}
	return w.String(), nil
}

// parse is text's template, parsed the first time the Placement shows it
// and kept for its other clusters; refused once the Placement's
// templates hold more than MaxTemplateText.
func (b *Budget) parse(text string) (*template.Template, error) {
	if p, ok := b.parsed[text]; ok {
		return p.t, p.err
	}
	if b.text+len(text) > MaxTemplateText {
		return nil, fmt.Errorf("the Placement's templates hold more than %d bytes of template text", MaxTemplateText)
	}
	b.text += len(text)
	t, err := template.New("leaf").Option("missingkey=error").Funcs(b.funcs()).Parse(text)
	if err == nil && len(t.Templates()) > 1 {
		t, err = nil, errors.New("define and block are not allowed")
	}
	if err == nil {
		// What cannot run bounded is refused whatever the properties.
		if _, err = check(t.Root, 0, 0); err != nil {
			t = nil
		}
	}
	if b.parsed == nil {
		b.parsed = map[string]parsedTemplate{}
	}
	b.parsed[text] = parsedTemplate{t: t, err: err}
	return t, err
}

// check refuses what could run unbounded, and returns how much running
// the template may take at most with n properties: a unit for every node
// and every argument of its pipelines, a range's body once for each of
// its n iterations.
func check(node parse.Node, ranges int, n int64) (int64, error) {
	switch t := node.(type) {
	case *parse.ListNode:
		if t == nil {
			return 0, nil
		}
		var total int64
		for _, c := range t.Nodes {
			it, err := check(c, ranges, n)
			if err != nil {
				return 0, err
			}
			total += 1 + it
		}
		return total, nil
	case *parse.ActionNode:
		return pipeCost(t.Pipe), nil
	case *parse.TemplateNode:
		return 0, fmt.Errorf("{{template %q}} is not allowed", t.Name)
	case *parse.RangeNode:
		if !overProperties(t.Pipe) {
			return 0, errors.New("range is allowed only over the properties ({{range $k, $v := .}}, or $ within a range)")
		}
		if ranges+1 > maxRangeDepth {
			return 0, fmt.Errorf("ranges nest at most %d deep", maxRangeDepth)
		}
		body, err := check(t.List, ranges+1, n)
		if err != nil {
			return 0, err
		}
		other, err := check(t.ElseList, ranges, n)
		// Each of n iterations, and what its body takes each time.
		return n*(1+body) + other, err
	case *parse.IfNode:
		work, err := branches(t.List, t.ElseList, ranges, n)
		return pipeCost(t.Pipe) + work, err
	case *parse.WithNode:
		work, err := branches(t.List, t.ElseList, ranges, n)
		return pipeCost(t.Pipe) + work, err
	}
	return 0, nil
}

// pipeCost is a unit for every argument a pipeline evaluates, those of
// the pipelines it nests included.
func pipeCost(p *parse.PipeNode) int64 {
	if p == nil {
		return 0
	}
	var n int64
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			n++
			if inner, ok := a.(*parse.PipeNode); ok {
				n += pipeCost(inner)
			}
		}
	}
	return n
}

// branches is check of both lists of an if or with.
func branches(list, elseList *parse.ListNode, ranges int, n int64) (int64, error) {
	a, err := check(list, ranges, n)
	if err != nil {
		return 0, err
	}
	b, err := check(elseList, ranges, n)
	return a + b, err
}

// overProperties reports a range over . or $: the properties (inside a
// range, . is a property's value, a string, which range refuses).
func overProperties(p *parse.PipeNode) bool {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.DotNode:
		return true
	case *parse.VariableNode:
		return len(a.Ident) == 1 && a.Ident[0] == "$"
	}
	return false
}

var widths = regexp.MustCompile(`%[-+# 0]*(\d+)?(?:\.(\d+))?`)

// printfSize checks a printf format's widths and precisions, which would
// make it allocate what it likes, and returns what the format itself may
// add to its arguments: every verb padded to maxWidth at most.
func printfSize(format string) (int, error) {
	if strings.Contains(format, "*") {
		return 0, errors.New("printf * widths are not allowed")
	}
	verbs := widths.FindAllStringSubmatch(format, -1)
	for _, m := range verbs {
		for _, n := range m[1:] {
			if v, err := strconv.Atoi(n); n != "" && (err != nil || v > maxWidth) {
				return 0, fmt.Errorf("printf width or precision %s is over %d", n, maxWidth)
			}
		}
	}
	return len(format) + len(verbs)*maxWidth, nil
}

// limited is a buffer that refuses to grow past MaxOutput, and spends
// from its budget what it is written.
type limited struct {
	bytes.Buffer
	budget *Budget
}

var errTooLong = fmt.Errorf("expands to more than %d bytes", MaxOutput)

func (l *limited) Write(p []byte) (int, error) {
	if l.Len()+len(p) > MaxOutput {
		return 0, errTooLong
	}
	if err := l.budget.spend(int64(len(p))); err != nil {
		return 0, err
	}
	return l.Buffer.Write(p)
}
