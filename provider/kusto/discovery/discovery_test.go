package discovery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2/fake"
)

// StandInIMDS answers as IMDS does, with doc as the compute document.
func standInIMDS(t *testing.T, doc string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata") != "true" || r.URL.Path != "/metadata/instance/compute" || r.URL.Query().Get("api-version") == "" {
			http.Error(w, `{"error":"Bad request"}`, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(doc))
	}))
	t.Cleanup(s.Close)
	return s.URL
}

const aksNode = `{"subscriptionId":"44444444-4444-4444-4444-444444444444","resourceGroupName":"MC_platform-rg_platform_westeurope","location":"westeurope","name":"aks-system-12345678-vmss000000",
 "tagsList":[{"name":"aks-managed-cluster-name","value":"platform"},{"name":"aks-managed-cluster-rg","value":"platform-rg"}]}`

func TestIMDS(t *testing.T) {
	in, err := IMDS{Endpoint: standInIMDS(t, aksNode)}.Instance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if in.SubscriptionID != "44444444-4444-4444-4444-444444444444" || in.Location != "westeurope" || in.Tags["aks-managed-cluster-name"] != "platform" {
		t.Errorf("instance = %+v", in)
	}
	for name, doc := range map[string]string{
		"no subscription":  `{"resourceGroupName":"rg","location":"westeurope"}`,
		"bad group":        `{"subscriptionId":"44444444-4444-4444-4444-444444444444","resourceGroupName":"a/b","location":"westeurope"}`,
		"not JSON":         `<html>captive portal</html>`,
		"location garbage": `{"subscriptionId":"44444444-4444-4444-4444-444444444444","resourceGroupName":"rg","location":"west'; drop"}`,
	} {
		if _, err := (IMDS{Endpoint: standInIMDS(t, doc)}).Instance(context.Background()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_, err = IMDS{Endpoint: "http://127.0.0.1:1"}.Instance(context.Background())
	if err == nil || !strings.Contains(err.Error(), "is provider-fleetplane running in Azure?") {
		t.Errorf("unreachable IMDS: %v", err)
	}
}

func TestAKSOf(t *testing.T) {
	cases := map[string]struct {
		in   Instance
		want AKS
	}{
		"tags":                   {Instance{ResourceGroup: "MC_x_y_westeurope", Location: "westeurope", Tags: map[string]string{"aks-managed-cluster-name": "platform", "aks-managed-cluster-rg": "platform-rg"}}, AKS{true, "platform", "platform-rg"}},
		"node group name":        {Instance{ResourceGroup: "MC_platform-rg_platform_westeurope", Location: "westeurope"}, AKS{true, "platform", "platform-rg"}},
		"ambiguous name":         {Instance{ResourceGroup: "MC_a_b_c_westeurope", Location: "westeurope"}, AKS{OnAKS: true}},
		"a VM, not AKS":          {Instance{ResourceGroup: "observability", Location: "westeurope"}, AKS{}},
		"MC_ of another region":  {Instance{ResourceGroup: "MC_a_b_eastus", Location: "westeurope"}, AKS{}},
		"tag values out of rule": {Instance{Tags: map[string]string{"aks-managed-cluster-name": "bad name", "aks-managed-cluster-rg": "a/b"}}, AKS{OnAKS: true}},
	}
	for name, tc := range cases {
		if got := AKSOf(tc.in); got != tc.want {
			t.Errorf("%s: AKSOf = %+v, want %+v", name, got, tc.want)
		}
	}
}

// skus is an armkusto client on armkusto's fake server, listing descs.
func skus(t *testing.T, descs ...*armkusto.SKUDescription) SKULister {
	t.Helper()
	srv := fake.ClustersServer{NewListSKUsPager: func(*armkusto.ClustersClientListSKUsOptions) (resp azfake.PagerResponder[armkusto.ClustersClientListSKUsResponse]) {
		// One page: Azure's SKU list has no next link.
		resp.AddPage(http.StatusOK, armkusto.ClustersClientListSKUsResponse{SKUDescriptionList: armkusto.SKUDescriptionList{Value: descs}}, nil)
		return resp
	}}
	c, err := armkusto.NewClustersClient("44444444-4444-4444-4444-444444444444", &azfake.TokenCredential{}, &arm.ClientOptions{ClientOptions: policy.ClientOptions{Transport: fake.NewClustersServerTransport(&srv)}})
	if err != nil {
		t.Fatal(err)
	}
	return Clusters{Client: c}
}

func sku(name, tier string, locations ...string) *armkusto.SKUDescription {
	d := &armkusto.SKUDescription{Name: new(name), Tier: new(tier), ResourceType: new("clusters")}
	for _, l := range locations {
		d.Locations = append(d.Locations, new(l))
	}
	return d
}

func TestOfferedAndChoose(t *testing.T) {
	restricted := sku("Standard_L8as_v3", "Standard", "westeurope")
	restricted.Restrictions = []any{map[string]any{"type": "Location", "values": []any{"westeurope"}, "reasonCode": "NotAvailableForSubscription"}}
	pool := sku("Standard_L8as_v3", "Standard", "westeurope")
	pool.ResourceType = new("pools")
	cases := map[string]struct {
		descs    []*armkusto.SKUDescription
		want     string
		whyParts []string
		ok       bool
	}{
		"first preference offered": {[]*armkusto.SKUDescription{sku("Standard_E8ads_v5", "Standard", "westeurope"), sku("Standard_L8as_v3", "Standard", "West Europe"), sku("Standard_L16as_v3", "Standard", "westeurope")},
			"Standard_L8as_v3", []string{"Standard_L8as_v3 is offered in westeurope"}, true},
		"first preference unavailable: the next": {[]*armkusto.SKUDescription{sku("Standard_L8as_v3", "Standard", "eastus"), sku("Standard_L16as_v3", "Standard", "westeurope")},
			"Standard_L16as_v3", []string{"Standard_L8as_v3 not offered in westeurope", "Standard_L16as_v3 is offered"}, true},
		"restricted for the subscription: the next": {[]*armkusto.SKUDescription{restricted, sku("Standard_L32as_v3", "Standard", "westeurope")},
			"Standard_L32as_v3", []string{"Standard_L8as_v3, Standard_L16as_v3 not offered"}, true},
		"no preference: first Standard": {[]*armkusto.SKUDescription{sku("Dev(No SLA)_Standard_E2a_v4", "Basic", "westeurope"), sku("Standard_E8ads_v5", "Standard", "westeurope"), pool},
			"Standard_E8ads_v5", []string{"none of Standard_L8as_v3, Standard_L16as_v3, Standard_L32as_v3 is offered", "first Standard SKU"}, true},
		"nothing available": {[]*armkusto.SKUDescription{sku("Standard_L8as_v3", "Standard", "eastus"), sku("Dev(No SLA)_Standard_E2a_v4", "Basic", "westeurope")},
			"", []string{"Azure offers no Standard Kusto SKU in westeurope"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			offered, err := Offered(context.Background(), skus(t, tc.descs...), "westeurope")
			if err != nil {
				t.Fatal(err)
			}
			got, why, ok := Choose(offered, nil, "westeurope")
			if got.Name != tc.want || ok != tc.ok {
				t.Errorf("Choose = %q, %v; want %q, %v (offered %v)", got.Name, ok, tc.want, tc.ok, offered)
			}
			for _, p := range tc.whyParts {
				if !strings.Contains(why, p) {
					t.Errorf("why %q lacks %q", why, p)
				}
			}
		})
	}
}

func TestOfferedFails(t *testing.T) {
	srv := fake.ClustersServer{NewListSKUsPager: func(*armkusto.ClustersClientListSKUsOptions) (resp azfake.PagerResponder[armkusto.ClustersClientListSKUsResponse]) {
		resp.AddResponseError(http.StatusForbidden, "AuthorizationFailed")
		return resp
	}}
	c, _ := armkusto.NewClustersClient("44444444-4444-4444-4444-444444444444", &azfake.TokenCredential{}, &arm.ClientOptions{ClientOptions: policy.ClientOptions{Transport: fake.NewClustersServerTransport(&srv)}})
	if _, err := Offered(context.Background(), Clusters{Client: c}, "westeurope"); err == nil || !strings.Contains(err.Error(), "AuthorizationFailed") {
		t.Errorf("Offered = %v, want Azure's refusal", err)
	}
}
