package support

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// GeneratedField is the schema of one field (a dotted path from the root,
// e.g. "spec.forProvider.schedule") of a generated CRD or XRD, so that tests
// can hold apply-time checks to the Go code they mirror.
func GeneratedField(t testing.TB, file, path string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	b, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		t.Fatal(err)
	}
	// An XRD and a CRD both keep the schema at spec.versions[0].schema.
	var doc struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Spec.Versions) == 0 {
		t.Fatalf("%s has no versions", file)
	}
	props := doc.Spec.Versions[0].Schema.OpenAPIV3Schema
	for p := range strings.SplitSeq(path, ".") {
		next, ok := props.Properties[p]
		if !ok {
			t.Fatalf("%s has no %s", file, path)
		}
		props = next
	}
	return props
}
