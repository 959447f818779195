// Package v1alpha1 holds the Experiment and Component composite resources:
// multi-target experiments on provisioned clusters, deployed with Argo CD
// and validated with Argo Workflows.
//
// +kubebuilder:object:generate=true
// +groupName=experiments.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the experiment composite resources.
const (
	Group   = "experiments.fleetplane.io"
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
	ExperimentKind             = "Experiment"
	ExperimentGroupVersionKind = SchemeGroupVersion.WithKind(ExperimentKind)
	ComponentKind              = "Component"
	ComponentGroupVersionKind  = SchemeGroupVersion.WithKind(ComponentKind)
)

func init() {
	SchemeBuilder.Register(&Experiment{}, &ExperimentList{}, &Component{}, &ComponentList{})
}
