package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AggregatorType is an aggregate function.
// +kubebuilder:validation:Enum=COUNT;SUM;AVG;MIN;MAX
type AggregatorType string

// Aggregate functions.
const (
	AggregateCount AggregatorType = "COUNT"
	AggregateSum   AggregatorType = "SUM"
	AggregateAvg   AggregatorType = "AVG"
	AggregateMin   AggregatorType = "MIN"
	AggregateMax   AggregatorType = "MAX"
)

// NamedExpression is an output column.
type NamedExpression struct {
	// Name of the column.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`

	// Def computes the column's value from each row.
	Def Expression `json:"def"`
}

// NamedAggregator is an aggregated output column.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'COUNT' ? !has(self.subject) : has(self.subject)",message="COUNT takes no subject; SUM, AVG, MIN and MAX need one"
type NamedAggregator struct {
	// Name of the column.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`

	// Type is the aggregate function: COUNT counts a group's rows; SUM,
	// AVG, MIN and MAX fold the subject's numeric values (others are
	// skipped; a group without any gives null).
	Type AggregatorType `json:"type"`

	// Subject is what SUM, AVG, MIN and MAX aggregate.
	// +optional
	Subject *Expression `json:"subject,omitempty"`
}

// StatusCollectorSpec is one SELECT over the rows of an object's reported
// state, one row per cluster the object is placed on.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.select) && (has(self.groupBy) || has(self.combinedFields)))",message="select lists columns per cluster; it cannot be combined with groupBy or combinedFields"
// +kubebuilder:validation:XValidation:rule="has(self.select) || has(self.combinedFields)",message="a StatusCollector needs select, or combinedFields (with optional groupBy)"
// +kubebuilder:validation:XValidation:rule="!has(self.groupBy) || has(self.combinedFields)",message="groupBy needs combinedFields"
type StatusCollectorSpec struct {
	// Filter keeps the rows for which it is true (WHERE).
	// +optional
	Filter *Expression `json:"filter,omitempty"`

	// Select lists columns per row, without aggregation.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Select []NamedExpression `json:"select,omitempty"`

	// GroupBy groups rows by these values, each a single value (not a
	// list or object); each is also an output column.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	GroupBy []NamedExpression `json:"groupBy,omitempty"`

	// CombinedFields are the aggregated columns, per group.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	CombinedFields []NamedAggregator `json:"combinedFields,omitempty"`

	// Limit is the most rows a result holds; the rest are counted as
	// omitted.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Limit int64 `json:"limit,omitempty"`
}

// StatusCollectorStatus is what fleetplane found checking the collector.
type StatusCollectorStatus struct {
	// Columns the collector's results have, in order.
	// +optional
	Columns []string `json:"columns,omitempty"`
}

// A StatusCollector says how Placements that name it combine the state
// the clusters report for each placed object.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={fleetplane,placement},shortName=sc
// +kubebuilder:printcolumn:name="VALID",type="string",JSONPath=".status.conditions[?(@.type=='Valid')].reason"
// +kubebuilder:printcolumn:name="COLUMNS",type="string",JSONPath=".status.columns"
type StatusCollector struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StatusCollectorSpec   `json:"spec"`
	Status StatusCollectorStatus `json:"status,omitempty"`
}

// StatusCollectorList is a list of StatusCollectors.
//
// +kubebuilder:object:root=true
type StatusCollectorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StatusCollector `json:"items"`
}
