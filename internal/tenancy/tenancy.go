// Package tenancy decides what a namespace may make fleetplane do. The
// function composes, and the provider acts, with the platform's
// identities for every namespace; what one namespace may have them do
// comes only from configuration the cluster admin writes:
//
//   - A namespaced ProviderConfig, which a tenant may write, grants only
//     the tenant's own credentials (a service principal in a Secret of its
//     namespace, or None for local plain-http endpoints): never the
//     provider's identity, Argo CD, Argo Workflows or anything the
//     function composes for other providers.
//   - A ClusterProviderConfig, which only the cluster admin writes, grants
//     the namespaces its namespaceSelector selects what it says: the
//     provider's injected identity and the user-assigned identities it
//     lists; the Azure subscriptions and resource groups ADXClusters may
//     provision into, with which upjet config, identities and principals;
//     the Argo CD namespace and project, exec plugins and cluster kinds of
//     ClusterRegistrations; the workflow namespace and templates; what
//     Experiments may deploy where; which inventory clusters, kinds and
//     properties Placements may use.
//
// A Grant is that decision for one namespace. The provider builds it from
// the config a managed resource names (provider/controller/shared), the
// function from the config that governs an XR's namespace (Governing);
// both check it with the same methods, so they cannot disagree.
package tenancy

import (
	"fmt"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Grant is what a namespace may have fleetplane do.
type Grant struct {
	// Kind and Name of the ProviderConfig that grants it.
	Kind, Name string
	// Credentials for Kusto.
	Credentials v1alpha1.Credentials
	// Kusto endpoints and databases managed resources may reach, and
	// the hubs they may federate; from the governing ClusterProviderConfig
	// even when a ProviderConfig lends the credentials.
	Kusto v1alpha1.KustoPolicy
	// Azure identities a managed resource may assume, and where
	// ADXClusters may provision; empty from a ProviderConfig.
	Azure v1alpha1.AzurePolicy
	// ArgoCD, Workflows, Experiments and Placement policies; nil when not
	// granted.
	ArgoCD      *v1alpha1.ArgoCDPolicy
	Workflows   *v1alpha1.WorkflowsPolicy
	Experiments *v1alpha1.ExperimentsPolicy
	Placement   *v1alpha1.PlacementPolicy
}

// String names the grant's config for messages.
func (g *Grant) String() string { return g.Kind + " " + g.Name }

// FromProviderConfig is what a namespace's own ProviderConfig grants its
// managed resources: its credentials, nothing else, and never the
// provider's own identity.
func FromProviderConfig(pc *v1alpha1.ProviderConfig) (*Grant, error) {
	// The CRD refuses InjectedIdentity; a ProviderConfig written before it
	// did, or with validation off, must not get it either.
	if pc.Spec.Credentials.Source == xpv2.CredentialsSourceInjectedIdentity {
		return nil, fmt.Errorf("ProviderConfig %s/%s asks for the provider's own identity (InjectedIdentity), which only a ClusterProviderConfig grants", pc.Namespace, pc.Name)
	}
	return &Grant{Kind: v1alpha1.ProviderConfigKind, Name: pc.Namespace + "/" + pc.Name, Credentials: pc.Spec.Credentials}, nil
}

// Selects reports whether pc's namespaceSelector selects a namespace with
// nsLabels; an invalid selector selects nothing.
func Selects(pc *v1alpha1.ClusterProviderConfig, nsLabels map[string]string) (bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(&pc.Spec.NamespaceSelector)
	if err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(nsLabels)), nil
}

// FromClusterProviderConfig is what pc grants namespace, whose labels are
// nsLabels, or an error when its namespaceSelector does not select it.
func FromClusterProviderConfig(pc *v1alpha1.ClusterProviderConfig, namespace string, nsLabels map[string]string) (*Grant, error) {
	ok, err := Selects(pc, nsLabels)
	if err != nil {
		return nil, fmt.Errorf("ClusterProviderConfig %s has an invalid namespaceSelector: %w", pc.Name, err)
	}
	if !ok {
		return nil, fmt.Errorf("ClusterProviderConfig %s does not grant namespace %s: its spec.namespaceSelector does not select it", pc.Name, namespace)
	}
	g := &Grant{
		Kind: v1alpha1.ClusterProviderConfigKind, Name: pc.Name, Credentials: pc.Spec.Credentials,
		ArgoCD: pc.Spec.ArgoCD, Workflows: pc.Spec.Workflows, Experiments: pc.Spec.Experiments, Placement: pc.Spec.Placement,
	}
	if pc.Spec.Azure != nil {
		g.Azure = *pc.Spec.Azure
	}
	if pc.Spec.Kusto != nil {
		g.Kusto = *pc.Spec.Kusto
	}
	return g, nil
}

// ForClusterScoped is what pc grants a cluster-scoped XR that names it:
// only the cluster admin makes those, and only the admin writes pc, so no
// namespaceSelector applies. What a kind may do with it is still only
// what pc says for that kind (ClusterPlacementPolicy).
func ForClusterScoped(pc *v1alpha1.ClusterProviderConfig) *Grant {
	return &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: pc.Name, Credentials: pc.Spec.Credentials, Placement: pc.Spec.Placement}
}

// ManagedIdentity checks that a managed resource may assume the
// user-assigned identity clientID ("" asks for none).
func (g *Grant) ManagedIdentity(clientID string) error {
	switch {
	case clientID == "":
		return nil
	case g.Kind != v1alpha1.ClusterProviderConfigKind || g.Credentials.Source != xpv2.CredentialsSourceInjectedIdentity:
		return fmt.Errorf("managedIdentityClientId %s needs a ClusterProviderConfig with credentials source InjectedIdentity; %s is not one", clientID, g)
	case !slices.ContainsFunc(g.Azure.AllowedManagedIdentityClientIDs, func(id string) bool { return strings.EqualFold(id, clientID) }):
		return fmt.Errorf("managedIdentityClientId %s is not among the identities %s allows (spec.azure.allowedManagedIdentityClientIds)", clientID, g)
	}
	return nil
}

// ArgoCDPolicy is the Argo CD policy the grant holds, with defaults, or an
// error saying where it must come from.
func (g *Grant) ArgoCDPolicy() (v1alpha1.ArgoCDPolicy, error) {
	if g.ArgoCD == nil {
		return v1alpha1.ArgoCDPolicy{}, fmt.Errorf("ClusterRegistrations need a ClusterProviderConfig with spec.argocd, which says where and how clusters are registered; %s has none", g)
	}
	p := *g.ArgoCD
	if p.Namespace == "" {
		p.Namespace = "argocd"
	}
	if p.Project == "" {
		p.Project = "default"
	}
	return p, nil
}

// WorkflowsPolicy is the Argo Workflows policy the grant holds, with
// defaults, or an error saying where it must come from.
func (g *Grant) WorkflowsPolicy() (v1alpha1.WorkflowsPolicy, error) {
	if g.Workflows == nil {
		return v1alpha1.WorkflowsPolicy{}, fmt.Errorf("WorkflowRuns need a ClusterProviderConfig with spec.workflows, which says where and which workflows may run; %s has none", g)
	}
	p := *g.Workflows
	if p.Namespace == "" {
		p.Namespace = "argo"
	}
	if p.AllowInline == nil {
		p.AllowInline = new(true)
	}
	return p, nil
}

// TemplateAllowed reports whether a workflows policy lets runs submit the
// template.
func TemplateAllowed(p v1alpha1.WorkflowsPolicy, template string) bool {
	return slices.Contains(p.AllowedTemplates, "*") || slices.Contains(p.AllowedTemplates, template)
}

// PolicyLabel on a namespace names the ClusterProviderConfig that governs
// it; a namespace without it is governed by DefaultConfigName. Namespace
// labels are the cluster admin's to write.
const PolicyLabel = "fleetplane.io/policy"

// Governing is the name of the ClusterProviderConfig that governs a
// namespace whose labels are nsLabels, and how it was chosen, for
// messages. The function and the provider both choose with it, so a
// namespace's XRs and its managed resources are held to one config.
func Governing(nsLabels map[string]string) (name, which string, err error) {
	l := nsLabels[PolicyLabel]
	switch {
	case l == "":
		return DefaultConfigName, fmt.Sprintf("ClusterProviderConfig %s (the namespace has no label %s)", DefaultConfigName, PolicyLabel), nil
	case len(validation.IsDNS1123Subdomain(l)) > 0:
		return "", "", fmt.Errorf("its label %s is no ClusterProviderConfig name", PolicyLabel)
	}
	return l, fmt.Sprintf("ClusterProviderConfig %s (the namespace's label %s)", l, PolicyLabel), nil
}
