package generate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// TestManagedResourcesShowReadyAndSynced: every managed resource kind the
// provider ships prints READY and SYNCED first in kubectl get, as
// Crossplane's own and the upjet providers' kinds do, so a refusal
// (Synced False) shows in the listing users read first.
func TestManagedResourcesShowReadyAndSynced(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(support.Root(), "package", "provider", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	managed := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(crd.Spec.Names.Categories, "managed") {
			continue
		}
		managed++
		for _, v := range crd.Spec.Versions {
			var names []string
			for _, c := range v.AdditionalPrinterColumns {
				names = append(names, c.Name)
			}
			if len(names) < 2 || names[0] != "READY" || names[1] != "SYNCED" {
				t.Errorf("%s %s prints %v, want READY and SYNCED first", crd.Spec.Names.Kind, v.Name, names)
			}
		}
	}
	if managed == 0 {
		t.Fatal("no managed resource kinds")
	}
}
