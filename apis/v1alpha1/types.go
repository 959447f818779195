package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ProviderConfigSpec is what a namespace may configure for itself: how
// provider-fleetplane authenticates to Kusto with the namespace's own
// credentials. It grants nothing beyond them.
type ProviderConfigSpec struct {
	// Credentials for Kusto: a Secret of this namespace, or None for local
	// plain-http endpoints.
	// +kubebuilder:validation:XValidation:rule="self.source != 'InjectedIdentity'",message="a namespaced ProviderConfig cannot use the provider's own identity (InjectedIdentity); that takes a ClusterProviderConfig the cluster admin writes. Use a service principal in a Secret of this namespace"
	Credentials Credentials `json:"credentials"`
}

// ClusterProviderConfigSpec is what the cluster admin grants the
// namespaces it selects: the provider's identity and the identities it may
// assume, and where and how their ClusterRegistrations and WorkflowRuns
// may act. A namespaced managed resource gets no more power than this.
//
// It is also the policy function-fleetplane enforces before it composes
// anything for a namespace's ADXClusters, Experiments and Placements:
// the one the namespace's label fleetplane.io/policy names, or "default",
// provided its namespaceSelector selects the namespace. What it does not
// grant, a namespace does not get.
type ClusterProviderConfigSpec struct {
	// Credentials for Kusto.
	Credentials Credentials `json:"credentials"`

	// Kusto says which Kusto endpoints and databases the namespaces'
	// Tables, Heartbeats and Federations may reach, and which endpoints
	// they may federate as hubs. Without it they reach none.
	// +optional
	Kusto *KustoPolicy `json:"kusto,omitempty"`

	// NamespaceSelector chooses the namespaces whose managed resources may
	// use this ClusterProviderConfig; {} selects every namespace. It is
	// required: sharing the provider's powers is a decision.
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// Azure says which Azure identities managed resources may assume.
	// +optional
	Azure *AzurePolicy `json:"azure,omitempty"`

	// ArgoCD says where and how ClusterRegistrations register clusters.
	// Without it, ClusterRegistrations cannot use this config.
	// +optional
	ArgoCD *ArgoCDPolicy `json:"argocd,omitempty"`

	// Workflows says where and what WorkflowRuns may submit. Without it,
	// WorkflowRuns cannot use this config.
	// +optional
	Workflows *WorkflowsPolicy `json:"workflows,omitempty"`

	// Experiments says what the namespaces' Experiments may compose and
	// the platform settings they are composed with. Without it, their
	// Experiments compose nothing. Experiments also need ArgoCD and
	// Workflows.
	// +optional
	Experiments *ExperimentsPolicy `json:"experiments,omitempty"`

	// Placement says where and what the namespaces' Placements may
	// deliver. Without it, their Placements deliver nothing.
	// +optional
	Placement *PlacementPolicy `json:"placement,omitempty"`
}

// KustoPolicy is where on the Kusto data plane the namespaces' managed
// resources (Tables, Heartbeats, Federations) may act. They act with this
// config's credentials, which Kusto cannot tell from any other team's
// use of them, so the provider checks every endpoint and database here
// first, and the function before it composes them.
type KustoPolicy struct {
	// Endpoints the namespaces may reach, with the databases there.
	// Empty: none, whatever the credentials source. A namespaced
	// ProviderConfig's own credentials reach only these too: the
	// provider's pod, not the tenant's, makes the calls.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Endpoints []KustoEndpointGrant `json:"endpoints,omitempty"`

	// Quota bounds how often the namespaces' Federations may ask their
	// hubs for work. Defaults apply when it is absent.
	// +optional
	Quota *KustoQuota `json:"quota,omitempty"`
}

// KustoQuota bounds the Kusto work one namespace's managed resources make
// the shared provider do. Every cycle of a Federation reads all its
// partitions' heartbeats and may rewrite the hub's functions, so its
// interval is what one namespace costs everyone.
type KustoQuota struct {
	// MinFederationInterval is the shortest spec.forProvider.interval a
	// Federation may ask for. Default 1m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="minFederationInterval must be at least 1s"
	MinFederationInterval *metav1.Duration `json:"minFederationInterval,omitempty"`

	// MinChangeCheckInterval is the shortest
	// spec.forProvider.changeCheckInterval a Federation may ask for: how
	// often, between cycles, the hub is asked whether a partition
	// changed. Default 15s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="minChangeCheckInterval must be at least 1s"
	MinChangeCheckInterval *metav1.Duration `json:"minChangeCheckInterval,omitempty"`
}

// KustoEndpointGrant grants one endpoint, or the endpoints a pattern
// matches, and databases there.
type KustoEndpointGrant struct {
	// Endpoint is a cluster URL, or a pattern where * in the host
	// matches any run of characters (https://team-b-*.westeurope.kusto.windows.net).
	// Compared as endpoints are everywhere: scheme and host ignoring
	// case, the default port the same as none, a trailing slash
	// ignored. A port is matched exactly (or * for any); a * never
	// matches across the host into the port.
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9*]([A-Za-z0-9.*-]*[A-Za-z0-9*])?)(:([0-9]{1,5}|\*))?/?$`
	Endpoint string `json:"endpoint"`

	// Databases of the endpoint the namespaces may use, by name or
	// pattern (* matches any run of characters), compared ignoring case
	// as Kusto does. Omitted: every database of the endpoint.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=260
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9_*]+$`
	Databases []string `json:"databases,omitempty"`

	// Hub lets the namespaces federate the endpoint: a Federation may
	// use it as its hub (writing entity groups and functions into the
	// databases granted above). A hub is one namespace's: when the
	// configs governing two namespaces both grant one endpoint as a
	// hub, Federations of neither run on it, and both say why.
	// +optional
	Hub *KustoHubGrant `json:"hub,omitempty"`
}

// KustoHubGrant is what a namespace's hub may do beyond federating.
type KustoHubGrant struct {
	// CreateDatabasesFromPartitions lets a provisioned hub (an ADXCluster
	// with role hub that provisions) create the Azure databases its
	// partitions report and it lacks (the Federation's
	// status.atProvider.missingDatabases). Those names come from
	// heartbeat rows, which whoever may ingest into the hub's heartbeat
	// table writes. Default false: missing databases are reported, and
	// the admin or the ADXCluster's spec.provision.databases adds them.
	// +optional
	CreateDatabasesFromPartitions bool `json:"createDatabasesFromPartitions,omitempty"`
}

// AzurePolicy bounds the Azure identities managed resources may assume.
type AzurePolicy struct {
	// AllowedManagedIdentityClientIDs are the user-assigned identities of
	// the provider's pod a managed resource may name (a heartbeat target's
	// managedIdentityClientId), with credentials source InjectedIdentity.
	// Empty: none may be named, and the pod's default identity is used.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	AllowedManagedIdentityClientIDs []string `json:"allowedManagedIdentityClientIds,omitempty"`

	// AllowDiscovery lets ProvisioningDefaults read Azure's instance
	// metadata (IMDS) of the machine provider-fleetplane runs on, which
	// names its subscription, resource group and region, and list Kusto
	// SKUs with this config's credentials in the subscription a resource
	// names; so ADXClusters with provision.auto provision there. Default
	// false; never granted by a namespaced ProviderConfig, whose SKU
	// listing uses the tenant's own credentials.
	// +optional
	AllowDiscovery bool `json:"allowDiscovery,omitempty"`

	// AllowMonitoring lets Autoscalers read an ADX cluster's size and its
	// Azure Monitor metrics with this config's credentials, for clusters
	// in the subscriptions and resource groups Provisioning grants (what
	// a namespace may create, it may measure; nothing else). Default
	// false; a namespaced ProviderConfig reads with the tenant's own
	// credentials and needs no grant.
	// +optional
	AllowMonitoring bool `json:"allowMonitoring,omitempty"`

	// Provisioning are the places ADXClusters of the selected namespaces
	// may create Azure resources in, and what they may attach and grant
	// there. Empty: ADXClusters may not provision, only bring their own
	// cluster.
	// +optional
	// +listType=map
	// +listMapKey=subscriptionId
	// +kubebuilder:validation:MaxItems=64
	Provisioning []AzureProvisioning `json:"provisioning,omitempty"`
}

// AzureProvisioning grants provisioning in one Azure subscription.
type AzureProvisioning struct {
	// SubscriptionID of the subscription.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	SubscriptionID string `json:"subscriptionId"`

	// ResourceGroups the namespaces may create clusters in, by name or
	// pattern: * matches any run of characters, so team-b-* grants every
	// group whose name starts with team-b-. Compared ignoring case, as
	// Azure does.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=90
	// +kubebuilder:validation:items:Pattern=`^[-\w._()*]+$`
	ResourceGroups []string `json:"resourceGroups"`

	// ProviderConfigRef is the upjet Azure (azure.m.upbound.io)
	// ProviderConfig whose identity acts in this subscription. A
	// ClusterProviderConfig acts with the platform's identity; a
	// ProviderConfig is one of the ADXCluster's own namespace, holding
	// the tenant's own credentials.
	ProviderConfigRef ProviderConfigReference `json:"providerConfigRef"`

	// UserAssignedIdentities the namespaces' clusters may carry, by ARM
	// resource ID or pattern (* matches any run of characters), compared
	// ignoring case. Empty: only system-assigned identities.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	UserAssignedIdentities []string `json:"userAssignedIdentities,omitempty"`

	// DatabasePrincipals are the client IDs of the applications and
	// managed identities the namespaces may give database roles
	// (spec.provision.databasePrincipals), or * for any. Empty: none.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\*)$`
	DatabasePrincipals []string `json:"databasePrincipals,omitempty"`

	// TenantID is the Microsoft Entra tenant of the principals granted
	// here: a database principal that names no tenant of its own (an
	// ADXMon's managedIdentityClientId without tenantId) is given its
	// role in this tenant. Without it such a principal is refused.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	TenantID string `json:"tenantId,omitempty"`

	// Quota bounds the clusters ADXClusters (an ADXMon's included)
	// create in this subscription. Defaults apply when it is absent.
	// +optional
	Quota *ADXQuota `json:"quota,omitempty"`
}

// ADXQuota bounds what one provisioned ADX cluster may cost.
type ADXQuota struct {
	// SKUs clusters may be created with, by name or pattern (* matches
	// any run of characters), compared ignoring case. Default: the Dev
	// SKUs, Standard_E2, E4 and E8 (ads_v5, d_v5, a_v4), Standard_L8as_v3
	// and Standard_L16as_v3.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9_()+ *]+$`
	SKUs []string `json:"skus,omitempty"`

	// MaxCapacity is the most instances a cluster may ask for, as
	// provision.capacity or provision.autoScaleMax. Default 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxCapacity *int32 `json:"maxCapacity,omitempty"`

	// MaxDatabases is the most databases a cluster may have fleetplane
	// create: those its spec names and, on a hub, those its partitions
	// report. Default 16.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MaxDatabases *int32 `json:"maxDatabases,omitempty"`
}

// ProviderConfigReference names another provider's ProviderConfig or
// ClusterProviderConfig.
type ProviderConfigReference struct {
	// Kind of the config.
	// +kubebuilder:validation:Enum=ProviderConfig;ClusterProviderConfig
	Kind string `json:"kind"`

	// Name of the config.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ExperimentsPolicy is what Experiments may compose, and the platform
// settings they are composed with.
type ExperimentsPolicy struct {
	// AllowHubTargets lets Experiments deploy hub targets: their
	// applications go to the hub (the control plane's own cluster), into
	// the Experiment's own namespace and no other. Default false.
	// +optional
	AllowHubTargets bool `json:"allowHubTargets,omitempty"`

	// HubServer is the API server Argo CD reaches the hub at. Default
	// https://kubernetes.default.svc.
	// +optional
	// +kubebuilder:validation:Pattern=`^https://[^\s/?#@]+$`
	// +kubebuilder:validation:MaxLength=253
	HubServer string `json:"hubServer,omitempty"`

	// KubernetesProviderConfigRef is the provider-kubernetes config that
	// writes Argo CD Applications into spec.argocd.namespace on the hub.
	// Default ClusterProviderConfig "default".
	// +optional
	KubernetesProviderConfigRef *ProviderConfigReference `json:"kubernetesProviderConfigRef,omitempty"`

	// GCP lets Experiments create GKE clusters. Without it, GKE targets
	// are refused.
	// +optional
	GCP *GCPPolicy `json:"gcp,omitempty"`

	// VCluster lets Experiments run virtual clusters (vcluster) in their
	// own namespace on the hub, from the images named here. Without it,
	// vcluster targets are refused.
	// +optional
	VCluster *VClusterPolicy `json:"vcluster,omitempty"`

	// Talos lets Experiments provision Talos Linux clusters through
	// Cluster API, on the infrastructure named here. Without it, talos
	// targets are refused.
	// +optional
	Talos *TalosPolicy `json:"talos,omitempty"`

	// Quota bounds what the namespace's Experiments may hold. Defaults
	// apply when it is absent.
	// +optional
	Quota *ExperimentsQuota `json:"quota,omitempty"`
}

// ExperimentsQuota bounds the clusters a namespace's Experiments make the
// platform pay for.
type ExperimentsQuota struct {
	// MaxExperiments the namespace may have at once. The oldest hold
	// their places (by creation, then name); a newer one waits, composing
	// nothing, until one is deleted. Default 5; 0 allows none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MaxExperiments *int32 `json:"maxExperiments,omitempty"`

	// MaxTargets of one Experiment. Default 4.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	MaxTargets *int32 `json:"maxTargets,omitempty"`

	// MaxNodesPerTarget is the largest node pool (a talos target's
	// workers) a target may ask for. Default 3.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxNodesPerTarget *int32 `json:"maxNodesPerTarget,omitempty"`

	// MaxNodes of one Experiment, over all its GKE and talos targets.
	// Default 8.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1600
	MaxNodes *int32 `json:"maxNodes,omitempty"`

	// MaxTTLDays an Experiment may live. Default 7.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=365
	MaxTTLDays *int32 `json:"maxTTLDays,omitempty"`
}

// TalosPolicy is how talos targets are provisioned: a Cluster API Cluster
// with Sidero's Talos control plane (TalosControlPlane) and workers
// (a MachineDeployment bootstrapped by a TalosConfigTemplate), on the
// infrastructure provider the platform runs. A tenant chooses neither
// the infrastructure nor the versions; Cluster API, its Talos providers
// and the infrastructure provider run beside Crossplane, installed by
// the cluster admin.
type TalosPolicy struct {
	// KubernetesVersion the clusters run, such as v1.34.2.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+$`
	// +kubebuilder:validation:MaxLength=32
	KubernetesVersion string `json:"kubernetesVersion"`

	// TalosVersion the machine configurations are generated for, such as
	// v1.11.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=32
	TalosVersion string `json:"talosVersion"`

	// ControlPlaneReplicas of each cluster's control plane. Default 1.
	// +optional
	// +kubebuilder:validation:Enum=1;3;5
	ControlPlaneReplicas int32 `json:"controlPlaneReplicas,omitempty"`

	// Infrastructure the machines run on.
	Infrastructure TalosInfrastructure `json:"infrastructure"`
}

// TalosInfrastructure is the Cluster API infrastructure provider's part
// of a talos target: its cluster object, and the machine template the
// control plane and the workers are made from. Each target gets its own
// of both, in the Experiment's namespace, with the specs written here.
type TalosInfrastructure struct {
	// APIVersion of the infrastructure provider's kinds, such as
	// infrastructure.cluster.x-k8s.io/v1beta2 (Cluster API's group for
	// them). Crossplane writes the machine template, and
	// provider-kubernetes the cluster object (Cluster API must be its
	// controller): package/rbac/crossplane-talos.yaml grants Crossplane
	// the group.
	// +kubebuilder:validation:Pattern=`^infrastructure\.cluster\.x-k8s\.io/v[0-9]+((alpha|beta)[0-9]+)?$`
	APIVersion string `json:"apiVersion"`

	// ClusterKind is the infrastructure's cluster kind, such as
	// DockerCluster or AWSCluster.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]{0,62}$`
	ClusterKind string `json:"clusterKind"`

	// ClusterSpec is the spec of each target's cluster object. Default
	// empty.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ClusterSpec *runtime.RawExtension `json:"clusterSpec,omitempty"`

	// MachineTemplateKind is the infrastructure's machine template kind,
	// such as DockerMachineTemplate or AWSMachineTemplate.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]{0,62}$`
	MachineTemplateKind string `json:"machineTemplateKind"`

	// MachineSpec is the spec of each machine (the template's
	// spec.template.spec). Default empty.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	MachineSpec *runtime.RawExtension `json:"machineSpec,omitempty"`
}

// VClusterPolicy is what a vcluster target runs. A tenant never chooses
// an image: the virtual cluster's service account holds the rights of
// package/rbac/vcluster-roles.yaml in the tenant's namespace, and the
// images are the platform's to trust.
type VClusterPolicy struct {
	// Image of vcluster's control plane (its syncer), as the platform
	// mirrors it, such as ghcr.io/loft-sh/vcluster-oss:0.30.0.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`
	Image string `json:"image"`

	// KubernetesImage holds the Kubernetes binaries the virtual control
	// plane runs (vcluster's k8s distribution copies them from
	// /kubernetes), such as ghcr.io/loft-sh/kubernetes:v1.34.2.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`
	KubernetesImage string `json:"kubernetesImage"`

	// Resources of the control plane's container. Default: vcluster's
	// chart's (256Mi and 200m requested, 2Gi memory limit).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// GCPPolicy is where and as whom Experiments create GKE clusters.
type GCPPolicy struct {
	// Project the GKE clusters are created in; it turns on workload
	// identity for the project's pool.
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{4,28}[a-z0-9]$`
	Project string `json:"project"`

	// ProviderConfigRef of the upjet GCP resources. Default
	// ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// ArgoCDServiceAccount is the Google service account Argo CD's
	// controllers act as, through workload identity on the hub, for
	// example argocd@my-project.iam.gserviceaccount.com. Argo CD reaches
	// GKE targets as it, with its argocd-k8s-auth helper, and fleetplane
	// grants it ArgoCDRole on Project.
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.]+\.iam\.gserviceaccount\.com$`
	ArgoCDServiceAccount string `json:"argocdServiceAccount"`

	// ArgoCDRole granted to ArgoCDServiceAccount on Project, so that Argo
	// CD may deploy into the clusters. Default roles/container.developer.
	// +optional
	// +kubebuilder:validation:Pattern=`^roles/[a-zA-Z0-9_.]+$`
	ArgoCDRole string `json:"argocdRole,omitempty"`

	// MachineTypes the GKE targets' nodes may use, by name or pattern (*
	// matches any run of characters). Default e2-medium, e2-standard-2
	// and e2-standard-4.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9*-]+$`
	MachineTypes []string `json:"machineTypes,omitempty"`

	// NodeServiceAccount is the Google service account every GKE
	// target's nodes run as; a tenant cannot choose it. Default none
	// named: GKE runs them as the project's Compute Engine default
	// service account, which NodeOAuthScopes then bounds.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.]+\.iam\.gserviceaccount\.com$`
	NodeServiceAccount string `json:"nodeServiceAccount,omitempty"`

	// NodeOAuthScopes are the access scopes of the nodes' service
	// account. Default GKE's own default set (devstorage.read_only,
	// logging.write, monitoring, service.management.readonly,
	// servicecontrol, trace.append), not cloud-platform: with the
	// default service account, cloud-platform would give every pod the
	// project's Editor role.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^https://www\.googleapis\.com/auth/[a-z0-9._-]+$`
	NodeOAuthScopes []string `json:"nodeOAuthScopes,omitempty"`
}

// PodSecurityLevel is a Kubernetes Pod Security Standard.
// +kubebuilder:validation:Enum=restricted;baseline;privileged
type PodSecurityLevel string

// Pod Security Standards.
const (
	PodSecurityRestricted PodSecurityLevel = "restricted"
	PodSecurityBaseline   PodSecurityLevel = "baseline"
	PodSecurityPrivileged PodSecurityLevel = "privileged"
)

// PlacementPolicy is where and what Placements may deliver.
type PlacementPolicy struct {
	// ClusterSelector chooses, among the inventory (provider-kubernetes
	// ClusterProviderConfigs labelled placement.fleetplane.io/inventory),
	// the clusters the namespaces may deliver to; {} is every one. A
	// Placement's own spec.clusters narrows it further, never widens it.
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`

	// Kinds the namespaces may deliver, as group/Kind: apps/Deployment,
	// or /ConfigMap (or ConfigMap) for the core group; group/* grants
	// every kind of a group. Objects of other kinds are not delivered.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9.-]*/)?([A-Z][A-Za-z0-9]*|\*)$`
	Kinds []string `json:"kinds"`

	// PodSecurity is the Pod Security Standard enforced, through the
	// pod-security.kubernetes.io/enforce label, on the namespaces
	// fleetplane creates on workload clusters. Default restricted.
	// +optional
	// +kubebuilder:default=restricted
	PodSecurity PodSecurityLevel `json:"podSecurity,omitempty"`

	// ReportedStateKinds are the kinds, of Kinds, whose status a
	// Placement with wantSingletonReportedState may have written back
	// from its cluster into the object on the control plane, as
	// group/Kind (group/* for a whole group). A status drives what
	// reads it on the control plane (a PodDisruptionBudget's allows
	// evictions), and a workload cluster reports whatever it is told, so
	// none unless listed.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9.-]*/)?([A-Z][A-Za-z0-9]*|\*)$`
	ReportedStateKinds []string `json:"reportedStateKinds,omitempty"`

	// Properties are the cluster property keys (inventory labels and
	// annotations, customization-properties entries) the namespaces'
	// templates may read; the others are invisible to them. Empty: none
	// but the cluster's name. Listing * exposes every property, the
	// admin's ConfigMaps included.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=317
	Properties []string `json:"properties,omitempty"`

	// ClusterPlacements is what the ClusterPlacements this config
	// governs may do: those whose label fleetplane.io/policy names it, or
	// every one without that label when this is "default". They deliver
	// to the clusters ClusterSelector grants, with the properties
	// Properties exposes. Absent: ClusterPlacements are refused.
	// +optional
	ClusterPlacements *ClusterPlacementPolicy `json:"clusterPlacements,omitempty"`

	// Quota bounds what one Placement (or ClusterPlacement) delivers.
	// Defaults apply when it is absent.
	// +optional
	Quota *PlacementQuota `json:"quota,omitempty"`
}

// PlacementQuota bounds one Placement's delivery: every copy is a
// provider-kubernetes Object the shared provider keeps in sync.
type PlacementQuota struct {
	// MaxClusters one Placement may deliver to. Default 100.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5000
	MaxClusters *int32 `json:"maxClusters,omitempty"`

	// MaxCopies one Placement may deliver: its objects times its
	// clusters. Default 1000; no Placement delivers more than 5000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5000
	MaxCopies *int32 `json:"maxCopies,omitempty"`
}

// ClusterPlacementPolicy is what the cluster admin's ClusterPlacements may
// deliver, and where their provider-kubernetes Objects live.
type ClusterPlacementPolicy struct {
	// Kinds are the cluster-scoped kinds ClusterPlacements may deliver,
	// as group/Kind: rbac.authorization.k8s.io/ClusterRole,
	// apiextensions.k8s.io/CustomResourceDefinition, Namespace for the
	// core group; group/* for a whole group.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9.-]*/)?([A-Z][A-Za-z0-9]*|\*)$`
	Kinds []string `json:"kinds"`

	// Namespace of the provider-kubernetes Objects a ClusterPlacement
	// composes: their manifests are the copies, readable by whoever reads
	// Objects there, so a namespace only admins read. Default
	// crossplane-system.
	// +optional
	// +kubebuilder:default=crossplane-system
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// ArgoCDPolicy is where and how ClusterRegistrations register clusters
// with Argo CD. Argo CD runs a cluster's exec plugin in its own pods and
// trusts what its cluster Secrets say, so a registration gets only what is
// allowed here.
type ArgoCDPolicy struct {
	// Namespace Argo CD reads cluster Secrets from.
	// +optional
	// +kubebuilder:default=argocd
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Project every registered cluster is restricted to.
	// +optional
	// +kubebuilder:default=default
	// +kubebuilder:validation:MaxLength=253
	Project string `json:"project,omitempty"`

	// AllowedExecCommands are the exec credential plugins a registration
	// may have Argo CD run, by exact command, such as argocd-k8s-auth (Argo
	// CD's own helper for GKE, EKS and AKS). Empty: none.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	AllowedExecCommands []string `json:"allowedExecCommands,omitempty"`

	// AllowInsecureSkipTLSVerify accepts kubeconfigs that turn off TLS
	// verification. Default false.
	// +optional
	AllowInsecureSkipTLSVerify bool `json:"allowInsecureSkipTLSVerify,omitempty"`

	// AllowProxyURL accepts kubeconfigs that name a proxy. Default false.
	// +optional
	AllowProxyURL bool `json:"allowProxyURL,omitempty"`
}

// WorkflowsPolicy is where and what WorkflowRuns may submit.
type WorkflowsPolicy struct {
	// Namespace Workflows are submitted to.
	// +optional
	// +kubebuilder:default=argo
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// AllowedTemplates are the WorkflowTemplates of that namespace a run
	// may submit, by name; "*" allows every one. Empty: none.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	AllowedTemplates []string `json:"allowedTemplates,omitempty"`

	// AllowInline lets a run whose template is missing submit fleetplane's
	// inline workflow, a single suspend step that waits for `argo resume`.
	// Default true.
	// +optional
	// +kubebuilder:default=true
	AllowInline *bool `json:"allowInline,omitempty"`
}

// Credentials of a ProviderConfig.
//
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="credentials.secretRef is required when source is Secret"
type Credentials struct {
	// Source of the credentials:
	//   InjectedIdentity: Azure's default credential chain in the provider's
	//     pod (workload identity, managed identity, environment);
	//   Secret: a service principal, as JSON {"tenantId", "clientId",
	//     "clientSecret"} in the referenced Secret key;
	//   None: no authentication, accepted only for plain-http local
	//     endpoints such as emulators.
	// +kubebuilder:validation:Enum=InjectedIdentity;Secret;None
	Source xpv2.CredentialsSource `json:"source"`

	xpv2.CommonCredentialSelectors `json:",inline"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// A ProviderConfig configures provider-fleetplane for the managed
// resources of its namespace, with that namespace's own credentials.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,fleetplane}
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ProviderConfigList is a list of ProviderConfigs.
//
// +kubebuilder:object:root=true
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// A ClusterProviderConfig configures provider-fleetplane for the managed
// resources of the namespaces it selects, with the powers the cluster
// admin grants them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,fleetplane}
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterProviderConfigSpec `json:"spec"`
	Status ProviderConfigStatus      `json:"status,omitempty"`
}

// ClusterProviderConfigList is a list of ClusterProviderConfigs.
//
// +kubebuilder:object:root=true
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}

// A ProviderConfigUsage records that a managed resource uses a
// ProviderConfig.
//
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,fleetplane}
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// ProviderConfigUsageList is a list of ProviderConfigUsages.
//
// +kubebuilder:object:root=true
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}

// A ClusterProviderConfigUsage records that a managed resource uses a
// ClusterProviderConfig.
//
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,fleetplane}
type ClusterProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// ClusterProviderConfigUsageList is a list of ClusterProviderConfigUsages.
//
// +kubebuilder:object:root=true
type ClusterProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfigUsage `json:"items"`
}
