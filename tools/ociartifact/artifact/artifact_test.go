package artifact

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushPull: what Push writes, Pull reads back byte for byte, with its
// name, in the layout oras uses; Pull refuses an image that is no such
// artifact, and a file larger than it reads.
func TestPushPull(t *testing.T) {
	s := httptest.NewServer(registry.New())
	t.Cleanup(s.Close)
	host := strings.TrimPrefix(s.URL, "http://")
	file := []byte("# Source: package/rbac/a.yaml\napiVersion: v1\nkind: ServiceAccount\n")
	ref := host + "/fleetplane/fleetplane-rbac:v0.1.0"
	if _, err := Push(ref, "fleetplane-rbac.yaml", file, RBACType, YAML); err != nil {
		t.Fatal(err)
	}
	title, got, err := Pull(ref, RBACType)
	if err != nil || title != "fleetplane-rbac.yaml" || !bytes.Equal(got, file) {
		t.Fatalf("pulled %q %q, %v", title, got, err)
	}
	r, _ := name.ParseReference(ref)
	img, _ := remote.Image(r)
	m, _ := img.Manifest()
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != RBACType || m.Layers[0].MediaType != YAML {
		t.Errorf("manifest %s, config %s, layer %s", m.MediaType, m.Config.MediaType, m.Layers[0].MediaType)
	}

	other := host + "/fleetplane/image:v1"
	rnd, _ := random.Image(64, 2)
	or, _ := name.ParseReference(other)
	if err := remote.Write(or, rnd); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Pull(other, RBACType); err == nil || !strings.Contains(err.Error(), "is not a "+string(RBACType)+" artifact of one file") {
		t.Errorf("pulling an image: %v", err)
	}

	big := host + "/fleetplane/big:v1"
	if _, err := Push(big, "big.yaml", bytes.Repeat([]byte("x"), MaxBytes+1), RBACType, YAML); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Pull(big, RBACType); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("pulling %d bytes: %v", MaxBytes+1, err)
	}
}
