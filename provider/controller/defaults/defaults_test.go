package defaults

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/kusto/discovery"
)

type fakeIMDS struct {
	in    discovery.Instance
	err   error
	calls int
}

func (f *fakeIMDS) Instance(context.Context) (discovery.Instance, error) {
	f.calls++
	return f.in, f.err
}

type onePage struct {
	descs []*armkusto.SKUDescription
	done  bool
}

func (p *onePage) More() bool { return !p.done }
func (p *onePage) NextPage(context.Context) (armkusto.ClustersClientListSKUsResponse, error) {
	p.done = true
	return armkusto.ClustersClientListSKUsResponse{SKUDescriptionList: armkusto.SKUDescriptionList{Value: p.descs}}, nil
}

type fakeSKUs []*armkusto.SKUDescription

func (f fakeSKUs) NewListSKUsPager(*armkusto.ClustersClientListSKUsOptions) discovery.PagerOf {
	return &onePage{descs: f}
}

func sku(name, location string) *armkusto.SKUDescription {
	return &armkusto.SKUDescription{Name: new(name), Tier: new("Standard"), ResourceType: new("clusters"), Locations: []*string{new(location)}}
}

var vm = discovery.Instance{SubscriptionID: "44444444-4444-4444-4444-444444444444", ResourceGroup: "observability", Location: "westeurope"}

func TestObserve(t *testing.T) {
	allowed := &tenancy.Grant{Kind: "ClusterProviderConfig", Name: "default", Azure: fpv1alpha1.AzurePolicy{
		AllowDiscovery: true, Provisioning: []fpv1alpha1.AzureProvisioning{{SubscriptionID: vm.SubscriptionID, ResourceGroups: []string{"*"}}},
	}}
	cases := map[string]struct {
		grant   *tenancy.Grant
		imds    *fakeIMDS
		skus    fakeSKUs
		params  v1alpha1.ProvisioningDefaultsParameters
		want    v1alpha1.ProvisioningDefaultsObservation
		ready   corev1.ConditionStatus
		message string
	}{
		"all found": {
			grant: allowed, imds: &fakeIMDS{in: vm}, skus: fakeSKUs{sku("Standard_L8as_v3", "westeurope")},
			want:  v1alpha1.ProvisioningDefaultsObservation{SubscriptionID: vm.SubscriptionID, ResourceGroup: "observability", Location: "westeurope", SkuName: "Standard_L8as_v3", Tier: "Standard"},
			ready: corev1.ConditionTrue,
		},
		"SKU unavailable: the next preference": {
			grant: allowed, imds: &fakeIMDS{in: vm}, skus: fakeSKUs{sku("Standard_L8as_v3", "eastus"), sku("Standard_L16as_v3", "westeurope")},
			want:  v1alpha1.ProvisioningDefaultsObservation{SubscriptionID: vm.SubscriptionID, ResourceGroup: "observability", Location: "westeurope", SkuName: "Standard_L16as_v3", Tier: "Standard"},
			ready: corev1.ConditionTrue,
		},
		"nothing available": {
			grant: allowed, imds: &fakeIMDS{in: vm}, skus: fakeSKUs{sku("Standard_L8as_v3", "eastus")},
			ready: corev1.ConditionFalse, message: "Azure offers no Standard Kusto SKU in westeurope; give skuName in spec.provision",
		},
		"IMDS unreachable": {
			grant: allowed, imds: &fakeIMDS{err: errors.New("cannot reach Azure's instance metadata service at http://169.254.169.254")},
			ready: corev1.ConditionFalse, message: "instance metadata service",
		},
		"discovery not allowed": {
			grant: &tenancy.Grant{Kind: "ProviderConfig", Name: "team-a/azure"}, imds: &fakeIMDS{in: vm},
			ready: corev1.ConditionFalse, message: "ProviderConfig team-a/azure does not allow discovery",
		},
		"SKU list with the provider's identity needs the admin's leave": {
			grant: &tenancy.Grant{Kind: "ClusterProviderConfig", Name: "shared"}, imds: &fakeIMDS{err: errors.New("must not be asked")},
			skus:   fakeSKUs{sku("Standard_L8as_v3", "westeurope")},
			params: v1alpha1.ProvisioningDefaultsParameters{SubscriptionID: vm.SubscriptionID, ResourceGroup: "rg", Location: "westeurope"},
			ready:  corev1.ConditionFalse, message: "ClusterProviderConfig shared does not allow discovery",
		},
		"SKU list in a subscription the config grants nothing in": {
			grant: allowed, imds: &fakeIMDS{err: errors.New("must not be asked")},
			skus:   fakeSKUs{sku("Standard_L8as_v3", "westeurope")},
			params: v1alpha1.ProvisioningDefaultsParameters{SubscriptionID: "55555555-5555-5555-5555-555555555555", ResourceGroup: "rg", Location: "westeurope"},
			ready:  corev1.ConditionFalse, message: "ClusterProviderConfig default grants no provisioning in subscription 55555555-5555-5555-5555-555555555555 (spec.azure.provisioning)",
		},
		"SKU list with a tenant's own credentials": {
			grant: &tenancy.Grant{Kind: "ProviderConfig", Name: "team-a/azure"}, imds: &fakeIMDS{err: errors.New("must not be asked")},
			skus:   fakeSKUs{sku("Standard_L8as_v3", "westeurope")},
			params: v1alpha1.ProvisioningDefaultsParameters{SubscriptionID: vm.SubscriptionID, ResourceGroup: "rg", Location: "westeurope"},
			want:   v1alpha1.ProvisioningDefaultsObservation{SubscriptionID: vm.SubscriptionID, ResourceGroup: "rg", Location: "westeurope", SkuName: "Standard_L8as_v3", Tier: "Standard"},
			ready:  corev1.ConditionTrue,
		},
		"all given: no IMDS, no SKU list": {
			grant: &tenancy.Grant{Kind: "ProviderConfig", Name: "team-a/azure"}, imds: &fakeIMDS{err: errors.New("must not be asked")},
			params: v1alpha1.ProvisioningDefaultsParameters{SubscriptionID: vm.SubscriptionID, ResourceGroup: "rg", Location: "northeurope", SkuName: "Dev(No SLA)_Standard_E2a_v4"},
			want:   v1alpha1.ProvisioningDefaultsObservation{SubscriptionID: vm.SubscriptionID, ResourceGroup: "rg", Location: "northeurope", SkuName: "Dev(No SLA)_Standard_E2a_v4", Tier: "Basic"},
			ready:  corev1.ConditionTrue,
		},
		"AKS node: the cluster's group, never the node group": {
			grant: allowed, imds: &fakeIMDS{in: discovery.Instance{SubscriptionID: vm.SubscriptionID, ResourceGroup: "MC_platform-rg_platform_westeurope", Location: "westeurope"}},
			skus:  fakeSKUs{sku("Standard_L8as_v3", "westeurope")},
			want:  v1alpha1.ProvisioningDefaultsObservation{SubscriptionID: vm.SubscriptionID, ResourceGroup: "platform-rg", Location: "westeurope", SkuName: "Standard_L8as_v3", Tier: "Standard", AKSClusterName: "platform"},
			ready: corev1.ConditionTrue,
		},
	}
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := &external{grant: tc.grant, imds: tc.imds, refresh: time.Hour, now: func() time.Time { return now },
				skus: func(string) (discovery.SKULister, error) { return tc.skus, nil }}
			mg := &v1alpha1.ProvisioningDefaults{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: v1alpha1.ProvisioningDefaultsSpec{ForProvider: tc.params}}
			obs, err := e.Observe(context.Background(), mg)
			if err != nil || !obs.ResourceExists || !obs.ResourceUpToDate {
				t.Fatalf("Observe = %+v, %v: it only observes, and always succeeds", obs, err)
			}
			c := mg.GetCondition(xpv2.TypeReady)
			if c.Status != tc.ready || !strings.Contains(c.Message, tc.message) {
				t.Errorf("Ready = %s %q, want %s containing %q", c.Status, c.Message, tc.ready, tc.message)
			}
			got := mg.Status.AtProvider
			if tc.ready == corev1.ConditionTrue && (got.SubscriptionID != tc.want.SubscriptionID || got.ResourceGroup != tc.want.ResourceGroup || got.Location != tc.want.Location ||
				got.SkuName != tc.want.SkuName || got.Tier != tc.want.Tier || got.AKSClusterName != tc.want.AKSClusterName) {
				t.Errorf("atProvider = %+v, want %+v", got, tc.want)
			}
			if got.ObservedGeneration != 2 || got.LastDiscoveryTime == nil || len(got.Sources) == 0 && tc.ready == corev1.ConditionTrue {
				t.Errorf("atProvider lacks generation, time or sources: %+v", got)
			}

			// Found values stand for the refresh period; failures are
			// retried at every poll.
			calls := tc.imds.calls
			now = now.Add(time.Minute)
			_, _ = e.Observe(context.Background(), mg)
			if asked := tc.imds.calls > calls; asked != (tc.ready != corev1.ConditionTrue && calls > 0) {
				t.Errorf("asked IMDS again a minute later: %v", asked)
			}
		})
	}
}
