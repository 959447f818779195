package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
)

// ClusterRole is the part an ADX cluster plays in a federated fleet.
// +kubebuilder:validation:Enum=Partition;Federated
type ClusterRole string

// Cluster roles.
const (
	// RolePartition keeps its own data and reports its schema to hubs.
	RolePartition ClusterRole = "Partition"
	// RoleFederated is a hub that fans queries out to its partitions.
	RoleFederated ClusterRole = "Federated"
)

// TelemetryType tags a database with the kind of data it holds.
// +kubebuilder:validation:Enum=Metrics;Logs;Traces
type TelemetryType string

// Telemetry types.
const (
	TelemetryMetrics TelemetryType = "Metrics"
	TelemetryLogs    TelemetryType = "Logs"
	TelemetryTraces  TelemetryType = "Traces"
)

// DeletionPolicy says what happens to Azure resources when the ADXCluster goes.
// +kubebuilder:validation:Enum=Orphan;Delete
type DeletionPolicy string

// Deletion policies.
const (
	// DeletionOrphan keeps the Azure resource group, cluster and databases.
	DeletionOrphan DeletionPolicy = "Orphan"
	// DeletionDelete deletes them with the ADXCluster.
	DeletionDelete DeletionPolicy = "Delete"
)

// Tier of an ADX cluster. Azure derives it from the SKU: Basic for the
// "Dev(No SLA)" SKUs and Standard for every other one.
// +kubebuilder:validation:Enum=Basic;Standard
type Tier string

// Tiers.
const (
	TierBasic    Tier = "Basic"
	TierStandard Tier = "Standard"
)

// ADXClusterSpec is what the user asks for.
//
// +kubebuilder:validation:XValidation:rule="has(self.provision) || has(self.endpoint)",message="spec.endpoint is required when spec.provision is absent: a bring-your-own cluster needs its endpoint",fieldPath=".endpoint"
// +kubebuilder:validation:XValidation:rule="!has(self.endpoint) || self.endpoint.startsWith('https://') || (self.allowInsecureEndpoints && self.endpoint.startsWith('http://'))",message="spec.endpoint must be an https:// URL; http:// is accepted only with spec.allowInsecureEndpoints: true (local emulators)",fieldPath=".endpoint"
// +kubebuilder:validation:XValidation:rule="!has(self.role) || self.role != 'Partition' || (has(self.federation) && has(self.federation.federatedTargets) && size(self.federation.federatedTargets) > 0)",message="role Partition needs spec.federation.federatedTargets with at least one hub",fieldPath=".federation"
// +kubebuilder:validation:XValidation:rule="!has(self.role) || self.role != 'Federated' || (has(self.federation) && has(self.federation.heartbeatDatabase) && has(self.federation.heartbeatTable))",message="role Federated needs spec.federation.heartbeatDatabase and spec.federation.heartbeatTable",fieldPath=".federation"
// +kubebuilder:validation:XValidation:rule="!has(self.provision) || self.clusterName.matches('^[a-z][a-z0-9]{3,21}$')",message="Azure names a provisioned cluster with 4 to 22 lowercase letters and digits, starting with a letter",fieldPath=".clusterName"
// +kubebuilder:validation:XValidation:rule="!has(self.federation) || !has(self.federation.federatedTargets) || self.federation.federatedTargets.all(t, t.endpoint.startsWith('https://') || (self.allowInsecureEndpoints && t.endpoint.startsWith('http://')))",message="spec.federation.federatedTargets[].endpoint must be an https:// URL; http:// is accepted only with spec.allowInsecureEndpoints: true",fieldPath=".federation.federatedTargets"
type ADXClusterSpec struct {
	// ClusterName is the Azure resource name of the cluster. It cannot
	// change: a different name is a different cluster.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9-]+$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// Endpoint is the data-plane URI of an existing cluster, for example
	// https://mycluster.westeurope.kusto.windows.net. Without spec.provision
	// the cluster is adopted as is (bring your own) and this is required.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint,omitempty"`

	// AllowInsecureEndpoints permits http:// endpoints here and in
	// federation targets. Only local Kusto emulators speak plain http;
	// Azure Data Explorer is https-only.
	// +optional
	// +kubebuilder:default=false
	AllowInsecureEndpoints bool `json:"allowInsecureEndpoints,omitempty"`

	// Databases to create when provisioning. When the list is empty a
	// provisioned cluster gets Metrics and Logs. Ignored for bring-your-own
	// clusters, whose databases are managed in Azure.
	// +optional
	// +listType=map
	// +listMapKey=databaseName
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(d, self.filter(e, e.databaseName.lowerAscii() == d.databaseName.lowerAscii()).size() == 1)",message="spec.databases names must differ by more than case: Kusto database names are case-insensitive"
	Databases []DatabaseSpec `json:"databases,omitempty"`

	// Provision asks fleetplane to create the cluster in Azure. Its presence
	// is the only switch between provisioning and bring-your-own.
	// +optional
	Provision *ProvisionSpec `json:"provision,omitempty"`

	// Role in a federated fleet. Omit for a standalone cluster.
	// +optional
	Role ClusterRole `json:"role,omitempty"`

	// Federation settings for the role.
	// +optional
	Federation *FederationSpec `json:"federation,omitempty"`

	// CriteriaExpression is a CEL expression over the control plane's
	// cluster labels (see the function input's criteria.environmentConfigName).
	// Labels are available both as a map, labels["geo"] == "eu", and as
	// variables, geo == "eu". Empty means true. When it is false or fails,
	// nothing new is composed and nothing already composed is removed.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	CriteriaExpression string `json:"criteriaExpression,omitempty"`

	// DeletionPolicy for the Azure resources this ADXCluster provisions.
	// Orphan (the default) leaves them in Azure when the ADXCluster is
	// deleted; Delete removes them.
	// +optional
	// +kubebuilder:default=Orphan
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// RemovedDatabases says what happens in Azure to a provisioned
	// database removed from spec.databases. Orphan (the default) leaves
	// it, and its data, in Azure: fleetplane stops managing it and never
	// deletes it. Delete deletes it, and only with deletionPolicy Delete
	// and a database this ADXCluster created.
	// +optional
	// +kubebuilder:default=Orphan
	RemovedDatabases DeletionPolicy `json:"removedDatabases,omitempty"`
}

// DatabaseSpec is one database of a provisioned cluster.
type DatabaseSpec struct {
	// DatabaseName is the Kusto database name.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=260
	DatabaseName string `json:"databaseName"`

	// TelemetryType tags what the database holds.
	TelemetryType TelemetryType `json:"telemetryType"`

	// RetentionInDays, when set, becomes the database's soft-delete period.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=36500
	RetentionInDays *int32 `json:"retentionInDays,omitempty"`

	// RetentionPolicy is accepted for compatibility and not applied.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	RetentionPolicy string `json:"retentionPolicy,omitempty"`
}

// AzureChanges is what happens to changes made in Azure.
// +kubebuilder:validation:Enum=Keep;Revert
type AzureChanges string

// What happens to changes made in Azure.
const (
	AzureChangesKeep   AzureChanges = "Keep"
	AzureChangesRevert AzureChanges = "Revert"
)

// ProvisionSpec holds what Azure needs to create the cluster.
//
// +kubebuilder:validation:XValidation:rule="(has(self.auto) && self.auto) || (has(self.subscriptionId) && has(self.resourceGroup) && has(self.location) && has(self.skuName) && has(self.tier))",message="spec.provision needs subscriptionId, resourceGroup, location, skuName and tier, unless provision.auto is true (then the missing ones are discovered where the control plane runs)"
// +kubebuilder:validation:XValidation:rule="!has(self.autoScaleMin) || !has(self.autoScaleMax) || self.autoScaleMin <= self.autoScaleMax",message="provision.autoScaleMin must not exceed provision.autoScaleMax"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || !has(self.autoScale) || !self.autoScale",message="provision.capacity and provision.autoScale exclude each other: with Azure's optimized autoscale, Azure owns the instance count",fieldPath=".capacity"
// +kubebuilder:validation:XValidation:rule="!has(self.capacity) || ((has(self.tier) && self.tier == 'Basic') ? self.capacity == 1 : self.capacity >= 2)",message="provision.capacity is 1 for a Basic (Dev) cluster and at least 2 for a Standard one",fieldPath=".capacity"
// +kubebuilder:validation:XValidation:rule="!has(self.tier) || !has(self.skuName) || (self.tier == 'Basic') == self.skuName.startsWith('Dev(No SLA)')",message="provision.tier must be Basic for the Dev(No SLA) SKUs and Standard for every other SKU"
// +kubebuilder:validation:XValidation:rule="(has(self.userAssignedIdentities) && size(self.userAssignedIdentities) > 0) == (has(oldSelf.userAssignedIdentities) && size(oldSelf.userAssignedIdentities) > 0)",message="provision.userAssignedIdentities cannot switch between empty (system-assigned identity) and non-empty (user-assigned identities): Azure does not change a cluster's identity type in place. Create a new ADXCluster instead"
type ProvisionSpec struct {
	// Auto discovers what is left out: subscription, resource group and
	// region from Azure's instance metadata service where provider-fleetplane
	// runs, and the SKU from the region's offer (Standard_L8as_v3, then
	// Standard_L16as_v3, Standard_L32as_v3, then the first Standard SKU);
	// tier Standard. Given values always win. The ClusterProviderConfig
	// must allow discovery (spec.azure.allowDiscovery). Without auto every
	// field below is required.
	// +optional
	Auto bool `json:"auto,omitempty"`

	// SubscriptionID is the Azure subscription to create the cluster in. The
	// function input maps it to the Azure ProviderConfig to use.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	SubscriptionID string `json:"subscriptionId,omitempty"`

	// ResourceGroup is created when missing.
	// +optional
	// +kubebuilder:validation:Pattern=`^[-\w._()]*[-\w_()]$`
	// +kubebuilder:validation:MaxLength=90
	ResourceGroup string `json:"resourceGroup,omitempty"`

	// Location is the Azure region, for example eastus2.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9 ]*$`
	// +kubebuilder:validation:MaxLength=64
	Location string `json:"location,omitempty"`

	// SkuName is the cluster SKU, for example Standard_L8as_v3.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_()+ ]+$`
	// +kubebuilder:validation:MaxLength=64
	SkuName string `json:"skuName,omitempty"`

	// Tier must match the SKU.
	// +optional
	Tier Tier `json:"tier,omitempty"`

	// UserAssignedIdentities are ARM resource IDs of managed identities for
	// the cluster. Empty means a system-assigned identity. The list may
	// change; switching between empty and non-empty may not.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^/subscriptions/[^/]+/resource[gG]roups/[^/]+/providers/Microsoft\.ManagedIdentity/userAssignedIdentities/[^/]+$`
	// +kubebuilder:validation:items:MaxLength=512
	UserAssignedIdentities []string `json:"userAssignedIdentities,omitempty"`

	// AzureChanges says what happens when the cluster's SKU, capacity or
	// identities are changed in Azure, outside this ADXCluster. Keep (the
	// default, as the controller this replaces does) leaves them: these
	// fields are applied when they are created and when this spec changes
	// them, not otherwise. Revert sets them back to this spec at every
	// reconcile.
	// +optional
	// +kubebuilder:default=Keep
	AzureChanges AzureChanges `json:"azureChanges,omitempty"`

	// PublicNetworkAccessEnabled opens the cluster to the internet. Unset,
	// the cluster is created with public access disabled (reachable through
	// private endpoints only) and a later change in Azure is left alone;
	// set, the value is applied and kept. Federation and heartbeats need
	// provider-fleetplane to reach the cluster: through a private endpoint,
	// or with this true.
	// +optional
	PublicNetworkAccessEnabled *bool `json:"publicNetworkAccessEnabled,omitempty"`

	// DatabasePrincipals get a role on every database of the cluster, for
	// example the managed identity adx-mon's ingestor writes with.
	// +optional
	// +listType=map
	// +listMapKey=clientId
	// +listMapKey=role
	// +kubebuilder:validation:MaxItems=16
	DatabasePrincipals []DatabasePrincipal `json:"databasePrincipals,omitempty"`

	// Capacity is the cluster's instance count, kept on Azure: a change
	// scales the cluster (an ADXMon's autoscaler writes it). Unset, the
	// cluster is created with its tier's minimum (2, or 1 for Basic) and
	// a later change in Azure is left alone. Not with autoScale.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Capacity *int32 `json:"capacity,omitempty"`

	// AutoScale turns on Azure's optimized autoscale between AutoScaleMin
	// and AutoScaleMax instances. Applied when the cluster is created only,
	// as Azure's own scaling then owns the instance count.
	// +optional
	AutoScale bool `json:"autoScale,omitempty"`

	// AutoScaleMin is the lower instance bound; also the initial capacity.
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	AutoScaleMin int32 `json:"autoScaleMin,omitempty"`

	// AutoScaleMax is the upper instance bound.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	AutoScaleMax int32 `json:"autoScaleMax,omitempty"`
}

// DatabaseRole is a Kusto database role.
// +kubebuilder:validation:Enum=Admin;Ingestor;Monitor;User;UnrestrictedViewer;Viewer
type DatabaseRole string

// Database roles.
const (
	DatabaseRoleAdmin    DatabaseRole = "Admin"
	DatabaseRoleIngestor DatabaseRole = "Ingestor"
)

// DatabasePrincipal is an Entra application or managed identity given a
// role on each database.
type DatabasePrincipal struct {
	// ClientID of the application or managed identity.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ClientID string `json:"clientId"`

	// TenantID of the principal. Default: the tenant the namespace's
	// policy names for the subscription
	// (spec.azure.provisioning[].tenantId); without either the principal
	// is refused.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	TenantID string `json:"tenantId,omitempty"`

	// Role on each database. Default Admin, which adx-mon's ingestor needs
	// to create its tables.
	// +optional
	// +kubebuilder:default=Admin
	Role DatabaseRole `json:"role,omitempty"`
}

// FederationSpec configures heartbeats (partitions) or federation (hubs).
type FederationSpec struct {
	// FederatedTargets are the hubs a partition reports to.
	// +optional
	// +listType=map
	// +listMapKey=endpoint
	// +listMapKey=heartbeatDatabase
	// +listMapKey=heartbeatTable
	// +kubebuilder:validation:MaxItems=16
	FederatedTargets []FederatedTarget `json:"federatedTargets,omitempty"`

	// Partitioning describes the partition (geo, tenant, ...); it is sent
	// with every heartbeat.
	// +optional
	Partitioning kustov1alpha1.Partitioning `json:"partitioning,omitempty"`

	// HeartbeatDatabase is the hub database partitions write heartbeats to.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=260
	HeartbeatDatabase string `json:"heartbeatDatabase,omitempty"`

	// HeartbeatTable is the hub table partitions write heartbeats to.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=1024
	HeartbeatTable string `json:"heartbeatTable,omitempty"`

	// HeartbeatTTL is how long a partition counts as alive after its last
	// heartbeat, as a Kusto timespan: units (1d, 2h, 4h30m, 1.5h, 90s) or a
	// clock ([days.]hh:mm:ss: 00:30:00, 1.02:03:04). From 1s to 30d.
	// +optional
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,7}([.][0-9]{1,7})?d)?([0-9]{1,7}([.][0-9]{1,7})?h)?([0-9]{1,7}([.][0-9]{1,7})?m)?([0-9]{1,7}([.][0-9]{1,7})?s)?|([0-9]{1,5}[.])?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,7})?)$')",message="heartbeatTTL is a Kusto timespan: units such as 2d, 4h30m, 1.5h or 90s, or a clock such as 00:30:00 or 1.02:03:04"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(([0-9]{1,7}([.][0-9]{1,7})?d)?([0-9]{1,7}([.][0-9]{1,7})?h)?([0-9]{1,7}([.][0-9]{1,7})?m)?([0-9]{1,7}([.][0-9]{1,7})?s)?|([0-9]{1,5}[.])?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,7})?)$') || (self.contains(':') ? (self.matches('^[0-9]+[.][0-9]{2}:') ? double(self.find('^[0-9]+')) * 86400.0 : 0.0) + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[0]) * 3600.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[1]) * 60.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[2]) : (self.find('[0-9.]+d') == '' ? 0.0 : double(self.find('[0-9.]+d').replace('d', '')) * 86400.0) + (self.find('[0-9.]+h') == '' ? 0.0 : double(self.find('[0-9.]+h').replace('h', '')) * 3600.0) + (self.find('[0-9.]+m') == '' ? 0.0 : double(self.find('[0-9.]+m').replace('m', '')) * 60.0) + (self.find('[0-9.]+s') == '' ? 0.0 : double(self.find('[0-9.]+s').replace('s', '')))) >= 1.0",message="heartbeatTTL must be at least 1s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(([0-9]{1,7}([.][0-9]{1,7})?d)?([0-9]{1,7}([.][0-9]{1,7})?h)?([0-9]{1,7}([.][0-9]{1,7})?m)?([0-9]{1,7}([.][0-9]{1,7})?s)?|([0-9]{1,5}[.])?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,7})?)$') || (self.contains(':') ? (self.matches('^[0-9]+[.][0-9]{2}:') ? double(self.find('^[0-9]+')) * 86400.0 : 0.0) + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[0]) * 3600.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[1]) * 60.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[2]) : (self.find('[0-9.]+d') == '' ? 0.0 : double(self.find('[0-9.]+d').replace('d', '')) * 86400.0) + (self.find('[0-9.]+h') == '' ? 0.0 : double(self.find('[0-9.]+h').replace('h', '')) * 3600.0) + (self.find('[0-9.]+m') == '' ? 0.0 : double(self.find('[0-9.]+m').replace('m', '')) * 60.0) + (self.find('[0-9.]+s') == '' ? 0.0 : double(self.find('[0-9.]+s').replace('s', '')))) <= 2592000.0",message="heartbeatTTL must be at most 30d"
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=64
	HeartbeatTTL string `json:"heartbeatTTL,omitempty"`

	// BlockedClusters keeps partitions out of the hub's functions: static
	// endpoints, compared case-insensitively without trailing slashes, and
	// a Kusto function returning more in a ClusterEndpoint (or Endpoint)
	// column.
	// +optional
	BlockedClusters *kustov1alpha1.BlockedClusters `json:"blockedClusters,omitempty"`
}

// FederatedTarget is a hub a partition sends heartbeats to.
type FederatedTarget struct {
	// Endpoint of the hub cluster.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint"`

	// HeartbeatDatabase on the hub.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=260
	HeartbeatDatabase string `json:"heartbeatDatabase"`

	// HeartbeatTable on the hub.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=1024
	HeartbeatTable string `json:"heartbeatTable"`

	// ManagedIdentityClientID is the client ID of a user-assigned identity
	// with ingest rights on the hub. Empty uses the provider's credentials.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ManagedIdentityClientID string `json:"managedIdentityClientId,omitempty"`
}

// ADXClusterStatus is what fleetplane observed.
type ADXClusterStatus struct {
	// ObservedGeneration is the metadata.generation the function last
	// composed. Crossplane does not stamp it on conditions a function
	// returns, so it lives here.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Endpoint is the cluster's data-plane URI: spec.endpoint for a
	// bring-your-own cluster, Azure's URI for a provisioned one.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// AppliedProvisionState is the SKU, tier and identities the provisioned
	// cluster last reached Ready with.
	// +optional
	AppliedProvisionState *AppliedProvisionState `json:"appliedProvisionState,omitempty"`
}

// AppliedProvisionState records where and how the provisioned cluster
// runs: the SKU, tier and identities Azure reports, and the subscription,
// resource group and region it was created in.
type AppliedProvisionState struct {
	SkuName string `json:"skuName,omitempty"`
	Tier    Tier   `json:"tier,omitempty"`
	// +optional
	UserAssignedIdentities []string `json:"userAssignedIdentities,omitempty"`
	// +optional
	SubscriptionID string `json:"subscriptionId,omitempty"`
	// +optional
	ResourceGroup string `json:"resourceGroup,omitempty"`
	// +optional
	Location string `json:"location,omitempty"`
	// Discovered names the fields provision.auto filled in, and from where.
	// +optional
	Discovered []string `json:"discovered,omitempty"`
	// ResourceGroupOrigin is Created when this ADXCluster created the
	// resource group, Existing when it was there before: an existing group
	// is used as it is, never changed, and never deleted.
	// +optional
	ResourceGroupOrigin ResourceGroupOrigin `json:"resourceGroupOrigin,omitempty"`
	// Spec is the SKU, capacity and identities of the spec as Azure last
	// reached them. With azureChanges Keep, a spec that differs from it is
	// an edit and is applied; one equal to it is not pressed on Azure.
	// +optional
	Spec *ProvisionIntent `json:"spec,omitempty"`
}

// ProvisionIntent is what a spec asks of the cluster that Azure could
// also change: its SKU, capacity and identities.
type ProvisionIntent struct {
	// +optional
	SkuName string `json:"skuName,omitempty"`
	// +optional
	Capacity *int32 `json:"capacity,omitempty"`
	// +optional
	UserAssignedIdentities []string `json:"userAssignedIdentities,omitempty"`
}

// ResourceGroupOrigin says whether an ADXCluster created its resource group.
type ResourceGroupOrigin string

// Resource group origins.
const (
	ResourceGroupCreated  ResourceGroupOrigin = "Created"
	ResourceGroupExisting ResourceGroupOrigin = "Existing"
)

// An ADXCluster provisions or adopts an Azure Data Explorer cluster and, by
// its role, federates it: a Partition reports its schema to hubs and a
// Federated hub builds cross-cluster functions over its partitions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={fleetplane,adx}
// +kubebuilder:printcolumn:name="ROLE",type="string",JSONPath=".spec.role"
// +kubebuilder:printcolumn:name="ENDPOINT",type="string",JSONPath=".status.endpoint"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='adxcluster.fleetplane.io')].reason"
type ADXCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ADXClusterSpec   `json:"spec"`
	Status ADXClusterStatus `json:"status,omitempty"`
}

// ADXClusterList is a list of ADXClusters.
//
// +kubebuilder:object:root=true
type ADXClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ADXCluster `json:"items"`
}
