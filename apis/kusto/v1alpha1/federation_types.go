package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BlockedClusters are partitions the hub leaves out.
type BlockedClusters struct {
	// Static partition endpoints. Compared case-insensitively, ignoring
	// surrounding spaces and trailing slashes.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=2048
	Static []string `json:"static,omitempty"`

	// KustoFunction returns more endpoints, in a string column named
	// ClusterEndpoint or Endpoint.
	// +optional
	KustoFunction *KustoFunctionRef `json:"kustoFunction,omitempty"`
}

// KustoFunctionRef names a function in a hub database.
type KustoFunctionRef struct {
	// Database holding the function.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=260
	Database string `json:"database"`

	// Name of the function.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:MaxLength=1024
	Name string `json:"name"`
}

// FederationParameters are the desired federation of a hub.
type FederationParameters struct {
	// Endpoint of the hub cluster.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint"`

	// HeartbeatDatabase holds the heartbeat table.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=260
	HeartbeatDatabase string `json:"heartbeatDatabase"`

	// HeartbeatTable partitions write to.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=1024
	HeartbeatTable string `json:"heartbeatTable"`

	// HeartbeatTTL: partitions silent for longer are removed. A Kusto
	// timespan, units (4h30m, 1.5h, 1d) or a clock (00:30:00, 1.02:03:04),
	// from 1s to 30d.
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]{1,7}([.][0-9]{1,7})?d)?([0-9]{1,7}([.][0-9]{1,7})?h)?([0-9]{1,7}([.][0-9]{1,7})?m)?([0-9]{1,7}([.][0-9]{1,7})?s)?|([0-9]{1,5}[.])?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,7})?)$')",message="heartbeatTTL is a Kusto timespan: units such as 2d, 4h30m, 1.5h or 90s, or a clock such as 00:30:00 or 1.02:03:04"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(([0-9]{1,7}([.][0-9]{1,7})?d)?([0-9]{1,7}([.][0-9]{1,7})?h)?([0-9]{1,7}([.][0-9]{1,7})?m)?([0-9]{1,7}([.][0-9]{1,7})?s)?|([0-9]{1,5}[.])?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,7})?)$') || (self.contains(':') ? (self.matches('^[0-9]+[.][0-9]{2}:') ? double(self.find('^[0-9]+')) * 86400.0 : 0.0) + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[0]) * 3600.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[1]) * 60.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[2]) : (self.find('[0-9.]+d') == '' ? 0.0 : double(self.find('[0-9.]+d').replace('d', '')) * 86400.0) + (self.find('[0-9.]+h') == '' ? 0.0 : double(self.find('[0-9.]+h').replace('h', '')) * 3600.0) + (self.find('[0-9.]+m') == '' ? 0.0 : double(self.find('[0-9.]+m').replace('m', '')) * 60.0) + (self.find('[0-9.]+s') == '' ? 0.0 : double(self.find('[0-9.]+s').replace('s', '')))) >= 1.0",message="heartbeatTTL must be at least 1s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(([0-9]{1,7}([.][0-9]{1,7})?d)?([0-9]{1,7}([.][0-9]{1,7})?h)?([0-9]{1,7}([.][0-9]{1,7})?m)?([0-9]{1,7}([.][0-9]{1,7})?s)?|([0-9]{1,5}[.])?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,7})?)$') || (self.contains(':') ? (self.matches('^[0-9]+[.][0-9]{2}:') ? double(self.find('^[0-9]+')) * 86400.0 : 0.0) + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[0]) * 3600.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[1]) * 60.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[2]) : (self.find('[0-9.]+d') == '' ? 0.0 : double(self.find('[0-9.]+d').replace('d', '')) * 86400.0) + (self.find('[0-9.]+h') == '' ? 0.0 : double(self.find('[0-9.]+h').replace('h', '')) * 3600.0) + (self.find('[0-9.]+m') == '' ? 0.0 : double(self.find('[0-9.]+m').replace('m', '')) * 60.0) + (self.find('[0-9.]+s') == '' ? 0.0 : double(self.find('[0-9.]+s').replace('s', '')))) <= 2592000.0",message="heartbeatTTL must be at most 30d"
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=64
	HeartbeatTTL string `json:"heartbeatTTL,omitempty"`

	// AllowInsecureEndpoints accepts plain-http partition endpoints in
	// heartbeats. Only local emulators speak http; leave it off for Azure.
	// +optional
	AllowInsecureEndpoints bool `json:"allowInsecureEndpoints,omitempty"`

	// BlockedClusters are left out of every function and entity group.
	// +optional
	BlockedClusters *BlockedClusters `json:"blockedClusters,omitempty"`

	// Interval between federation cycles. Between cycles the provider
	// asks the hub every changeCheckInterval for a digest of each
	// partition's latest heartbeat, and runs a cycle early when one
	// changed.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="interval must be at least 1s"
	Interval *metav1.Duration `json:"interval,omitempty"`

	// ChangeCheckInterval is how often, between cycles, the hub is asked
	// for the digests of its partitions' latest heartbeats (one small
	// query, 64 characters a partition): a new table reaches the hub's
	// functions within the partition's heartbeat (or schema check) plus
	// this plus one cycle. The provider's --poll applies when it is
	// sooner.
	// +optional
	// +kubebuilder:default="15s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="changeCheckInterval must be at least 1s"
	ChangeCheckInterval *metav1.Duration `json:"changeCheckInterval,omitempty"`

	// Safety bounds what one cycle may remove because partitions stopped
	// heartbeating. Whatever these say, a cycle that reads no heartbeat
	// removes nothing, and neither does one whose newest heartbeat is
	// older than half heartbeatTTL: the heartbeat path looks down, and a
	// fleet whose heartbeats all stopped would otherwise drain as each
	// partition's TTL ran out.
	// +optional
	Safety *FederationSafety `json:"safety,omitempty"`
}

// FederationSafety bounds what a cycle removes from the hub.
type FederationSafety struct {
	// MinimumRetention is how long, at least, a partition stays federated
	// after its last heartbeat, whatever heartbeatTTL says: heartbeats are
	// read this far back when the TTL is shorter. Default 15m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('720h')",message="minimumRetention must be between 1s and 30d"
	MinimumRetention *metav1.Duration `json:"minimumRetention,omitempty"`

	// MaxLeavePercent of the partitions federated now may leave in one
	// cycle; the others leave in later cycles, so that a partial outage
	// drains the hub slowly enough to be noticed. Blocked partitions leave
	// at once and do not count. Default 50; 100 turns the cap off.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MaxLeavePercent *int32 `json:"maxLeavePercent,omitempty"`
}

// FederatedPartition is a partition the last cycle federated.
type FederatedPartition struct {
	Endpoint string `json:"endpoint"`
	// +optional
	LastHeartbeatTime *metav1.Time `json:"lastHeartbeatTime,omitempty"`
	// Metadata is the PartitionMetadata of the partition's latest
	// heartbeat (its partitioning: geo, tenant, ...), as the hub accepted
	// it. Left out when the partition sent none, when the hub refused it
	// (status.atProvider.warnings says why), or past the status's metadata
	// budget (status.atProvider.metadataOmitted counts those).
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// FederationObservation is what the last federation cycle found and did.
type FederationObservation struct {
	// Partitions federated by the last cycle, at most 100 of them.
	// +optional
	Partitions []FederatedPartition `json:"partitions,omitempty"`
	// PartitionCount is the number of partitions federated.
	// +optional
	PartitionCount int32 `json:"partitionCount,omitempty"`
	// MetadataOmitted counts listed partitions whose metadata was left out
	// to keep the status small.
	// +optional
	MetadataOmitted int32 `json:"metadataOmitted,omitempty"`
	// MissingDatabases are reported by partitions but absent on the hub;
	// their tables are not federated until they exist.
	// +optional
	MissingDatabases []string `json:"missingDatabases,omitempty"`
	// BlockedMatched counts heartbeating partitions the block list removed.
	// +optional
	BlockedMatched int32 `json:"blockedMatched,omitempty"`
	// +optional
	Databases int32 `json:"databases,omitempty"`
	// +optional
	Tables int32 `json:"tables,omitempty"`
	// +optional
	Functions int32 `json:"functions,omitempty"`
	// CommandsIssued is the number of mutating commands of the last cycle;
	// zero once the hub has converged.
	// +optional
	CommandsIssued int32 `json:"commandsIssued,omitempty"`
	// Errors of the last cycle: commands that failed. The federation is
	// not Ready while there are any. At most ten are kept.
	// +optional
	Errors []string `json:"errors,omitempty"`
	// Warnings of the last cycle: heartbeats rejected as invalid, databases
	// missing on the hub, a block-list function that does not exist,
	// functions left alone because someone else owns them. At most ten are
	// kept.
	// +optional
	Warnings []string `json:"warnings,omitempty"`
	// HeldBack are partitions that stopped heartbeating but stay
	// federated for now, and why (see spec.forProvider.safety). At most
	// ten are listed.
	// +optional
	HeldBack []string `json:"heldBack,omitempty"`
	// Retained are partitions whose last heartbeat is older than
	// heartbeatTTL but within minimumRetention: still federated. At most
	// ten are listed.
	// +optional
	Retained []string `json:"retained,omitempty"`
	// HeldBackCount counts the partitions HeldBack lists, all of them.
	// +optional
	HeldBackCount int32 `json:"heldBackCount,omitempty"`
	// RetainedCount counts the partitions Retained lists, all of them.
	// +optional
	RetainedCount int32 `json:"retainedCount,omitempty"`
	// RejectedCount counts the heartbeats the last cycle rejected as
	// invalid: partitions that heartbeat but are not federated.
	// +optional
	RejectedCount int32 `json:"rejectedCount,omitempty"`
	// NewestHeartbeatTime is the newest heartbeat the last cycle read, of
	// any partition: how stale the hub's view of the fleet is.
	// +optional
	NewestHeartbeatTime *metav1.Time `json:"newestHeartbeatTime,omitempty"`
	// Owner is the Federation that federates this hub when it is not this
	// one: a hub has one Federation, the oldest.
	// +optional
	Owner string `json:"owner,omitempty"`
	// LastCycleTime is when the last cycle that reached the hub ended,
	// whatever its commands did; cycles are paced by it.
	// +optional
	LastCycleTime *metav1.Time `json:"lastCycleTime,omitempty"`
	// HeartbeatPathDownTime is when a cycle last found the heartbeat path
	// down: it read no heartbeat, or none younger than half heartbeatTTL.
	// Until a heartbeatTTL (or minimumRetention, if longer) and a minute
	// (the provider's longest retry backoff) after it, no partition leaves
	// for silence: its silence may be the outage's.
	// +optional
	HeartbeatPathDownTime *metav1.Time `json:"heartbeatPathDownTime,omitempty"`
	// LastSyncTime is when the last cycle that ran every command it
	// planned ended; a cycle that fails part-way does not move it.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// LastCycleError is why the last cycle failed, until one succeeds:
	// what Synced keeps saying while the next cycle waits for the
	// namespace's share of the provider's time.
	// +optional
	LastCycleError string `json:"lastCycleError,omitempty"`
}

// FederationSpec defines the desired state of a Federation.
type FederationSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              FederationParameters `json:"forProvider"`
}

// FederationStatus is the observed state of a Federation.
type FederationStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 FederationObservation `json:"atProvider,omitempty"`
}

// A Federation keeps a hub cluster's tables, entity groups and macro-expand
// functions in step with the heartbeats of its partitions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="PARTITIONS",type="integer",JSONPath=".status.atProvider.partitionCount"
// +kubebuilder:printcolumn:name="FUNCTIONS",type="integer",JSONPath=".status.atProvider.functions"
// +kubebuilder:printcolumn:name="LAST-SYNC",type="date",JSONPath=".status.atProvider.lastSyncTime"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type Federation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FederationSpec   `json:"spec"`
	Status FederationStatus `json:"status,omitempty"`
}

// FederationList is a list of Federations.
//
// +kubebuilder:object:root=true
type FederationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Federation `json:"items"`
}
