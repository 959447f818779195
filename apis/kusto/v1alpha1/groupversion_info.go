// Package v1alpha1 holds provider-fleetplane's Kusto managed resources: the
// imperative, data-plane side of ADX federation.
//
// +kubebuilder:object:generate=true
// +groupName=kusto.m.fleetplane.io
// +versionName=v1alpha1
package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the Kusto managed resources.
const (
	Group   = "kusto.m.fleetplane.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version of these types.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the types of this package.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kinds of this group.
var (
	TableKind                  = "Table"
	TableGroupVersionKind      = SchemeGroupVersion.WithKind(TableKind)
	HeartbeatKind              = "Heartbeat"
	HeartbeatGroupVersionKind  = SchemeGroupVersion.WithKind(HeartbeatKind)
	FederationKind             = "Federation"
	FederationGroupVersionKind = SchemeGroupVersion.WithKind(FederationKind)
	// ProvisioningDefaultsKind discovers where to provision.
	ProvisioningDefaultsKind             = "ProvisioningDefaults"
	ProvisioningDefaultsGroupVersionKind = SchemeGroupVersion.WithKind(ProvisioningDefaultsKind)
)

func init() {
	SchemeBuilder.Register(&Table{}, &TableList{}, &Heartbeat{}, &HeartbeatList{}, &Federation{}, &FederationList{}, &ProvisioningDefaults{}, &ProvisioningDefaultsList{})
}

// DefaultInterval is the time between two heartbeats, or two federation
// cycles, when a managed resource sets none. It is also the default of
// the function input's kusto.interval, and the CRDs' "10m" default.
const DefaultInterval = 10 * time.Minute
