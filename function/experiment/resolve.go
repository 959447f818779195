package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
)

// Resolved is a component ready to deploy: its sources with parameters
// applied.
type Resolved struct {
	Name    string
	Sources []v1alpha1.Source
	// Origin says where it came from, for status: the Component, or the
	// convention path.
	Origin string
	// Observability is the Component's, when it declares it.
	Observability *v1alpha1.Observability
}

// refName returns the component name and type of a reference.
func refName(r v1alpha1.ComponentRef) (string, v1alpha1.ComponentType) {
	switch {
	case r.App != "":
		return r.App, v1alpha1.ComponentApp
	case r.Workflow != "":
		return r.Workflow, v1alpha1.ComponentWorkflow
	default:
		return r.Config, v1alpha1.ComponentConfig
	}
}

// Resolve turns a reference into sources: the Component of that name when
// there is one, else the convention path in the configured repository. A
// reference that resolves to nothing is an error, never a placeholder.
func Resolve(ref v1alpha1.ComponentRef, found *v1alpha1.Component, cfg Config) (Resolved, error) {
	name, typ := refName(ref)
	if found == nil {
		if cfg.ComponentRepoURL == "" {
			return Resolved{}, fmt.Errorf("component %s: no Component %s exists and no convention repository is configured (function input experiments.componentRepoURL)", name, name)
		}
		path := fmt.Sprintf("components/%s/%s", typ, name)
		src := v1alpha1.Source{RepoURL: cfg.ComponentRepoURL, TargetRevision: cfg.ComponentRevision, Path: path}
		if len(ref.Params) > 0 {
			src.Helm = &v1alpha1.Helm{Parameters: helmParams(nil, ref.Params)}
		}
		return Resolved{Name: name, Sources: []v1alpha1.Source{src}, Origin: cfg.ComponentRepoURL + "/" + path}, nil
	}
	if err := usable(name, typ, found); err != nil {
		return Resolved{}, err
	}

	// Declared defaults first, then the reference's params over them.
	values := map[string]string{}
	declared := map[string]bool{}
	var missing []string
	for _, p := range found.Spec.Parameters {
		declared[p.Name] = true
		if v, ok := ref.Params[p.Name]; ok {
			values[p.Name] = v
			continue
		}
		if p.Default != "" {
			values[p.Name] = p.Default
			continue
		}
		if p.Required {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return Resolved{}, fmt.Errorf("component %s: required parameters %s are not set", name, strings.Join(missing, ", "))
	}
	// Values bound to declared types: a typo in a number fails here,
	// named, not in Helm's render on a cluster.
	types := map[string]v1alpha1.ParameterType{}
	for _, p := range found.Spec.Parameters {
		types[p.Name] = p.Type
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if err := types[k].Check(values[k]); err != nil {
			return Resolved{}, fmt.Errorf("component %s: parameter %s %w", name, k, err)
		}
	}
	if len(found.Spec.Parameters) > 0 {
		var unknown []string
		for k := range ref.Params {
			if !declared[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return Resolved{}, fmt.Errorf("component %s: parameters %s are not declared by Component %s", name, strings.Join(unknown, ", "), name)
		}
	} else {
		maps.Copy(values, ref.Params)
	}

	out := Resolved{Name: name, Origin: "Component " + name, Observability: found.Spec.Observability.DeepCopy()}
	for _, s := range found.Spec.Sources {
		s := *s.DeepCopy()
		if s.TargetRevision == "" {
			s.TargetRevision = "HEAD"
		}
		// Parameters apply to sources Helm renders: charts, and paths
		// with Helm settings. A values-only source (ref) renders nothing.
		if s.Ref == "" && (s.Chart != "" || s.Helm != nil) && len(values) > 0 {
			if s.Helm == nil {
				s.Helm = &v1alpha1.Helm{}
			}
			s.Helm.Parameters = helmParams(s.Helm.Parameters, values)
		}
		out.Sources = append(out.Sources, s)
	}
	return out, nil
}

// usable reports why a Component cannot serve a reference of that type.
func usable(name string, typ v1alpha1.ComponentType, found *v1alpha1.Component) error {
	if found.Spec.Type != typ {
		return fmt.Errorf("component %s: Component %s is of type %s, referenced as %s", name, name, found.Spec.Type, typ)
	}
	if len(found.Spec.Sources) == 0 {
		return fmt.Errorf("component %s: Component %s has no sources", name, name)
	}
	if err := found.Spec.Observability.Check(); err != nil {
		return fmt.Errorf("component %s: observability: %w", name, err)
	}
	return nil
}

// helmParams merges values over a source's own parameters and returns
// them sorted by name, so that the same input renders the same Application.
func helmParams(base []v1alpha1.HelmParameter, values map[string]string) []v1alpha1.HelmParameter {
	byName := map[string]v1alpha1.HelmParameter{}
	for _, p := range base {
		byName[p.Name] = p
	}
	for k, v := range values {
		p := byName[k]
		p.Name, p.Value = k, v
		byName[k] = p
	}
	out := make([]v1alpha1.HelmParameter, 0, len(byName))
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[k])
	}
	return out
}
