package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

// crossplaneVersion is the version of Crossplane core tools.sh builds.
const crossplaneVersion = "v2.4.0"

// Registry is the test registry (test/harness/registry) as
// InstallCrossplaneChart uses it.
type Registry interface {
	// PushImage pushes the image spec to repo:tag and returns its
	// reference.
	PushImage(ctx context.Context, spec image.Image, repo, tag string) (string, v1.Hash, error)
	// CA is the file of the CA its certificate chains to.
	CA() string
}

// InstallCrossplaneChart installs Crossplane as a user does, from its own
// Helm chart (rendered by the pinned helm, applied by the pinned kubectl):
// core and its RBAC manager run as the chart's pods on a real node
// (test/harness/node), with the Deployment package runtime, so that the
// package manager runs every function and provider as pods of the images
// pushed to reg. Crossplane's image is built from the binary tools.sh
// builds, with its CRDs and webhook configurations where the chart's
// `core init` reads them, and pushed to reg, which Crossplane trusts for
// packages through the chart's registryCaBundleConfig. reg must listen
// where pods reach it (registry.StartOn). args are further flags of
// Crossplane core. It returns once both Deployments are available.
func InstallCrossplaneChart(ctx context.Context, cp *ControlPlane, root string, reg Registry, args ...string) (*Crossplane, error) {
	tools := map[string]string{}
	for _, t := range []string{"crossplane-core", "crossplane-core-crds", "crossplane-chart-templates", "helm", "kubectl"} {
		p, err := Tool(root, t)
		if err != nil {
			return nil, err
		}
		tools[t] = p
	}
	crds := tools["crossplane-core-crds"]
	ref, _, err := reg.PushImage(ctx, image.Image{
		Binary: tools["crossplane-core"], Path: "/usr/local/bin/crossplane",
		Dirs: map[string]string{"/crds": crds, "/webhookconfigurations": filepath.Join(crds, "..", "webhookconfigurations")},
	}, "fleetplane/crossplane", crossplaneVersion)
	if err != nil {
		return nil, fmt.Errorf("crossplane's image: %w", err)
	}
	x, err := newCrossplane(ctx, cp)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(reg.CA())
	if err != nil {
		return nil, err
	}
	if err := x.kube.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNamespace, Name: "registry-ca"},
		Data:       map[string]string{"ca.crt": string(ca)},
	}); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, err
	}
	repo, tag := ref[:len(ref)-len(":"+crossplaneVersion)], crossplaneVersion
	chart := filepath.Dir(tools["crossplane-chart-templates"])
	var rendered, stderr bytes.Buffer
	helm := exec.CommandContext(ctx, tools["helm"], "template", "crossplane", chart, "--namespace", CrossplaneNamespace,
		"--set", "image.repository="+repo, "--set", "image.tag="+tag,
		"--set", "registryCaBundleConfig.name=registry-ca", "--set", "registryCaBundleConfig.key=ca.crt",
		// Journeys wait on what it composes: every 10 s, not every minute.
		"--set", "args={"+strings.Join(append([]string{"--debug", "--poll-interval=10s"}, args...), ",")+"}")
	// helm keeps its caches and configuration under HOME: the test's own.
	helm.Env = append(os.Environ(), "HOME="+filepath.Join(cp.Dir, "helm"))
	helm.Stdout, helm.Stderr = &rendered, &stderr
	if err := helm.Run(); err != nil {
		return nil, fmt.Errorf("helm template: %w\n%s", err, stderr.String())
	}
	manifest := filepath.Join(cp.Dir, "crossplane-chart.yaml")
	if err := os.WriteFile(manifest, rendered.Bytes(), 0o644); err != nil {
		return nil, err
	}
	apply := exec.CommandContext(ctx, tools["kubectl"], "--kubeconfig", cp.Kubeconfig, "apply", "--server-side", "-f", manifest)
	if out, err := apply.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl apply the chart: %w\n%s", err, out)
	}
	for _, name := range []string{"crossplane", "crossplane-rbac-manager"} {
		if err := x.waitAvailable(ctx, name, 3*time.Minute); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// waitAvailable waits until the Deployment name in Crossplane's namespace
// is Available, and says what its pods do when it is not.
func (x *Crossplane) waitAvailable(ctx context.Context, name string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := x.kube.Get(ctx, types.NamespacedName{Namespace: CrossplaneNamespace, Name: name}, d); err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // not there yet
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		pods := &corev1.PodList{}
		if err := x.kube.List(ctx, pods, client.InNamespace(CrossplaneNamespace)); err == nil {
			last = DescribePods(pods.Items)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s not available: %s: %w", name, last, err)
	}
	return nil
}

// WaitRuntimeHealthy waits until a revision of the Function or Provider
// called pkg reports its runtime healthy: with the Deployment runtime,
// until the package manager's Deployment of it is available.
func (x *Crossplane) WaitRuntimeHealthy(ctx context.Context, pkg string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var says []string
		for _, list := range []client.ObjectList{&pkgv1.FunctionRevisionList{}, &pkgv1.ProviderRevisionList{}} {
			if err := x.kube.List(ctx, list, client.MatchingLabels{pkgv1.LabelParentPackage: pkg}); err != nil {
				last = err.Error()
				return false, nil //nolint:nilerr // retry
			}
			var revs []pkgv1.PackageRevision
			switch l := list.(type) {
			case *pkgv1.FunctionRevisionList:
				for i := range l.Items {
					revs = append(revs, &l.Items[i])
				}
			case *pkgv1.ProviderRevisionList:
				for i := range l.Items {
					revs = append(revs, &l.Items[i])
				}
			}
			for _, r := range revs {
				h := r.GetCondition(pkgv1.TypeRuntimeHealthy)
				if h.Status == corev1.ConditionTrue {
					return true, nil
				}
				says = append(says, fmt.Sprintf("%s: %s %s", r.GetName(), h.Reason, h.Message))
			}
		}
		last = strings.Join(says, "; ")
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("no revision of %s healthy: %s: %w", pkg, last, err)
	}
	return nil
}
