package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProvisioningDefaultsParameters are the values already known; discovery
// fills in the others and never overrides these.
type ProvisioningDefaultsParameters struct {
	// SubscriptionID to provision in; from IMDS when empty.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	SubscriptionID string `json:"subscriptionId,omitempty"`

	// ResourceGroup to provision in; from IMDS when empty (on AKS, the
	// AKS cluster's resource group, never the node resource group).
	// +optional
	// +kubebuilder:validation:Pattern=`^[-\w._()]*[-\w_()]$`
	// +kubebuilder:validation:MaxLength=90
	ResourceGroup string `json:"resourceGroup,omitempty"`

	// Location (region) to provision in; from IMDS when empty.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9 ]*$`
	// +kubebuilder:validation:MaxLength=64
	Location string `json:"location,omitempty"`

	// SkuName of the cluster; chosen among the SKUs Azure offers in the
	// location when empty.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_()+ ]+$`
	// +kubebuilder:validation:MaxLength=64
	SkuName string `json:"skuName,omitempty"`

	// PreferredSkus in order of preference; the first one offered wins,
	// and without any, the first Standard SKU offered. Default
	// Standard_L8as_v3, Standard_L16as_v3, Standard_L32as_v3.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9_()+ ]+$`
	// +kubebuilder:validation:items:MaxLength=64
	PreferredSkus []string `json:"preferredSkus,omitempty"`
}

// ProvisioningDefaultsObservation is what discovery found, and why.
type ProvisioningDefaultsObservation struct {
	SubscriptionID string `json:"subscriptionId,omitempty"`
	ResourceGroup  string `json:"resourceGroup,omitempty"`
	Location       string `json:"location,omitempty"`
	SkuName        string `json:"skuName,omitempty"`
	Tier           string `json:"tier,omitempty"`

	// AKSClusterName is the AKS cluster provider-fleetplane runs in, when
	// it runs in one.
	// +optional
	AKSClusterName string `json:"aksClusterName,omitempty"`

	// Sources says where each value came from, for example
	// "subscriptionId: IMDS" or "skuName: Standard_L8as_v3 is not offered
	// in westeurope; Standard_L16as_v3 is".
	// +optional
	Sources []string `json:"sources,omitempty"`

	// OfferedSkus are the SKUs Azure offers in the location, at most 64.
	// +optional
	OfferedSkus []string `json:"offeredSkus,omitempty"`

	// LastDiscoveryTime is when IMDS and Azure were last asked.
	// +optional
	LastDiscoveryTime *metav1.Time `json:"lastDiscoveryTime,omitempty"`

	// ObservedGeneration is the generation the values were found for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ProvisioningDefaultsSpec defines the desired state of ProvisioningDefaults.
type ProvisioningDefaultsSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              ProvisioningDefaultsParameters `json:"forProvider,omitempty"`
}

// ProvisioningDefaultsStatus is the observed state of ProvisioningDefaults.
type ProvisioningDefaultsStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 ProvisioningDefaultsObservation `json:"atProvider,omitempty"`
}

// ProvisioningDefaults discovers where and as what an ADX cluster can be
// provisioned when its spec leaves that out: subscription, resource group
// and region from Azure's instance metadata service (IMDS) where
// provider-fleetplane runs, and a SKU Azure offers in the region. It only
// observes: it creates, changes and deletes nothing. Ready when every
// value is known; otherwise its Ready condition says what is missing and
// why. Discovery needs a ClusterProviderConfig with
// spec.azure.allowDiscovery.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="SUBSCRIPTION",type="string",JSONPath=".status.atProvider.subscriptionId"
// +kubebuilder:printcolumn:name="GROUP",type="string",JSONPath=".status.atProvider.resourceGroup"
// +kubebuilder:printcolumn:name="LOCATION",type="string",JSONPath=".status.atProvider.location"
// +kubebuilder:printcolumn:name="SKU",type="string",JSONPath=".status.atProvider.skuName"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type ProvisioningDefaults struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProvisioningDefaultsSpec   `json:"spec"`
	Status ProvisioningDefaultsStatus `json:"status,omitempty"`
}

// ProvisioningDefaultsList is a list of ProvisioningDefaults.
//
// +kubebuilder:object:root=true
type ProvisioningDefaultsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningDefaults `json:"items"`
}
