// Package apis is the one registry of fleetplane's API groups. The
// provider, the function's composed-resource scheme, the tests and the
// local environment all register types through it, so a new group is
// added here once (a test fails until it is) and `make generate` finds
// its CRD or XRD by the group's +groupName marker.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	adxv1alpha1 "github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	experimentsv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	fnv1beta1 "github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	lifecyclev1alpha1 "github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
	placementmv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/m/v1alpha1"
	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
)

// Composite are the groups of the XRs users apply, served through XRDs.
var Composite = runtime.SchemeBuilder{
	adxv1alpha1.AddToScheme,
	experimentsv1alpha1.AddToScheme,
	placementv1alpha1.AddToScheme,
}

// Managed are provider-fleetplane's groups: its managed resources and its
// ProviderConfigs, served through the provider package's CRDs.
var Managed = runtime.SchemeBuilder{
	v1alpha1.AddToScheme,
	kustov1alpha1.AddToScheme,
	argocdv1alpha1.AddToScheme,
	workflowsv1alpha1.AddToScheme,
	lifecyclev1alpha1.AddToScheme,
	scalingv1alpha1.AddToScheme,
	placementmv1alpha1.AddToScheme,
}

// Input is the function input's group.
var Input = runtime.SchemeBuilder{fnv1beta1.AddToScheme}

// AddToScheme registers every fleetplane group.
func AddToScheme(s *runtime.Scheme) error {
	for _, b := range []runtime.SchemeBuilder{Composite, Managed, Input} {
		if err := b.AddToScheme(s); err != nil {
			return err
		}
	}
	return nil
}
