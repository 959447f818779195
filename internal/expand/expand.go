// Package expand customizes a workload object for one cluster, as
// KubeStellar's template expansion does: every leaf string that holds
// "{{" is a Go text/template, expanded with the cluster's properties.
//
// The templates come from users' objects and run in the function, so the
// language is bounded: no sub-templates (define, template, block: their
// recursion is unbounded), range only over the properties themselves and
// at most two deep, printf without huge widths, and at most MaxOutput
// bytes per string. A missing property is an error, never "<no value>".
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

	"github.com/fleetplane/fleetplane/internal/jsonpath"
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
// left as they were). Map keys are never expanded.
func Object(obj map[string]any, props map[string]string) (map[string]any, []error) {
	out := runtime.DeepCopyJSON(obj)
	var errs []error
	walk(out, "", props, &errs)
	return out, errs
}

func walk(v any, path string, props map[string]string, errs *[]error) any {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			t[k] = walk(t[k], path+jsonpath.Segment(k), props, errs)
		}
	case []any:
		for i := range t {
			t[i] = walk(t[i], path+"["+strconv.Itoa(i)+"]", props, errs)
		}
	case string:
		if !strings.Contains(t, "{{") {
			return t
		}
		s, err := String(t, props)
		if err != nil {
			*errs = append(*errs, &Error{Path: "$" + path, Err: err})
			return t
		}
		return s
	}
	return v
}

// String expands one template.
func String(text string, props map[string]string) (string, error) {
	t, err := template.New("leaf").Option("missingkey=error").Funcs(template.FuncMap{
		"printf": boundedPrintf,
	}).Parse(text)
	if err != nil {
		return "", err
	}
	if len(t.Templates()) > 1 {
		return "", errors.New("define and block are not allowed")
	}
	if err := check(t.Root, 0); err != nil {
		return "", err
	}
	var b limited
	if err := t.Execute(&b, props); err != nil {
		return "", err
	}
	return b.String(), nil
}

// check refuses what could run unbounded.
func check(n parse.Node, ranges int) error {
	switch t := n.(type) {
	case *parse.ListNode:
		if t == nil {
			return nil
		}
		for _, c := range t.Nodes {
			if err := check(c, ranges); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return fmt.Errorf("{{template %q}} is not allowed", t.Name)
	case *parse.RangeNode:
		if !overProperties(t.Pipe) {
			return errors.New("range is allowed only over the properties ({{range $k, $v := .}}, or $ within a range)")
		}
		if ranges+1 > maxRangeDepth {
			return fmt.Errorf("ranges nest at most %d deep", maxRangeDepth)
		}
		if err := check(t.List, ranges+1); err != nil {
			return err
		}
		return check(t.ElseList, ranges)
	case *parse.IfNode:
		if err := check(t.List, ranges); err != nil {
			return err
		}
		return check(t.ElseList, ranges)
	case *parse.WithNode:
		if err := check(t.List, ranges); err != nil {
			return err
		}
		return check(t.ElseList, ranges)
	}
	return nil
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

// boundedPrintf is printf that refuses widths and precisions above
// maxWidth, which would make it allocate what it likes.
func boundedPrintf(format string, args ...any) (string, error) {
	for _, m := range widths.FindAllStringSubmatch(format, -1) {
		for _, n := range m[1:] {
			if v, err := strconv.Atoi(n); n != "" && (err != nil || v > maxWidth) {
				return "", fmt.Errorf("printf width or precision %s is over %d", n, maxWidth)
			}
		}
	}
	if strings.Contains(format, "*") {
		return "", errors.New("printf * widths are not allowed")
	}
	return fmt.Sprintf(format, args...), nil
}

// limited is a buffer that refuses to grow past MaxOutput.
type limited struct{ bytes.Buffer }

var errTooLong = fmt.Errorf("expands to more than %d bytes", MaxOutput)

func (l *limited) Write(p []byte) (int, error) {
	if l.Len()+len(p) > MaxOutput {
		return 0, errTooLong
	}
	return l.Buffer.Write(p)
}
