package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectRef names an object in the managed resource's namespace.
type ObjectRef struct {
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// UID, when set, must match: a newer object of the same name is not
	// the one that expired.
	// +optional
	UID string `json:"uid,omitempty"`
}

// ExpiryParameters are the desired expiry.
type ExpiryParameters struct {
	// Target is deleted when the expiry is due.
	Target ObjectRef `json:"target"`
	// ExpiresAt is when.
	ExpiresAt metav1.Time `json:"expiresAt"`
}

// ExpiryObservation is the expiry as found.
type ExpiryObservation struct {
	// Deleted is true once the target's deletion was requested.
	// +optional
	Deleted bool `json:"deleted,omitempty"`
	// +optional
	DeletedAt *metav1.Time `json:"deletedAt,omitempty"`
}

// ExpirySpec defines the desired state of an Expiry.
type ExpirySpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              ExpiryParameters `json:"forProvider"`
}

// ExpiryStatus is the observed state of an Expiry.
type ExpiryStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ExpiryObservation `json:"atProvider,omitempty"`
}

// An Expiry deletes an object, such as the Experiment that composed it,
// once its time has come.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXPIRES",type="date",JSONPath=".spec.forProvider.expiresAt"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type Expiry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExpirySpec   `json:"spec"`
	Status ExpiryStatus `json:"status,omitempty"`
}

// ExpiryList is a list of Expiries.
//
// +kubebuilder:object:root=true
type ExpiryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Expiry `json:"items"`
}
