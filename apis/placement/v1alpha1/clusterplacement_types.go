package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterObjectSelector selects cluster-scoped workload objects of one
// kind, by name or by label. Its fields are ObjectSelector's, so that one
// composer reads both kinds of placement; only the validation differs.
//
// +kubebuilder:validation:XValidation:rule="has(self.names) || has(self.matchLabels)",message="an object selector names the objects (names) or selects them by label (matchLabels); it has neither"
// +kubebuilder:validation:XValidation:rule="!(has(self.names) && has(self.matchLabels))",message="select objects by names or by matchLabels, not both"
type ClusterObjectSelector struct {
	// APIVersion of the objects: v1, rbac.authorization.k8s.io/v1,
	// apiextensions.k8s.io/v1.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`
	APIVersion string `json:"apiVersion"`

	// Kind of the objects: cluster-scoped kinds only (Namespace,
	// ClusterRole, CustomResourceDefinition, ...). Objects of a namespaced
	// kind are placed by a Placement in their namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +kubebuilder:validation:XValidation:rule="!(self in ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Service', 'ConfigMap', 'Secret', 'ServiceAccount', 'Role', 'RoleBinding', 'PersistentVolumeClaim', 'Ingress', 'NetworkPolicy', 'PodDisruptionBudget', 'HorizontalPodAutoscaler'])",message="this kind is namespaced; a ClusterPlacement places cluster-scoped objects, a Placement in their namespace the others"
	Kind string `json:"kind"`

	// Resource is the kind's lowercase plural, by which CustomTransforms
	// name it, for custom resources whose plural is irregular.
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
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$`
	Names []string `json:"names,omitempty"`

	// MatchLabels selects the objects whose labels include all of these.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	MatchLabels map[string]string `json:"matchLabels,omitempty"`

	// StatusCollectors combine what the clusters report about these
	// objects only, after those of spec.statusCollectors.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=253
	StatusCollectors []string `json:"statusCollectors,omitempty"`
}

// ClusterPlacementSpec says which cluster-scoped objects go where. It is
// PlacementSpec without reported state: the status of a cluster-scoped
// object on the control plane (a CustomResourceDefinition's, a
// Namespace's) is its own controllers' to write.
type ClusterPlacementSpec struct {
	// Objects selects the cluster-scoped workload objects to place.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Objects []ClusterObjectSelector `json:"objects"`

	// Clusters selects the clusters to deliver to.
	Clusters ClusterSelector `json:"clusters"`

	// StatusCollectors names the StatusCollectors that combine what the
	// clusters report about every placed object.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=253
	StatusCollectors []string `json:"statusCollectors,omitempty"`
}

// A ClusterPlacement is the cluster admin's Placement: it delivers
// cluster-scoped objects (Namespaces, ClusterRoles,
// CustomResourceDefinitions) to the clusters of the inventory, which a
// namespace's Placement never does. The ClusterProviderConfig its label
// fleetplane.io/policy names ("default" without one) must allow it, in
// spec.placement.clusterPlacements.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={fleetplane,placement}
// +kubebuilder:printcolumn:name="CLUSTERS",type="string",JSONPath=".status.clusters"
// +kubebuilder:printcolumn:name="DELIVERED",type="string",JSONPath=".status.conditions[?(@.type=='Delivered')].reason"
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.conditions[?(@.type=='StatusCombined')].reason"
type ClusterPlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterPlacementSpec `json:"spec"`
	Status PlacementStatus      `json:"status,omitempty"`
}

// ClusterPlacementList is a list of ClusterPlacements.
//
// +kubebuilder:object:root=true
type ClusterPlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPlacement `json:"items"`
}
