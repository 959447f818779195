// Package v1alpha1 holds provider-fleetplane's configuration kinds:
// ProviderConfig (namespaced), ClusterProviderConfig and their usages.
//
// +kubebuilder:object:generate=true
// +groupName=m.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the provider configuration kinds.
const (
	Group   = "m.fleetplane.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version of these types.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the types of this package.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind names of this group.
const (
	ProviderConfigKind             = "ProviderConfig"
	ClusterProviderConfigKind      = "ClusterProviderConfig"
	ProviderConfigUsageKind        = "ProviderConfigUsage"
	ClusterProviderConfigUsageKind = "ClusterProviderConfigUsage"
)

// GroupVersionKinds of this group.
var (
	ProviderConfigGroupVersionKind                 = SchemeGroupVersion.WithKind(ProviderConfigKind)
	ClusterProviderConfigGroupVersionKind          = SchemeGroupVersion.WithKind(ClusterProviderConfigKind)
	ProviderConfigUsageGroupVersionKind            = SchemeGroupVersion.WithKind(ProviderConfigUsageKind)
	ClusterProviderConfigUsageGroupVersionKind     = SchemeGroupVersion.WithKind(ClusterProviderConfigUsageKind)
	ProviderConfigUsageListGroupVersionKind        = SchemeGroupVersion.WithKind(ProviderConfigUsageKind + "List")
	ClusterProviderConfigUsageListGroupVersionKind = SchemeGroupVersion.WithKind(ClusterProviderConfigUsageKind + "List")
)

func init() {
	SchemeBuilder.Register(
		&ProviderConfig{}, &ProviderConfigList{}, &ClusterProviderConfig{}, &ClusterProviderConfigList{},
		&ProviderConfigUsage{}, &ProviderConfigUsageList{}, &ClusterProviderConfigUsage{}, &ClusterProviderConfigUsageList{},
	)
}
