package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomTransformSpec names what to remove from every copy of one kind of
// workload object before it travels to a cluster.
type CustomTransformSpec struct {
	// APIGroup of the objects, without version; empty (or absent) for the
	// core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	APIGroup string `json:"apiGroup,omitempty"`

	// Resource is the lowercase plural name of the objects' kind, as in
	// their API path: deployments, services, clusterroles.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	Resource string `json:"resource"`

	// Remove lists the fields to remove where present, each a path in a
	// strict JSONPath subset: $ followed by .name segments (a letter or _
	// first, then letters, digits or _) or ["any string"] segments in
	// double quotes with JSON escapes; no whitespace, wildcards, indexes
	// or filters, and not $ alone. Example:
	// $.metadata.labels["example.com/temporary"].
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:items:Pattern=`^\$[.\[]`
	Remove []string `json:"remove,omitempty"`
}

// CustomTransformStatus is what fleetplane found checking the transform.
type CustomTransformStatus struct {
	// Errors are the remove entries that are not paths of the subset and
	// are skipped; the others apply.
	// +optional
	Errors []string `json:"errors,omitempty"`

	// Warnings: other CustomTransforms for the same resource, whose
	// removals apply too.
	// +optional
	Warnings []string `json:"warnings,omitempty"`
}

// A CustomTransform removes fields from the copies Placements deliver of
// one resource (API group and resource), on every cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={fleetplane,placement},shortName=ct
// +kubebuilder:printcolumn:name="GROUP",type="string",JSONPath=".spec.apiGroup"
// +kubebuilder:printcolumn:name="RESOURCE",type="string",JSONPath=".spec.resource"
// +kubebuilder:printcolumn:name="VALID",type="string",JSONPath=".status.conditions[?(@.type=='Valid')].reason"
type CustomTransform struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CustomTransformSpec   `json:"spec"`
	Status CustomTransformStatus `json:"status,omitempty"`
}

// CustomTransformList is a list of CustomTransforms.
//
// +kubebuilder:object:root=true
type CustomTransformList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CustomTransform `json:"items"`
}
