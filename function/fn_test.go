package main

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// call describes one RunFunction request in YAML, the way a user sees the
// objects.
type call struct {
	xr       string
	input    string
	observed map[string]string   // composition resource name -> observed object
	required map[string][]string // requirement key -> objects; nil map = unresolved
}

func structOf(t testing.TB, y string) *structpb.Struct {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("bad YAML: %v\n%s", err, y)
	}
	return resource.MustStructJSON(string(j))
}

func (c call) request(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "test"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: structOf(t, c.xr)}},
		Desired:  &fnv1.State{Composite: &fnv1.Resource{Resource: structOf(t, "{}")}},
	}
	if c.input != "" {
		req.Input = structOf(t, c.input)
	}
	if len(c.observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for name, y := range c.observed {
			req.Observed.Resources[name] = &fnv1.Resource{Resource: structOf(t, y)}
		}
	}
	if c.required != nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
		for key, objs := range c.required {
			rs := &fnv1.Resources{}
			for _, y := range objs {
				rs.Items = append(rs.Items, &fnv1.Resource{Resource: structOf(t, y)})
			}
			req.RequiredResources[key] = rs
		}
	}
	return req
}

func run(t testing.TB, c call) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := NewFunction(logging.NewNopLogger()).RunFunction(context.Background(), c.request(t))
	if err != nil {
		t.Fatalf("RunFunction returned a gRPC error: %v", err)
	}
	return rsp
}

// got wraps a response with accessors for assertions.
type got struct {
	t   *testing.T
	rsp *fnv1.RunFunctionResponse
}

func (g got) names() []string {
	var n []string
	for k := range g.rsp.GetDesired().GetResources() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func (g got) wantNames(want ...string) {
	g.t.Helper()
	sort.Strings(want)
	if !reflect.DeepEqual(g.names(), want) && !(len(want) == 0 && len(g.names()) == 0) {
		g.t.Errorf("desired composed resources = %v, want %v", g.names(), want)
	}
}

func (g got) condition() *fnv1.Condition {
	for _, c := range g.rsp.GetConditions() {
		if c.GetType() == "adxcluster.fleetplane.io" {
			return c
		}
	}
	return nil
}

func (g got) wantCondition(status fnv1.Status, reason string, msgParts ...string) {
	g.t.Helper()
	c := g.condition()
	if c == nil {
		g.t.Fatalf("no adxcluster.fleetplane.io condition; results: %v", g.rsp.GetResults())
	}
	if c.GetStatus() != status || c.GetReason() != reason {
		g.t.Errorf("condition = %s/%s (%q), want %s/%s", c.GetStatus(), c.GetReason(), c.GetMessage(), status, reason)
	}
	for _, p := range msgParts {
		if !strings.Contains(c.GetMessage(), p) {
			g.t.Errorf("condition message %q does not mention %q", c.GetMessage(), p)
		}
	}
}

// wantEvent checks the results: one with the reason and severity, or none.
func (g got) wantEvent(sev fnv1.Severity, reason string) {
	g.t.Helper()
	rs := g.rsp.GetResults()
	if reason == "" {
		if len(rs) != 0 {
			g.t.Errorf("want no results (no transition), got %v", rs)
		}
		return
	}
	if len(rs) != 1 || rs[0].GetSeverity() != sev || rs[0].GetReason() != reason {
		g.t.Errorf("results = %v, want one %s %s", rs, sev, reason)
	}
}

func (g got) fatal() string {
	for _, r := range g.rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

func (g got) wantNotReady() {
	g.t.Helper()
	if r := g.rsp.GetDesired().GetComposite().GetReady(); r != fnv1.Ready_READY_FALSE {
		g.t.Errorf("desired composite readiness = %s, want READY_FALSE", r)
	}
}

func (g got) wantDerivedReadiness() {
	g.t.Helper()
	if r := g.rsp.GetDesired().GetComposite().GetReady(); r != fnv1.Ready_READY_UNSPECIFIED {
		g.t.Errorf("desired composite readiness = %s, want it derived from composed resources", r)
	}
}

// value reads a dotted path of a desired resource ("" for the XR).
func (g got) value(name, path string) any {
	g.t.Helper()
	var s *structpb.Struct
	if name == "" {
		s = g.rsp.GetDesired().GetComposite().GetResource()
	} else {
		r, ok := g.rsp.GetDesired().GetResources()[name]
		if !ok {
			g.t.Fatalf("no desired resource %q (have %v)", name, g.names())
		}
		s = r.GetResource()
	}
	var v any = s.AsMap()
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func (g got) want(name, path string, want any) {
	g.t.Helper()
	gotV := g.value(name, path)
	gj, _ := json.Marshal(gotV)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		g.t.Errorf("%s %s = %s, want %s", orXR(name), path, gj, wj)
	}
}

func orXR(name string) string {
	if name == "" {
		return "XR"
	}
	return name
}

func (g got) ready(name string) fnv1.Ready {
	return g.rsp.GetDesired().GetResources()[name].GetReady()
}

const (
	byoXR = `
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: shared-adx, namespace: team-a, generation: 3}
spec:
  clusterName: shared-adx
  endpoint: https://shared-adx.kusto.windows.net
`
	provisionXR = `
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: obs, namespace: team-a}
spec:
  clusterName: obseastus2
  provision:
    subscriptionId: 00000000-0000-0000-0000-000000000000
    resourceGroup: observability-eastus2
    location: eastus2
    skuName: Standard_L8as_v3
    tier: Standard
`
	partitionXR = `
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: eu-partition, namespace: team-a}
spec:
  clusterName: eu-partition
  endpoint: https://eu-partition.kusto.windows.net
  role: Partition
  federation:
    federatedTargets:
    - endpoint: https://hub.kusto.windows.net
      heartbeatDatabase: FleetDiscovery
      heartbeatTable: Heartbeats
      managedIdentityClientId: 22222222-2222-2222-2222-222222222222
    partitioning: {geo: EU, tenant: contoso}
`
	hubXR = `
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: global-hub, namespace: team-a}
spec:
  clusterName: global-hub
  endpoint: https://global-hub.kusto.windows.net
  role: Federated
  federation:
    heartbeatDatabase: FleetDiscovery
    heartbeatTable: Heartbeats
    heartbeatTTL: 2h
    blockedClusters:
      static: [https://rogue-partition.kusto.windows.net]
      kustoFunction: {database: FleetDiscovery, name: GetBlockedPartitions}
`
)

// observedMR renders an observed managed resource with conditions.
func observedMR(apiVersion, kind, name string, ready bool, extra string) string {
	status := "False"
	reason := "Creating"
	if ready {
		status, reason = "True", "Available"
	}
	y := "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: " + strings.ToLower(name) + "-x1\n  annotations:\n    crossplane.io/external-name: " + name + "\n" +
		"status:\n  conditions:\n  - {type: Ready, status: \"" + status + "\", reason: " + reason + "}\n  - {type: Synced, status: \"True\", reason: ReconcileSuccess}\n"
	return y + extra
}

func readyRG() string {
	return observedMR("azure.m.upbound.io/v1beta1", "ResourceGroup", "observability-eastus2", true, "")
}

func cluster(ready bool) string {
	extra := ""
	if ready {
		extra = "  atProvider:\n    uri: https://obseastus2.eastus2.kusto.windows.net\n    sku: {name: Standard_L8as_v3, capacity: 2}\n"
	}
	return observedMR("kusto.azure.m.upbound.io/v1beta1", "Cluster", "obseastus2", ready, extra)
}

func failing(apiVersion, kind, name, msg string) string {
	return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: x\n  annotations:\n    crossplane.io/external-name: " + name + "\n" +
		"status:\n  conditions:\n  - {type: Ready, status: \"False\", reason: Creating}\n  - {type: Synced, status: \"False\", reason: ReconcileError, message: '" + msg + "'}\n"
}

func withXRCondition(xr, reason, status string) string {
	return xr + "status:\n  conditions:\n  - {type: adxcluster.fleetplane.io, status: \"" + status + "\", reason: " + reason + "}\n"
}

func TestBringYourOwnCluster(t *testing.T) {
	g := got{t, run(t, call{xr: byoXR})}
	g.wantNames()
	g.wantCondition(fnv1.Status_STATUS_CONDITION_TRUE, "ProvisioningSkipped", "https://shared-adx.kusto.windows.net")
	g.wantEvent(fnv1.Severity_SEVERITY_NORMAL, "ProvisioningSkipped")
	g.want("", "status.endpoint", "https://shared-adx.kusto.windows.net")
	g.want("", "status.observedGeneration", 3)
	g.wantDerivedReadiness()

	// Steady state: the same reason again is no transition, so no event.
	g = got{t, run(t, call{xr: withXRCondition(byoXR, "ProvisioningSkipped", "True")})}
	g.wantEvent(0, "")
}

func TestProvisionInvalid(t *testing.T) {
	xr := strings.Replace(strings.Replace(provisionXR, "    skuName: Standard_L8as_v3\n", "", 1), "    tier: Standard\n", "", 1)
	g := got{t, run(t, call{xr: xr})}
	g.wantNames()
	g.wantCondition(fnv1.Status_STATUS_CONDITION_FALSE, "ProvisioningInvalid", "skuName, tier")
	g.wantEvent(fnv1.Severity_SEVERITY_WARNING, "ProvisioningInvalid")
	g.wantNotReady()

	// What exists stays: an edit that breaks provision never deletes.
	g = got{t, run(t, call{xr: xr, observed: map[string]string{"resource-group": readyRG()}})}
	g.wantNames("resource-group")
	g.want("resource-group", "metadata.annotations", map[string]any{"crossplane.io/external-name": "observability-eastus2"})
}

func TestProvisionOrder(t *testing.T) {
	input := `
apiVersion: fn.fleetplane.io/v1beta1
kind: Input
azure:
  subscriptions:
  - subscriptionId: 00000000-0000-0000-0000-000000000000
    providerConfigRef: {kind: ProviderConfig, name: azure-observability}
`
	t.Run("fresh: only the resource group", func(t *testing.T) {
		g := got{t, run(t, call{xr: provisionXR, input: input})}
		g.wantNames("resource-group")
		g.wantCondition(fnv1.Status_STATUS_CONDITION_UNKNOWN, "Creating", "observability-eastus2")
		g.want("resource-group", "apiVersion", "azure.m.upbound.io/v1beta1")
		g.want("resource-group", "spec.forProvider", map[string]any{"location": "eastus2"})
		g.want("resource-group", "spec.managementPolicies", []string{"Observe", "Create", "Update", "LateInitialize"})
		g.want("resource-group", "spec.providerConfigRef", map[string]any{"kind": "ProviderConfig", "name": "azure-observability"})
		g.wantNotReady()
	})
	t.Run("resource group ready: the cluster", func(t *testing.T) {
		g := got{t, run(t, call{xr: provisionXR, observed: map[string]string{"resource-group": readyRG()}})}
		g.wantNames("resource-group", "cluster")
		if g.ready("resource-group") != fnv1.Ready_READY_TRUE {
			t.Error("the ready resource group should be marked ready")
		}
		g.want("cluster", "apiVersion", "kusto.azure.m.upbound.io/v1beta1")
		g.want("cluster", "metadata.annotations", map[string]any{"crossplane.io/external-name": "obseastus2"})
		g.want("cluster", "spec.forProvider", map[string]any{
			"location": "eastus2", "resourceGroupName": "observability-eastus2",
			"sku":             map[string]any{"name": "Standard_L8as_v3", "capacity": 2},
			"identity":        map[string]any{"type": "SystemAssigned"},
			"autoStopEnabled": false,
		})
		g.want("cluster", "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "default"})
		g.wantNotReady()
	})
	t.Run("cluster provisioning: waiting, databases held", func(t *testing.T) {
		g := got{t, run(t, call{xr: provisionXR, observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(false)}})}
		g.wantNames("resource-group", "cluster")
		g.wantCondition(fnv1.Status_STATUS_CONDITION_UNKNOWN, "Waiting", "obseastus2")
		g.wantNotReady()
	})
	t.Run("cluster ready: databases, endpoint, applied state", func(t *testing.T) {
		g := got{t, run(t, call{xr: withXRCondition(provisionXR, "Waiting", "Unknown"), observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(true)}})}
		g.wantNames("resource-group", "cluster", "database-Metrics", "database-Logs")
		g.wantCondition(fnv1.Status_STATUS_CONDITION_TRUE, "ClusterReady", "https://obseastus2.eastus2.kusto.windows.net")
		g.wantEvent(fnv1.Severity_SEVERITY_NORMAL, "ClusterReady")
		g.want("", "status.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
		g.want("", "status.appliedProvisionState", map[string]any{"skuName": "Standard_L8as_v3", "tier": "Standard"})
		g.want("database-Metrics", "spec.forProvider", map[string]any{"location": "eastus2", "clusterName": "obseastus2", "resourceGroupName": "observability-eastus2"})
		g.want("database-Logs", "metadata.annotations", map[string]any{"crossplane.io/external-name": "Logs"})
		g.wantDerivedReadiness()
	})
	t.Run("cluster turns unready: databases are kept", func(t *testing.T) {
		db := observedMR("kusto.azure.m.upbound.io/v1beta1", "Database", "Metrics", true, "")
		g := got{t, run(t, call{xr: provisionXR, observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(false), "database-Metrics": db}})}
		g.wantNames("resource-group", "cluster", "database-Metrics")
		g.wantCondition(fnv1.Status_STATUS_CONDITION_UNKNOWN, "Waiting")
		g.wantNotReady()
	})
}

func TestProvisionOptions(t *testing.T) {
	xr := strings.Replace(provisionXR, "    tier: Standard\n", `    tier: Standard
    autoScale: true
    autoScaleMin: 3
    autoScaleMax: 12
    userAssignedIdentities:
    - /subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/zeta
    - /subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/alpha
  deletionPolicy: Delete
  databases:
  - {databaseName: Traces, telemetryType: Traces, retentionInDays: 90}
`, 1)
	g := got{t, run(t, call{xr: xr, observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(true)}})}
	g.wantNames("resource-group", "cluster", "database-Traces")
	g.want("cluster", "spec.forProvider.optimizedAutoScale", map[string]any{"minimumInstances": 3, "maximumInstances": 12})
	g.want("cluster", "spec.forProvider.sku", map[string]any{"name": "Standard_L8as_v3"})
	g.want("cluster", "spec.forProvider.identity", map[string]any{"type": "UserAssigned", "identityIds": []string{
		"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/alpha",
		"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/zeta",
	}})
	g.want("cluster", "spec.managementPolicies", []string{"*"})
	g.want("database-Traces", "spec.forProvider.softDeletePeriod", "P90D")

	// A SKU change in the XR reaches the composed cluster.
	xr2 := strings.Replace(provisionXR, "Standard_L8as_v3", "Standard_L16as_v3", 1)
	g = got{t, run(t, call{xr: xr2, observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(true)}})}
	g.want("cluster", "spec.forProvider.sku.name", "Standard_L16as_v3")
}

func TestAzureFailures(t *testing.T) {
	xr := strings.Replace(provisionXR, "  provision:\n", "  endpoint: https://obseastus2.eastus2.kusto.windows.net\n  role: Partition\n  federation:\n    federatedTargets:\n    - {endpoint: 'https://hub.kusto.windows.net', heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}\n  provision:\n", 1)
	t.Run("403 restricts permission and federation proceeds", func(t *testing.T) {
		denied := failing("kusto.azure.m.upbound.io/v1beta1", "Cluster", "obseastus2",
			`async create failed: creating Cluster: unexpected status 403 (403 Forbidden) with error: AuthorizationFailed: The client does not have authorization`)
		g := got{t, run(t, call{xr: xr, observed: map[string]string{"resource-group": readyRG(), "cluster": denied}})}
		g.wantCondition(fnv1.Status_STATUS_CONDITION_TRUE, "PermissionRestricted", "AuthorizationFailed", "Federation continues on https://obseastus2.eastus2.kusto.windows.net")
		g.wantEvent(fnv1.Severity_SEVERITY_WARNING, "PermissionRestricted")
		g.wantNames("resource-group", "cluster", "heartbeat")
		g.want("heartbeat", "spec.forProvider.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
		g.want("", "status.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
	})
	t.Run("other errors fail the condition", func(t *testing.T) {
		bad := failing("kusto.azure.m.upbound.io/v1beta1", "Cluster", "obseastus2", `async create failed: SkuNotAvailable in eastus2`)
		g := got{t, run(t, call{xr: provisionXR, observed: map[string]string{"resource-group": readyRG(), "cluster": bad}})}
		g.wantCondition(fnv1.Status_STATUS_CONDITION_FALSE, "Failed", "SkuNotAvailable", "Cluster obseastus2")
		g.wantNames("resource-group", "cluster")
		g.wantNotReady()
	})
}

func TestPartition(t *testing.T) {
	input := "apiVersion: fn.fleetplane.io/v1beta1\nkind: Input\nkusto:\n  interval: 10s\n  providerConfigRef: {kind: ProviderConfig, name: local-kusto}\n"
	g := got{t, run(t, call{xr: partitionXR, input: input})}
	g.wantNames("heartbeat")
	g.want("heartbeat", "apiVersion", "kusto.m.fleetplane.io/v1alpha1")
	g.want("heartbeat", "kind", "Heartbeat")
	g.want("heartbeat", "spec.forProvider", map[string]any{
		"endpoint":     "https://eu-partition.kusto.windows.net",
		"interval":     "10s",
		"partitioning": map[string]any{"geo": "EU", "tenant": "contoso"},
		"targets": []any{map[string]any{
			"endpoint": "https://hub.kusto.windows.net", "heartbeatDatabase": "FleetDiscovery",
			"heartbeatTable": "Heartbeats", "managedIdentityClientId": "22222222-2222-2222-2222-222222222222",
		}},
	})
	g.want("heartbeat", "spec.providerConfigRef", map[string]any{"kind": "ProviderConfig", "name": "local-kusto"})
	if g.value("heartbeat", "status") != nil {
		t.Error("a function must not set a composed resource's status")
	}
	if g.ready("heartbeat") != fnv1.Ready_READY_FALSE {
		t.Error("a heartbeat not yet observed is not ready")
	}
}

func TestFederatedHub(t *testing.T) {
	g := got{t, run(t, call{xr: hubXR})}
	g.wantNames("heartbeat-table")
	g.want("heartbeat-table", "spec.forProvider", map[string]any{
		"endpoint": "https://global-hub.kusto.windows.net", "database": "FleetDiscovery", "table": "Heartbeats",
		"columns": []any{
			map[string]any{"name": "Timestamp", "type": "datetime"},
			map[string]any{"name": "ClusterEndpoint", "type": "string"},
			map[string]any{"name": "Schema", "type": "dynamic"},
			map[string]any{"name": "PartitionMetadata", "type": "dynamic"},
		},
	})
	g.want("heartbeat-table", "spec.managementPolicies", []string{"Observe", "Create", "Update", "LateInitialize"})
	g.wantNotReady()

	table := observedMR("kusto.m.fleetplane.io/v1alpha1", "Table", "heartbeats", true, "")
	g = got{t, run(t, call{xr: hubXR, observed: map[string]string{"heartbeat-table": table}})}
	g.wantNames("heartbeat-table", "federation")
	g.want("federation", "spec.forProvider", map[string]any{
		"endpoint": "https://global-hub.kusto.windows.net", "heartbeatDatabase": "FleetDiscovery", "heartbeatTable": "Heartbeats",
		"heartbeatTTL": "2h", "interval": "10m0s", "allowInsecureEndpoints": false,
		"blockedClusters": map[string]any{
			"static":        []string{"https://rogue-partition.kusto.windows.net"},
			"kustoFunction": map[string]any{"database": "FleetDiscovery", "name": "GetBlockedPartitions"},
		},
	})
	g.wantDerivedReadiness()
}

func TestProvisionedHub(t *testing.T) {
	xr := strings.Replace(provisionXR, "  provision:\n", "  role: Federated\n  federation: {heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}\n  provision:\n", 1)
	g := got{t, run(t, call{xr: xr, observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(true)}})}
	// The heartbeat database joins the defaults; its table waits for it.
	g.wantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery")
	g.wantNotReady()

	db := observedMR("kusto.azure.m.upbound.io/v1beta1", "Database", "FleetDiscovery", true, "")
	g = got{t, run(t, call{xr: xr, observed: map[string]string{"resource-group": readyRG(), "cluster": cluster(true), "database-FleetDiscovery": db}})}
	g.wantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "heartbeat-table")
	g.want("heartbeat-table", "spec.forProvider.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
}

const labels = `
apiVersion: apiextensions.crossplane.io/v1beta1
kind: EnvironmentConfig
metadata: {name: fleetplane-cluster-labels}
data:
  labels: {geo: eu, tier: gold}
`

func TestCriteriaExpression(t *testing.T) {
	gated := func(expr string) string {
		return partitionXR + "  criteriaExpression: '" + strings.ReplaceAll(expr, "'", "''") + "'\n"
	}
	t.Run("first call asks for the labels and composes nothing", func(t *testing.T) {
		g := got{t, run(t, call{xr: gated(`geo == "eu"`)})}
		g.wantNames()
		sel := g.rsp.GetRequirements().GetResources()["fleetplane-cluster-labels"]
		if sel.GetKind() != "EnvironmentConfig" || sel.GetMatchName() != "fleetplane-cluster-labels" || sel.GetApiVersion() != "apiextensions.crossplane.io/v1beta1" {
			t.Errorf("requirement = %v", sel)
		}
		if ttl := g.rsp.GetMeta().GetTtl().AsDuration(); ttl != 20*time.Second {
			t.Errorf("TTL = %s, want 20s so that label changes are noticed", ttl)
		}
	})
	for _, expr := range []string{`labels["geo"] == "eu" && labels.has("tier")`, `geo == "eu" && tier == "gold"`} {
		t.Run("true: "+expr, func(t *testing.T) {
			g := got{t, run(t, call{xr: gated(expr), required: map[string][]string{"fleetplane-cluster-labels": {labels}}})}
			g.wantNames("heartbeat")
			g.wantCondition(fnv1.Status_STATUS_CONDITION_TRUE, "ProvisioningSkipped")
			if g.rsp.GetRequirements().GetResources()["fleetplane-cluster-labels"] == nil {
				t.Error("the requirement must stay stable across calls")
			}
		})
	}
	t.Run("false composes nothing new and keeps what exists", func(t *testing.T) {
		hb := observedMR("kusto.m.fleetplane.io/v1alpha1", "Heartbeat", "hb", true, "")
		xr := strings.Replace(gated(`geo == "us"`), "  role: Partition\n", "", 1) // role removed while gated
		g := got{t, run(t, call{xr: xr, observed: map[string]string{"heartbeat": hb}, required: map[string][]string{"fleetplane-cluster-labels": {labels}}})}
		g.wantCondition(fnv1.Status_STATUS_CONDITION_FALSE, "CriteriaExpressionFalse")
		g.wantEvent(fnv1.Severity_SEVERITY_NORMAL, "CriteriaExpressionFalse")
		g.wantNames("heartbeat")
		g.want("heartbeat", "metadata.annotations", map[string]any{"crossplane.io/external-name": "hb"})
		if g.value("heartbeat", "status") != nil {
			t.Error("a kept resource must not carry its status into desired state")
		}
		g.wantNotReady()

		g = got{t, run(t, call{xr: gated(`geo == "us"`), required: map[string][]string{"fleetplane-cluster-labels": {labels}}})}
		g.wantNames()
	})
	t.Run("errors", func(t *testing.T) {
		for name, c := range map[string]struct {
			xr       string
			required []string
			msg      string
		}{
			"unknown label":  {gated(`region == "eu"`), []string{labels}, "undeclared reference to 'region'"},
			"syntax":         {gated(`geo ==`), []string{labels}, "parse"},
			"no env config":  {gated(`geo == "eu"`), []string{}, "does not exist"},
			"labels not map": {gated(`geo == "eu"`), []string{"apiVersion: apiextensions.crossplane.io/v1beta1\nkind: EnvironmentConfig\nmetadata: {name: fleetplane-cluster-labels}\ndata: {labels: [a]}\n"}, "map of strings"},
		} {
			t.Run(name, func(t *testing.T) {
				g := got{t, run(t, call{xr: c.xr, required: map[string][]string{"fleetplane-cluster-labels": c.required}})}
				g.wantCondition(fnv1.Status_STATUS_CONDITION_FALSE, "CriteriaExpressionError", c.msg)
				g.wantEvent(fnv1.Severity_SEVERITY_WARNING, "CriteriaExpressionError")
				g.wantNames()
			})
		}
	})
	t.Run("environment config name from input", func(t *testing.T) {
		in := "apiVersion: fn.fleetplane.io/v1beta1\nkind: Input\ncriteria: {environmentConfigName: operator-labels}\n"
		g := got{t, run(t, call{xr: gated(`geo == "eu"`), input: in})}
		if n := g.rsp.GetRequirements().GetResources()["fleetplane-cluster-labels"].GetMatchName(); n != "operator-labels" {
			t.Errorf("required EnvironmentConfig = %q, want operator-labels", n)
		}
	})
}

func TestBadRequests(t *testing.T) {
	g := got{t, run(t, call{xr: "apiVersion: example.org/v1\nkind: Other\nmetadata: {name: x}\n"})}
	if m := g.fatal(); !strings.Contains(m, "does not compose Other.example.org") || !strings.Contains(m, "ADXCluster.adx.fleetplane.io") {
		t.Errorf("fatal = %q", m)
	}
	g = got{t, run(t, call{xr: byoXR, input: "apiVersion: fn.fleetplane.io/v1beta1\nkind: Input\nkusto: {interval: soon}\n"})}
	if m := g.fatal(); !strings.Contains(m, `kusto.interval "soon"`) {
		t.Errorf("fatal = %q", m)
	}
}

func TestDeterministic(t *testing.T) {
	c := call{xr: hubXR, observed: map[string]string{"heartbeat-table": observedMR("kusto.m.fleetplane.io/v1alpha1", "Table", "t", true, "")}}
	first, err := proto.MarshalOptions{Deterministic: true}.Marshal(run(t, c))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := proto.MarshalOptions{Deterministic: true}.Marshal(run(t, c))
		if string(again) != string(first) {
			t.Fatal("the same request rendered different responses")
		}
	}
}

func TestProvisionedHubCreatesDiscoveredDatabases(t *testing.T) {
	xr := strings.Replace(provisionXR, "  provision:\n", "  role: Federated\n  federation: {heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}\n  provision:\n", 1)
	ready := func(kind, name string) string {
		return observedMR("kusto.azure.m.upbound.io/v1beta1", kind, name, true, "")
	}
	fed := observedMR("kusto.m.fleetplane.io/v1alpha1", "Federation", "hub", true,
		"  atProvider:\n    missingDatabases: [Traces, \"bad'name\", Metrics]\n")
	observed := map[string]string{
		"resource-group": readyRG(), "cluster": cluster(true), "database-FleetDiscovery": ready("Database", "FleetDiscovery"),
		"heartbeat-table": observedMR("kusto.m.fleetplane.io/v1alpha1", "Table", "t", true, ""), "federation": fed,
	}
	g := got{t, run(t, call{xr: xr, observed: observed})}
	g.wantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "database-Traces", "heartbeat-table", "federation")
	g.want("database-Traces", "metadata.annotations", map[string]any{"crossplane.io/external-name": "Traces", "adx.fleetplane.io/discovered": "true"})
	g.want("database-Metrics", "metadata.annotations", map[string]any{"crossplane.io/external-name": "Metrics"})

	// Once it exists the hub no longer reports it missing; it stays composed.
	observed["federation"] = observedMR("kusto.m.fleetplane.io/v1alpha1", "Federation", "hub", true, "")
	observed["database-Traces"] = strings.Replace(ready("Database", "Traces"), "    crossplane.io/external-name: Traces\n", "    crossplane.io/external-name: Traces\n    adx.fleetplane.io/discovered: \"true\"\n", 1)
	g = got{t, run(t, call{xr: xr, observed: observed})}
	if _, ok := g.rsp.GetDesired().GetResources()["database-Traces"]; !ok {
		t.Error("a discovered database must stay composed once created")
	}

	// A bring-your-own hub never provisions.
	g = got{t, run(t, call{xr: hubXR, observed: map[string]string{"heartbeat-table": observed["heartbeat-table"], "federation": fed}})}
	g.wantNames("heartbeat-table", "federation")
}
