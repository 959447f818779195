package environment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xpkg"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/tools/ociartifact/artifact"
	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

// Versions of the packages pushed to the registry. The upjet stand-ins
// carry the version of the CRDs they hold (provider-upjet-gcp's module is
// not on the proxy: its stand-in CRDs follow its first namespaced release).
const (
	Version                   = "v0.1.0"
	providerKubernetesVersion = "v1.0.0"
	upjetAzureVersion         = "v2.3.0"
	upjetGCPVersion           = "v2.0.0"
)

// Mirrored are the upstream registries the local registry mirrors, each
// rewritten to it by one ImageConfig of MirrorExample, as in an air-gapped
// installation: the packages keep their upstream names everywhere else.
var Mirrored = []string{"ghcr.io", "xpkg.upbound.io", "xpkg.crossplane.io"}

// A package pushed to the registry under its upstream source.
type pushed struct {
	file, source, version string
}

// standIn is an upjet provider package carrying real (Azure) or faithful
// (GCP) CRDs, whose controllers are this process's stand-ins.
type standIn struct {
	source, version string
	// family is the family provider it depends on, as upjet's providers
	// do; "" for none.
	family string
	crds   func(root string) ([]string, error)
}

func upjetAzure(match func(string) bool) func(string) ([]string, error) {
	return func(root string) ([]string, error) {
		dir, err := controlplane.Tool(root, "upjet-azure-crds")
		if err != nil {
			return nil, err
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		var out []string
		for _, f := range files {
			if match(filepath.Base(f)) {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no matching upjet CRDs in %s", dir)
		}
		return out, nil
	}
}

func gkeCRDs(prefix string) func(string) ([]string, error) {
	return func(root string) ([]string, error) {
		files, _ := filepath.Glob(filepath.Join(root, "test", "harness", "standin", "crds", prefix+"*.yaml"))
		if len(files) == 0 {
			return nil, fmt.Errorf("no stand-in CRDs %s*", prefix)
		}
		return files, nil
	}
}

// standIns are the upjet packages fleetplane's Configurations depend on.
// Upjet's Azure family provider holds the ProviderConfig kinds and
// ResourceGroup (its "config" subpackage); provider-azure-kusto the Kusto
// kinds. The GCP stand-ins have no family: provider-upjet-gcp's family
// CRDs are not available here, and fleetplane composes none of them.
var standIns = []standIn{
	{source: "xpkg.upbound.io/upbound/provider-family-azure", version: upjetAzureVersion,
		crds: upjetAzure(func(f string) bool { return strings.HasPrefix(f, "azure.") })},
	{source: "xpkg.upbound.io/upbound/provider-azure-kusto", version: upjetAzureVersion, family: "xpkg.upbound.io/upbound/provider-family-azure",
		crds: upjetAzure(func(f string) bool { return strings.HasPrefix(f, "kusto.azure.") })},
	{source: "xpkg.upbound.io/upbound/provider-gcp-container", version: upjetGCPVersion, crds: gkeCRDs("container.gcp.")},
	{source: "xpkg.upbound.io/upbound/provider-gcp-cloudplatform", version: upjetGCPVersion, crds: gkeCRDs("cloudplatform.gcp.")},
	{source: "xpkg.upbound.io/upbound/provider-gcp-compute", version: upjetGCPVersion, crds: gkeCRDs("compute.gcp.")},
}

// PackageName is the name the package manager gives a package it installs
// as a dependency: its repository as a DNS label.
func PackageName(source string) string {
	ref, err := name.NewRepository(source)
	if err != nil {
		panic(err)
	}
	return xpkg.ToDNSLabel(ref.RepositoryStr())
}

// buildStandIn builds the package of s into dir with the crossplane CLI.
func buildStandIn(root, cli, dir string, s standIn) (string, error) {
	base := s.source[strings.LastIndex(s.source, "/")+1:]
	pkg := filepath.Join(dir, base)
	if err := os.MkdirAll(filepath.Join(pkg, "crds"), 0o755); err != nil {
		return "", err
	}
	crds, err := s.crds(root)
	if err != nil {
		return "", err
	}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(pkg, "crds", filepath.Base(f)), b, 0o644); err != nil {
			return "", err
		}
	}
	var meta bytes.Buffer
	fmt.Fprintf(&meta, `# A stand-in for upjet's %s, built by fleetplane's test harness: its
# CRDs, its safe-start capability and its family dependency; its
# controllers are the harness's stand-ins.
apiVersion: meta.pkg.crossplane.io/v1
kind: Provider
metadata:
  name: %s
spec:
  capabilities:
  - SafeStart
`, s.source, base)
	if s.family != "" {
		fmt.Fprintf(&meta, "  dependsOn:\n  - apiVersion: pkg.crossplane.io/v1\n    kind: Provider\n    package: %s\n    version: \">=%s\"\n", s.family, s.version)
	}
	if err := os.WriteFile(filepath.Join(pkg, "crossplane.yaml"), meta.Bytes(), 0o644); err != nil {
		return "", err
	}
	file := filepath.Join(dir, base+".xpkg")
	if out, err := exec.Command(cli, "xpkg", "build", "--package-root", pkg, "--examples-root", filepath.Join(dir, "empty"), "-o", file).CombinedOutput(); err != nil {
		return "", fmt.Errorf("crossplane xpkg build %s: %w\n%s", base, err, out)
	}
	return file, nil
}

// BuildProviderKubernetes builds provider-kubernetes' package into dir
// from its module's package/crossplane.yaml and CRDs, embedding the
// runtime image its release ships: the binary tools.sh builds from the
// same module, where its Dockerfile puts it, as its non-root user. With
// Crossplane's Deployment runtime, that image is what the provider's pod
// runs.
func BuildProviderKubernetes(root, cli, dir string) (string, error) {
	crds, err := controlplane.Tool(root, "provider-kubernetes-crds")
	if err != nil {
		return "", err
	}
	bin, err := controlplane.Tool(root, "provider-kubernetes")
	if err != nil {
		return "", err
	}
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return "", err
	}
	runtime := filepath.Join(dir, "provider-kubernetes-runtime.tar")
	if _, err := image.Write(image.Image{
		Binary: bin, Path: "/usr/local/bin/crossplane-kubernetes-provider", User: "65532:65532",
		Tag: "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:" + providerKubernetesVersion,
	}, runtime); err != nil {
		return "", fmt.Errorf("provider-kubernetes' runtime image: %w", err)
	}
	file := filepath.Join(dir, "provider-kubernetes.xpkg")
	if out, err := exec.Command(cli, "xpkg", "build", "--package-root", filepath.Dir(crds), "--examples-root", empty,
		"--embed-runtime-image-tarball", runtime, "-o", file).CombinedOutput(); err != nil {
		return "", fmt.Errorf("crossplane xpkg build provider-kubernetes: %w\n%s", err, out)
	}
	return file, nil
}

// publish builds the packages fleetplane depends on and pushes them, with
// fleetplane's own, to the registry under their upstream sources' mirror
// paths.
func (e *Env) publish(ctx context.Context, b built) error {
	cli, err := controlplane.Tool(e.Root, "crossplane")
	if err != nil {
		return err
	}
	dir := filepath.Join(e.Dir, "packages", "dependencies")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		return err
	}
	// fleetplane's own six as `make push` pushes them, to where the
	// mirror serves ghcr.io/fleetplane from.
	push := exec.CommandContext(ctx, filepath.Join(e.Root, "tools", "push.sh"), e.Registry.Mirror(path.Dir(FunctionSource)), Version, b.dir)
	push.Env = e.Registry.ClientEnv()
	if out, err := push.CombinedOutput(); err != nil {
		return fmt.Errorf("tools/push.sh: %w\n%s", err, out)
	}
	if err := e.pullRBAC(); err != nil {
		return err
	}
	var all []pushed
	pk, err := BuildProviderKubernetes(e.Root, cli, dir)
	if err != nil {
		return err
	}
	all = append(all, pushed{pk, ProviderKubernetesSource, providerKubernetesVersion})
	for _, s := range standIns {
		f, err := buildStandIn(e.Root, cli, dir, s)
		if err != nil {
			return err
		}
		all = append(all, pushed{f, s.source, s.version})
	}
	for _, p := range all {
		if err := e.Registry.Push(ctx, cli, p.file, p.source, p.version); err != nil {
			return err
		}
	}
	return nil
}

// MirrorExample is the air-gapped install of docs/install.md: one ImageConfig per
// upstream registry, rewriting its packages to mirror.example.com.
const MirrorExample = "examples/install/mirror.yaml"

// mirror applies MirrorExample with the local registry in place of
// mirror.example.com, so the documented file is the tested one.
func (e *Env) mirror(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join(e.Root, MirrorExample))
	if err != nil {
		return err
	}
	text := strings.ReplaceAll(string(b), "mirror.example.com", e.Registry.Host)
	n := 0
	for doc := range strings.SplitSeq(text, "\n---\n") {
		ic := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &ic.Object); err != nil {
			return fmt.Errorf("%s: %w", MirrorExample, err)
		}
		if err := e.Kube.Create(ctx, ic); err != nil {
			return fmt.Errorf("cannot create ImageConfig %s: %w", ic.GetName(), err)
		}
		n++
	}
	if n != len(Mirrored) {
		return fmt.Errorf("%s holds %d ImageConfigs, want one for each of %v", MirrorExample, n, Mirrored)
	}
	return nil
}

// CrossplaneCLI runs the crossplane CLI against the control plane as its
// administrator, as a user would (xpkg install, xpkg update).
func (e *Env) CrossplaneCLI(ctx context.Context, args ...string) error {
	cli, err := controlplane.Tool(e.Root, "crossplane")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = e.cliEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("crossplane %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Locked returns the package manager's Lock: every installed package's
// source and version, dependencies included, and whether resolution
// succeeded.
func (e *Env) Locked(ctx context.Context) (map[string]string, bool, error) {
	lock := &unstructured.Unstructured{}
	lock.SetAPIVersion("pkg.crossplane.io/v1beta1")
	lock.SetKind("Lock")
	if err := e.Kube.Get(ctx, client.ObjectKey{Name: "lock"}, lock); err != nil {
		return nil, false, err
	}
	pkgs, _, _ := unstructured.NestedSlice(lock.Object, "packages")
	out := map[string]string{}
	for _, p := range pkgs {
		m, _ := p.(map[string]any)
		src, _ := m["source"].(string)
		v, _ := m["version"].(string)
		out[src] = v
	}
	resolved := false
	conds, _, _ := unstructured.NestedSlice(lock.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Resolved" && m["status"] == "True" {
			resolved = true
		}
	}
	return out, resolved, nil
}

// waitLocked waits until the Lock lists every package fleetplane's
// Configuration needs, resolved from the registry, and reports resolution
// succeeded.
func (e *Env) waitLocked(ctx context.Context, timeout time.Duration) error {
	want := []string{FunctionSource, ProviderSource, ConfigurationSource, ProviderKubernetesSource,
		"ghcr.io/fleetplane/fleetplane-adx", "ghcr.io/fleetplane/fleetplane-experiments", "ghcr.io/fleetplane/fleetplane-placement"}
	for _, s := range standIns {
		want = append(want, s.source)
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		have, resolved, err := e.Locked(ctx)
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // not there yet
		}
		var missing []string
		for _, s := range want {
			if have[s] == "" {
				missing = append(missing, s)
			}
		}
		last = fmt.Sprintf("resolved=%t, missing %v", resolved, missing)
		return resolved && len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the package manager's Lock: %s: %w", last, err)
	}
	return nil
}

// Release publishes version v as a maintainer's release would: a new
// function-fleetplane package (the same runtime, a new digest), a
// fleetplane-adx requiring function-fleetplane >= v, and a fleetplane
// requiring that fleetplane-adx. Installing the new fleetplane then rolls
// the function through dependency resolution.
func (e *Env) Release(ctx context.Context, v string) error {
	cli, err := controlplane.Tool(e.Root, "crossplane")
	if err != nil {
		return err
	}
	out := filepath.Join(e.Dir, "packages")
	rel := filepath.Join(out, "release-"+v)
	empty := filepath.Join(rel, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	type step struct {
		from, source string
		// edit rewrites the package's crossplane.yaml.
		edit  func(string) string
		extra []string
	}
	requires := func(dep string) func(string) string {
		re := regexp.MustCompile(`(package: ` + regexp.QuoteMeta(dep) + `\n\s+version: )"[^"]*"`)
		return func(meta string) string { return re.ReplaceAllString(meta, `${1}">=`+v+`"`) }
	}
	for _, s := range []step{
		{from: filepath.Join(e.Root, "package", "function"), source: FunctionSource,
			edit: func(meta string) string {
				return strings.Replace(meta, "  annotations:\n", "  annotations:\n    fleetplane.io/release: "+v+"\n", 1)
			},
			extra: []string{"--embed-runtime-image-tarball", filepath.Join(out, "function-runtime.tar")}},
		{from: filepath.Join(out, "fleetplane-adx"), source: "ghcr.io/fleetplane/fleetplane-adx", edit: requires(FunctionSource)},
		{from: filepath.Join(out, "fleetplane"), source: ConfigurationSource, edit: requires("ghcr.io/fleetplane/fleetplane-adx")},
	} {
		root := filepath.Join(rel, filepath.Base(s.source))
		if err := os.CopyFS(root, os.DirFS(s.from)); err != nil {
			return err
		}
		metaFile := filepath.Join(root, "crossplane.yaml")
		b, err := os.ReadFile(metaFile)
		if err != nil {
			return err
		}
		meta := s.edit(string(b))
		if meta == string(b) {
			return fmt.Errorf("release %s: nothing to change in %s", v, metaFile)
		}
		if err := os.WriteFile(metaFile, []byte(meta), 0o644); err != nil {
			return err
		}
		file := root + ".xpkg"
		args := append([]string{"xpkg", "build", "--package-root", root, "--examples-root", empty, "-o", file}, s.extra...)
		if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("crossplane xpkg build %s: %w\n%s", s.source, err, out)
		}
		if err := e.Registry.Push(ctx, cli, file, s.source, v); err != nil {
			return err
		}
	}
	return nil
}

// Kubectl runs the pinned kubectl against the control plane as its
// administrator and returns its standard output.
func (e *Env) Kubectl(ctx context.Context, args ...string) (string, error) {
	bin, err := controlplane.Tool(e.Root, "kubectl")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.cliEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// rbacSource starts each file's part of the release's RBAC artifact
// (tools/package.sh).
const rbacSource = "# Source: package/rbac/"

// pullRBAC pulls the RBAC artifact tools/push.sh pushed beside the
// packages, as a cluster admin installing the release does, checks it is
// package/rbac whole, and writes its files to RBACDir, which the install
// then applies: the environment installs from the release, not from the
// tree.
func (e *Env) pullRBAC() error {
	ref := e.Registry.Mirror(path.Dir(FunctionSource)) + "/fleetplane-rbac:" + Version
	title, b, err := artifact.Pull(ref, artifact.RBACType, remote.WithTransport(e.Registry.Transport()))
	if err != nil {
		return fmt.Errorf("pulling the release's RBAC %s: %w", ref, err)
	}
	if title != "fleetplane-rbac.yaml" {
		return fmt.Errorf("the release's RBAC %s is named %q", ref, title)
	}
	files := map[string][]byte{}
	for part := range strings.SplitSeq(string(b), "---\n"+rbacSource) {
		name, body, ok := strings.Cut(part, "\n")
		if !ok || strings.HasPrefix(part, "# fleetplane's RBAC") {
			continue
		}
		files[name] = []byte(body)
	}
	want, _ := filepath.Glob(filepath.Join(e.Root, "package", "rbac", "*.yaml"))
	if len(files) != len(want) {
		return fmt.Errorf("the release's RBAC holds %d files, package/rbac %d", len(files), len(want))
	}
	if err := os.MkdirAll(e.RBACDir(), 0o755); err != nil {
		return err
	}
	for _, f := range want {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		got, ok := files[filepath.Base(f)]
		if !ok || !bytes.Equal(got, src) {
			return fmt.Errorf("the release's RBAC differs from package/rbac/%s", filepath.Base(f))
		}
		if err := os.WriteFile(filepath.Join(e.RBACDir(), filepath.Base(f)), got, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// RBACDir holds the files of the release's RBAC as pulled from the
// registry.
func (e *Env) RBACDir() string { return filepath.Join(e.Dir, "rbac") }
