package e2e

import (
	"cmp"
	"context"
	"strings"
	"testing"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/environment"
)

// TestInstalled checks the install as docs/install.md tells a user to: `kubectl
// get pkg` shows every package, fleetplane's and the dependencies the
// package manager resolved, Installed and Healthy, and the Lock names each
// by its upstream source and the version the registry served.
func TestInstalled(t *testing.T) {
	ctx := context.Background()
	out, err := env.Kubectl(ctx, "get", "pkg", "--no-headers", "-o", "custom-columns=NAME:.metadata.name,PACKAGE:.spec.package,INSTALLED:.status.conditions[?(@.type=='Installed')].status,HEALTHY:.status.conditions[?(@.type=='Healthy')].status")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 {
			rows[f[0]] = f[1:]
		}
	}
	want := map[string]string{
		// The umbrella and the function carry no version here: TestUpgrade
		// moves both to its release, and tests may run in any order.
		environment.ConfigurationName:                                           environment.ConfigurationSource + ":",
		environment.ProviderName:                                                environment.ProviderSource + ":" + environment.Version,
		environment.FunctionName:                                                environment.FunctionSource + ":",
		environment.PackageName("ghcr.io/fleetplane/fleetplane-adx"):            "ghcr.io/fleetplane/fleetplane-adx:",
		environment.PackageName(environment.ProviderKubernetesSource):           environment.ProviderKubernetesSource + ":v1.0.0",
		environment.PackageName("xpkg.upbound.io/upbound/provider-azure-kusto"): "xpkg.upbound.io/upbound/provider-azure-kusto:v2.3.0",
	}
	for name, pkg := range want {
		r, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("kubectl get pkg lists no %s:\n%s", name, out)
		case !strings.HasPrefix(r[0], pkg) || r[1] != "True" || r[2] != "True":
			t.Errorf("%s: package %s, Installed=%s, Healthy=%s; want %s…, both True", name, r[0], r[1], r[2], pkg)
		}
	}
	if len(rows) != 12 {
		t.Errorf("kubectl get pkg lists %d packages, want 12 (fleetplane's six, provider-kubernetes, five upjet):\n%s", len(rows), out)
	}
	lock, err := env.Kubectl(ctx, "get", "lock", "lock", "-o", `jsonpath={range .packages[*]}{.source}@{.version}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"xpkg.upbound.io/upbound/provider-family-azure@v2.3.0", "xpkg.upbound.io/upbound/provider-gcp-container@v2.0.0", "xpkg.upbound.io/upbound/provider-gcp-compute@v2.0.0", environment.ProviderKubernetesSource + "@v1.0.0"} {
		if !strings.Contains(lock, s+"\n") {
			t.Errorf("the Lock lacks %s:\n%s", s, lock)
		}
	}
	packagePods(t)
}

// packagePods: the function, the provider and provider-kubernetes run as
// pods of the revisions the package manager created, each of the very
// image the registry holds for its revision's package (the runtime image
// the package embeds).
func packagePods(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	for _, pkg := range []string{environment.FunctionName, environment.ProviderName, environment.PackageName(environment.ProviderKubernetesSource)} {
		pod, err := env.PackagePod(ctx, pkg)
		if err != nil {
			t.Error(err)
			continue
		}
		var rev pkgv1.PackageRevision = &pkgv1.ProviderRevision{}
		if pkg == environment.FunctionName {
			rev = &pkgv1.FunctionRevision{}
		}
		if err := env.Kube.Get(ctx, client.ObjectKey{Name: pod.Labels[pkgv1.LabelRevision]}, rev); err != nil {
			t.Errorf("%s's pod %s: its revision: %v", pkg, pod.Name, err)
			continue
		}
		// The source as the mirror's ImageConfig rewrote it, where the
		// node pulled it from.
		src := cmp.Or(rev.GetResolvedSource(), rev.GetSource())
		if !strings.HasPrefix(src, env.Registry.Host+"/") {
			src = env.Registry.Mirror(src)
		}
		ref, err := name.ParseReference(src)
		if err != nil {
			t.Fatal(err)
		}
		d, err := remote.Head(ref, remote.WithContext(ctx), remote.WithTransport(env.Registry.Transport()))
		if err != nil {
			t.Errorf("%s: the registry's %s: %v", pkg, ref, err)
			continue
		}
		if got := pod.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(got, "@"+d.Digest.String()) {
			t.Errorf("%s's pod %s runs %s, want %s of %s (revision %s)", pkg, pod.Name, got, d.Digest, ref, rev.GetName())
		}
	}
}
