// Package generate checks that the generated files in the repository are
// what `make generate` produces from apis/ now.
package generate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// generated are the paths `make generate` owns.
var generated = []string{"apis", "package/configuration/xrds", "package/provider/crds", "package/function/input", "function/adxmon/crds", "docs/reference", "tools/adx-mon/otlp/protocolbuffers"}

func TestGeneratedFilesAreCurrent(t *testing.T) {
	support.NeedsTools(t)
	root := support.Root()

	// Regenerate in a copy of the tracked tree, so the check never touches
	// the working tree and ignores untracked files.
	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	scratch := t.TempDir()
	for f := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(root, f)); err != nil {
			continue // deleted but not yet committed
		}
		copyFile(t, filepath.Join(root, f), filepath.Join(scratch, f))
	}
	gen := exec.Command("make", "generate")
	gen.Dir = scratch
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("make generate: %v\n%s", err, out)
	}

	for _, dir := range generated {
		want := tree(t, scratch, dir)
		have := tree(t, root, dir)
		for f, w := range want {
			h, ok := have[f]
			switch {
			case !ok:
				t.Errorf("%s/%s is generated but missing: run make generate", dir, f)
			case !bytes.Equal(h, w):
				t.Errorf("%s/%s is stale: run make generate", dir, f)
			}
		}
		for f := range have {
			if _, ok := want[f]; !ok {
				t.Errorf("%s/%s is no longer generated: run make generate", dir, f)
			}
		}
	}
}

// isGeneratedName tells generated files from hand-written ones under apis/
// and in the OTLP module (whose go.mod is written by hand).
func isGeneratedName(dir, f string) bool {
	switch dir {
	case "apis":
		return strings.HasPrefix(filepath.Base(f), "zz_generated")
	case "tools/adx-mon/otlp/protocolbuffers":
		return strings.HasSuffix(f, ".pb.go")
	}
	return true
}

// tree reads the generated files under root/dir, keyed by path in dir.
func tree(t *testing.T, root, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	base := filepath.Join(root, dir)
	_ = filepath.Walk(base, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil //nolint:nilerr // a missing directory is an empty tree
		}
		rel, _ := filepath.Rel(base, p)
		if !isGeneratedName(dir, rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = b
		return nil
	})
	return files
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
