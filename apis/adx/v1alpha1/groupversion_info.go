// Package v1alpha1 holds the ADX composite resources: ADXCluster, which
// provisions or adopts Azure Data Explorer clusters and federates them, and
// ADXMon, a whole adx-mon installation on top of them.
//
// These Go types are the single source of the XRD in package/configuration;
// run `make generate` after changing them.
//
// +kubebuilder:object:generate=true
// +groupName=adx.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the ADX composite resources.
const (
	Group   = "adx.fleetplane.io"
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

// ADXClusterKind and friends identify the ADXCluster kind.
var (
	ADXClusterKind             = "ADXCluster"
	ADXClusterGroupVersionKind = SchemeGroupVersion.WithKind(ADXClusterKind)
)

// ADXMonKind and friends identify the ADXMon kind.
var (
	ADXMonKind             = "ADXMon"
	ADXMonGroupVersionKind = SchemeGroupVersion.WithKind(ADXMonKind)
)

func init() {
	SchemeBuilder.Register(&ADXCluster{}, &ADXClusterList{}, &ADXMon{}, &ADXMonList{})
}
