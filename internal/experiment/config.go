package experiment

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
)

// Config is the function input as it applies to Experiments, with
// defaults.
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
	GCP                  xpv2.ProviderConfigReference
	Kubernetes           xpv2.ProviderConfigReference
	WatchApplications    bool
	Fleetplane           xpv2.ProviderConfigReference
}

// ConfigFrom applies defaults to the function input.
func ConfigFrom(in *v1beta1.Input) Config {
	def := xpv2.ProviderConfigReference{Kind: v1beta1.DefaultProviderConfigKind, Name: v1beta1.DefaultProviderConfigName}
	cfg := Config{
		ComponentRevision: "HEAD",
		ArgoCDNamespace:   "argocd",
		ArgoCDProject:     "default",
		HubServer:         "https://kubernetes.default.svc",
		WorkflowNamespace: "argo",
		ArgoCDRole:        "roles/container.developer",
		GCP:               def,
		Kubernetes:        def,
		Fleetplane:        def,
	}
	if in == nil || in.Experiments == nil {
		return cfg
	}
	e := in.Experiments
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&cfg.ComponentRepoURL, e.ComponentRepoURL)
	set(&cfg.ComponentRevision, e.ComponentRevision)
	set(&cfg.ArgoCDNamespace, e.ArgoCDNamespace)
	set(&cfg.ArgoCDProject, e.ArgoCDProject)
	set(&cfg.HubServer, e.HubServer)
	set(&cfg.WorkflowNamespace, e.WorkflowNamespace)
	ref := func(dst *xpv2.ProviderConfigReference, r *v1beta1.ProviderConfigReference) {
		if r != nil {
			*dst = xpv2.ProviderConfigReference{Kind: r.Kind, Name: r.Name}
		}
	}
	ref(&cfg.Kubernetes, e.KubernetesProviderConfigRef)
	cfg.WatchApplications = e.WatchApplications == nil || *e.WatchApplications
	ref(&cfg.Fleetplane, e.ProviderConfigRef)
	if e.GCP != nil {
		ref(&cfg.GCP, e.GCP.ProviderConfigRef)
		cfg.GCPProject = e.GCP.Project
		cfg.ArgoCDServiceAccount = e.GCP.ArgoCDServiceAccount
		set(&cfg.ArgoCDRole, e.GCP.ArgoCDRole)
	}
	return cfg
}
