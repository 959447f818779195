package generate

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestVersionPins keeps the product module on the versions DESIGN.md pins:
// `go mod tidy` and `go get` can silently move them.
func TestVersionPins(t *testing.T) {
	wd, _ := os.Getwd()
	b, err := os.ReadFile(filepath.Join(wd, "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for mod, version := range map[string]string{
		"github.com/crossplane/function-sdk-go":            `v0\.7\.1`,
		"github.com/crossplane/crossplane-runtime/v2":      `v2\.4\.0`,
		"github.com/crossplane/crossplane/apis/v2":         `v2\.4\.0`,
		"github.com/Azure/azure-kusto-go/azkustodata":      `v1\.2\.3`,
		"github.com/Azure/azure-sdk-for-go/sdk/azidentity": `v1\.15\.0`,
		"github.com/google/cel-go":                         `v0\.30\.\d+`,
		"sigs.k8s.io/controller-runtime":                   `v0\.23\.1`,
		"k8s.io/apimachinery":                              `v0\.35\.\d+`,
	} {
		re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(mod) + `\s+` + version + `(\s|$)`)
		if !re.Match(b) {
			t.Errorf("go.mod does not pin %s at %s", mod, version)
		}
	}
}
