package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Column of a Kusto table.
type Column struct {
	// Name of the column.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Name string `json:"name"`

	// Type is the Kusto scalar type.
	// +kubebuilder:validation:Enum=bool;datetime;dynamic;guid;int;long;real;string;timespan;decimal
	Type string `json:"type"`
}

// TableParameters are the desired table.
type TableParameters struct {
	// Endpoint of the cluster.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/?$`
	Endpoint string `json:"endpoint"`

	// Database holding the table.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +kubebuilder:validation:MaxLength=260
	Database string `json:"database"`

	// Table name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Table string `json:"table"`

	// Columns in order. Existing columns are kept; missing ones are added
	// to a table this resource created.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Columns []Column `json:"columns"`
}

// TableObservation is the table as found.
type TableObservation struct {
	// Exists is true when the table is present.
	Exists bool `json:"exists,omitempty"`

	// Schema is the live schema as name:type pairs, of a table this
	// resource created.
	Schema string `json:"schema,omitempty"`

	// Created is true when this resource created the table, as the table
	// itself proves: it was created with a docstring naming this
	// resource's UID (fleetplane-table-uid=), which Kusto keeps and a
	// tenant cannot write there. Only such a table is altered, described
	// here (schema) and dropped on delete (when the management policies
	// allow deletion); one that was there before is checked, never
	// changed.
	// +optional
	Created bool `json:"created,omitempty"`
}

// TableSpec defines the desired state of a Table.
type TableSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              TableParameters `json:"forProvider"`
}

// TableStatus is the observed state of a Table.
type TableStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 TableObservation `json:"atProvider,omitempty"`
}

// A Table is a Kusto table whose columns fleetplane keeps present in a
// table it created. A table that was there before is only checked: the
// Table is Ready when it has the columns asked for, and fleetplane never
// alters or drops it. Deleting the Table drops the table only when it
// created it and its management policies allow deletion.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="DATABASE",type="string",JSONPath=".spec.forProvider.database"
// +kubebuilder:printcolumn:name="TABLE",type="string",JSONPath=".spec.forProvider.table"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type Table struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TableSpec   `json:"spec"`
	Status TableStatus `json:"status,omitempty"`
}

// TableList is a list of Tables.
//
// +kubebuilder:object:root=true
type TableList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Table `json:"items"`
}
