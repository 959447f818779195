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
	kerrors "k8s.io/apimachinery/pkg/api/errors"
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

// Resolve reads and checks the ProviderConfig mg names, against the
// ClusterProviderConfig that governs mg's namespace, chosen as the
// function chooses it for the namespace's XRs (tenancy.Governing): a
// managed resource naming a ClusterProviderConfig gets it only when it
// is that one; one naming a ProviderConfig of its namespace gets those
// credentials, and the Kusto endpoints the governing config grants.
func Resolve(ctx context.Context, kube client.Reader, mg resource.ModernManaged) (*tenancy.Grant, error) {
	ref := mg.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return nil, errors.New("the managed resource names no ProviderConfig (spec.providerConfigRef)")
	}
	if ref.Kind != v1alpha1.ProviderConfigKind && ref.Kind != v1alpha1.ClusterProviderConfigKind {
		return nil, fmt.Errorf("providerConfigRef.kind %q is neither %s nor %s", ref.Kind, v1alpha1.ProviderConfigKind, v1alpha1.ClusterProviderConfigKind)
	}
	ns := &corev1.Namespace{}
	if err := kube.Get(ctx, types.NamespacedName{Name: mg.GetNamespace()}, ns); err != nil {
		return nil, fmt.Errorf("cannot get namespace %s to find the ClusterProviderConfig that governs it: %w", mg.GetNamespace(), err)
	}
	governing, gerr := Governing(ctx, kube, ns)
	if ref.Kind == v1alpha1.ProviderConfigKind {
		pc := &v1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
			return nil, fmt.Errorf("cannot get ProviderConfig %s/%s: %w", mg.GetNamespace(), ref.Name, err)
		}
		g, err := tenancy.FromProviderConfig(pc)
		if err != nil {
			return nil, err
		}
		// The tenant's own credentials, from the provider's pod: they
		// reach only the endpoints the admin grants the namespace, and
		// none when nothing governs it.
		if gerr == nil {
			g.Kusto = governing.Kusto
		}
		return g, nil
	}
	if gerr != nil {
		return nil, gerr
	}
	if ref.Name != governing.Name {
		return nil, fmt.Errorf("namespace %s is governed by ClusterProviderConfig %s, not by %s, which this resource names: a namespace's managed resources use the config that governs it (label %s, else %s), as its XRs do",
			ns.Name, governing.Name, ref.Name, tenancy.PolicyLabel, tenancy.DefaultConfigName)
	}
	return governing, nil
}

// Governing is what the ClusterProviderConfig that governs ns grants it,
// or an error saying why it grants nothing.
func Governing(ctx context.Context, kube client.Reader, ns *corev1.Namespace) (*tenancy.Grant, error) {
	name, which, err := tenancy.Governing(ns.Labels)
	if err != nil {
		return nil, fmt.Errorf("namespace %s is granted nothing: %w", ns.Name, err)
	}
	pc := &v1alpha1.ClusterProviderConfig{}
	if err := kube.Get(ctx, types.NamespacedName{Name: name}, pc); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, fmt.Errorf("namespace %s is granted nothing: it is governed by %s, which does not exist", ns.Name, which)
		}
		return nil, fmt.Errorf("cannot get %s, which governs namespace %s: %w", which, ns.Name, err)
	}
	return tenancy.FromClusterProviderConfig(pc, ns.Name, ns.Labels)
}
