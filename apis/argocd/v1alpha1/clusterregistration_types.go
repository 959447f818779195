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

// ClusterRegistrationParameters are the desired registration. Where the
// cluster Secret goes (the Argo CD namespace), the project it is
// restricted to, and which exec plugins, insecure or proxied clusters are
// accepted come from the ClusterProviderConfig (spec.argocd), never from
// here: a namespace may register its own clusters, and no more.
type ClusterRegistrationParameters struct {
	// ClusterName is the cluster's name in Argo CD. in-cluster, Argo CD's
	// name for the cluster it runs on, is refused.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:XValidation:rule="self != 'in-cluster'",message="in-cluster is Argo CD's name for the cluster it runs on"
	ClusterName string `json:"clusterName"`

	// KubeconfigSecretRef holds the kubeconfig Argo CD connects with, in
	// the managed resource's namespace. Its server is the one registered.
	KubeconfigSecretRef SecretKeyRef `json:"kubeconfigSecretRef"`

	// ExecCredential, when set, is how Argo CD authenticates instead of the
	// kubeconfig's user: an exec credential plugin, such as Argo CD's own
	// argocd-k8s-auth with args [gcp] for GKE under workload identity. The
	// server and CA still come from the kubeconfig. The command must be
	// one the ClusterProviderConfig allows (spec.argocd.allowedExecCommands).
	// +optional
	ExecCredential *ExecCredential `json:"execCredential,omitempty"`

	// Labels added to the cluster Secret, for ApplicationSet generators.
	// Keys under argocd.argoproj.io/ and argocd.fleetplane.io/, and
	// app.kubernetes.io/managed-by, are reserved.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('argocd.argoproj.io/') && !k.startsWith('argocd.fleetplane.io/') && k != 'app.kubernetes.io/managed-by')",message="labels under argocd.argoproj.io/ and argocd.fleetplane.io/, and app.kubernetes.io/managed-by, are reserved"
	Labels map[string]string `json:"labels,omitempty"`
}

// ExecCredential is an exec credential plugin Argo CD runs to get a token.
type ExecCredential struct {
	// Command, as the ClusterProviderConfig allows it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Command string `json:"command"`
	// Args of the command.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	Args []string `json:"args,omitempty"`
	// APIVersion of the ExecCredential the plugin prints.
	// +optional
	// +kubebuilder:default="client.authentication.k8s.io/v1beta1"
	// +kubebuilder:validation:Enum="client.authentication.k8s.io/v1beta1";"client.authentication.k8s.io/v1"
	APIVersion string `json:"apiVersion,omitempty"`
}

// ClusterRegistrationObservation is the registration as found.
type ClusterRegistrationObservation struct {
	// SecretName of the Argo CD cluster Secret.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// Server registered.
	// +optional
	Server string `json:"server,omitempty"`
	// Namespace of the cluster Secret, and the Project the cluster is
	// restricted to, as the ClusterProviderConfig says.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Project string `json:"project,omitempty"`
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
