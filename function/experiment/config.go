package experiment

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// Config is what an Experiment is composed with: the function input's
// tuning, and the platform settings of the ClusterProviderConfig that
// governs its namespace.
type Config struct {
	ComponentRepoURL  string
	ComponentRevision string
	ArgoCDNamespace   string
	ArgoCDProject     string
	HubServer         string
	WorkflowNamespace string
	GCPProject        string
	// ArgoCDServiceAccount and ArgoCDRole: how Argo CD reaches GKE.
	ArgoCDServiceAccount string
	ArgoCDRole           string
	// NodeServiceAccount ("" for GKE's default) and NodeOAuthScopes:
	// what GKE targets' nodes run as, the platform's choice.
	NodeServiceAccount string
	NodeOAuthScopes    []string
	GCP                xpv2.ProviderConfigReference
	Kubernetes         xpv2.ProviderConfigReference
	WatchApplications  bool
	// VCluster is what vcluster targets run, when the policy allows them.
	VCluster fpv1alpha1.VClusterPolicy
	// Talos is how talos targets are provisioned, when the policy allows
	// them.
	Talos fpv1alpha1.TalosPolicy
	// Fleetplane is the config ClusterRegistrations, WorkflowRuns and
	// Expiries name: the one that governs the namespace, which the
	// provider checks again.
	Fleetplane xpv2.ProviderConfigReference
}

// ConfigFrom applies defaults to the function input.
func ConfigFrom(in *v1beta1.Input) Config {
	cfg := Config{ComponentRevision: "HEAD", WatchApplications: true}
	if in == nil || in.Experiments == nil {
		return cfg
	}
	e := in.Experiments
	if e.ComponentRepoURL != "" {
		cfg.ComponentRepoURL = e.ComponentRepoURL
	}
	if e.ComponentRevision != "" {
		cfg.ComponentRevision = e.ComponentRevision
	}
	cfg.WatchApplications = e.WatchApplications == nil || *e.WatchApplications
	return cfg
}

// withPolicy adds the platform settings of the policy config grants.
func (cfg Config) withPolicy(config string, e tenancy.Experiments) Config {
	ref := func(r fpv1alpha1.ProviderConfigReference) xpv2.ProviderConfigReference {
		return xpv2.ProviderConfigReference{Kind: r.Kind, Name: r.Name}
	}
	cfg.Fleetplane = xpv2.ProviderConfigReference{Kind: fpv1alpha1.ClusterProviderConfigKind, Name: config}
	cfg.ArgoCDNamespace, cfg.ArgoCDProject = e.ArgoCD.Namespace, e.ArgoCD.Project
	cfg.WorkflowNamespace = e.Workflows.Namespace
	cfg.HubServer = e.HubServer
	cfg.Kubernetes = ref(e.Kubernetes)
	if g := e.GCP; g != nil {
		cfg.GCP = ref(*g.ProviderConfigRef)
		cfg.GCPProject, cfg.ArgoCDServiceAccount, cfg.ArgoCDRole = g.Project, g.ArgoCDServiceAccount, g.ArgoCDRole
		cfg.NodeServiceAccount, cfg.NodeOAuthScopes = g.NodeServiceAccount, g.NodeOAuthScopes
	}
	if v := e.VCluster; v != nil {
		cfg.VCluster = *v
	}
	if t := e.Talos; t != nil {
		cfg.Talos = *t
	}
	return cfg
}
