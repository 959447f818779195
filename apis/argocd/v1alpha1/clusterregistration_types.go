package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretKeyRef names a key of a Secret in the managed resource's namespace.
type SecretKeyRef struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	// +kubebuilder:default=kubeconfig
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// ClusterRegistrationParameters are the desired registration.
type ClusterRegistrationParameters struct {
	// ClusterName is the cluster's name in Argo CD.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=200
	ClusterName string `json:"clusterName"`

	// Server is the cluster's API server URL; defaults to the kubeconfig's.
	// +optional
	// +kubebuilder:validation:Pattern=`^https://[^\s]+$`
	// +kubebuilder:validation:MaxLength=2048
	Server string `json:"server,omitempty"`

	// KubeconfigSecretRef holds the kubeconfig Argo CD connects with, in
	// the managed resource's namespace.
	KubeconfigSecretRef SecretKeyRef `json:"kubeconfigSecretRef"`

	// ArgoCDNamespace is where Argo CD reads cluster Secrets.
	// +optional
	// +kubebuilder:default=argocd
	// +kubebuilder:validation:MaxLength=63
	ArgoCDNamespace string `json:"argocdNamespace,omitempty"`

	// Project restricts the cluster to one Argo CD project.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Project string `json:"project,omitempty"`

	// Labels added to the cluster Secret, for ApplicationSet generators.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Labels map[string]string `json:"labels,omitempty"`
}

// ClusterRegistrationObservation is the registration as found.
type ClusterRegistrationObservation struct {
	// SecretName of the Argo CD cluster Secret.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// Server registered.
	// +optional
	Server string `json:"server,omitempty"`
	// Auth is how Argo CD authenticates: bearerToken, tlsClientConfig or
	// execProvider. Credentials themselves are never shown.
	// +optional
	Auth string `json:"auth,omitempty"`
}

// ClusterRegistrationSpec defines the desired state of a ClusterRegistration.
type ClusterRegistrationSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              ClusterRegistrationParameters `json:"forProvider"`
}

// ClusterRegistrationStatus is the observed state of a ClusterRegistration.
type ClusterRegistrationStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ClusterRegistrationObservation `json:"atProvider,omitempty"`
}

// A ClusterRegistration registers a cluster with Argo CD: it turns a
// kubeconfig Secret into the cluster Secret Argo CD reads, and removes it
// when deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="CLUSTER",type="string",JSONPath=".spec.forProvider.clusterName"
// +kubebuilder:printcolumn:name="SERVER",type="string",JSONPath=".status.atProvider.server"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type ClusterRegistration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterRegistrationSpec   `json:"spec"`
	Status ClusterRegistrationStatus `json:"status,omitempty"`
}

// ClusterRegistrationList is a list of ClusterRegistrations.
//
// +kubebuilder:object:root=true
type ClusterRegistrationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterRegistration `json:"items"`
}
