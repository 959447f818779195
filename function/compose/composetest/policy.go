package composetest

import (
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Subscriptions the composer tests provision in.
const (
	Subscription           = "00000000-0000-0000-0000-000000000000"
	DiscoveredSubscription = "44444444-4444-4444-4444-444444444444"
	MovedSubscription      = "55555555-5555-5555-5555-555555555555"
)

// Permissive is the policy composer tests run under unless they test the
// policy: ClusterProviderConfig "default" for every namespace, granting
// provisioning in the test subscriptions (any resource group, identity
// and principal, with upjet's ClusterProviderConfig "default"), every
// Kusto endpoint and database, each a hub that may create the databases
// partitions report, Experiments on the hub, GKE and vclusters, and
// Placement of every kind anywhere, with every quota at its most.
// Tests of refusals write their own.
func Permissive() *fpv1alpha1.ClusterProviderConfig {
	azure := func(sub string) fpv1alpha1.AzureProvisioning {
		return fpv1alpha1.AzureProvisioning{
			SubscriptionID: sub, ResourceGroups: []string{"*"}, UserAssignedIdentities: []string{"*"}, DatabasePrincipals: []string{"*"},
			ProviderConfigRef: fpv1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
			Quota:             &fpv1alpha1.ADXQuota{SKUs: []string{"*"}, MaxCapacity: ptr.To[int32](1000), MaxDatabases: ptr.To[int32](10000)},
		}
	}
	return &fpv1alpha1.ClusterProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: fpv1alpha1.SchemeGroupVersion.String(), Kind: fpv1alpha1.ClusterProviderConfigKind},
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: fpv1alpha1.ClusterProviderConfigSpec{
			Credentials:       fpv1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity},
			NamespaceSelector: metav1.LabelSelector{},
			Azure: &fpv1alpha1.AzurePolicy{
				AllowDiscovery: true, AllowMonitoring: true,
				AllowedManagedIdentityClientIDs: []string{"22222222-2222-2222-2222-222222222222"},
				Provisioning:                    []fpv1alpha1.AzureProvisioning{azure(Subscription), azure(DiscoveredSubscription), azure(MovedSubscription)},
			},
			Kusto: &fpv1alpha1.KustoPolicy{Endpoints: []fpv1alpha1.KustoEndpointGrant{
				{Endpoint: "https://*:*", Hub: &fpv1alpha1.KustoHubGrant{CreateDatabasesFromPartitions: true}},
				{Endpoint: "http://*:*", Hub: &fpv1alpha1.KustoHubGrant{CreateDatabasesFromPartitions: true}},
			}, Quota: &fpv1alpha1.KustoQuota{MinFederationInterval: &metav1.Duration{Duration: time.Second}, MinChangeCheckInterval: &metav1.Duration{Duration: time.Second}}},
			ArgoCD:    &fpv1alpha1.ArgoCDPolicy{AllowedExecCommands: []string{"argocd-k8s-auth"}},
			Workflows: &fpv1alpha1.WorkflowsPolicy{AllowedTemplates: []string{"*"}},
			Experiments: &fpv1alpha1.ExperimentsPolicy{
				AllowHubTargets: true,
				GCP:             &fpv1alpha1.GCPPolicy{Project: "lab-project", ArgoCDServiceAccount: "argocd@lab-project.iam.gserviceaccount.com", MachineTypes: []string{"*"}},
				VCluster:        &fpv1alpha1.VClusterPolicy{Image: "ghcr.io/loft-sh/vcluster-oss:0.30.0", KubernetesImage: "ghcr.io/loft-sh/kubernetes:v1.34.2"},
				Talos: &fpv1alpha1.TalosPolicy{KubernetesVersion: "v1.34.2", TalosVersion: "v1.11", Infrastructure: fpv1alpha1.TalosInfrastructure{
					APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", ClusterKind: "DockerCluster", MachineTemplateKind: "DockerMachineTemplate",
				}},
				Quota: &fpv1alpha1.ExperimentsQuota{
					MaxExperiments: ptr.To[int32](10000), MaxTargets: ptr.To[int32](16), MaxNodesPerTarget: ptr.To[int32](100), MaxNodes: ptr.To[int32](1600), MaxTTLDays: ptr.To[int32](365),
				},
			},
			Placement: &fpv1alpha1.PlacementPolicy{
				Kinds: []string{"/*", "apps/*", "batch/*", "policy/*"}, ReportedStateKinds: []string{"apps/*", "batch/*"},
				PodSecurity: fpv1alpha1.PodSecurityBaseline, Properties: []string{"*"},
				ClusterPlacements: &fpv1alpha1.ClusterPlacementPolicy{
					Kinds: []string{"Namespace", "rbac.authorization.k8s.io/*", "apiextensions.k8s.io/CustomResourceDefinition", "example.com/*"}, Namespace: "crossplane-system",
				},
				Quota: &fpv1alpha1.PlacementQuota{MaxClusters: ptr.To[int32](5000), MaxCopies: ptr.To[int32](5000)},
			},
		},
	}
}
