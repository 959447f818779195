// Package expiry reconciles Expiries: when one is due it deletes its
// target, the composite resource that composed it.
//
// An Expiry deletes only a composite resource of one of fleetplane's
// namespaced XR kinds, in its own namespace, that is its controller and
// lists it among the resources it composes, with a UID precondition. A
// tenant who can create Expiries can therefore delete nothing it could not
// delete itself: not a ConfigMap or Secret, not a cluster-scoped object,
// not another namespace's XR, not a newer object that took an expired
// one's name. Deleting an Expiry deletes nothing.
//
// It acts on the control plane the provider runs on; the ProviderConfig
// reference is not used.
package expiry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
)

// Setup adds the Expiry controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	c := &connector{read: mgr.GetAPIReader(), write: mgr.GetClient(), now: time.Now}
	return shared.Managed(mgr, o, v1alpha1.ExpiryGroupVersionKind, &v1alpha1.Expiry{}, c, shared.Options{
		Reconciler: []managed.ReconcilerOption{managed.WithInitializers(), managed.WithPollIntervalHook(pollHook)},
	})
}

// pollHook comes back when the expiry is due, not a poll interval later.
func pollHook(mg resource.Managed, poll time.Duration) time.Duration {
	e, ok := mg.(*v1alpha1.Expiry)
	if !ok {
		return poll
	}
	until := time.Until(e.Spec.ForProvider.ExpiresAt.Time)
	return min(max(until, time.Second), poll)
}

// expirable are the composite resources an Expiry may delete: fleetplane's
// namespaced XR kinds that compose one.
var expirable = map[schema.GroupKind]bool{
	expv1alpha1.ExperimentGroupVersionKind.GroupKind(): true,
}

type connector struct {
	read  client.Reader
	write client.Client
	now   func() time.Time
}

func (c *connector) Connect(context.Context, *v1alpha1.Expiry) (managed.TypedExternalClient[*v1alpha1.Expiry], error) {
	return &external{read: c.read, write: c.write, now: c.now}, nil
}

type external struct {
	read   client.Reader
	write  client.Client
	now    func() time.Time
	target *unstructured.Unstructured
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Expiry) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	// Nothing is ever created: the expiry exists as soon as it is declared.
	done := managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}
	ref := mg.Spec.ForProvider.Target
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return managed.ExternalObservation{}, fmt.Errorf("target apiVersion %q: %w", ref.APIVersion, err)
	}
	if gk := gv.WithKind(ref.Kind).GroupKind(); !expirable[gk] {
		return managed.ExternalObservation{}, fmt.Errorf("an Expiry deletes only fleetplane's composite resources that compose it (%s); %s is not one", kinds(), gk)
	}
	owner := metav1.GetControllerOf(mg)
	if owner == nil || owner.APIVersion != ref.APIVersion || owner.Kind != ref.Kind || owner.Name != ref.Name {
		return managed.ExternalObservation{}, fmt.Errorf("an Expiry deletes only the composite resource that composed it; %s %s is not this Expiry's controller", ref.Kind, ref.Name)
	}
	t := &unstructured.Unstructured{}
	t.SetGroupVersionKind(gv.WithKind(ref.Kind))
	err = e.read.Get(ctx, types.NamespacedName{Namespace: mg.Namespace, Name: ref.Name}, t)
	switch {
	case kerrors.IsNotFound(err):
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("%s %s no longer exists", ref.Kind, ref.Name)))
		return done, nil
	case apimeta.IsNoMatchError(err):
		return managed.ExternalObservation{}, fmt.Errorf("kind %s of %s is not served", ref.Kind, ref.APIVersion)
	case err != nil:
		return managed.ExternalObservation{}, fmt.Errorf("cannot read %s %s: %w", ref.Kind, ref.Name, err)
	}
	if t.GetUID() != owner.UID || (ref.UID != "" && string(t.GetUID()) != ref.UID) {
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("%s %s is a newer object than the one that expires; it is left alone", ref.Kind, ref.Name)))
		return done, nil
	}
	if t.GetDeletionTimestamp() != nil {
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("%s %s is being deleted", ref.Kind, ref.Name)))
		return done, nil
	}
	if at := mg.Spec.ForProvider.ExpiresAt; e.now().Before(at.Time) {
		// A stable message: a countdown would rewrite status, and wake
		// every watcher of it, at each poll.
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("%s %s expires at %s", ref.Kind, ref.Name, at.UTC().Format(time.RFC3339))))
		return done, nil
	}
	if !shared.ComposedBy(t, v1alpha1.ExpiryGroupVersionKind, mg.Namespace, mg.Name) {
		return managed.ExternalObservation{}, fmt.Errorf("%s %s does not compose this Expiry (its spec.crossplane.resourceRefs do not name it); an Expiry deletes only the composite resource that composed it", ref.Kind, ref.Name)
	}
	e.target = t
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: "expired"}, nil
}

func kinds() string {
	var out []string
	for gk := range expirable {
		out = append(out, gk.String())
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Create is never called: Observe always reports the expiry exists.
func (e *external) Create(context.Context, *v1alpha1.Expiry) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Update deletes the expired target.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Expiry) (managed.ExternalUpdate, error) {
	uid := e.target.GetUID()
	err := e.write.Delete(ctx, e.target, client.Preconditions{UID: &uid})
	if err != nil && !kerrors.IsNotFound(err) {
		return managed.ExternalUpdate{}, fmt.Errorf("cannot delete expired %s %s: %w", e.target.GetKind(), e.target.GetName(), err)
	}
	now := metav1.NewTime(e.now())
	mg.Status.AtProvider = v1alpha1.ExpiryObservation{Deleted: true, DeletedAt: &now}
	return managed.ExternalUpdate{}, nil
}

// Delete deletes nothing: removing an Expiry cancels it.
func (e *external) Delete(context.Context, *v1alpha1.Expiry) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
