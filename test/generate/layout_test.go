package generate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

const module = "github.com/fleetplane/fleetplane"

// The tree's three homes of code (decision 0021): each binary at the top,
// and what both import under internal/.
var (
	functionTree = module + "/function"
	providerTree = module + "/provider"
	sharedTree   = module + "/internal"
)

// listed is what `go list -json` says of one package that the layout rule
// reads: its imports, its tests' included, and every package the binary
// it is the main package of depends on.
type listed struct {
	ImportPath   string   `json:"ImportPath"`
	Imports      []string `json:"Imports"`
	TestImports  []string `json:"TestImports"`
	XTestImports []string `json:"XTestImports"`
	Deps         []string `json:"Deps"`
}

// TestLayout keeps the split by binary: no package of one side imports one
// of the other (tests included), and every shared package is used by both
// binaries (one only, and it belongs to that side).
func TestLayout(t *testing.T) {
	pkgs := goList(t, "./function/...", "./provider/...", "./internal/...")
	for _, v := range layoutViolations(pkgs) {
		t.Error(v)
	}
}

// TestLayoutFailsOnPlantedImports: the rule catches each way the split can
// break, on package graphs planted for it.
func TestLayoutFailsOnPlantedImports(t *testing.T) {
	fn := func(deps ...string) listed {
		return listed{ImportPath: functionTree, Deps: append([]string{sharedTree + "/tenancy"}, deps...)}
	}
	pv := func(deps ...string) listed {
		return listed{ImportPath: providerTree, Deps: append([]string{sharedTree + "/tenancy"}, deps...)}
	}
	shared := listed{ImportPath: sharedTree + "/tenancy"}
	for _, tc := range []struct {
		name string
		pkgs []listed
		want string
	}{
		{"the split as it is", []listed{fn(), pv(), shared}, ""},
		{"function imports provider", []listed{fn(providerTree + "/kusto/kql"), pv(), shared,
			{ImportPath: functionTree + "/adxcluster", Imports: []string{providerTree + "/kusto/kql"}}},
			"function/adxcluster imports provider/kusto/kql"},
		{"a function test imports provider", []listed{fn(), pv(), shared,
			{ImportPath: functionTree + "/adxcluster", XTestImports: []string{providerTree + "/kusto/kql"}}},
			"function/adxcluster (its tests) imports provider/kusto/kql"},
		{"provider imports function", []listed{fn(), pv(functionTree + "/compose"), shared,
			{ImportPath: providerTree + "/controller/table", Imports: []string{functionTree + "/compose"}}},
			"provider/controller/table imports function/compose"},
		{"internal used by the function only", []listed{fn(sharedTree + "/azurename"), pv(), shared,
			{ImportPath: sharedTree + "/azurename"}},
			"internal/azurename is imported by the function only: move it under function/"},
		{"internal used by neither", []listed{fn(), pv(), shared, {ImportPath: sharedTree + "/unused"}},
			"internal/unused is imported by neither binary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := layoutViolations(tc.pkgs)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tc.want != "" && !slices.Contains(got, tc.want):
				t.Errorf("violations %q, want %q among them", got, tc.want)
			}
		})
	}
}

// layoutViolations says how pkgs (the function, provider and shared
// packages, the two main packages among them) break the split.
func layoutViolations(pkgs []listed) []string {
	side := func(path string) string {
		for _, tree := range []string{functionTree, providerTree, sharedTree} {
			if path == tree || strings.HasPrefix(path, tree+"/") {
				return tree
			}
		}
		return ""
	}
	other := map[string]string{functionTree: providerTree, providerTree: functionTree}
	short := func(path string) string { return strings.TrimPrefix(path, module+"/") }
	var out []string
	var fnDeps, pvDeps []string
	for _, p := range pkgs {
		switch p.ImportPath {
		case functionTree:
			fnDeps = p.Deps
		case providerTree:
			pvDeps = p.Deps
		}
		forbidden, ok := other[side(p.ImportPath)]
		if !ok {
			continue
		}
		for _, imports := range []struct {
			list []string
			what string
		}{{p.Imports, ""}, {p.TestImports, " (its tests)"}, {p.XTestImports, " (its tests)"}} {
			for _, imp := range imports.list {
				if side(imp) == forbidden {
					out = append(out, fmt.Sprintf("%s%s imports %s", short(p.ImportPath), imports.what, short(imp)))
				}
			}
		}
	}
	for _, p := range pkgs {
		if side(p.ImportPath) != sharedTree {
			continue
		}
		byFn, byPv := slices.Contains(fnDeps, p.ImportPath), slices.Contains(pvDeps, p.ImportPath)
		switch {
		case byFn && !byPv:
			out = append(out, short(p.ImportPath)+" is imported by the function only: move it under function/")
		case byPv && !byFn:
			out = append(out, short(p.ImportPath)+" is imported by the provider only: move it under provider/")
		case !byFn && !byPv:
			out = append(out, short(p.ImportPath)+" is imported by neither binary")
		}
	}
	return out
}

// goList runs `go list -json` over patterns from the module's root.
func goList(t *testing.T, patterns ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, patterns...)...)
	cmd.Dir = support.Root()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []listed
	for dec := json.NewDecoder(out); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}
