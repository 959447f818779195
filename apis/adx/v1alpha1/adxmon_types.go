package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
)

// ADXMon condition types: one per phase of the stack, in order.
const (
	ConditionADXReady       = "ADXReady"
	ConditionDatabasesReady = "DatabasesReady"
	ConditionIngestorReady  = "IngestorReady"
	ConditionCollectorReady = "CollectorReady"
	ConditionAlerterReady   = "AlerterReady"
)

// ConditionAutoscalerReady says whether an ADXMon's Autoscalers decide.
// It is not a phase: a stack whose autoscaler cannot measure still runs,
// so it does not hold the ADXMon's readiness.
const ConditionAutoscalerReady = "AutoscalerReady"

// ConditionADXCluster is the one custom condition an ADXCluster carries.
const ConditionADXCluster = "adxcluster.fleetplane.io"

// ADXMonSpec is an adx-mon installation: the ADX clusters it writes to and
// the components that collect, ingest and alert. Any subset of the
// components may be asked for, for federated topologies: a central cluster
// with ADX and the ingestor, and collector-only clusters pointing at it.
//
// +kubebuilder:validation:XValidation:rule="has(self.adx) || has(self.ingestor) || has(self.collector) || has(self.alerter)",message="an ADXMon needs at least one of spec.adx, spec.ingestor, spec.collector or spec.alerter"
// +kubebuilder:validation:XValidation:rule="!has(self.ingestor) || has(self.adx)",message="spec.ingestor writes to ADX: it needs spec.adx.clusters with at least one cluster",fieldPath=".ingestor"
// +kubebuilder:validation:XValidation:rule="!has(self.collector) || !has(self.collector.ingestorCA) || has(self.collector.ingestorEndpoint) || !has(self.ingestor) || has(self.ingestor.tls)",message="spec.collector.ingestorCA verifies the ingestor's certificate, but this stack's ingestor serves the one adx-mon makes itself: set spec.ingestor.tls",fieldPath=".collector.ingestorCA"
// +kubebuilder:validation:XValidation:rule="!has(self.alerter) || has(self.adx)",message="spec.alerter queries ADX: it needs spec.adx.clusters with at least one cluster",fieldPath=".alerter"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaler) || !has(self.autoscaler.ingestor) || has(self.ingestor)",message="spec.autoscaler.ingestor scales the ingestor: it needs spec.ingestor",fieldPath=".autoscaler.ingestor"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaler) || !has(self.autoscaler.adx) || (has(self.adx) && self.adx.clusters.exists(c, has(c.provision)))",message="spec.autoscaler.adx scales the ADX clusters the stack provisions: it needs spec.adx.clusters with at least one provision",fieldPath=".autoscaler.adx"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaler) || !has(self.autoscaler.ingestor) || !has(self.ingestor) || !self.autoscaler.ingestor.metrics.exists(m, m.type == 'MemoryUsage') || (has(self.ingestor.resources) && has(self.ingestor.resources.limits) && 'memory' in self.ingestor.resources.limits)",message="MemoryUsage is the ingestor's memory as a share of its limit: set spec.ingestor.resources.limits.memory, or scale on other metrics",fieldPath=".autoscaler.ingestor.metrics"
type ADXMonSpec struct {
	// Namespace the components (and the ADXCluster resources) are created
	// in. Created unless it exists; a namespace that existed before is
	// never deleted. Two ADXMons cannot share one. Default adx-mon, as in
	// adx-mon's own manifests.
	// +optional
	// +kubebuilder:default=adx-mon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.namespace is immutable: moving a stack means deleting it and creating it again"
	Namespace string `json:"namespace,omitempty"`

	// ADX clusters the stack writes to and queries.
	// +optional
	ADX *ADXMonADX `json:"adx,omitempty"`

	// Ingestor receives telemetry from collectors and writes it to ADX.
	// +optional
	Ingestor *Ingestor `json:"ingestor,omitempty"`

	// Collector runs on every node and sends what it collects to an
	// ingestor.
	// +optional
	Collector *Collector `json:"collector,omitempty"`

	// Alerter runs alert rules against ADX.
	// +optional
	Alerter *Alerter `json:"alerter,omitempty"`

	// Autoscaler scales the ADX clusters the stack provisions and the
	// ingestor on weighted metrics, when enabled.
	// +optional
	Autoscaler *Autoscaler `json:"autoscaler,omitempty"`
}

// ADXMonADX lists the ADX clusters of a stack.
type ADXMonADX struct {
	// Clusters, each provisioned in Azure or brought as they are.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.name) || self.filter(d, has(d.name) && d.name.lowerAscii() == c.name.lowerAscii()).size() == 1)",message="spec.adx.clusters names must be unique"
	Clusters []ADXMonCluster `json:"clusters"`
}

// ADXMonCluster is one ADX cluster of the stack, composed as an ADXCluster.
//
// +kubebuilder:validation:XValidation:rule="has(self.provision) || (has(self.name) && has(self.endpoint))",message="a cluster that is not provisioned needs its name and endpoint"
// +kubebuilder:validation:XValidation:rule="!has(self.endpoint) || self.endpoint.startsWith('https://') || (self.allowInsecureEndpoints && self.endpoint.startsWith('http://'))",message="endpoint must be an https:// URL; http:// is accepted only with allowInsecureEndpoints: true (local emulators)",fieldPath=".endpoint"
// +kubebuilder:validation:XValidation:rule="!has(self.provision) || !has(self.name) || self.name.matches('^[a-z][a-z0-9]{3,21}$')",message="Azure names a provisioned cluster with 4 to 22 lowercase letters and digits, starting with a letter; omit name to have one generated",fieldPath=".name"
type ADXMonCluster struct {
	// Name of the cluster in Azure. Generated from the ADXMon's name when
	// a provisioned cluster omits it.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9-]+$`
	Name string `json:"name,omitempty"`

	// Endpoint of an existing cluster, such as
	// https://mycluster.eastus2.kusto.windows.net. A provisioned cluster's
	// endpoint comes from Azure.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint,omitempty"`

	// AllowInsecureEndpoints accepts an http:// endpoint: local Kusto
	// emulators only.
	// +optional
	AllowInsecureEndpoints bool `json:"allowInsecureEndpoints,omitempty"`

	// Connection is how the components authenticate to the cluster.
	// +optional
	Connection *ADXConnection `json:"connection,omitempty"`

	// Databases and what each holds. Default: Metrics and Logs, and for a
	// provisioned cluster that names none, Metrics, Logs and Traces.
	// At most 16: adx-mon writes three kinds of telemetry, and the
	// uniqueness rule's cost, which the API server bounds when the CRD is
	// created, grows with the square of this bound.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(d, self.filter(e, e.name.lowerAscii() == d.name.lowerAscii()).size() == 1)",message="database names must be unique (Kusto database names are case-insensitive)"
	Databases []ADXMonDatabase `json:"databases,omitempty"`

	// Provision creates the cluster in Azure. Subscription, resource group
	// and region are enough; the rest is defaulted.
	// +optional
	Provision *ADXMonProvision `json:"provision,omitempty"`

	// DeletionPolicy of what is provisioned in Azure: Orphan (default)
	// keeps it when the ADXMon is deleted, Delete removes it with its data.
	// +optional
	// +kubebuilder:validation:Enum=Orphan;Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// ADXConnection is how components reach a cluster.
type ADXConnection struct {
	// Type of authentication; MSI, a managed identity.
	// +kubebuilder:validation:Enum=MSI
	// +kubebuilder:default=MSI
	// +optional
	Type string `json:"type,omitempty"`

	// ClientID of the user-assigned managed identity the components use.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ClientID string `json:"clientId"`

	// TenantID of the identity. With it, a cluster this stack provisions
	// gives the identity the Admin role on each of its databases (Kusto
	// principal assignments), as adx-mon's ingestor needs to create tables.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	TenantID string `json:"tenantId,omitempty"`
}

// ADXMonDatabase is one database of a cluster.
type ADXMonDatabase struct {
	// Name of the database.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=260
	Name string `json:"name"`

	// TelemetryType the database holds: the ingestor writes metrics to
	// Metrics databases and logs to Logs databases.
	// +kubebuilder:validation:Enum=Metrics;Logs;Traces
	TelemetryType TelemetryType `json:"telemetryType"`
}

// ADXMonProvision is where and how a cluster is created in Azure.
//
// +kubebuilder:validation:XValidation:rule="!has(self.tier) || !has(self.sku) || (self.tier == 'Basic') == self.sku.startsWith('Dev(No SLA)')",message="tier must be Basic for the Dev(No SLA) SKUs and Standard for every other SKU"
// +kubebuilder:validation:XValidation:rule="(has(self.auto) && self.auto) || (has(self.subscriptionId) && has(self.resourceGroup) && has(self.region))",message="provision needs subscriptionId, resourceGroup and region, unless provision.auto is true (then the missing ones, and the SKU, are discovered where the control plane runs)"
type ADXMonProvision struct {
	// Auto discovers what is left out, as an ADXCluster's provision.auto
	// does (the cluster is one): subscription, resource group and region
	// from Azure's instance metadata where provider-fleetplane runs, and
	// an SKU the region offers. Given values win. The namespace's
	// ClusterProviderConfig must allow discovery (spec.azure.allowDiscovery).
	// +optional
	Auto bool `json:"auto,omitempty"`

	// SubscriptionID to create the cluster in.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	SubscriptionID string `json:"subscriptionId,omitempty"`

	// ResourceGroup to create the cluster in.
	// +optional
	// +kubebuilder:validation:Pattern=`^[-\w._()]*[-\w_()]$`
	// +kubebuilder:validation:MaxLength=90
	ResourceGroup string `json:"resourceGroup,omitempty"`

	// Region, such as eastus2.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9 ]*$`
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region,omitempty"`

	// Sku of the cluster. Default: with auto, one the region offers (as
	// an ADXCluster discovers it); otherwise the function input's
	// adxmon.defaultSku, Standard_L8as_v3 unless set.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_()+ ]+$`
	// +kubebuilder:validation:MaxLength=64
	Sku string `json:"sku,omitempty"`

	// Tier of the cluster. Default Standard.
	// +optional
	Tier Tier `json:"tier,omitempty"`

	// ManagedIdentityClientID of the user-assigned identity the
	// components use for this cluster, when connection names none. It is
	// made Admin of the cluster's databases, as adx-mon's ingestor needs,
	// in its tenant: tenantId here or connection.tenantId, else the one
	// the namespace's policy names for the subscription.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ManagedIdentityClientID string `json:"managedIdentityClientId,omitempty"`

	// TenantID of managedIdentityClientId: Azure's database principal
	// assignments name a principal by client and tenant.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	TenantID string `json:"tenantId,omitempty"`

	// UserAssignedIdentities are ARM resource IDs of managed identities the
	// cluster carries, as an ADXCluster's (the cluster is one, so the
	// namespace's policy must allow them:
	// spec.azure.provisioning[].userAssignedIdentities). Empty: a
	// system-assigned identity.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^/subscriptions/[^/]+/resource[gG]roups/[^/]+/providers/Microsoft\.ManagedIdentity/userAssignedIdentities/[^/]+$`
	// +kubebuilder:validation:items:MaxLength=512
	UserAssignedIdentities []string `json:"userAssignedIdentities,omitempty"`
}

// Workload is what a platform team adjusts on a component's pods.
type Workload struct {
	// Image of the component. Default ghcr.io/azure/adx-mon/<component>:latest.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`
	Image string `json:"image,omitempty"`

	// Resources of the component's container. Default: adx-mon's.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector for the component's pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations replace adx-mon's default tolerations of the component.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// ExtraArgs are appended to the component's command line.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	ExtraArgs []string `json:"extraArgs,omitempty"`
}

// Ingestor settings.
type Ingestor struct {
	Workload `json:",inline"`

	// Replicas of the ingestor StatefulSet. Set, the ADXMon owns the
	// count and restores it when it is changed by hand (recording the
	// drift in status); unset, the count is left to whoever scales the
	// StatefulSet (1 at creation) and reported in status.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`

	// Service exposes the ingestor beyond this cluster, for collectors of
	// other clusters (a collector-only stack's collector.ingestorEndpoint).
	// Default: a ClusterIP Service, reachable in this cluster only.
	// +optional
	Service *IngestorService `json:"service,omitempty"`

	// TLS is the certificate the ingestor serves, for collectors that
	// verify it (collector.ingestorCA), such as those of other clusters.
	// Default: the certificate adx-mon's ingestor makes itself at every
	// start, which nothing can verify.
	// +optional
	TLS *IngestorTLS `json:"tls,omitempty"`
}

// IngestorTLS names the ingestor's serving certificate.
type IngestorTLS struct {
	// SecretName is a Secret of type kubernetes.io/tls in the ADXMon's
	// namespace, with keys tls.crt (the certificate, then its
	// intermediates) and tls.key, as cert-manager writes them. Its names
	// must include the address collectors dial: the load balancer's IP
	// or DNS name for collectors elsewhere.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	SecretName string `json:"secretName"`
}

// IngestorService is how the ingestor's Service is exposed.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.loadBalancerSourceRanges)",message="loadBalancerSourceRanges apply to a LoadBalancer Service only",fieldPath=".loadBalancerSourceRanges"
type IngestorService struct {
	// Type of the Service: ClusterIP (in this cluster only) or
	// LoadBalancer. On AKS annotate
	// service.beta.kubernetes.io/azure-load-balancer-internal: "true" for
	// an address in the virtual network rather than a public one.
	// +optional
	// +kubebuilder:default=ClusterIP
	// +kubebuilder:validation:Enum=ClusterIP;LoadBalancer
	Type corev1.ServiceType `json:"type,omitempty"`

	// Annotations of the Service, for the cloud's load balancer.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Annotations map[string]AnnotationValue `json:"annotations,omitempty"`

	// LoadBalancerSourceRanges are the CIDRs the load balancer admits,
	// such as the other clusters' node subnets. Empty: whatever the load
	// balancer admits by default.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="loadBalancerSourceRanges are CIDRs, such as 10.1.0.0/16"
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
}

// AnnotationValue is an annotation's value.
// +kubebuilder:validation:MaxLength=1024
type AnnotationValue string

// Collector settings.
//
// +kubebuilder:validation:XValidation:rule="!has(self.ingestorEndpoint) || !isURL(self.ingestorEndpoint) || url(self.ingestorEndpoint).getHostname().endsWith('.svc') || url(self.ingestorEndpoint).getHostname().endsWith('.svc.cluster.local') || has(self.ingestorAuth)",message="an ingestorEndpoint outside this cluster needs ingestorAuth",fieldPath=".ingestorAuth"
// +kubebuilder:validation:XValidation:rule="!has(self.ingestorCA) || !has(self.ingestorEndpoint) || self.ingestorEndpoint.startsWith('https://')",message="ingestorCA verifies the ingestor's certificate: the ingestorEndpoint must be https://",fieldPath=".ingestorCA"
type Collector struct {
	Workload `json:",inline"`

	// IngestorEndpoint the collectors send to. Default: the ingestor
	// Service of this ADXMon's namespace,
	// https://ingestor.<namespace>.svc.cluster.local, whether this ADXMon
	// or another one runs it.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('https://') || self.startsWith('http://'))",message="ingestorEndpoint must be an http:// or https:// URL"
	IngestorEndpoint string `json:"ingestorEndpoint,omitempty"`

	// IngestorAuth is how collectors authenticate to the ingestor.
	// +optional
	IngestorAuth *IngestorAuth `json:"ingestorAuth,omitempty"`

	// IngestorCA is the CA bundle (PEM) the collectors verify the
	// ingestor's certificate with, besides the node's own CAs: a key of a
	// ConfigMap in the ADXMon's namespace (trust-manager's bundles and
	// kube-root-ca.crt are such ConfigMaps). Set, collectors verify every
	// ingestor, their own stack's too, which must then serve a
	// certificate of that CA (ingestor.tls). Unset, they verify an
	// ingestor elsewhere against the node's CAs only, and skip
	// verification for their own stack's self-signed one.
	// +optional
	IngestorCA *ConfigMapKeySelector `json:"ingestorCA,omitempty"`
}

// IngestorAuth is a collector's credential for the ingestor.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'token' || has(self.tokenSecretRef)",message="ingestorAuth of type token needs tokenSecretRef",fieldPath=".tokenSecretRef"
type IngestorAuth struct {
	// Type of credential: token, a bearer token from a Secret.
	// +kubebuilder:validation:Enum=token
	Type string `json:"type"`

	// TokenSecretRef is the Secret, in the ADXMon's namespace, and its key.
	// +optional
	TokenSecretRef *SecretKeySelector `json:"tokenSecretRef,omitempty"`
}

// SecretKeySelector is a key of a Secret in the ADXMon's namespace.
type SecretKeySelector struct {
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// ConfigMapKeySelector is a key of a ConfigMap in the ADXMon's namespace.
type ConfigMapKeySelector struct {
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// Alerter settings.
type Alerter struct {
	Workload `json:",inline"`

	// NotificationEndpoint alerts are sent to (the alerter's
	// --alerter-address).
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	NotificationEndpoint string `json:"notificationEndpoint,omitempty"`
}

// Autoscaler settings, as adx-mon's design describes them. Each scaled
// component gets a provider-fleetplane Autoscaler in the stack's namespace
// that measures it on the schedule and decides its size; the ADXMon
// composes that size (the ingestor StatefulSet's replicas, the ADXCluster's
// provision.capacity), so one owner writes each field.
//
// +kubebuilder:validation:XValidation:rule="!has(self.ingestor) || self.ingestor.metrics.all(m, m.type in ['QueueLength', 'MemoryUsage'] || (m.type == 'Custom' && has(m.series)))",message="spec.autoscaler.ingestor scales on QueueLength, MemoryUsage, or Custom with a series",fieldPath=".ingestor.metrics"
// +kubebuilder:validation:XValidation:rule="!has(self.adx) || self.adx.metrics.all(m, m.type in ['IngestionVolume', 'SystemLoad', 'CPUUsage'] || (m.type == 'Custom' && has(m.azureMetric)))",message="spec.autoscaler.adx scales on IngestionVolume, SystemLoad, CPUUsage, or Custom with an azureMetric",fieldPath=".adx.metrics"
// +kubebuilder:validation:XValidation:rule="!has(self.adx) || (!has(self.adx.minReplicas) && !has(self.adx.maxReplicas))",message="spec.autoscaler.adx is bounded by minNodes and maxNodes",fieldPath=".adx"
// +kubebuilder:validation:XValidation:rule="!has(self.ingestor) || (!has(self.ingestor.minNodes) && !has(self.ingestor.maxNodes))",message="spec.autoscaler.ingestor is bounded by minReplicas and maxReplicas",fieldPath=".ingestor"
type Autoscaler struct {
	// Enabled turns scaling on. Off, no Autoscaler runs and sizes are the
	// spec's again (spec.ingestor.replicas; a provisioned cluster keeps
	// the capacity it has).
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Schedule of evaluations: a five-field cron expression (minute hour
	// day-of-month month day-of-week), in UTC. Default */5 * * * *.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^(\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?(,(\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?)* +(\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?(,(\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)* +(\*|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?(,(\*|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)* +(\*|(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]?)?(,(\*|(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]?)?)* +(\*|([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat)(-([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]?)?(,(\*|([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat)(-([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]?)?)*$`
	Schedule string `json:"schedule,omitempty"`

	// ADX scales the node count of each cluster the stack provisions
	// (clusters the stack adopts are not scaled). Default bounds 2 to
	// 10 nodes, cooldown 15 minutes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.minNodes) || !has(self.maxNodes) || self.minNodes <= self.maxNodes",message="minNodes must not exceed maxNodes"
	ADX *ScaleTarget `json:"adx,omitempty"`

	// Ingestor scales the ingestor's replicas; spec.ingestor.replicas is
	// then only the starting size. Default bounds 1 to 10 replicas,
	// cooldown 5 minutes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
	Ingestor *ScaleTarget `json:"ingestor,omitempty"`
}

// ScaleTarget bounds and drives the scaling of one component.
type ScaleTarget struct {
	// Metrics weighed into each decision: each votes up above its
	// scaleUpThreshold and down below its scaleDownThreshold, and the
	// component moves one unit when the weighted vote reaches bound.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Metrics []scalingv1alpha1.ScaleMetric `json:"metrics"`

	// MinNodes and MaxNodes bound an ADX cluster.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	MinNodes int32 `json:"minNodes,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	MaxNodes int32 `json:"maxNodes,omitempty"`

	// MinReplicas and MaxReplicas bound the ingestor.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinReplicas int32 `json:"minReplicas,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxReplicas int32 `json:"maxReplicas,omitempty"`

	// CooldownMinutes between two scale operations.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1440
	CooldownMinutes *int32 `json:"cooldownMinutes,omitempty"`

	// Bound is the weighted vote, from 0 to 1, a scale needs. Default 0.5.
	// +optional
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Bound *float64 `json:"bound,omitempty"`
}

// ScalingStatus is one Autoscaler of the stack as last observed.
type ScalingStatus struct {
	// Resource is the Autoscaler, Kind namespace/name.
	Resource string `json:"resource"`
	// Target is what it scales, Kind namespace/name.
	Target string `json:"target"`
	// Size the target had at the last evaluation.
	// +optional
	Size *int32 `json:"size,omitempty"`
	// Desired is the size decided, which the ADXMon composes; absent
	// until the first decision.
	// +optional
	Desired *int32 `json:"desired,omitempty"`
	// Decision of the last evaluation: Up, Down or Hold.
	// +optional
	Decision string `json:"decision,omitempty"`
	// Reason for it.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ADXMonStatus is where the stack stands.
type ADXMonStatus struct {
	// Phase is the step the stack is at: ProvisioningADX,
	// CreatingDatabases, InstallingIngestor, InstallingCollector,
	// InstallingAlerter, or Installed; Failed when a composed resource
	// cannot be synced.
	// +optional
	Phase string `json:"phase,omitempty"`

	// Clusters are the ADX clusters and their endpoints once known.
	// +optional
	Clusters []ADXMonClusterStatus `json:"clusters,omitempty"`

	// Ingestor as observed.
	// +optional
	Ingestor *IngestorStatus `json:"ingestor,omitempty"`

	// Collector as observed.
	// +optional
	Collector *WorkloadStatus `json:"collector,omitempty"`

	// Alerter as observed.
	// +optional
	Alerter *WorkloadStatus `json:"alerter,omitempty"`

	// Autoscalers of the stack and their last decisions.
	// +optional
	Autoscalers []ScalingStatus `json:"autoscalers,omitempty"`

	// Drift lists the last changes made by hand to fields this ADXMon
	// owns, and undone; at most ten, newest first.
	// +optional
	Drift []Drift `json:"drift,omitempty"`
}

// ADXMonClusterStatus is one ADX cluster of the stack.
type ADXMonClusterStatus struct {
	Name string `json:"name"`
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Resource is the ADXCluster, namespace/name.
	Resource string `json:"resource"`
}

// WorkloadStatus is a component's workload as observed.
type WorkloadStatus struct {
	// Resource is the workload, Kind namespace/name.
	Resource string `json:"resource"`
	// Replicas the workload asks for (pods scheduled, for a DaemonSet).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// ReadyReplicas are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// ReplicasOwner says who decides the replica count: ADXMon when spec
	// sets it, Autoscaler when the autoscaler scales it, otherwise Cluster
	// (whoever scales the workload).
	// +optional
	ReplicasOwner string `json:"replicasOwner,omitempty"`
	// DesiredReplicas is the count this ADXMon last composed, when it owns
	// the count: a change from it that the ADXMon did not make is drift.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// Endpoint the component sends to (collector) or serves (ingestor).
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
}

// IngestorStatus is the ingestor's workload and where it is reached.
type IngestorStatus struct {
	WorkloadStatus `json:",inline"`
	// ExternalEndpoint is the ingestor's address beyond its cluster, once
	// the cloud's load balancer has one (spec.ingestor.service type
	// LoadBalancer): what collectors of other clusters set as
	// collector.ingestorEndpoint.
	// +optional
	ExternalEndpoint string `json:"externalEndpoint,omitempty"`
}

// Drift is one hand-made change to an owned field, undone.
type Drift struct {
	// Resource changed, Kind namespace/name.
	Resource string `json:"resource"`
	// Field changed, such as spec.replicas.
	Field string `json:"field"`
	// Found is the value found.
	Found string `json:"found"`
	// Restored is the value put back.
	Restored string `json:"restored"`
	// Generation of the resource the change was found at.
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// An ADXMon is a whole adx-mon installation: ADX clusters and databases,
// then the ingestor, the collectors and the alerter, each installed once
// the one before is ready.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={fleetplane,adx}
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="ADX",type="string",JSONPath=".status.conditions[?(@.type=='DatabasesReady')].reason"
// +kubebuilder:printcolumn:name="INGESTOR",type="string",JSONPath=".status.conditions[?(@.type=='IngestorReady')].reason"
// +kubebuilder:printcolumn:name="COLLECTOR",type="string",JSONPath=".status.conditions[?(@.type=='CollectorReady')].reason"
// +kubebuilder:printcolumn:name="ALERTER",type="string",JSONPath=".status.conditions[?(@.type=='AlerterReady')].reason"
type ADXMon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ADXMonSpec   `json:"spec"`
	Status ADXMonStatus `json:"status,omitempty"`
}

// ADXMonList is a list of ADXMons.
//
// +kubebuilder:object:root=true
type ADXMonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ADXMon `json:"items"`
}
