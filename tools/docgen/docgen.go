package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/function/runmetrics"
	"github.com/fleetplane/fleetplane/internal/metrics"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
)

// definition is what docgen reads of a CRD or an XRD: both carry the
// group, names, scope and one schema per version in the same places.
type definition struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema extv1.JSONSchemaProps `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func run(out string, dirs []string, help string) error {
	var defs []definition
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return err
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			var d definition
			if err := yaml.Unmarshal(raw, &d); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if d.Spec.Group == "" || d.Spec.Names.Kind == "" {
				return fmt.Errorf("%s: no group or kind: not a CRD or XRD", f)
			}
			defs = append(defs, d)
		}
	}
	if len(defs) == 0 {
		return fmt.Errorf("no schemas in %v", dirs)
	}
	slices.SortFunc(defs, func(a, b definition) int {
		return cmp.Or(cmp.Compare(a.Spec.Group, b.Spec.Group), cmp.Compare(a.Spec.Names.Kind, b.Spec.Names.Kind))
	})
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var index strings.Builder
	index.WriteString(header + "# API reference\n\nEvery kind fleetplane defines, by API group. The composite resources (XRDs) are what teams apply; the managed resources are what the function composes for provider-fleetplane; the function input is what a Composition's pipeline step sets.\n\n| Group | Kinds |\n| --- | --- |\n")
	for group := range groups(defs) {
		page := render(group)
		name := group[0].Spec.Group + ".md"
		if err := os.WriteFile(filepath.Join(out, name), []byte(page), 0o644); err != nil {
			return err
		}
		var kinds []string
		for _, d := range group {
			kinds = append(kinds, fmt.Sprintf("[%s](%s#%s)", d.Spec.Names.Kind, name, strings.ToLower(d.Spec.Names.Kind)))
		}
		fmt.Fprintf(&index, "| `%s` | %s |\n", group[0].Spec.Group, strings.Join(kinds, ", "))
	}
	if help != "" {
		page, err := flags(help)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "flags.md"), []byte(page), 0o644); err != nil {
			return err
		}
		index.WriteString("\nThe command-line flags of function-fleetplane and provider-fleetplane, with their defaults: [flags.md](flags.md).\n")
	}
	if err := os.WriteFile(filepath.Join(out, "metrics.md"), []byte(metricsPage()), 0o644); err != nil {
		return err
	}
	index.WriteString("\nThe Prometheus metrics fleetplane registers, with their labels and how many series each may have: [metrics.md](metrics.md).\n")
	return os.WriteFile(filepath.Join(out, "README.md"), []byte(index.String()), 0o644)
}

// metricsPage is a table of fleetplane's own metrics per binary, from the
// definitions the binaries build them from.
func metricsPage() string {
	var b strings.Builder
	b.WriteString(header + "# Metrics\n\nfleetplane's own metrics, from the definitions the binaries register (`provider/fleetmetrics`, `function/runmetrics`). Besides these, provider-fleetplane serves crossplane-runtime's managed-resource metrics (`crossplane_managed_resource_*`) and controller-runtime's, and function-fleetplane the gRPC server's (`grpc_server_*`). No label carries free text: each is a closed set of values or names one Kubernetes object. [docs/operations.md](../operations.md) says what to watch and alert on.\n")
	for _, bin := range []struct {
		name string
		defs []metrics.Def
	}{{"provider-fleetplane", fleetmetrics.Defs}, {"function-fleetplane", runmetrics.Defs}} {
		fmt.Fprintf(&b, "\n## %s\n\n| Metric | Type | Labels | Series | Meaning |\n| --- | --- | --- | --- | --- |\n", bin.name)
		for _, d := range bin.defs {
			labels := "—"
			if len(d.Labels) > 0 {
				labels = "`" + strings.Join(d.Labels, "`, `") + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Type, labels, d.Series, strings.ReplaceAll(d.Help, "|", "\\|"))
		}
	}
	return b.String()
}

// flags is a page of each binary's --help, in the order of their names.
func flags(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no --help texts in %q", dir)
	}
	slices.Sort(files)
	var b strings.Builder
	b.WriteString(header + "# Flags\n\nWhat each binary's `--help` prints. A flag's environment variable, when it has one, is in parentheses.\n")
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n## %s\n\n```\n%s\n```\n", strings.TrimSuffix(filepath.Base(f), ".txt"), strings.TrimSpace(string(text)))
	}
	return b.String(), nil
}

const header = "<!-- Generated by `make generate` (tools/docgen) from the XRDs, the CRDs and the binaries' --help. DO NOT EDIT. -->\n\n"

// groups yields the definitions of each group in turn; defs is sorted.
func groups(defs []definition) func(func([]definition) bool) {
	return func(yield func([]definition) bool) {
		for len(defs) > 0 {
			n := 1
			for n < len(defs) && defs[n].Spec.Group == defs[0].Spec.Group {
				n++
			}
			if !yield(defs[:n]) {
				return
			}
			defs = defs[n:]
		}
	}
}

func render(defs []definition) string {
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "# `%s`\n", defs[0].Spec.Group)
	for _, d := range defs {
		for _, v := range d.Spec.Versions {
			if !v.Served {
				continue
			}
			what := "managed resource (CRD)"
			switch {
			case d.Kind == "CompositeResourceDefinition":
				what = "composite resource (XRD)"
			case strings.HasSuffix(d.Spec.Names.Kind, "ProviderConfig") || strings.HasSuffix(d.Spec.Names.Kind, "ProviderConfigUsage"):
				what = "provider configuration (CRD)"
			case d.Spec.Group == "fn.fleetplane.io":
				what = "function input (CRD, never installed)"
			}
			scope := cmp.Or(d.Spec.Scope, "Namespaced")
			fmt.Fprintf(&b, "\n## %s\n\n`%s/%s`, %s, %s.\n", d.Spec.Names.Kind, d.Spec.Group, v.Name, strings.ToLower(scope), what)
			root := v.Schema.OpenAPIV3Schema
			if s := oneLine(root.Description); s != "" {
				fmt.Fprintf(&b, "\n%s\n", s)
			}
			var rows, rules []string
			for _, top := range sortedKeys(root.Properties) {
				if top == "apiVersion" || top == "kind" || top == "metadata" {
					continue
				}
				p := root.Properties[top]
				walk(top, &p, slices.Contains(root.Required, top), &rows, &rules)
			}
			rules = append(rules, validations("", root.XValidations)...)
			if len(rows) > 0 {
				b.WriteString("\n| Field | Type | Default | Description |\n| --- | --- | --- | --- |\n")
				for _, r := range rows {
					b.WriteString(r)
				}
			}
			if len(rules) > 0 {
				b.WriteString("\nRules checked at apply time:\n\n")
				for _, r := range rules {
					b.WriteString(r)
				}
			}
		}
	}
	return b.String()
}

// walk appends a row for the field at path and each field beneath it.
func walk(path string, p *extv1.JSONSchemaProps, required bool, rows, rules *[]string) {
	typ := typeOf(p)
	if required {
		typ += ", required"
	}
	desc := oneLine(p.Description)
	if c := constraints(p); c != "" {
		desc = strings.TrimSpace(desc + " " + c)
	}
	def := ""
	if p.Default != nil {
		def = "`" + cell(string(p.Default.Raw)) + "`"
	}
	*rows = append(*rows, fmt.Sprintf("| `%s` | %s | %s | %s |\n", path, typ, def, cell(desc)))
	*rules = append(*rules, validations(path, p.XValidations)...)
	switch {
	case len(p.Properties) > 0:
		for _, k := range sortedKeys(p.Properties) {
			c := p.Properties[k]
			walk(path+"."+k, &c, slices.Contains(p.Required, k), rows, rules)
		}
	case p.Items != nil && p.Items.Schema != nil && len(p.Items.Schema.Properties) > 0:
		it := p.Items.Schema
		*rules = append(*rules, validations(path+"[]", it.XValidations)...)
		for _, k := range sortedKeys(it.Properties) {
			c := it.Properties[k]
			walk(path+"[]."+k, &c, slices.Contains(it.Required, k), rows, rules)
		}
	case p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil && len(p.AdditionalProperties.Schema.Properties) > 0:
		v := p.AdditionalProperties.Schema
		for _, k := range sortedKeys(v.Properties) {
			c := v.Properties[k]
			walk(path+".<key>."+k, &c, slices.Contains(v.Required, k), rows, rules)
		}
	}
}

func typeOf(p *extv1.JSONSchemaProps) string {
	switch {
	case p.XIntOrString:
		return "int or string"
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil:
		return "[]" + typeOf(p.Items.Schema)
	case p.Type == "object" && p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(p.AdditionalProperties.Schema)
	case p.Type == "object" && p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields && len(p.Properties) == 0:
		return "object (any fields)"
	case p.Type == "" && p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields:
		return "any"
	case p.Format != "":
		return p.Type + " (" + p.Format + ")"
	}
	return cmp.Or(p.Type, "any")
}

// constraints says what the schema accepts beyond the type.
func constraints(p *extv1.JSONSchemaProps) string {
	var c []string
	if len(p.Enum) > 0 {
		var vs []string
		for _, e := range p.Enum {
			vs = append(vs, "`"+string(e.Raw)+"`")
		}
		c = append(c, "One of "+strings.Join(vs, ", ")+".")
	}
	bound := func(what string, lo, hi *int64) {
		switch {
		case lo != nil && hi != nil:
			c = append(c, fmt.Sprintf("%s %d to %d.", what, *lo, *hi))
		case lo != nil:
			c = append(c, fmt.Sprintf("%s at least %d.", what, *lo))
		case hi != nil:
			c = append(c, fmt.Sprintf("%s at most %d.", what, *hi))
		}
	}
	bound("Length", p.MinLength, p.MaxLength)
	bound("Items", p.MinItems, p.MaxItems)
	bound("Properties", p.MinProperties, p.MaxProperties)
	if p.Minimum != nil || p.Maximum != nil {
		lo, hi := "", ""
		if p.Minimum != nil {
			lo = fmt.Sprintf("%g", *p.Minimum)
		}
		if p.Maximum != nil {
			hi = fmt.Sprintf("%g", *p.Maximum)
		}
		switch {
		case lo != "" && hi != "":
			c = append(c, "From "+lo+" to "+hi+".")
		case lo != "":
			c = append(c, "At least "+lo+".")
		default:
			c = append(c, "At most "+hi+".")
		}
	}
	if p.Pattern != "" {
		c = append(c, "Pattern `"+p.Pattern+"`.")
	}
	return strings.Join(c, " ")
}

func validations(path string, vs extv1.ValidationRules) []string {
	var out []string
	for _, v := range vs {
		at := path
		if at == "" {
			at = "(the object)"
		}
		msg := cmp.Or(v.Message, v.MessageExpression, "rule fails")
		out = append(out, fmt.Sprintf("- `%s`: %s (`%s`)\n", at, oneLine(msg), oneLine(v.Rule)))
	}
	return out
}

var space = regexp.MustCompile(`\s+`)

func oneLine(s string) string { return strings.TrimSpace(space.ReplaceAllString(s, " ")) }

// cell makes s safe inside a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
