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
	DefaultFederationInterval    = "10m"
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
}
