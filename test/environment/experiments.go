package environment

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/test/controlplane"
	"github.com/fleetplane/fleetplane/test/standin"
	"github.com/fleetplane/fleetplane/test/support"
)

// Where the Experiment composition's defaults put things.
const (
	ArgoCDNamespace    = "argocd"
	WorkflowsNamespace = "argo"
	// ProviderKubernetesSource is provider-kubernetes' package source.
	ProviderKubernetesSource = "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"
	// ProviderKubernetesName is its Provider object's name.
	ProviderKubernetesName = "provider-kubernetes"
)

// Experiments is what Experiments need besides fleetplane: Argo CD and
// Argo Workflows (their real CRDs, stand-in controllers), GKE (stand-in
// CRDs and controller) and provider-kubernetes, built from its module and
// installed as a package.
type Experiments struct {
	GKE       *standin.GKE
	ArgoCD    *standin.ArgoCD
	Workflows *standin.Workflows
	Provider  *controlplane.Process
}

// startExperiments installs and starts everything Experiments need.
func (e *Env) startExperiments(ctx context.Context, sctx context.Context) (*Experiments, error) {
	crds, err := support.ArgoCRDs(e.Root)
	if err != nil {
		return nil, err
	}
	crds = append(crds, support.GKECRDs(e.Root)...)
	if err := controlplane.InstallCRDs(ctx, e.CP.Config, crds...); err != nil {
		return nil, err
	}
	for _, ns := range []string{ArgoCDNamespace, WorkflowsNamespace} {
		if err := e.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !kerrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	x := &Experiments{GKE: standin.NewGKE(e.Kube), ArgoCD: standin.NewArgoCD(e.Kube, ArgoCDNamespace), Workflows: standin.NewWorkflows(e.Kube)}
	// Long enough for a poll of the provider to see the workflow Running.
	x.Workflows.RunFor = 8 * time.Second
	go x.GKE.Run(sctx)
	go x.ArgoCD.Run(sctx)
	go x.Workflows.Run(sctx)

	if x.Provider, err = e.installProviderKubernetes(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

// installProviderKubernetes builds provider-kubernetes' package from its
// module (package/crossplane.yaml and CRDs), installs it by digest, runs
// its binary as the External runtime would, and gives it a
// ClusterProviderConfig for this control plane.
func (e *Env) installProviderKubernetes(ctx context.Context) (*controlplane.Process, error) {
	crds, err := controlplane.Tool(e.Root, "provider-kubernetes-crds")
	if err != nil {
		return nil, err
	}
	bin, err := controlplane.Tool(e.Root, "provider-kubernetes")
	if err != nil {
		return nil, err
	}
	cli, err := controlplane.Tool(e.Root, "crossplane")
	if err != nil {
		return nil, err
	}
	empty := filepath.Join(e.Dir, "packages", "empty-examples")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(e.Dir, "packages", "provider-kubernetes.xpkg")
	if out, err := exec.Command(cli, "xpkg", "build", "--package-root", filepath.Dir(crds), "--examples-root", empty, "-o", file).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("crossplane xpkg build provider-kubernetes: %w\n%s", err, out)
	}
	ref, err := controlplane.PackageRef(ProviderKubernetesSource, file)
	if err != nil {
		return nil, err
	}
	if err := e.Crossplane.Cache(e.Root, ref, file); err != nil {
		return nil, err
	}
	pv := &pkgv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: ProviderKubernetesName}, Spec: pkgv1.ProviderSpec{PackageSpec: pkgv1.PackageSpec{Package: ref, PackagePullPolicy: ptr.To(corev1.PullNever)}}}
	if err := e.Kube.Create(ctx, pv); err != nil {
		return nil, fmt.Errorf("cannot install provider-kubernetes: %w", err)
	}
	p, err := e.Crossplane.RunProvider(ctx, ProviderKubernetesName, bin, append([]string{"--poll", e.opts.poll("10s"), "--enable-watches"}, e.opts.debug()...)...)
	if err != nil {
		return nil, err
	}
	if err := e.Crossplane.WaitHealthy(ctx, pv, 3*time.Minute); err != nil {
		return nil, err
	}

	// Out of a cluster there is no injected identity: the provider reaches
	// this control plane with its kubeconfig.
	kc, err := os.ReadFile(e.CP.Kubeconfig)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controlplane.CrossplaneNamespace, Name: "provider-kubernetes-kubeconfig"}, Data: map[string][]byte{"kubeconfig": kc}}
	if err := e.Kube.Create(ctx, secret); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, err
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
		"kind":       "ClusterProviderConfig",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{"credentials": map[string]any{
			"source":    "Secret",
			"secretRef": map[string]any{"namespace": controlplane.CrossplaneNamespace, "name": secret.Name, "key": "kubeconfig"},
		}},
	}}
	// The kind is served once the package's CRDs are established.
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if last = e.Kube.Create(ctx, pc); last == nil || kerrors.IsAlreadyExists(last) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("cannot create provider-kubernetes' ClusterProviderConfig: %w", last)
}

// WorkflowTemplate creates a WorkflowTemplate in the workflow namespace
// whose Workflows the Argo Workflows stand-in ends with outcome
// (Succeeded, Failed); one that exists is left as it is.
func (e *Env) WorkflowTemplate(ctx context.Context, name, outcome string) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "WorkflowTemplate",
		"metadata": map[string]any{"namespace": WorkflowsNamespace, "name": name, "labels": map[string]any{standin.OutcomeLabel: outcome}},
		"spec": map[string]any{
			"entrypoint": "validate",
			"templates":  []any{map[string]any{"name": "validate", "container": map[string]any{"image": "alpine:3.20", "command": []any{"true"}}}},
		},
	}}
	if err := e.Kube.Create(ctx, u); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("WorkflowTemplate %s: %w", name, err)
	}
	return nil
}
