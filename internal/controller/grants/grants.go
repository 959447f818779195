// Package grants is what every provider-fleetplane controller does before
// it acts for a managed resource: record that the resource uses its
// ProviderConfig (so the config cannot be deleted from under it), and
// resolve what that config grants the resource's namespace (package
// tenancy says what that is).
package grants

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// Connector tracks usage and resolves grants.
type Connector struct {
	usage *resource.ProviderConfigUsageTracker
	kube  client.Reader
}

// NewConnector returns a Connector writing usages and reading configs with
// kube.
func NewConnector(kube client.Client) *Connector {
	return &Connector{usage: resource.NewProviderConfigUsageTracker(kube, &v1alpha1.ProviderConfigUsage{}), kube: kube}
}

// Connect tracks mg's ProviderConfig usage and resolves its grant.
func (c *Connector) Connect(ctx context.Context, mg resource.ModernManaged) (*tenancy.Grant, error) {
	if err := c.usage.Track(ctx, mg); err != nil {
		return nil, fmt.Errorf("cannot track ProviderConfig usage: %w", err)
	}
	return tenancy.Resolve(ctx, c.kube, mg)
}
