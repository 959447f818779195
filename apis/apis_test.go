package apis

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

var groupName = regexp.MustCompile(`(?m)^// \+groupName=(\S+)$`)

// groupsInTree finds every API group declared under apis/ by its marker.
func groupsInTree(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range groupName.FindAllSubmatch(b, -1) {
			found[string(m[1])] = filepath.Dir(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestEveryGroupIsRegistered(t *testing.T) {
	registered := func(b runtime.SchemeBuilder) []string {
		s := runtime.NewScheme()
		if err := b.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, gv := range s.PrioritizedVersionsAllGroups() {
			out = append(out, gv.Group)
		}
		return out
	}
	composite, managed, input := registered(Composite), registered(Managed), registered(Input)
	for group, dir := range groupsInTree(t) {
		var want []string
		switch {
		case group == "fn.fleetplane.io":
			want = input
		case group == "m.fleetplane.io" || strings.HasSuffix(group, ".m.fleetplane.io"):
			want = managed
		default:
			want = composite
		}
		if !slices.Contains(want, group) {
			t.Errorf("group %s (%s) is not registered in its list in apis.go", group, dir)
		}
	}
	if err := AddToScheme(runtime.NewScheme()); err != nil {
		t.Errorf("AddToScheme: %v", err)
	}
}
