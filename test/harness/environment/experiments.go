package environment

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/standin"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// Where the Experiment composition's defaults put things.
const (
	ArgoCDNamespace    = "argocd"
	WorkflowsNamespace = "argo"
	// ProviderKubernetesSource is provider-kubernetes' package source.
	ProviderKubernetesSource = "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"
)

// Experiments is what Experiments need besides fleetplane's packages and
// their dependencies: Argo CD and Argo Workflows (their real CRDs,
// stand-in controllers), a GKE stand-in (its kinds come with the
// stand-in provider-gcp packages) and a Cluster API stand-in (the real
// CRDs of Cluster API, its Talos providers and CAPD).
type Experiments struct {
	GKE        *standin.GKE
	ClusterAPI *standin.ClusterAPI
	ArgoCD     *standin.ArgoCD
	Workflows  *standin.Workflows
}

// startExperiments starts the stand-ins Experiments need, once
// installStandInCRDs has installed the kinds they serve.
func (e *Env) startExperiments(ctx context.Context, sctx context.Context) (*Experiments, error) {
	for _, ns := range []string{ArgoCDNamespace, WorkflowsNamespace} {
		if err := e.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !kerrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	x := &Experiments{GKE: standin.NewGKE(e.Kube), ClusterAPI: standin.NewClusterAPI(e.Kube), ArgoCD: standin.NewArgoCD(e.Kube, ArgoCDNamespace), Workflows: standin.NewWorkflows(e.Kube)}
	// Long enough for a poll of the provider to see the workflow Running.
	x.Workflows.RunFor = 8 * time.Second
	go x.GKE.Run(sctx)
	go x.ClusterAPI.Run(sctx)
	go x.ArgoCD.Run(sctx)
	go x.Workflows.Run(sctx)
	return x, nil
}

// installStandInCRDs installs the real CRDs of the kinds the Argo and
// Cluster API stand-ins serve, and waits until they are established.
func (e *Env) installStandInCRDs(ctx context.Context) error {
	crds, err := support.ArgoCRDs(e.Root)
	if err != nil {
		return err
	}
	capi, err := support.ClusterAPICRDs(e.Root)
	if err != nil {
		return err
	}
	return controlplane.InstallCRDs(ctx, e.CP.Config, append(crds, capi...)...)
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
