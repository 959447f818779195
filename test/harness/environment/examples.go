package environment

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ExampleDocs reads the documents of a file under examples/, as kubectl
// apply -f would take them.
func ExampleDocs(root, rel string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(filepath.Join(root, "examples", rel))
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		if u.Object != nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// AsCreatedByUser drops what the API server sets, so that an example of
// an object as stored (the render tests' required resources) can be
// created.
func AsCreatedByUser(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	delete(u.Object, "status")
	if u.GetKind() == "Job" {
		// The API server writes a Job's selector, its controller-uid
		// labels and the tracking annotation itself, and refuses them
		// from a user.
		unstructured.RemoveNestedField(u.Object, "spec", "selector")
		for _, f := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
			labels, _, _ := unstructured.NestedStringMap(u.Object, f...)
			delete(labels, "controller-uid")
			delete(labels, "batch.kubernetes.io/controller-uid")
			_ = unstructured.SetNestedStringMap(u.Object, labels, f...)
		}
		u.SetAnnotations(nil)
	}
	return u
}

// CombinedRows are the rows a Placement's collector combined for one of
// its objects, as JSON; "" when there are none yet.
func CombinedRows(p *unstructured.Unstructured, kind, collector string) string {
	objs, _, _ := unstructured.NestedSlice(p.Object, "status", "objects")
	for _, o := range objs {
		m, _ := o.(map[string]any)
		if m["kind"] != kind {
			continue
		}
		cs, _ := m["combinedStatus"].([]any)
		for _, c := range cs {
			if r, _ := c.(map[string]any); r["collector"] == collector {
				b, _ := json.Marshal(r["rows"])
				return string(b)
			}
		}
	}
	return ""
}
