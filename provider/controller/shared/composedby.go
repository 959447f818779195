package shared

// ComposedBy: a composite lists the resource among those it composes,
// from what Crossplane records on the composite rather than from the
// managed resource's owner reference, which whoever created it could
// have written.

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ComposedBy reports whether composite lists the resource of gvk named
// namespace/name among the resources it composes (its
// spec.crossplane.resourceRefs). A namespaced composite records its
// resources without a namespace: they are in its own.
func ComposedBy(composite *unstructured.Unstructured, gvk schema.GroupVersionKind, namespace, name string) bool {
	refs, _, _ := unstructured.NestedSlice(composite.Object, "spec", "crossplane", "resourceRefs")
	for _, r := range refs {
		m, _ := r.(map[string]any)
		if m["apiVersion"] != gvk.GroupVersion().String() || m["kind"] != gvk.Kind || m["name"] != name {
			continue
		}
		if ns, ok := m["namespace"].(string); !ok || ns == "" || ns == namespace {
			return true
		}
	}
	return false
}
