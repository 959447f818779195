package image

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestDirsReproducible: directories land under their image path in path
// order, and the same files give the same digest whatever order the map
// is walked in.
func TestDirsReproducible(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	for p, body := range map[string]string{bin: "#!", "crds/b.yaml": "b", "crds/sub/a.yaml": "a", "hooks/h.yaml": "h"} {
		if !filepath.IsAbs(p) {
			p = filepath.Join(tmp, p)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := Image{Binary: bin, Path: "/crossplane", Dirs: map[string]string{"/webhookconfigurations": filepath.Join(tmp, "hooks"), "/crds": filepath.Join(tmp, "crds")}}
	first, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := first.Digest()
	for range 5 {
		again, err := Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		if d2, _ := again.Digest(); d2 != d1 {
			t.Fatalf("digest %s, then %s", d1, d2)
		}
	}
	var names []string
	tr := tar.NewReader(mutate.Extract(first))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	want := []string{"crossplane", "crds", "crds/b.yaml", "crds/sub", "crds/sub/a.yaml", "webhookconfigurations", "webhookconfigurations/h.yaml"}
	if !slices.Equal(names, want) {
		t.Errorf("layer holds %v, want %v", names, want)
	}
	if _, err := Build(Image{Binary: bin, Path: "/x", Dirs: map[string]string{"relative": tmp}}); err == nil {
		t.Error("a relative image directory was accepted")
	}
}
