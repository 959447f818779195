// Package v1alpha1 holds provider-fleetplane's lifecycle managed resource: the expiry of an object.
//
// +kubebuilder:object:generate=true
// +groupName=lifecycle.m.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of these managed resources.
const (
	Group   = "lifecycle.m.fleetplane.io"
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
	ExpiryKind             = "Expiry"
	ExpiryGroupVersionKind = SchemeGroupVersion.WithKind(ExpiryKind)
)

func init() {
	SchemeBuilder.Register(&Expiry{}, &ExpiryList{})
}
