package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HeartbeatTarget is a hub table that receives the partition's heartbeats.
type HeartbeatTarget struct {
	// Endpoint of the hub cluster.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint"`

	// HeartbeatDatabase on the hub.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=260
	HeartbeatDatabase string `json:"heartbeatDatabase"`

	// HeartbeatTable on the hub.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=1024
	HeartbeatTable string `json:"heartbeatTable"`

	// ManagedIdentityClientID selects a user-assigned identity for this
	// hub; empty uses the ProviderConfig's credentials.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ManagedIdentityClientID string `json:"managedIdentityClientId,omitempty"`
}

// Partitioning describes a partition (geo, tenant, ...) to its hubs. The
// hub checks the same limits on every heartbeat it reads (package
// provider/kusto/heartbeat), whoever wrote it.
// +kubebuilder:validation:MaxProperties=32
// +kubebuilder:validation:XValidation:rule=`self.all(k, size(k) >= 1 && size(k) <= 63 && !k.matches(r'\p{Cc}'))`,message="partitioning keys must be 1 to 63 characters without control characters"
// +kubebuilder:validation:XValidation:rule=`self.all(k, !self[k].matches(r'\p{Cc}'))`,message="partitioning values must not hold control characters"
type Partitioning map[string]PartitionValue

// PartitionValue is one value of a Partitioning.
// +kubebuilder:validation:MaxLength=256
type PartitionValue string

// Strings is the partitioning as the heartbeat row carries it.
func (p Partitioning) Strings() map[string]string {
	if p == nil {
		return nil
	}
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = string(v)
	}
	return out
}

// HeartbeatParameters are the desired heartbeat.
type HeartbeatParameters struct {
	// Endpoint of the partition cluster whose schema is reported.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint"`

	// Partitioning is sent as the heartbeat's PartitionMetadata.
	// +optional
	Partitioning Partitioning `json:"partitioning,omitempty"`

	// Targets are the hubs to report to.
	// +listType=map
	// +listMapKey=endpoint
	// +listMapKey=heartbeatDatabase
	// +listMapKey=heartbeatTable
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Targets []HeartbeatTarget `json:"targets"`

	// Interval between heartbeats.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="interval must be at least 1s"
	Interval *metav1.Duration `json:"interval,omitempty"`

	// SchemaCheckInterval, when set, has the partition's schema read
	// again this often between heartbeats and compared with the one last
	// sent: a change (a table created, a view dropped) is sent at once,
	// not at the next interval. Each check costs what reading the schema
	// for a heartbeat costs (a command per database, on the partition)
	// and a reconcile of this Heartbeat; unset, the schema is read at the
	// interval only.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="schemaCheckInterval must be at least 1s"
	SchemaCheckInterval *metav1.Duration `json:"schemaCheckInterval,omitempty"`
}

// HeartbeatTargetStatus is the last outcome for one target.
type HeartbeatTargetStatus struct {
	Endpoint          string `json:"endpoint"`
	HeartbeatDatabase string `json:"heartbeatDatabase"`
	HeartbeatTable    string `json:"heartbeatTable"`
	// +optional
	LastSuccessTime *metav1.Time `json:"lastSuccessTime,omitempty"`
	// +optional
	LastAttemptTime *metav1.Time `json:"lastAttemptTime,omitempty"`
	// LastError is empty after a success.
	// +optional
	LastError string `json:"lastError,omitempty"`
}

// HeartbeatObservation is what the last heartbeat cycle found and did.
type HeartbeatObservation struct {
	// +optional
	LastHeartbeatTime *metav1.Time `json:"lastHeartbeatTime,omitempty"`
	// +optional
	Databases int32 `json:"databases,omitempty"`
	// +optional
	Tables int32 `json:"tables,omitempty"`
	// +optional
	Views int32 `json:"views,omitempty"`
	// SchemaDigest is the SHA-256 of the schema the last heartbeat sent,
	// which schema checks compare against.
	// +optional
	SchemaDigest string `json:"schemaDigest,omitempty"`
	// +optional
	Targets []HeartbeatTargetStatus `json:"targets,omitempty"`
}

// HeartbeatSpec defines the desired state of a Heartbeat.
type HeartbeatSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              HeartbeatParameters `json:"forProvider"`
}

// HeartbeatStatus is the observed state of a Heartbeat.
type HeartbeatStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 HeartbeatObservation `json:"atProvider,omitempty"`
}

// A Heartbeat reports a partition cluster's databases, tables and views to
// the heartbeat tables of its hubs, once per interval.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="LAST-HEARTBEAT",type="date",JSONPath=".status.atProvider.lastHeartbeatTime"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type Heartbeat struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HeartbeatSpec   `json:"spec"`
	Status HeartbeatStatus `json:"status,omitempty"`
}

// HeartbeatList is a list of Heartbeats.
//
// +kubebuilder:object:root=true
type HeartbeatList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Heartbeat `json:"items"`
}
