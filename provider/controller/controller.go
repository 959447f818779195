// Package controller wires provider-fleetplane's controllers. Managed
// resource controllers start only once their CRD exists and is served
// (Crossplane's safe-start: a ManagedResourceActivationPolicy activates
// them).
package controller

import (
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	lifecyclev1alpha1 "github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
	placementmv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/m/v1alpha1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/controller/autoscaler"
	"github.com/fleetplane/fleetplane/provider/controller/config"
	"github.com/fleetplane/fleetplane/provider/controller/defaults"
	"github.com/fleetplane/fleetplane/provider/controller/expiry"
	"github.com/fleetplane/fleetplane/provider/controller/fairshare"
	"github.com/fleetplane/fleetplane/provider/controller/federation"
	"github.com/fleetplane/fleetplane/provider/controller/heartbeat"
	"github.com/fleetplane/fleetplane/provider/controller/registration"
	"github.com/fleetplane/fleetplane/provider/controller/reportedstate"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/controller/table"
	"github.com/fleetplane/fleetplane/provider/controller/workflowrun"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	"github.com/fleetplane/fleetplane/provider/kusto"
)

// Setup adds every controller. ProviderConfig controllers start at once;
// the others wait at o.Gate for their kinds.
func Setup(mgr ctrl.Manager, o controller.Options, opts kusto.Options, azure defaults.Config, scale autoscaler.Config, fair fairshare.Config, m *fleetmetrics.Metrics) error {
	if err := config.Setup(mgr, o); err != nil {
		return err
	}
	c := shared.NewKustoConnector(mgr.GetClient(), opts)
	withKusto := func(setup func(ctrl.Manager, controller.Options, *shared.KustoConnector) error) func(ctrl.Manager, controller.Options) error {
		return func(mgr ctrl.Manager, o controller.Options) error { return setup(mgr, o, c) }
	}
	withMetrics := func(setup func(ctrl.Manager, controller.Options, *shared.KustoConnector, *fleetmetrics.Metrics) error) func(ctrl.Manager, controller.Options) error {
		return func(mgr ctrl.Manager, o controller.Options) error { return setup(mgr, o, c, m) }
	}
	for _, s := range []struct {
		gvk   schema.GroupVersionKind
		setup func(ctrl.Manager, controller.Options) error
	}{
		{v1alpha1.TableGroupVersionKind, withKusto(table.Setup)},
		{v1alpha1.HeartbeatGroupVersionKind, withMetrics(heartbeat.Setup)},
		{v1alpha1.FederationGroupVersionKind, func(mgr ctrl.Manager, o controller.Options) error {
			return federation.Setup(mgr, o, c, m, fairshare.New(fair))
		}},
		{v1alpha1.ProvisioningDefaultsGroupVersionKind, func(mgr ctrl.Manager, o controller.Options) error { return defaults.Setup(mgr, o, c, azure) }},
		{scalingv1alpha1.AutoscalerGroupVersionKind, func(mgr ctrl.Manager, o controller.Options) error { return autoscaler.Setup(mgr, o, c, scale, m) }},
		{argocdv1alpha1.ClusterRegistrationGroupVersionKind, registration.Setup},
		{workflowsv1alpha1.WorkflowRunGroupVersionKind, workflowrun.Setup},
		{lifecyclev1alpha1.ExpiryGroupVersionKind, expiry.Setup},
		{placementmv1alpha1.ReportedStateGroupVersionKind, reportedstate.Setup},
	} {
		o.Gate.Register(func() {
			if err := s.setup(mgr, o); err != nil {
				// The gate has no way to return an error, and a provider
				// without one of its controllers must not pretend to run.
				panic(fmt.Errorf("cannot set up the %s controller: %w", s.gvk.Kind, err))
			}
		}, s.gvk)
	}
	return nil
}
