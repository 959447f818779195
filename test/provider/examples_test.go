package provider

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestExamplesAreValid applies every example of examples/provider to the
// API server in dry-run mode, so that the CRDs' schemas and CEL rules judge
// them as they would a user's kubectl apply.
func TestExamplesAreValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "provider", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	ns := namespace(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for i := 0; ; i++ {
			u := &unstructured.Unstructured{}
			if err := d.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			if u.Object == nil {
				continue
			}
			if u.GetNamespace() != "" {
				u.SetNamespace(ns)
			}
			// AlreadyExists comes after validation: the harness has its own
			// ClusterProviderConfig of that name.
			if err := kube.Create(context.Background(), u, client.DryRunAll); err != nil && !kerrors.IsAlreadyExists(err) {
				t.Errorf("%s: %s %s: %v", filepath.Base(f), u.GetKind(), u.GetName(), err)
			}
		}
	}
}
