package standin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
)

// AzureAPI plays the two Azure services ProvisioningDefaults asks, on one
// loopback server: the instance metadata service (GET
// /metadata/instance/compute with the Metadata header, as IMDS demands)
// and Azure Resource Manager's Kusto SKU list (GET
// /subscriptions/{id}/providers/Microsoft.Kusto/skus with an api-version),
// answering in the shapes the real services and armkusto use.
type AzureAPI struct {
	URL string

	srv *httptest.Server
	mu  sync.Mutex
	// Instance is IMDS's compute document.
	instance map[string]any
	// skus lists, per subscription, what the SKU list returns.
	skus map[string][]map[string]any
}

var skuPath = regexp.MustCompile(`^/subscriptions/([0-9a-f-]{36})/providers/Microsoft\.Kusto/skus$`)

// NewAzureAPI starts the stand-in; Close stops it.
func NewAzureAPI() *AzureAPI {
	a := &AzureAPI{skus: map[string][]map[string]any{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.srv.URL
	return a
}

// Close stops the server.
func (a *AzureAPI) Close() { a.srv.Close() }

// SetInstance makes IMDS describe a VM of subscription, resource group
// and location, with tags (AKS tags its nodes).
func (a *AzureAPI) SetInstance(subscription, resourceGroup, location, name string, tags map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var list []map[string]string
	for k, v := range tags {
		list = append(list, map[string]string{"name": k, "value": v})
	}
	a.instance = map[string]any{"subscriptionId": subscription, "resourceGroupName": resourceGroup, "location": location, "name": name, "tagsList": list, "vmSize": "Standard_D4s_v5"}
}

// OfferSKU makes the SKU list of subscription offer a cluster SKU in
// locations.
func (a *AzureAPI) OfferSKU(subscription, name, tier string, locations ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	info := []map[string]any{}
	for _, l := range locations {
		info = append(info, map[string]any{"location": l, "zones": []string{"1", "2", "3"}})
	}
	a.skus[subscription] = append(a.skus[subscription], map[string]any{
		"name": name, "tier": tier, "resourceType": "clusters", "locations": locations, "locationInfo": info, "restrictions": []any{},
	})
}

func (a *AzureAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/metadata/instance/compute":
		if r.Header.Get("Metadata") != "true" || r.URL.Query().Get("api-version") == "" || a.instance == nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Bad request. Required metadata header not specified"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(a.instance)
	case skuPath.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		if r.URL.Query().Get("api-version") == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"MissingApiVersionParameter","message":"The api-version query parameter (?api-version=) is required for all requests."}}`))
			return
		}
		sub := skuPath.FindStringSubmatch(r.URL.Path)[1]
		value := a.skus[sub]
		if value == nil {
			value = []map[string]any{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"value": value})
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"NotFound","message":"no such resource"}}`))
	}
}
