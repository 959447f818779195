package standin

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"
)

// AzureAPI plays the Azure services provider-fleetplane asks, on one
// loopback server, answering in the shapes the real services and the
// Azure SDK's clients use:
//   - the instance metadata service: GET /metadata/instance/compute with
//     the Metadata header, as IMDS demands;
//   - Azure Resource Manager's Kusto SKU list: GET
//     /subscriptions/{id}/providers/Microsoft.Kusto/skus;
//   - a Kusto cluster: GET .../providers/Microsoft.Kusto/clusters/{name},
//     its SKU capacity from ServeClusters (the Azure stand-in's);
//   - Azure Monitor's metrics of a resource: GET
//     {resourceUri}/providers/Microsoft.Insights/metrics with metricnames,
//     aggregation and timespan, as armmonitor's MetricsClient sends them.
//
// Every ARM request needs an api-version, as ARM's does.
type AzureAPI struct {
	URL string

	srv *httptest.Server
	mu  sync.Mutex
	// Instance is IMDS's compute document.
	instance map[string]any
	// skus lists, per subscription, what the SKU list returns.
	skus map[string][]map[string]any
	// metrics holds, per lower-case resource ID and metric name, the
	// metric's current value; absent, Azure Monitor has no data points.
	metrics map[string]map[string]float64
	// failing metrics answer with an error code.
	failing map[string]string
	// capacity reports a cluster's instance count, false when Azure has
	// no such cluster. Nil: no clusters.
	capacity func(name string) (int32, bool)
}

// ServeClusters makes capacity the source of the clusters' GET: a
// cluster's instance count, false when Azure has no such cluster.
func (a *AzureAPI) ServeClusters(capacity func(name string) (int32, bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.capacity = capacity
}

var (
	skuPath     = regexp.MustCompile(`^/subscriptions/([0-9a-f-]{36})/providers/Microsoft\.Kusto/skus$`)
	clusterPath = regexp.MustCompile(`^/subscriptions/([0-9a-f-]{36})/resourceGroups/([-\w._()]+)/providers/Microsoft\.Kusto/clusters/([a-z][a-z0-9]{3,21})$`)
	metricsPath = regexp.MustCompile(`^(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/[^/]+/[^/]+/[^/]+)/providers/Microsoft\.Insights/metrics$`)
)

// SetMetric makes Azure Monitor report value, as of a minute ago, for the
// metric of the Kusto cluster named by subscription, resource group and
// name.
func (a *AzureAPI) SetMetric(subscription, resourceGroup, cluster, metric string, value float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := clusterID(subscription, resourceGroup, cluster)
	if a.metrics[id] == nil {
		a.metrics[id] = map[string]float64{}
	}
	a.metrics[id][metric] = value
	delete(a.failing, id+"/"+metric)
}

// FailMetric makes Azure Monitor answer a request for the metric with an
// error, as it does for a metric the resource does not have.
func (a *AzureAPI) FailMetric(subscription, resourceGroup, cluster, metric string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failing[clusterID(subscription, resourceGroup, cluster)+"/"+metric] = "BadRequest"
}

func clusterID(subscription, resourceGroup, cluster string) string {
	return strings.ToLower("/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup + "/providers/Microsoft.Kusto/clusters/" + cluster)
}

// NewAzureAPI starts the stand-in; Close stops it.
func NewAzureAPI() *AzureAPI {
	a, err := NewAzureAPIOn("127.0.0.1")
	if err != nil {
		panic(err) // as httptest.NewServer does
	}
	return a
}

// NewAzureAPIOn is NewAzureAPI listening on host: a node network's
// HostIP, where a provider in a pod reaches it.
func NewAzureAPIOn(host string) (*AzureAPI, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	a := &AzureAPI{skus: map[string][]map[string]any{}, metrics: map[string]map[string]float64{}, failing: map[string]string{}}
	a.srv = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	_ = a.srv.Listener.Close()
	a.srv.Listener = l
	a.srv.Start()
	a.URL = a.srv.URL
	return a, nil
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
	case r.Method != http.MethodGet:
		armError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the stand-in only reads")
	case r.URL.Query().Get("api-version") == "":
		armError(w, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
	case clusterPath.MatchString(r.URL.Path):
		a.cluster(w, clusterPath.FindStringSubmatch(r.URL.Path))
	case metricsPath.MatchString(r.URL.Path):
		a.metricsOf(w, r, metricsPath.FindStringSubmatch(r.URL.Path)[1])
	case skuPath.MatchString(r.URL.Path):
		sub := skuPath.FindStringSubmatch(r.URL.Path)[1]
		value := a.skus[sub]
		if value == nil {
			value = []map[string]any{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"value": value})
	default:
		armError(w, http.StatusNotFound, "NotFound", "no such resource")
	}
}

func armError(w http.ResponseWriter, status int, code, msg string) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// cluster answers a Kusto cluster's GET as ARM does, with the fields
// armkusto reads.
func (a *AzureAPI) cluster(w http.ResponseWriter, m []string) {
	sub, rg, name := m[1], m[2], m[3]
	var capacity int32
	found := false
	if a.capacity != nil {
		capacity, found = a.capacity(name)
	}
	if !found {
		armError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.Kusto/clusters/"+name+"' under resource group '"+rg+"' was not found.")
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.Kusto/clusters/" + name, "name": name,
		"type": "Microsoft.Kusto/Clusters", "location": "East US 2",
		"sku":        map[string]any{"name": "Standard_L8as_v3", "tier": "Standard", "capacity": capacity},
		"properties": map[string]any{"state": "Running", "provisioningState": "Succeeded", "uri": "https://" + name + ".eastus2.kusto.windows.net"},
	})
}

// metricsOf answers Azure Monitor's metrics query: one metric per name in
// metricnames, each with one time series of one-minute points over the
// timespan, the last of which carries the value in the aggregation asked.
func (a *AzureAPI) metricsOf(w http.ResponseWriter, r *http.Request, resource string) {
	q := r.URL.Query()
	names, agg, span := q.Get("metricnames"), q.Get("aggregation"), q.Get("timespan")
	if agg == "" {
		agg = "Average"
	}
	from, to, ok := strings.Cut(span, "/")
	start, err1 := time.Parse(time.RFC3339, from)
	end, err2 := time.Parse(time.RFC3339, to)
	if names == "" || !ok || err1 != nil || err2 != nil || !end.After(start) {
		armError(w, http.StatusBadRequest, "BadRequest", "metricnames and a timespan start/end are required")
		return
	}
	id := strings.ToLower(resource)
	var value []any
	for name := range strings.SplitSeq(names, ",") {
		if code, bad := a.failing[id+"/"+name]; bad {
			armError(w, http.StatusBadRequest, code, "Failed to find metric configuration for provider: Microsoft.Kusto, resource Type: clusters, metric: "+name)
			return
		}
		points := []any{}
		if v, has := a.metrics[id][name]; has {
			// One empty point, as Azure Monitor reports minutes without data,
			// then the value.
			at := end.Add(-time.Minute).Truncate(time.Minute)
			points = append(points, map[string]any{"timeStamp": at.Add(-time.Minute).Format(time.RFC3339)})
			p := map[string]any{"timeStamp": at.Format(time.RFC3339)}
			for k := range strings.SplitSeq(agg, ",") {
				if k != "" {
					p[strings.ToLower(k[:1])+k[1:]] = v
				}
			}
			points = append(points, p)
		}
		value = append(value, map[string]any{
			"id": resource + "/providers/Microsoft.Insights/metrics/" + name, "type": "Microsoft.Insights/metrics",
			"name": map[string]any{"value": name, "localizedValue": name}, "unit": "Percent", "errorCode": "Success",
			"timeseries": []any{map[string]any{"metadatavalues": []any{}, "data": points}},
		})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"cost": 0, "timespan": span, "interval": q.Get("interval"), "namespace": "Microsoft.Kusto/clusters", "resourceregion": "eastus2", "value": value,
	})
}
