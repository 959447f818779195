package shared

// Managed adds a managed-resource controller with the options every
// provider-fleetplane controller shares: its logger, poll interval,
// management policies, event recorder, rate limiter and the event filter
// that ignores status-only updates.

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
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
	r := managed.NewReconciler(mgr, resource.ManagedKind(gvk), opts...)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		WithEventFilter(resource.DesiredStateChanged()).
		For(obj).
		Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter))
}
