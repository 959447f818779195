package shared

// Managed adds a managed-resource controller with the options every
// provider-fleetplane controller shares: its logger, poll interval,
// management policies, event recorder, rate limiter, the event filter
// that ignores status-only updates, and crossplane-runtime's
// managed-resource metrics.

import (
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options are a kind's additions to the shared reconciler options.
type Options struct {
	// Reconciler options, such as a poll hook or a timeout.
	Reconciler []managed.ReconcilerOption
	// Recorder wraps the event recorder, to filter what a kind records.
	Recorder func(event.Recorder) event.Recorder
}

// Managed adds the controller of one managed resource kind to mgr.
func Managed[T resource.Managed](mgr ctrl.Manager, o controller.Options, gvk schema.GroupVersionKind, obj T, c managed.TypedExternalConnector[T], extra Options) error {
	name := managed.ControllerName(gvk.GroupKind().String())
	var rec event.Recorder = event.NewAPIRecorder(mgr.GetEventRecorderFor(name)) //nolint:staticcheck // crossplane-runtime's recorder takes this type
	if extra.Recorder != nil {
		rec = extra.Recorder(rec)
	}
	opts := append([]managed.ReconcilerOption{
		managed.WithTypedExternalConnector[T](c),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(o.PollInterval),
		managed.WithManagementPolicies(),
		managed.WithRecorder(rec),
		// Every kind's external name follows from its spec (a table, a
		// run name, a cluster Secret's name), never from the remote
		// system. So a provider killed between creating something and
		// recording that it did may go on: Observe finds what it made.
		// Without this, crossplane-runtime stops such a resource for good
		// until someone removes its create-pending annotation by hand.
		managed.WithDeterministicExternalName(true),
	}, extra.Reconciler...)
	if m := o.MetricOptions; m != nil {
		// crossplane-runtime's managed-resource metrics, wired as
		// provider-kubernetes and the upjet providers wire them: the
		// reconciler's (time to first readiness, deletion time, drift)
		// and the periodic count of resources that exist, are Ready and
		// are Synced, by GVK.
		opts = append(opts, managed.WithMetricRecorder(m.MRMetrics))
		list, err := mgr.GetScheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			return fmt.Errorf("cannot count %s for the state metrics: %w", gvk.Kind, err)
		}
		l, ok := list.(resource.ManagedList)
		if !ok {
			return fmt.Errorf("%sList is not a list of managed resources", gvk.Kind)
		}
		if err := mgr.Add(statemetrics.NewMRStateRecorder(mgr.GetClient(), o.Logger, m.MRStateMetrics, l, m.PollStateMetricInterval)); err != nil {
			return err
		}
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(gvk), opts...)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		WithEventFilter(resource.DesiredStateChanged()).
		For(obj).
		Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter))
}
