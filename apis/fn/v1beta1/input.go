// Package v1beta1 holds the input of function-fleetplane: the settings a
// Composition's pipeline step passes to the function.
//
// +kubebuilder:object:generate=true
// +groupName=fn.fleetplane.io
// +versionName=v1beta1
package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
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

// Input tunes function-fleetplane for one Composition. Every field is
// optional; an empty Input suits most installations. What a namespace may
// compose, and the platform settings it is composed with (Azure and GCP
// configs, Argo CD and workflow namespaces, the hub), are not here: they
// are the cluster admin's, in the fleetplane ClusterProviderConfig that
// governs the namespace, so the packaged Compositions work unforked.
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

	// Kusto tunes provider-fleetplane's Kusto managed resources.
	// +optional
	Kusto *Kusto `json:"kusto,omitempty"`

	// Experiments tunes how Experiments are composed.
	// +optional
	Experiments *Experiments `json:"experiments,omitempty"`

	// ADXMon configures how ADXMon stacks are composed.
	// +optional
	ADXMon *ADXMon `json:"adxmon,omitempty"`

	// Placement tunes how Placements are composed.
	// +optional
	Placement *Placement `json:"placement,omitempty"`
}

// Placement tunes the composition of Placements.
type Placement struct {
	// TemplateBudget is what the templates of one Placement may spend
	// together, across every object and cluster, while they expand: a
	// unit per byte they write or build with a function, and per
	// iteration of their ranges. A Placement that would spend more
	// reports ExpansionFailed and keeps what it delivered. Default 4Mi;
	// at most 64Mi.
	// +optional
	TemplateBudget *resource.Quantity `json:"templateBudget,omitempty"`
}

// ADXMon configures the composition of ADXMon stacks, which only the
// cluster admin creates (they are cluster-scoped).
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

	// ProviderConfigRef is provider-fleetplane's config for a stack's
	// Autoscalers. Defaults to ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// Images of adx-mon's components for stacks that name none. Default
	// adx-mon's release v0.3.0 (ghcr.io/azure/adx-mon/<component>:v0.3.0);
	// pin them by digest (…@sha256:…) so that what runs cannot change
	// under a stack.
	// +optional
	Images *ADXMonImages `json:"images,omitempty"`
}

// ADXMonImages are the images of adx-mon's components.
type ADXMonImages struct {
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Ingestor string `json:"ingestor,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Collector string `json:"collector,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Alerter string `json:"alerter,omitempty"`
}

// Experiments tunes the composition of Experiments.
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

	// WatchApplications sets spec.watch on the Objects holding Argo CD
	// Applications (default true), so that provider-kubernetes reports an
	// Application's health as it changes. provider-kubernetes honours it
	// only with its alpha watches feature on (--enable-watches) and
	// ignores it otherwise; without it a not-Ready Object is polled every
	// 30 s whatever its --poll, which delays every step of an Experiment
	// by up to that.
	// +optional
	WatchApplications *bool `json:"watchApplications,omitempty"`
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

// Kusto tunes provider-fleetplane's Kusto managed resources.
type Kusto struct {
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

// Moved are the input fields of earlier releases that now belong to the
// cluster admin's ClusterProviderConfig, by dotted path, with where each
// went: an input that still sets one is refused with that answer rather
// than silently composed without it.
var Moved = map[string]string{
	"azure":                                   "spec.azure.provisioning[] of the ClusterProviderConfig that governs the namespace (subscriptions, resource groups and the upjet Azure providerConfigRef)",
	"kusto.providerConfigRef":                 "the ClusterProviderConfig that governs the namespace, which Kusto resources now name",
	"experiments.providerConfigRef":           "the ClusterProviderConfig that governs the namespace, which ClusterRegistrations, WorkflowRuns and Expiries now name",
	"experiments.argocdNamespace":             "spec.argocd.namespace of the ClusterProviderConfig that governs the namespace",
	"experiments.argocdProject":               "spec.argocd.project of the ClusterProviderConfig that governs the namespace",
	"experiments.workflowNamespace":           "spec.workflows.namespace of the ClusterProviderConfig that governs the namespace",
	"experiments.hubServer":                   "spec.experiments.hubServer of the ClusterProviderConfig that governs the namespace",
	"experiments.gcp":                         "spec.experiments.gcp of the ClusterProviderConfig that governs the namespace",
	"experiments.kubernetesProviderConfigRef": "spec.experiments.kubernetesProviderConfigRef of the ClusterProviderConfig that governs the namespace",
}
