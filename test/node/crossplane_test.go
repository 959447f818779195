package node_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// TestCrossplaneRunsPackagesAsPods: Crossplane, installed from its own
// chart, runs as pods on the node, and its package manager runs
// fleetplane's function and provider as pods of the images that were
// pushed (the runtime each package embeds), under the ServiceAccounts
// and RBAC Crossplane gives them, until both revisions are Healthy.
func TestCrossplaneRunsPackagesAsPods(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	xp, err := controlplane.InstallCrossplaneChart(ctx, cp, support.Root(), reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Crossplane's chart installed and its pods available in %s", time.Since(start).Round(100*time.Millisecond))

	start = time.Now()
	out := filepath.Join(dir, "packages")
	build := exec.CommandContext(ctx, filepath.Join(support.Root(), "tools", "package.sh"), out)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("tools/package.sh: %v\n%s", err, b)
	}
	cli, err := controlplane.Tool(support.Root(), "crossplane")
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, p := range []string{"function-fleetplane", "provider-fleetplane"} {
		if err := reg.Push(ctx, cli, filepath.Join(out, p+".xpkg"), "fleetplane/"+p, "v0.0.1-node"); err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(reg.Ref("fleetplane/"+p, "v0.0.1-node"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := remote.Head(ref, remote.WithContext(ctx), remote.WithTransport(reg.Transport()))
		if err != nil {
			t.Fatal(err)
		}
		digests[p] = d.Digest.String()
	}
	t.Logf("packages built and pushed in %s", time.Since(start).Round(100*time.Millisecond))

	start = time.Now()
	kube := xp.Kube()
	fn := &pkgv1.Function{ObjectMeta: metav1.ObjectMeta{Name: "function-fleetplane"}}
	fn.Spec.Package = reg.Ref("fleetplane/function-fleetplane", "v0.0.1-node")
	pr := &pkgv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: "provider-fleetplane"}}
	pr.Spec.Package = reg.Ref("fleetplane/provider-fleetplane", "v0.0.1-node")
	for _, o := range []client.Object{fn, pr} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		pkg  string
		list client.ObjectList
	}{{"function-fleetplane", &pkgv1.FunctionRevisionList{}}, {"provider-fleetplane", &pkgv1.ProviderRevisionList{}}} {
		support.Eventually(t, 4*time.Minute, c.pkg+"'s revision Healthy", func() (bool, string) {
			if err := kube.List(ctx, c.list, client.MatchingLabels{pkgv1.LabelParentPackage: c.pkg}); err != nil {
				return false, err.Error()
			}
			var says []string
			healthy := false
			for _, r := range revisions(c.list) {
				h := r.GetCondition(pkgv1.TypeRuntimeHealthy)
				says = append(says, fmt.Sprintf("%s: %s %s %s", r.GetName(), h.Status, h.Reason, h.Message))
				healthy = healthy || h.Status == corev1.ConditionTrue
			}
			return healthy, strings.Join(says, "; ") + " " + podsSay(ctx, kube)
		})
	}
	t.Logf("both revisions Healthy %s after their install", time.Since(start).Round(100*time.Millisecond))

	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(controlplane.CrossplaneNamespace), client.HasLabels{pkgv1.LabelRevision}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pods.Items {
		// The package's name as its crossplane.yaml gives it, which
		// the Function and Provider above share.
		pkg := p.Labels[pkgv1.LabelFunction] + p.Labels[pkgv1.LabelProvider]
		if len(p.Status.ContainerStatuses) == 0 || !p.Status.ContainerStatuses[0].Ready {
			continue
		}
		seen[pkg] = true
		if got := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(got, "@"+digests[pkg]) {
			t.Errorf("%s's pod runs %s, want the pushed package %s", pkg, got, digests[pkg])
		}
		if p.Spec.NodeName != nodeName {
			t.Errorf("%s's pod is on %q, want the node", pkg, p.Spec.NodeName)
		}
	}
	for _, pkg := range []string{"function-fleetplane", "provider-fleetplane"} {
		if !seen[pkg] {
			t.Errorf("no ready pod of %s; pods: %s", pkg, podsSay(ctx, kube))
		}
	}
}

// revisionish is what both kinds of package revision have.
type revisionish interface {
	GetName() string
	GetCondition(t xpv2.ConditionType) xpv2.Condition
}

func revisions(l client.ObjectList) []revisionish {
	var out []revisionish
	switch l := l.(type) {
	case *pkgv1.FunctionRevisionList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *pkgv1.ProviderRevisionList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// podsSay is what the pods in Crossplane's namespace are doing.
func podsSay(ctx context.Context, kube client.Client) string {
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(controlplane.CrossplaneNamespace)); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "%s %s", p.Name, p.Status.Phase)
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Waiting != nil {
				fmt.Fprintf(&b, " %s waiting %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
			}
			if c.State.Terminated != nil {
				fmt.Fprintf(&b, " %s terminated %s", c.Name, c.State.Terminated.Reason)
			}
		}
		b.WriteString("; ")
	}
	return b.String()
}
