package main

import (
	"github.com/crossplane/function-sdk-go/logging"
	"k8s.io/apimachinery/pkg/runtime/schema"

	adxv1alpha1 "github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/adxcluster"
	"github.com/fleetplane/fleetplane/function/adxmon"
	"github.com/fleetplane/fleetplane/function/component"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/experiment"
	"github.com/fleetplane/fleetplane/function/placement"
)

// NewFunction returns fleetplane's composition function with every kind it
// composes: one line per kind.
func NewFunction(log logging.Logger) *compose.Function {
	return compose.NewFunction(log, map[schema.GroupKind]compose.Composer{
		adxv1alpha1.ADXClusterGroupVersionKind.GroupKind():             adxcluster.Composer,
		adxv1alpha1.ADXMonGroupVersionKind.GroupKind():                 adxmon.Composer,
		expv1alpha1.ExperimentGroupVersionKind.GroupKind():             experiment.Composer,
		expv1alpha1.ComponentGroupVersionKind.GroupKind():              component.Composer,
		placementv1alpha1.PlacementGroupVersionKind.GroupKind():        placement.Composer,
		placementv1alpha1.ClusterPlacementGroupVersionKind.GroupKind(): placement.Composer,
		placementv1alpha1.CustomTransformGroupVersionKind.GroupKind():  placement.CustomTransformComposer,
		placementv1alpha1.StatusCollectorGroupVersionKind.GroupKind():  placement.StatusCollectorComposer,
	})
}
