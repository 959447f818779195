// Package config reconciles ProviderConfigs and ClusterProviderConfigs:
// it counts the managed resources using each and keeps one that is in use
// from being deleted.
package config

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Setup adds the ProviderConfig and ClusterProviderConfig controllers.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	for _, k := range []struct {
		name   string
		of     resource.ProviderConfigKinds
		object resource.ProviderConfig
		kind   string
	}{
		{
			name:   providerconfig.ControllerName(v1alpha1.ProviderConfigKind),
			of:     resource.ProviderConfigKinds{Config: v1alpha1.ProviderConfigGroupVersionKind, Usage: v1alpha1.ProviderConfigUsageGroupVersionKind, UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind},
			object: &v1alpha1.ProviderConfig{},
			kind:   v1alpha1.ProviderConfigKind,
		},
		{
			// Usages of cluster configs are namespaced ProviderConfigUsages
			// too: the tracker writes them next to the managed resource.
			name:   providerconfig.ControllerName(v1alpha1.ClusterProviderConfigKind),
			of:     resource.ProviderConfigKinds{Config: v1alpha1.ClusterProviderConfigGroupVersionKind, Usage: v1alpha1.ProviderConfigUsageGroupVersionKind, UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind},
			object: &v1alpha1.ClusterProviderConfig{},
			kind:   v1alpha1.ClusterProviderConfigKind,
		},
	} {
		r := providerconfig.NewReconciler(mgr, k.of,
			providerconfig.WithLogger(o.Logger.WithValues("controller", k.name)),
			providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(k.name)))) //nolint:staticcheck // crossplane-runtime's recorder takes this type
		err := ctrl.NewControllerManagedBy(mgr).
			Named(k.name).
			WithOptions(o.ForControllerRuntime()).
			For(k.object).
			Watches(&v1alpha1.ProviderConfigUsage{}, &resource.EnqueueRequestForProviderConfig{Kind: k.kind}).
			Complete(ratelimiter.NewReconciler(k.name, r, o.GlobalRateLimiter))
		if err != nil {
			return err
		}
	}
	return nil
}
