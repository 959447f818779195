package v1alpha1

import (
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InventoryLabel marks a provider-kubernetes ClusterProviderConfig as a
// cluster Placements may deliver to. Only the cluster admin writes
// ClusterProviderConfigs, so a Placement can reach only clusters the admin
// offered this way, never the control plane's own ClusterProviderConfig
// by accident.
const InventoryLabel = "placement.fleetplane.io/inventory"

// ExecutingCountLabel on a workload object whose status comes back says
// on how many clusters it executes: its copy is there and ready. It is
// KubeStellar's label, under its key, so that what selects it there
// (kubectl get -l kubestellar.io/executing-count=1) selects it here.
const ExecutingCountLabel = "kubestellar.io/executing-count"

// ObjectSelector selects workload objects of one kind in the Placement's
// namespace, by name or by label.
//
// +kubebuilder:validation:XValidation:rule="has(self.names) || has(self.matchLabels)",message="an object selector names the objects (names) or selects them by label (matchLabels); it has neither"
// +kubebuilder:validation:XValidation:rule="!(has(self.names) && has(self.matchLabels))",message="select objects by names or by matchLabels, not both"
type ObjectSelector struct {
	// APIVersion of the objects: v1, apps/v1, batch/v1, example.com/v1.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`
	APIVersion string `json:"apiVersion"`

	// Kind of the objects. Namespaced kinds only: the Placement delivers
	// what its namespace owns.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +kubebuilder:validation:XValidation:rule="!(self in ['Namespace', 'Node', 'PersistentVolume', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'StorageClass', 'PriorityClass', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'APIService'])",message="this kind is cluster-scoped; a Placement places objects of its own namespace"
	// +kubebuilder:validation:XValidation:rule="self != 'Secret'",message="Secrets are not placed: a copy's manifest would hold the secret in a provider-kubernetes Object's spec, readable by whoever reads Objects"
	Kind string `json:"kind"`

	// Resource is the kind's lowercase plural, by which CustomTransforms
	// name it, for custom resources whose plural is irregular. Those of
	// Kubernetes' own plural of the kind (deployments, services,
	// networkpolicies, endpoints) apply in any case; this adds those
	// naming Resource.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	Resource string `json:"resource,omitempty"`

	// Names of the objects.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Names []string `json:"names,omitempty"`

	// MatchLabels selects the objects whose labels include all of these.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	MatchLabels map[string]string `json:"matchLabels,omitempty"`

	// StatusCollectors combine what the clusters report about these
	// objects only, after those of spec.statusCollectors: a Deployment's
	// collectors would say little about a ConfigMap beside it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=253
	StatusCollectors []string `json:"statusCollectors,omitempty"`
}

// ClusterSelector selects clusters of the inventory.
type ClusterSelector struct {
	// MatchLabels selects the inventory ClusterProviderConfigs whose
	// labels include all of these; empty selects every one. Only
	// ClusterProviderConfigs labelled placement.fleetplane.io/inventory:
	// "true" are in the inventory.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="!('placement.fleetplane.io/inventory' in self)",message="placement.fleetplane.io/inventory is implied: only ClusterProviderConfigs the admin labelled so are in the inventory"
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// PlacementSpec says what goes where.
type PlacementSpec struct {
	// Objects selects the workload objects to place, all in the
	// Placement's namespace. Each is delivered into the same namespace
	// on every selected cluster.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Objects []ObjectSelector `json:"objects"`

	// Clusters selects the clusters to deliver to.
	Clusters ClusterSelector `json:"clusters"`

	// StatusCollectors names the StatusCollectors that combine what the
	// clusters report about every placed object; spec.objects[] name
	// those for some objects only.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=253
	StatusCollectors []string `json:"statusCollectors,omitempty"`

	// WantSingletonReportedState writes the status an object reports
	// back into the workload object's own status, when it is placed on
	// exactly one cluster.
	// +optional
	WantSingletonReportedState bool `json:"wantSingletonReportedState,omitempty"`

	// WantMultiClusterReportedState writes what every selected cluster
	// reports, aggregated, into the workload object's own status, for
	// Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs: done
	// only when done on every cluster (KubeStellar's
	// wantMultiWECReportedState). With one cluster and
	// wantSingletonReportedState, that cluster's status is written as it
	// is instead.
	// +optional
	WantMultiClusterReportedState bool `json:"wantMultiClusterReportedState,omitempty"`
}

// PlacedObject is one workload object and how its copies are doing.
type PlacedObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// Resource is the plural CustomTransforms are matched on.
	Resource string `json:"resource"`

	// Clusters counts the clusters it is placed on, Synced the copies the
	// clusters hold as desired now, Ready those provider-kubernetes
	// reports ready.
	Clusters int `json:"clusters"`
	Synced   int `json:"synced"`
	Ready    int `json:"ready"`

	// CombinedStatus holds one result per StatusCollector.
	// +optional
	CombinedStatus []CombinedStatus `json:"combinedStatus,omitempty"`
}

// CombinedStatus is one StatusCollector's result for one object.
type CombinedStatus struct {
	// Collector is the StatusCollector's name.
	Collector string `json:"collector"`
	// Columns of the rows, in order.
	// +optional
	Columns []string `json:"columns,omitempty"`
	// Rows are objects keyed by column.
	// +optional
	Rows []extv1.JSON `json:"rows,omitempty"`
	// Omitted counts the rows left out by the collector's limit or the
	// status size budget.
	// +optional
	Omitted int `json:"omitted,omitempty"`
	// Errors are rows left out and why.
	// +optional
	Errors []string `json:"errors,omitempty"`
}

// ExpansionFailure is a template expansion that failed.
type ExpansionFailure struct {
	// Object that failed to expand, as Kind/name.
	Object string `json:"object"`
	// Cluster it failed for: the first in name order.
	Cluster string `json:"cluster"`
	// Errors at their locations in the object.
	Errors []string `json:"errors"`
	// ObservedGeneration of the Placement these errors are for.
	ObservedGeneration int64 `json:"observedGeneration"`
}

// PlacementStatus is what fleetplane placed and what came back.
type PlacementStatus struct {
	// Clusters the Placement selected, in name order.
	// +optional
	Clusters []string `json:"clusters,omitempty"`

	// Objects placed, in kind and name order.
	// +optional
	Objects []PlacedObject `json:"objects,omitempty"`

	// ExpansionFailures: objects whose templates fail for a cluster.
	// While there are any, nothing of the Placement is delivered: every
	// copy stays as it was on every cluster until they are fixed.
	// +optional
	ExpansionFailures []ExpansionFailure `json:"expansionFailures,omitempty"`
}

// A Placement delivers workload objects of its namespace to the clusters
// of the inventory, as provider-kubernetes Objects: one per object and
// cluster, with what must not travel removed and templates expanded with
// each cluster's properties. It combines what the clusters report.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={fleetplane,placement}
// +kubebuilder:printcolumn:name="CLUSTERS",type="string",JSONPath=".status.clusters"
// +kubebuilder:printcolumn:name="DELIVERED",type="string",JSONPath=".status.conditions[?(@.type=='Delivered')].reason"
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.conditions[?(@.type=='StatusCombined')].reason"
type Placement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlacementSpec   `json:"spec"`
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementList is a list of Placements.
//
// +kubebuilder:object:root=true
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Placement `json:"items"`
}
