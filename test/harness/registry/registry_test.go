package registry

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

func TestRegistryServesTLSFromItsCA(t *testing.T) {
	r, err := StartOn(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.Ref("ghcr.io/fleetplane/thing", "v0.1.0"), name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the CA is refused: the registry really
	// speaks TLS with its own certificate.
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("push without the CA: got %v, want a certificate error", err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(r.Transport())); err != nil {
		t.Fatal(err)
	}
	tags, err := r.Tags(ctx, "ghcr.io/fleetplane/thing")
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || tags[0] != "v0.1.0" {
		t.Fatalf("tags = %v, want [v0.1.0]", tags)
	}
	if got, want := r.Mirror("ghcr.io/fleetplane/thing"), r.Host+"/ghcr.io/fleetplane/thing"; got != want {
		t.Fatalf("Mirror = %s, want %s", got, want)
	}
}

// The crossplane CLI pushes a package it built, trusting the CA through
// SSL_CERT_FILE.
func TestPushWithTheCrossplaneCLI(t *testing.T) {
	support.NeedsTools(t)
	cli, err := controlplane.Tool(support.Root(), "crossplane")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: empty\n"
	if err := os.WriteFile(filepath.Join(pkg, "crossplane.yaml"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "empty.xpkg")
	if out, err := exec.Command(cli, "xpkg", "build", "--package-root", pkg, "--examples-root", filepath.Join(dir, "none"), "-o", file).CombinedOutput(); err != nil {
		t.Fatalf("xpkg build: %v\n%s", err, out)
	}
	r, err := StartOn(filepath.Join(dir, "registry"), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for _, tag := range []string{"v0.2.0", "v0.1.0"} {
		if err := r.Push(ctx, cli, file, "example.org/acme/empty", tag); err != nil {
			t.Fatal(err)
		}
	}
	tags, err := r.Tags(ctx, "example.org/acme/empty")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tags, ",") != "v0.1.0,v0.2.0" {
		t.Fatalf("tags = %v", tags)
	}
}

// TestPushScriptRefuses checks what tools/push.sh (make push) refuses
// before it pushes anything: a version dependency constraints could not
// resolve, and a directory without the packages make package builds.
func TestPushScriptRefuses(t *testing.T) {
	script := filepath.Join(support.Root(), "tools", "push.sh")
	noRBAC := t.TempDir()
	for _, p := range []string{"function-fleetplane", "provider-fleetplane", "fleetplane-adx", "fleetplane-experiments", "fleetplane-placement", "fleetplane"} {
		if err := os.WriteFile(filepath.Join(noRBAC, p+".xpkg"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"not semver":       {[]string{"registry.example.com/fleetplane", "latest", t.TempDir()}, "VERSION must be a semver tag"},
		"semver-shaped":    {[]string{"registry.example.com/fleetplane", "v1.x.0", t.TempDir()}, "VERSION must be a semver tag"},
		"leading zero":     {[]string{"registry.example.com/fleetplane", "v1.02.0", t.TempDir()}, "VERSION must be a semver tag"},
		"no version":       {[]string{"registry.example.com/fleetplane"}, "usage: tools/push.sh REGISTRY VERSION"},
		"packages missing": {[]string{"registry.example.com/fleetplane", "v0.1.0-rc.1", t.TempDir()}, "function-fleetplane.xpkg is missing; run make package first"},
		"the RBAC missing": {[]string{"registry.example.com/fleetplane", "v0.1.0", noRBAC}, "fleetplane-rbac.yaml is missing; run make package first"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(script, tc.args...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("tools/push.sh %v: %v\n%s\nwant an error saying %q", tc.args, err, out, tc.want)
			}
		})
	}
}
