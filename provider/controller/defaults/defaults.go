// Package defaults reconciles ProvisioningDefaults: an observe-only
// managed resource that discovers where an ADX cluster can be provisioned
// (package discovery) and reports it in atProvider for the function to
// compose with. It never creates, changes or deletes anything.
package defaults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/kusto/discovery"
)

// Config says where Azure's services are; tests point them at loopback.
type Config struct {
	// IMDSEndpoint is the instance metadata service.
	IMDSEndpoint string
	// ResourceManagerEndpoint is Azure Resource Manager.
	ResourceManagerEndpoint string
	// Refresh is how long found values stand before IMDS and Azure are
	// asked again; what failed is asked again at every poll.
	Refresh time.Duration
}

// DefaultRefresh is how long found values stand: a region's SKUs and the
// machine's placement change rarely, and every cluster provisioned from
// them keeps what it was created with anyway.
const DefaultRefresh = time.Hour

// Setup adds the ProvisioningDefaults controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, c *shared.KustoConnector, cfg Config) error {
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultRefresh
	}
	return shared.Managed(mgr, o, v1alpha1.ProvisioningDefaultsGroupVersionKind, &v1alpha1.ProvisioningDefaults{}, &connector{c: c, cfg: cfg}, shared.Options{})
}

type connector struct {
	c   *shared.KustoConnector
	cfg Config
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.ProvisioningDefaults) (managed.TypedExternalClient[*v1alpha1.ProvisioningDefaults], error) {
	s, err := c.c.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	return &external{
		grant: s.Grant(),
		imds:  discovery.IMDS{Endpoint: c.cfg.IMDSEndpoint},
		skus: func(subscriptionID string) (discovery.SKULister, error) {
			return c.armClusters(subscriptionID, s)
		},
		refresh: c.cfg.Refresh,
		now:     time.Now,
	}, nil
}

// armClusters opens armkusto's clusters client with the config's
// credentials.
func (c *connector) armClusters(subscriptionID string, s *shared.Session) (discovery.SKULister, error) {
	cred, opts, err := s.ARM(c.cfg.ResourceManagerEndpoint)
	if err != nil {
		return nil, err
	}
	cl, err := armkusto.NewClustersClient(subscriptionID, cred, opts)
	if err != nil {
		return nil, err
	}
	return discovery.Clusters{Client: cl}, nil
}

// instanceReader is what discovery needs of IMDS.
type instanceReader interface {
	Instance(ctx context.Context) (discovery.Instance, error)
}

type external struct {
	grant   *tenancy.Grant
	imds    instanceReader
	skus    func(subscriptionID string) (discovery.SKULister, error)
	refresh time.Duration
	now     func() time.Time
}

// fresh reports whether what was found still stands.
func (e *external) fresh(mg *v1alpha1.ProvisioningDefaults) bool {
	ap := mg.Status.AtProvider
	return mg.GetCondition(xpv2.TypeReady).Status == "True" &&
		ap.ObservedGeneration == mg.GetGeneration() &&
		ap.LastDiscoveryTime != nil && e.now().Sub(ap.LastDiscoveryTime.Time) < e.refresh
}

// Observe discovers; the resource always "exists" and is up to date, as
// there is nothing to create or change.
func (e *external) Observe(ctx context.Context, mg *v1alpha1.ProvisioningDefaults) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Nothing was made, so nothing is left to delete.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if !e.fresh(mg) {
		found, err := e.discover(ctx, mg.Spec.ForProvider)
		found.ObservedGeneration = mg.GetGeneration()
		found.LastDiscoveryTime = &metav1.Time{Time: e.now()}
		mg.Status.AtProvider = found
		if err != nil {
			mg.SetConditions(xpv2.Unavailable().WithMessage(observe.Bound(err.Error())))
		} else {
			mg.SetConditions(xpv2.Available())
		}
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// discover fills in what p leaves out, and says where each value came
// from. What it found before an error is kept, so that status shows how
// far it got.
func (e *external) discover(ctx context.Context, p v1alpha1.ProvisioningDefaultsParameters) (v1alpha1.ProvisioningDefaultsObservation, error) {
	o := v1alpha1.ProvisioningDefaultsObservation{SubscriptionID: p.SubscriptionID, ResourceGroup: p.ResourceGroup, Location: p.Location, SkuName: p.SkuName}
	given := func(field, v string) {
		if v != "" {
			o.Sources = append(o.Sources, field+": given")
		}
	}
	given("subscriptionId", p.SubscriptionID)
	given("resourceGroup", p.ResourceGroup)
	given("location", p.Location)
	given("skuName", p.SkuName)

	if p.SubscriptionID == "" || p.ResourceGroup == "" || p.Location == "" {
		if !e.grant.Azure.AllowDiscovery {
			return o, fmt.Errorf("%s does not allow discovery (spec.azure.allowDiscovery), so the subscription, resource group and location provider-fleetplane runs in are not read; give them in spec.provision, or ask the cluster admin to allow discovery", e.grant)
		}
		in, err := e.imds.Instance(ctx)
		if err != nil {
			return o, fmt.Errorf("%w; give subscriptionId, resourceGroup and location in spec.provision instead", err)
		}
		aks := discovery.AKSOf(in)
		o.AKSClusterName = aks.ClusterName
		if o.SubscriptionID == "" {
			o.SubscriptionID = in.SubscriptionID
			o.Sources = append(o.Sources, "subscriptionId: IMDS")
		}
		if o.Location == "" {
			o.Location = in.Location
			o.Sources = append(o.Sources, "location: IMDS")
		}
		if o.ResourceGroup == "" {
			switch {
			case !aks.OnAKS:
				o.ResourceGroup = in.ResourceGroup
				o.Sources = append(o.Sources, "resourceGroup: IMDS")
			case aks.ResourceGroup != "":
				o.ResourceGroup = aks.ResourceGroup
				o.Sources = append(o.Sources, "resourceGroup: IMDS, the resource group of AKS cluster "+aks.ClusterName)
			default:
				return o, fmt.Errorf("provider-fleetplane runs on an AKS node (node resource group %s, which AKS owns and deletes with the cluster), and which resource group holds the AKS cluster cannot be told; give resourceGroup in spec.provision", in.ResourceGroup)
			}
		}
	}
	if p.SkuName == "" {
		// A ClusterProviderConfig lends the provider's identity: listing
		// with it in whatever subscription a tenant names is discovery
		// too. A namespaced ProviderConfig lists with the tenant's own.
		if e.grant.Kind == fpv1alpha1.ClusterProviderConfigKind && !e.grant.Azure.AllowDiscovery {
			return o, fmt.Errorf("%s does not allow discovery (spec.azure.allowDiscovery), so the Kusto SKUs of subscription %s are not listed with its identity; give skuName in spec.provision, or ask the cluster admin to allow discovery", e.grant, o.SubscriptionID)
		}
		if e.grant.Kind == fpv1alpha1.ClusterProviderConfigKind && !slices.ContainsFunc(e.grant.Azure.Provisioning, func(p fpv1alpha1.AzureProvisioning) bool {
			return strings.EqualFold(p.SubscriptionID, o.SubscriptionID)
		}) {
			return o, fmt.Errorf("%s grants no provisioning in subscription %s (spec.azure.provisioning), so its Kusto SKUs are not listed with its identity; give skuName in spec.provision, or ask the cluster admin to grant the subscription", e.grant, o.SubscriptionID)
		}
		l, err := e.skus(o.SubscriptionID)
		if err != nil {
			return o, err
		}
		offered, err := discovery.Offered(ctx, l, o.Location)
		if err != nil {
			return o, fmt.Errorf("%w; give skuName in spec.provision, or check that %s may read Microsoft.Kusto in subscription %s", err, e.grant, o.SubscriptionID)
		}
		for _, s := range offered {
			o.OfferedSkus = append(o.OfferedSkus, s.Name)
		}
		sku, why, ok := discovery.Choose(offered, p.PreferredSkus, o.Location)
		if !ok {
			return o, fmt.Errorf("%s; give skuName in spec.provision, or choose another location", why)
		}
		o.SkuName = sku.Name
		o.Sources = append(o.Sources, "skuName: "+why)
	}
	o.Tier = "Standard"
	if strings.HasPrefix(o.SkuName, "Dev(No SLA)") {
		o.Tier = "Basic"
	}
	return o, nil
}

// Create, Update and Delete do nothing: discovery only observes.
func (e *external) Create(context.Context, *v1alpha1.ProvisioningDefaults) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(context.Context, *v1alpha1.ProvisioningDefaults) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(context.Context, *v1alpha1.ProvisioningDefaults) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
