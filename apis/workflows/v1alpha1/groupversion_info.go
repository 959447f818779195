// Package v1alpha1 holds provider-fleetplane's Argo Workflows managed resource: one workflow run.
//
// +kubebuilder:object:generate=true
// +groupName=workflows.m.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of these managed resources.
const (
	Group   = "workflows.m.fleetplane.io"
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
	WorkflowRunKind             = "WorkflowRun"
	WorkflowRunGroupVersionKind = SchemeGroupVersion.WithKind(WorkflowRunKind)
)

func init() {
	SchemeBuilder.Register(&WorkflowRun{}, &WorkflowRunList{})
}
