package generate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// packageMeta is what a package's crossplane.yaml says of itself.
type packageMeta struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Crossplane struct {
			Version string `json:"version"`
		} `json:"crossplane"`
	} `json:"spec"`
}

// crossplaneConstraint is the Crossplane every package accepts: the
// minor release the docs require (docs/install.md, README) and the tests
// run (tools/tools.sh crossplane-core), up to the next major.
const crossplaneConstraint = ">=v2.4.0-0, <v3.0.0-0"

// TestPackageMetadata: every package says who maintains it, where its
// source is, what it holds (naming every kind it serves), has a readme
// and a friendly name for package browsers, and accepts the Crossplane
// the docs require and the tests run, no older.
func TestPackageMetadata(t *testing.T) {
	root := support.Root()
	files, _ := filepath.Glob(filepath.Join(root, "package", "*", "crossplane.yaml"))
	files = append(files, filepath.Join(root, "crossplane.yaml"))
	if len(files) != 6 {
		t.Fatalf("%d package metadata files, want the six packages'", len(files))
	}
	// What each package serves: the function composes every XRD's kind,
	// the provider serves every managed resource kind, a Configuration
	// the kinds of its group's XRDs.
	xrdKinds := kindsOf(t, filepath.Join(root, "package", "configuration", "xrds", "*.yaml"), `(?m)^    kind: (\w+)$`)
	var mrKinds []string
	for _, k := range kindsOf(t, filepath.Join(root, "package", "provider", "crds", "*.yaml"), `(?m)^    kind: (\w+)$`) {
		if !strings.HasPrefix(k, "ProviderConfig") && !strings.HasPrefix(k, "ClusterProviderConfig") {
			mrKinds = append(mrKinds, k)
		}
	}
	configurationKinds := map[string][]string{
		"fleetplane-adx":         kindsOf(t, filepath.Join(root, "package", "configuration", "xrds", "*.adx.fleetplane.io.yaml"), `(?m)^    kind: (\w+)$`),
		"fleetplane-experiments": kindsOf(t, filepath.Join(root, "package", "configuration", "xrds", "*.experiments.fleetplane.io.yaml"), `(?m)^    kind: (\w+)$`),
		"fleetplane-placement":   kindsOf(t, filepath.Join(root, "package", "configuration", "xrds", "*.placement.fleetplane.io.yaml"), `(?m)^    kind: (\w+)$`),
		"fleetplane":             xrdKinds,
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m packageMeta
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		a := m.Metadata.Annotations
		for _, key := range []string{"meta.crossplane.io/maintainer", "meta.crossplane.io/source", "meta.crossplane.io/license", "meta.crossplane.io/description", "meta.crossplane.io/readme", "friendly-name.meta.crossplane.io"} {
			if strings.TrimSpace(a[key]) == "" {
				t.Errorf("%s: no annotation %s", rel, key)
			}
		}
		if !strings.Contains(a["meta.crossplane.io/maintainer"], "<") {
			t.Errorf("%s: the maintainer %q gives no contact (<…>)", rel, a["meta.crossplane.io/maintainer"])
		}
		if m.Spec.Crossplane.Version != crossplaneConstraint {
			t.Errorf("%s: accepts Crossplane %q, want %q", rel, m.Spec.Crossplane.Version, crossplaneConstraint)
		}
		var kinds []string
		switch m.Kind {
		case "Function":
			kinds = xrdKinds
		case "Provider":
			kinds = mrKinds
		default:
			kinds = configurationKinds[m.Metadata.Name]
		}
		if len(kinds) == 0 {
			t.Errorf("%s: no kinds found for %s %s", rel, m.Kind, m.Metadata.Name)
		}
		for _, k := range kinds {
			if !regexp.MustCompile(`\b` + k + `\b`).MatchString(a["meta.crossplane.io/description"]) {
				t.Errorf("%s: its description does not name %s, which it serves", rel, k)
			}
		}
	}
	// The docs' requirement is the constraint's.
	for _, doc := range []string{"README.md", "docs/install.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "Crossplane v2.4 or later") {
			t.Errorf("%s does not say Crossplane v2.4 or later, which the packages require", doc)
		}
	}
	tools, err := os.ReadFile(filepath.Join(root, "tools", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^crossplane-core\|v2\.4\.\d+\|`).Match(tools) {
		t.Error("the tests run a Crossplane other than v2.4, which the packages' constraint names as the oldest")
	}
}

// kindsOf is every match of re's group in the files of glob.
func kindsOf(t *testing.T, glob, re string) []string {
	t.Helper()
	files, _ := filepath.Glob(glob)
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	return out
}
