package v1alpha1

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Selects reports whether the selector chooses the object of group and
// kind named name with labels. Versions do not matter: every version of a
// kind names the same objects.
func (s *ObjectSelector) Selects(gk schema.GroupKind, name string, labels map[string]string) bool {
	if schema.FromAPIVersionAndKind(s.APIVersion, s.Kind).GroupKind() != gk {
		return false
	}
	if len(s.Names) > 0 {
		return slices.Contains(s.Names, name)
	}
	if len(s.MatchLabels) == 0 {
		// The schema refuses a selector with neither: it would select
		// everything.
		return false
	}
	for k, v := range s.MatchLabels {
		if have, ok := labels[k]; !ok || have != v {
			return false
		}
	}
	return true
}

// Selects reports whether any of the spec's object selectors chooses the
// object.
func (s *PlacementSpec) Selects(gk schema.GroupKind, name string, labels map[string]string) bool {
	for i := range s.Objects {
		if s.Objects[i].Selects(gk, name, labels) {
			return true
		}
	}
	return false
}
