package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxStatusBytes bounds the status one ReportedState writes, as JSON.
const MaxStatusBytes = 64 << 10

// ObjectRef names a workload object in the managed resource's namespace.
type ObjectRef struct {
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// UID, when set, must match: a newer object of the same name is not
	// the one that was placed.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid,omitempty"`
}

// ReportedStateParameters are the status to write and where.
//
// +kubebuilder:validation:XValidation:rule="has(self.cluster) != has(self.clusters)",message="a status comes from one cluster (cluster) or aggregates several (clusters)"
type ReportedStateParameters struct {
	// Placement is the Placement of this namespace that placed the
	// object. It must be this resource's controller, list it among its
	// composed resources, select the object and want its singleton
	// reported state.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	Placement string `json:"placement"`

	// Object is the workload object whose status is written.
	Object ObjectRef `json:"object"`

	// Cluster is the one cluster the status comes from, when the status
	// is what one cluster reports.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	Cluster string `json:"cluster,omitempty"`

	// Clusters are the clusters whose reports the status aggregates, when
	// it aggregates several.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	Clusters []string `json:"clusters,omitempty"`

	// ExecutingCount is on how many of the clusters the object executes
	// (its copy is there and ready), written into the object's
	// kubestellar.io/executing-count label as KubeStellar maintains it.
	// Absent: the label is left alone.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5000
	ExecutingCount *int32 `json:"executingCount,omitempty"`

	// Status is the object's status as the cluster reports it. It
	// replaces the workload object's whole status.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Status extv1.JSON `json:"status"`
}

// ReportedStateObservation is what was written.
type ReportedStateObservation struct {
	// UID of the object last written.
	// +optional
	UID string `json:"uid,omitempty"`
	// Reported is the SHA-256 of the status last written as the cluster
	// reported it (spec.forProvider.status, canonical JSON): the next
	// write is due when the cluster reports something else.
	// +optional
	Reported string `json:"reported,omitempty"`
	// Digest is the SHA-256 of that status as the API server stored it:
	// how a status someone else rewrote since is told from this
	// resource's own, and how removing this resource knows that the
	// status it clears is the one it wrote.
	// +optional
	Digest string `json:"digest,omitempty"`
	// ExecutingCount is the kubestellar.io/executing-count label last
	// written: removing this resource removes the label only while it
	// still holds this value.
	// +optional
	ExecutingCount string `json:"executingCount,omitempty"`
	// WrittenAt is when it was last written.
	// +optional
	WrittenAt *metav1.Time `json:"writtenAt,omitempty"`
}

// ReportedStateSpec defines the desired state of a ReportedState.
type ReportedStateSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              ReportedStateParameters `json:"forProvider"`
}

// ReportedStateStatus is the observed state of a ReportedState.
type ReportedStateStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ReportedStateObservation `json:"atProvider,omitempty"`
}

// A ReportedState writes the status that the one cluster a Placement
// delivers an object to reports back into that object's status, as
// KubeStellar does for wantSingletonReportedState. Placements compose
// them; removing one clears the status it wrote.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="KIND",type="string",JSONPath=".spec.forProvider.object.kind"
// +kubebuilder:printcolumn:name="OBJECT",type="string",JSONPath=".spec.forProvider.object.name"
// +kubebuilder:printcolumn:name="CLUSTER",type="string",JSONPath=".spec.forProvider.cluster"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type ReportedState struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ReportedStateSpec   `json:"spec"`
	Status ReportedStateStatus `json:"status,omitempty"`
}

// ReportedStateList is a list of ReportedStates.
//
// +kubebuilder:object:root=true
type ReportedStateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReportedState `json:"items"`
}
