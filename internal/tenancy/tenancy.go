// Package tenancy decides what a namespaced managed resource may make
// provider-fleetplane do. The provider acts with its own identity and RBAC
// for every namespace; what one namespace may have it do comes only from
// configuration the cluster admin writes:
//
//   - A managed resource names a ProviderConfig of its own namespace or a
//     ClusterProviderConfig.
//   - A ProviderConfig, which a tenant may write, grants only the tenant's
//     own credentials (a service principal in a Secret of its namespace, or
//     None for local plain-http endpoints), never the provider's identity,
//     never Argo CD or Argo Workflows.
//   - A ClusterProviderConfig, which only the cluster admin writes, grants
//     the namespaces its namespaceSelector selects what it says: the
//     provider's injected identity and the user-assigned identities it
//     lists; for ClusterRegistrations, the Argo CD namespace and project,
//     the exec plugins, and whether insecure or proxied clusters are
//     accepted; for WorkflowRuns, the workflow namespace and templates.
//
// Resolve applies these rules; every controller goes through it.
package tenancy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Grant is what a managed resource may have the provider do.
type Grant struct {
	// Kind and Name of the ProviderConfig that grants it.
	Kind, Name string
	// Credentials for Kusto.
	Credentials v1alpha1.Credentials
	// Azure identities a managed resource may assume; empty from a
	// ProviderConfig.
	Azure v1alpha1.AzurePolicy
	// ArgoCD and Workflows policies; nil when not granted.
	ArgoCD    *v1alpha1.ArgoCDPolicy
	Workflows *v1alpha1.WorkflowsPolicy
}

// String names the grant's config for messages.
func (g *Grant) String() string { return g.Kind + " " + g.Name }

// Resolve reads and checks the ProviderConfig mg names.
func Resolve(ctx context.Context, kube client.Reader, mg resource.ModernManaged) (*Grant, error) {
	ref := mg.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return nil, errors.New("the managed resource names no ProviderConfig (spec.providerConfigRef)")
	}
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
			return nil, fmt.Errorf("cannot get ProviderConfig %s/%s: %w", mg.GetNamespace(), ref.Name, err)
		}
		// The CRD refuses this; a ProviderConfig written before it did, or
		// with validation off, must not get it either.
		if pc.Spec.Credentials.Source == xpv2.CredentialsSourceInjectedIdentity {
			return nil, fmt.Errorf("ProviderConfig %s/%s asks for the provider's own identity (InjectedIdentity), which only a ClusterProviderConfig grants", mg.GetNamespace(), ref.Name)
		}
		return &Grant{Kind: ref.Kind, Name: mg.GetNamespace() + "/" + ref.Name, Credentials: pc.Spec.Credentials}, nil
	case v1alpha1.ClusterProviderConfigKind:
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return nil, fmt.Errorf("cannot get ClusterProviderConfig %s: %w", ref.Name, err)
		}
		if err := selects(ctx, kube, pc, mg.GetNamespace()); err != nil {
			return nil, err
		}
		g := &Grant{Kind: ref.Kind, Name: ref.Name, Credentials: pc.Spec.Credentials, ArgoCD: pc.Spec.ArgoCD, Workflows: pc.Spec.Workflows}
		if pc.Spec.Azure != nil {
			g.Azure = *pc.Spec.Azure
		}
		return g, nil
	}
	return nil, fmt.Errorf("providerConfigRef.kind %q is neither %s nor %s", ref.Kind, v1alpha1.ProviderConfigKind, v1alpha1.ClusterProviderConfigKind)
}

// selects checks that pc's namespaceSelector selects namespace.
func selects(ctx context.Context, kube client.Reader, pc *v1alpha1.ClusterProviderConfig, namespace string) error {
	sel, err := metav1.LabelSelectorAsSelector(&pc.Spec.NamespaceSelector)
	if err != nil {
		return fmt.Errorf("ClusterProviderConfig %s has an invalid namespaceSelector: %w", pc.Name, err)
	}
	ns := &corev1.Namespace{}
	if err := kube.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		return fmt.Errorf("cannot get namespace %s to check ClusterProviderConfig %s's namespaceSelector: %w", namespace, pc.Name, err)
	}
	if !sel.Matches(labels.Set(ns.Labels)) {
		return fmt.Errorf("ClusterProviderConfig %s does not grant namespace %s: its spec.namespaceSelector does not select it", pc.Name, namespace)
	}
	return nil
}

// ManagedIdentity checks that a managed resource may assume the
// user-assigned identity clientID ("" asks for none).
func (g *Grant) ManagedIdentity(clientID string) error {
	switch {
	case clientID == "":
		return nil
	case g.Kind != v1alpha1.ClusterProviderConfigKind || g.Credentials.Source != xpv2.CredentialsSourceInjectedIdentity:
		return fmt.Errorf("managedIdentityClientId %s needs a ClusterProviderConfig with credentials source InjectedIdentity; %s is not one", clientID, g)
	case !slices.Contains(g.Azure.AllowedManagedIdentityClientIDs, clientID):
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
