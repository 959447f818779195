// Package v1alpha1 holds provider-fleetplane's scaling managed resources:
// measuring a component's load and deciding its size, which the function
// then composes.
//
// +kubebuilder:object:generate=true
// +groupName=scaling.m.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the scaling managed resources.
const (
	Group   = "scaling.m.fleetplane.io"
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

// Kinds of this group.
var (
	AutoscalerKind             = "Autoscaler"
	AutoscalerGroupVersionKind = SchemeGroupVersion.WithKind(AutoscalerKind)
)

func init() {
	SchemeBuilder.Register(&Autoscaler{}, &AutoscalerList{})
}
