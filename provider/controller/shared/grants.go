package shared

// Grants: before a controller acts for a managed resource it records that
// the resource uses its ProviderConfig (so the config cannot be deleted
// from under it) and resolves what that config grants the resource's
// namespace (package tenancy says what that is).

import (
	"context"
	"errors"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// Grants tracks usage and resolves grants.
type Grants struct {
	usage *resource.ProviderConfigUsageTracker
	kube  client.Reader
}

// NewGrants returns a Grants writing usages and reading configs with
// kube.
func NewGrants(kube client.Client) *Grants {
	return &Grants{usage: resource.NewProviderConfigUsageTracker(kube, &v1alpha1.ProviderConfigUsage{}), kube: kube}
}

// Connect tracks mg's ProviderConfig usage and resolves its grant.
func (c *Grants) Connect(ctx context.Context, mg resource.ModernManaged) (*tenancy.Grant, error) {
	if err := c.usage.Track(ctx, mg); err != nil {
		return nil, fmt.Errorf("cannot track ProviderConfig usage: %w", err)
	}
	return Resolve(ctx, c.kube, mg)
}

// Resolve reads and checks the ProviderConfig mg names.
func Resolve(ctx context.Context, kube client.Reader, mg resource.ModernManaged) (*tenancy.Grant, error) {
	ref := mg.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return nil, errors.New("the managed resource names no ProviderConfig (spec.providerConfigRef)")
	}
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
			return nil, fmt.Errorf("cannot get ProviderConfig %s/%s: %w", mg.GetNamespace(), ref.Name, err)
		}
		return tenancy.FromProviderConfig(pc)
	case v1alpha1.ClusterProviderConfigKind:
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return nil, fmt.Errorf("cannot get ClusterProviderConfig %s: %w", ref.Name, err)
		}
		ns := &corev1.Namespace{}
		if err := kube.Get(ctx, types.NamespacedName{Name: mg.GetNamespace()}, ns); err != nil {
			return nil, fmt.Errorf("cannot get namespace %s to check ClusterProviderConfig %s's namespaceSelector: %w", mg.GetNamespace(), pc.Name, err)
		}
		return tenancy.FromClusterProviderConfig(pc, ns.Name, ns.Labels)
	}
	return nil, fmt.Errorf("providerConfigRef.kind %q is neither %s nor %s", ref.Kind, v1alpha1.ProviderConfigKind, v1alpha1.ClusterProviderConfigKind)
}
