// Package v1beta1 holds the input of function-fleetplane: the settings a
// Composition's pipeline step passes to the function.
//
// +kubebuilder:object:generate=true
// +groupName=fn.fleetplane.io
// +versionName=v1beta1
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the function input.
const (
	Group   = "fn.fleetplane.io"
	Version = "v1beta1"
)

var (
	// SchemeGroupVersion is the group version of the input.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the input type.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the input type to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Input{})
}

// Defaults the function applies to an empty Input.
const (
	DefaultEnvironmentConfigName = "fleetplane-cluster-labels"
	DefaultProviderConfigKind    = "ClusterProviderConfig"
	DefaultProviderConfigName    = "default"
)

// Input configures function-fleetplane for one Composition. Every field is
// optional; an empty Input suits most installations.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Criteria configures how criteriaExpression finds the cluster labels.
	// +optional
	Criteria *Criteria `json:"criteria,omitempty"`

	// Azure configures the Azure managed resources the function composes.
	// +optional
	Azure *Azure `json:"azure,omitempty"`

	// Kusto configures provider-fleetplane's Kusto managed resources.
	// +optional
	Kusto *Kusto `json:"kusto,omitempty"`

	// Experiments configures how Experiments are composed.
	// +optional
	Experiments *Experiments `json:"experiments,omitempty"`

	// ADXMon configures how ADXMon stacks are composed.
	// +optional
	ADXMon *ADXMon `json:"adxmon,omitempty"`
}

// ADXMon configures the composition of ADXMon stacks.
type ADXMon struct {
	// DefaultSku of ADX clusters a stack provisions without naming one.
	// Default Standard_L8as_v3, the first of adx-mon's preferences.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_()+ ]+$`
	DefaultSku string `json:"defaultSku,omitempty"`

	// KubernetesProviderConfigRef is provider-kubernetes' config for the
	// Objects that install adx-mon's CRDs. Defaults to
	// ClusterProviderConfig "default".
	// +optional
	KubernetesProviderConfigRef *ProviderConfigReference `json:"kubernetesProviderConfigRef,omitempty"`
}

// Experiments configures the composition of Experiments.
type Experiments struct {
	// ComponentRepoURL is the Git repository searched, at
	// components/<app|workflow|config>/<name>, for components that have no
	// Component object. Empty turns the fallback off: an unknown component
	// then fails its target.
	// +optional
	ComponentRepoURL string `json:"componentRepoURL,omitempty"`

	// ComponentRevision of that repository. Defaults to HEAD.
	// +optional
	ComponentRevision string `json:"componentRevision,omitempty"`

	// ArgoCDNamespace holds Argo CD's Applications and cluster Secrets.
	// Defaults to argocd.
	// +optional
	ArgoCDNamespace string `json:"argocdNamespace,omitempty"`

	// ArgoCDProject of the Applications. Defaults to default.
	// +optional
	ArgoCDProject string `json:"argocdProject,omitempty"`

	// HubServer is the API server Argo CD reaches the hub at. Defaults to
	// https://kubernetes.default.svc.
	// +optional
	HubServer string `json:"hubServer,omitempty"`

	// WorkflowNamespace holds WorkflowTemplates and Workflows. Defaults to
	// argo.
	// +optional
	WorkflowNamespace string `json:"workflowNamespace,omitempty"`

	// GCP configures GKE clusters.
	// +optional
	GCP *GCP `json:"gcp,omitempty"`

	// KubernetesProviderConfigRef is provider-kubernetes' config for the
	// Objects that hold Argo CD Applications. Defaults to
	// ClusterProviderConfig "default".
	// +optional
	KubernetesProviderConfigRef *ProviderConfigReference `json:"kubernetesProviderConfigRef,omitempty"`

	// WatchApplications sets spec.watch on those Objects (default true),
	// so that provider-kubernetes reports an Application's health as it
	// changes. provider-kubernetes honours it only with its alpha watches
	// feature on (--enable-watches) and ignores it otherwise; without it a
	// not-Ready Object is polled every 30 s whatever its --poll, which
	// delays every step of an Experiment by up to that.
	// +optional
	WatchApplications *bool `json:"watchApplications,omitempty"`

	// ProviderConfigRef of provider-fleetplane's ClusterRegistration,
	// WorkflowRun and Expiry. Defaults to ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`
}

// GCP configures GKE clusters.
type GCP struct {
	// ProviderConfigRef of the upjet GCP resources. Defaults to
	// ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// Project the GKE clusters are created in; it turns on workload
	// identity for the project's pool. GKE targets need it.
	// +optional
	Project string `json:"project,omitempty"`

	// ArgoCDServiceAccount is the Google service account Argo CD's
	// controllers act as, through workload identity on the hub, for
	// example argocd@my-project.iam.gserviceaccount.com. Argo CD reaches
	// GKE targets as it, with its argocd-k8s-auth helper, and fleetplane
	// grants it ArgoCDRole on Project. GKE targets need it.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.]+\.iam\.gserviceaccount\.com$`
	ArgoCDServiceAccount string `json:"argocdServiceAccount,omitempty"`

	// ArgoCDRole granted to ArgoCDServiceAccount on Project, so that Argo
	// CD may deploy into the clusters. Default roles/container.developer.
	// +optional
	// +kubebuilder:validation:Pattern=`^roles/[a-zA-Z0-9_.]+$`
	ArgoCDRole string `json:"argocdRole,omitempty"`
}

// Criteria locates the labels criteriaExpression is evaluated against.
type Criteria struct {
	// EnvironmentConfigName is the EnvironmentConfig whose data.labels map
	// holds this control plane's cluster labels, for example
	// {geo: eu, tier: gold}. Defaults to fleetplane-cluster-labels.
	// +optional
	EnvironmentConfigName string `json:"environmentConfigName,omitempty"`
}

// ProviderConfigReference names a ProviderConfig or ClusterProviderConfig.
type ProviderConfigReference struct {
	// +kubebuilder:validation:Enum=ProviderConfig;ClusterProviderConfig
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// SubscriptionProviderConfig maps an Azure subscription to the Azure
// ProviderConfig whose credentials target it.
type SubscriptionProviderConfig struct {
	SubscriptionID    string                  `json:"subscriptionId"`
	ProviderConfigRef ProviderConfigReference `json:"providerConfigRef"`
}

// Azure configures the upjet Azure managed resources.
type Azure struct {
	// ProviderConfigRef for Azure resources whose subscription has no entry
	// in Subscriptions. Defaults to ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// Subscriptions maps spec.provision.subscriptionId to a ProviderConfig.
	// Upjet's Azure resources carry no subscription of their own: it comes
	// from the ProviderConfig.
	// +optional
	Subscriptions []SubscriptionProviderConfig `json:"subscriptions,omitempty"`
}

// Kusto configures provider-fleetplane's Kusto managed resources.
type Kusto struct {
	// ProviderConfigRef for Table, Heartbeat and Federation. Defaults to
	// ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// Interval between heartbeats and between federation cycles, as a Go
	// duration. Defaults to 10m.
	// +optional
	Interval string `json:"interval,omitempty"`

	// ChangeCheckInterval, a Go duration, is how often between heartbeats
	// a partition compares its schema with the one it last sent, and how
	// often between cycles a hub compares its partitions' heartbeat
	// digests: a new table then reaches the hub's functions within about
	// twice this plus one cycle, not a heartbeat interval later. Each check
	// reads the partition's schema (a command per database). Unset,
	// partitions send their schema at the interval only and hubs check
	// every 15s.
	// +optional
	ChangeCheckInterval string `json:"changeCheckInterval,omitempty"`
}
