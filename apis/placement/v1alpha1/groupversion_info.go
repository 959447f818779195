// Package v1alpha1 holds the placement composite resources: Placements
// that distribute workload objects to the clusters of an inventory
// (ClusterPlacements the admin's cluster-scoped objects), the
// CustomTransforms that strip fields from the copies, and the
// StatusCollectors that combine what the clusters report.
//
// +kubebuilder:object:generate=true
// +groupName=placement.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the placement composite resources.
const (
	Group   = "placement.fleetplane.io"
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
	PlacementKind                    = "Placement"
	PlacementGroupVersionKind        = SchemeGroupVersion.WithKind(PlacementKind)
	ClusterPlacementKind             = "ClusterPlacement"
	ClusterPlacementGroupVersionKind = SchemeGroupVersion.WithKind(ClusterPlacementKind)
	CustomTransformKind              = "CustomTransform"
	CustomTransformGroupVersionKind  = SchemeGroupVersion.WithKind(CustomTransformKind)
	StatusCollectorKind              = "StatusCollector"
	StatusCollectorGroupVersionKind  = SchemeGroupVersion.WithKind(StatusCollectorKind)
)

func init() {
	SchemeBuilder.Register(&Placement{}, &PlacementList{}, &ClusterPlacement{}, &ClusterPlacementList{}, &CustomTransform{}, &CustomTransformList{}, &StatusCollector{}, &StatusCollectorList{})
}
