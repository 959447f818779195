package tenancy

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"team-b", "team-b", true},
		{"team-b", "TEAM-B", true},
		{"team-b", "team-b2", false},
		{"team-b-*", "team-b-prod", true},
		{"team-b-*", "team-b-", true},
		{"team-b-*", "team-a-prod", false},
		{"*-prod", "team-b-prod", true},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"/subscriptions/s/resourceGroups/id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/team-b-*",
			"/subscriptions/S/resourcegroups/ID/providers/Microsoft.ManagedIdentity/userAssignedIdentities/team-b-ingest", true},
		// No backtracking blow-up: this is linear-ish, not exponential.
		{strings.Repeat("*a", 50) + "b", strings.Repeat("a", 5000), false},
	} {
		if got := Match(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

const (
	subB  = "00000000-0000-0000-0000-00000000000b"
	subX  = "00000000-0000-0000-0000-00000000000c"
	appB  = "11111111-1111-1111-1111-11111111111b"
	appX  = "11111111-1111-1111-1111-11111111111c"
	idB   = "/subscriptions/" + subB + "/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/team-b-ingest"
	idX   = "/subscriptions/" + subX + "/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/team-a-ingest"
	teamB = "team-b"
)

func teamBGrant() *Grant {
	return &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: teamB, Azure: v1alpha1.AzurePolicy{
		AllowMonitoring: true,
		Provisioning: []v1alpha1.AzureProvisioning{{
			SubscriptionID:         subB,
			ResourceGroups:         []string{"team-b-*"},
			ProviderConfigRef:      v1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "azure-team-b"},
			UserAssignedIdentities: []string{"/subscriptions/" + subB + "/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/team-b-*"},
			DatabasePrincipals:     []string{appB},
		}},
	}}
}

func TestProvisioning(t *testing.T) {
	g := teamBGrant()
	for name, tc := range map[string]struct {
		sub, rg string
		want    string
	}{
		"a granted group":               {sub: subB, rg: "team-b-prod"},
		"a granted group, another case": {sub: strings.ToUpper(subB), rg: "TEAM-B-prod"},
		"another team's group":          {sub: subB, rg: "team-a-prod", want: "grants no provisioning in resource group team-a-prod of subscription " + subB + " (spec.azure.provisioning[subscriptionId=" + subB + "].resourceGroups allows team-b-*)"},
		"another subscription":          {sub: subX, rg: "team-b-prod", want: "ClusterProviderConfig team-b grants no provisioning in Azure subscription " + subX + ": the cluster admin adds it to spec.azure.provisioning"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := g.Provisioning(tc.sub, tc.rg)
			check(t, err, tc.want)
			if err == nil && p.ProviderConfigRef.Name != "azure-team-b" {
				t.Errorf("provider config = %v", p.ProviderConfigRef)
			}
		})
	}
	p := g.Azure.Provisioning[0]
	check(t, g.UserAssignedIdentities(p, []string{idB}), "")
	check(t, g.UserAssignedIdentities(p, []string{idB, idX}), "does not let clusters in subscription "+subB+" carry the user-assigned identities "+idX+" (spec.azure.provisioning[subscriptionId="+subB+"].userAssignedIdentities)")
	check(t, g.DatabasePrincipals(p, []string{strings.ToUpper(appB)}), "")
	check(t, g.DatabasePrincipals(p, []string{appX}), "does not let databases in subscription "+subB+" grant roles to "+appX)
	check(t, (&Grant{Kind: "ClusterProviderConfig", Name: "empty"}).UserAssignedIdentities(v1alpha1.AzureProvisioning{SubscriptionID: subB}, []string{idB}), "carry the user-assigned identities")
}

func TestMonitoring(t *testing.T) {
	g := teamBGrant()
	check(t, g.Monitoring(subB, "team-b-prod", "ADX cluster x"), "")
	check(t, g.Monitoring(subB, "team-a-prod", "ADX cluster x"), "ADX cluster x is not read with the credentials of ClusterProviderConfig team-b: monitoring covers only where it grants provisioning")
	g.Azure.AllowMonitoring = false
	check(t, g.Monitoring(subB, "team-b-prod", "ADX cluster x"), "does not allow monitoring (spec.azure.allowMonitoring)")
	own := &Grant{Kind: v1alpha1.ProviderConfigKind, Name: "team-a/own"}
	check(t, own.Monitoring(subX, "anything", "ADX cluster x"), "")
}

func TestExperimentsPolicy(t *testing.T) {
	g := &Grant{Kind: "ClusterProviderConfig", Name: teamB}
	_, err := g.ExperimentsPolicy()
	check(t, err, "ClusterProviderConfig team-b grants no Experiments: the cluster admin adds spec.experiments")
	g.Experiments = &v1alpha1.ExperimentsPolicy{GCP: &v1alpha1.GCPPolicy{Project: "lab", ArgoCDServiceAccount: "argocd@lab.iam.gserviceaccount.com"}}
	_, err = g.ExperimentsPolicy()
	check(t, err, "grants no Argo CD, which Experiments deploy with: the cluster admin adds spec.argocd")
	g.ArgoCD = &v1alpha1.ArgoCDPolicy{Project: "team-b"}
	_, err = g.ExperimentsPolicy()
	check(t, err, "grants no Argo Workflows, which Experiments validate with: the cluster admin adds spec.workflows")
	g.Workflows = &v1alpha1.WorkflowsPolicy{}
	e, err := g.ExperimentsPolicy()
	check(t, err, "")
	if e.HubServer != DefaultHubServer || e.ArgoCD.Namespace != "argocd" || e.ArgoCD.Project != "team-b" || e.Workflows.Namespace != "argo" ||
		e.Kubernetes.Name != "default" || e.GCP.ArgoCDRole != DefaultArgoCDRole || e.GCP.ProviderConfigRef.Name != "default" {
		t.Errorf("defaults: %+v", e)
	}
	if g.Experiments.GCP.ArgoCDRole != "" {
		t.Error("defaults were written into the grant")
	}
}

func TestPlacementPolicy(t *testing.T) {
	g := &Grant{Kind: "ClusterProviderConfig", Name: teamB}
	_, err := g.PlacementPolicy()
	check(t, err, "grants no Placement: the cluster admin adds spec.placement")
	g.Placement = &v1alpha1.PlacementPolicy{ClusterSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}}
	_, err = g.PlacementPolicy()
	check(t, err, "invalid spec.placement.clusterSelector")
	g.Placement = &v1alpha1.PlacementPolicy{
		ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
		Kinds:           []string{"apps/Deployment", "ConfigMap", "/Service", "policy/*"},
		Properties:      []string{"region"},
	}
	p, err := g.PlacementPolicy()
	check(t, err, "")
	if p.PodSecurity != v1alpha1.PodSecurityRestricted {
		t.Errorf("pod security defaults to %q", p.PodSecurity)
	}
	if !p.Clusters.Matches(labels.Set{"team": "b", "x": "y"}) || p.Clusters.Matches(labels.Set{"team": "a"}) {
		t.Error("cluster selector")
	}
	for _, k := range []struct {
		group, kind string
		want        bool
	}{
		{"apps", "Deployment", true}, {"apps", "DaemonSet", false}, {"", "ConfigMap", true}, {"", "Service", true},
		{"", "Secret", false}, {"policy", "PodDisruptionBudget", true}, {"rbac.authorization.k8s.io", "RoleBinding", false},
		{"extensions", "Deployment", false},
	} {
		if got := p.Kind(k.group, k.kind); got != k.want {
			t.Errorf("Kind(%q, %q) = %v", k.group, k.kind, got)
		}
	}
	if p.ReportedState("apps", "Deployment") {
		t.Error("no status is written back unless listed")
	}
	g.Placement.ReportedStateKinds = []string{"apps/Deployment", "policy/PodDisruptionBudget", "apps/DaemonSet"}
	p, _ = g.PlacementPolicy()
	if !p.ReportedState("apps", "Deployment") || p.ReportedState("apps", "StatefulSet") || p.ReportedState("apps", "DaemonSet") {
		t.Error("reported state for listed kinds that may be delivered, only")
	}
	if !p.Property("region") || p.Property("token") {
		t.Error("properties are visible by name only")
	}
	g.Placement.Properties = []string{"*"}
	if p, _ := g.PlacementPolicy(); !p.Property("token") {
		t.Error("* shows every property")
	}
}

func check(t *testing.T, err error, want string) {
	t.Helper()
	if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestClusterPlacementPolicy(t *testing.T) {
	pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: v1alpha1.ClusterProviderConfigSpec{
		// What a cluster-scoped XR gets is the placement policy alone,
		// whatever else the config grants namespaces.
		Azure:     &v1alpha1.AzurePolicy{AllowDiscovery: true},
		Workflows: &v1alpha1.WorkflowsPolicy{AllowedTemplates: []string{"*"}},
		Placement: &v1alpha1.PlacementPolicy{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Kinds:           []string{"apps/*"}, ReportedStateKinds: []string{"apps/*"}, Properties: []string{"region"},
		},
	}}
	g := ForClusterScoped(pc)
	if g.Workflows != nil || g.Azure.AllowDiscovery || g.String() != "ClusterProviderConfig platform" {
		t.Errorf("grant = %+v", g)
	}
	_, err := g.ClusterPlacementPolicy()
	check(t, err, "ClusterProviderConfig platform grants no ClusterPlacement: the cluster admin adds spec.placement.clusterPlacements")

	pc.Spec.Placement.ClusterPlacements = &v1alpha1.ClusterPlacementPolicy{Kinds: []string{"rbac.authorization.k8s.io/ClusterRole", "Namespace"}}
	p, err := ForClusterScoped(pc).ClusterPlacementPolicy()
	check(t, err, "")
	if p.ObjectNamespace != "crossplane-system" {
		t.Errorf("Objects' namespace defaults to %q", p.ObjectNamespace)
	}
	// The cluster-scoped kinds, not a Placement's; never reported state.
	if !p.Kind("rbac.authorization.k8s.io", "ClusterRole") || !p.Kind("", "Namespace") || p.Kind("apps", "Deployment") || p.Kind("rbac.authorization.k8s.io", "ClusterRoleBinding") {
		t.Error("kinds are not clusterPlacements.kinds")
	}
	if p.ReportedState("rbac.authorization.k8s.io", "ClusterRole") {
		t.Error("a ClusterPlacement writes no status back")
	}
	// The clusters and properties of spec.placement.
	if !p.Clusters.Matches(labels.Set{"env": "prod"}) || p.Clusters.Matches(labels.Set{"env": "dev"}) || !p.Property("region") || p.Property("owner") {
		t.Error("clusters and properties are spec.placement's")
	}
	// A namespace's Placement gains nothing from clusterPlacements.
	np, _ := (&Grant{Kind: "ClusterProviderConfig", Name: "platform", Placement: pc.Spec.Placement}).PlacementPolicy()
	if np.Kind("rbac.authorization.k8s.io", "ClusterRole") || np.ObjectNamespace != "" {
		t.Error("a Placement may deliver what only ClusterPlacements may")
	}
}
