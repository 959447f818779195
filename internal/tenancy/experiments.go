package tenancy

import (
	"fmt"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Defaults of the experiments policy.
const (
	DefaultHubServer  = "https://kubernetes.default.svc"
	DefaultArgoCDRole = "roles/container.developer"
	DefaultConfigName = "default"
)

// Experiments is everything an Experiment is composed with: what the
// experiments, Argo CD and workflows policies say, with defaults.
type Experiments struct {
	v1alpha1.ExperimentsPolicy
	ArgoCD    v1alpha1.ArgoCDPolicy
	Workflows v1alpha1.WorkflowsPolicy
	// Kubernetes is KubernetesProviderConfigRef with its default.
	Kubernetes v1alpha1.ProviderConfigReference
	// Limits are the quotas, with their defaults.
	Limits ExperimentsLimits
}

// ExperimentsPolicy is what the grant lets Experiments do, with defaults,
// or an error naming the section that is missing: Experiments need
// spec.experiments, spec.argocd (their applications' namespace and
// project) and spec.workflows (their validation).
func (g *Grant) ExperimentsPolicy() (Experiments, error) {
	if g.Experiments == nil {
		return Experiments{}, fmt.Errorf("%s grants no Experiments: the cluster admin adds spec.experiments", g)
	}
	if g.ArgoCD == nil {
		return Experiments{}, fmt.Errorf("%s grants no Argo CD, which Experiments deploy with: the cluster admin adds spec.argocd", g)
	}
	if g.Workflows == nil {
		return Experiments{}, fmt.Errorf("%s grants no Argo Workflows, which Experiments validate with: the cluster admin adds spec.workflows", g)
	}
	argo, _ := g.ArgoCDPolicy()
	wf, _ := g.WorkflowsPolicy()
	e := Experiments{ExperimentsPolicy: *g.Experiments, ArgoCD: argo, Workflows: wf}
	if e.HubServer == "" {
		e.HubServer = DefaultHubServer
	}
	e.Kubernetes = orDefault(e.KubernetesProviderConfigRef)
	e.Limits = experimentsLimits(e.Quota)
	if e.GCP != nil {
		gcp := *e.GCP
		if gcp.ArgoCDRole == "" {
			gcp.ArgoCDRole = DefaultArgoCDRole
		}
		if len(gcp.MachineTypes) == 0 {
			gcp.MachineTypes = DefaultGKEMachineTypes
		}
		if len(gcp.NodeOAuthScopes) == 0 {
			gcp.NodeOAuthScopes = DefaultNodeOAuthScopes
		}
		ref := orDefault(gcp.ProviderConfigRef)
		gcp.ProviderConfigRef = &ref
		e.GCP = &gcp
	}
	return e, nil
}

// orDefault is ref, or ClusterProviderConfig "default" when it is nil.
func orDefault(ref *v1alpha1.ProviderConfigReference) v1alpha1.ProviderConfigReference {
	if ref == nil || ref.Name == "" {
		return v1alpha1.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: DefaultConfigName}
	}
	return *ref
}
