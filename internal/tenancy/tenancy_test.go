package tenancy

import (
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

func TestManagedIdentity(t *testing.T) {
	const allowed, other = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	cpc := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "azure", Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity},
		Azure: v1alpha1.AzurePolicy{AllowedManagedIdentityClientIDs: []string{allowed}}}
	own := &Grant{Kind: v1alpha1.ProviderConfigKind, Name: "team-a/own", Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceSecret}}
	for name, tc := range map[string]struct {
		g    *Grant
		id   string
		want string
	}{
		"none asked":                {g: own},
		"an allowed identity":       {g: cpc, id: allowed},
		"an identity not allowed":   {g: cpc, id: other, want: "is not among the identities ClusterProviderConfig azure allows"},
		"from a namespace's config": {g: own, id: allowed, want: "needs a ClusterProviderConfig with credentials source InjectedIdentity"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.g.ManagedIdentity(tc.id)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPolicies(t *testing.T) {
	g := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "c", ArgoCD: &v1alpha1.ArgoCDPolicy{}, Workflows: &v1alpha1.WorkflowsPolicy{AllowedTemplates: []string{"checks"}}}
	a, err := g.ArgoCDPolicy()
	if err != nil || a.Namespace != "argocd" || a.Project != "default" {
		t.Errorf("Argo CD defaults: %+v, %v", a, err)
	}
	w, err := g.WorkflowsPolicy()
	if err != nil || w.Namespace != "argo" || !*w.AllowInline {
		t.Errorf("Workflows defaults: %+v, %v", w, err)
	}
	if !TemplateAllowed(w, "checks") || TemplateAllowed(w, "other") {
		t.Error("templates are allowed by name")
	}
	if !TemplateAllowed(v1alpha1.WorkflowsPolicy{AllowedTemplates: []string{"*"}}, "any") {
		t.Error("* allows every template")
	}
	if _, err := (&Grant{Kind: "ProviderConfig", Name: "team-a/own"}).WorkflowsPolicy(); err == nil || !strings.Contains(err.Error(), "need a ClusterProviderConfig with spec.workflows") {
		t.Errorf("a namespace's config grants no workflows: %v", err)
	}
}
