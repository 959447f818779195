package adxcluster

import (
	"k8s.io/utils/ptr"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/fnwire"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// Fixtures: one XR per mode, each changed by the test that needs more.

func adx(name, clusterName string, spec v1alpha1.ADXClusterSpec) *v1alpha1.ADXCluster {
	spec.ClusterName = clusterName
	return &v1alpha1.ADXCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ADXClusterKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Generation: 3},
		Spec:       spec,
	}
}

func byo() *v1alpha1.ADXCluster {
	return adx("shared-adx", "shared-adx", v1alpha1.ADXClusterSpec{Endpoint: "https://shared-adx.kusto.windows.net"})
}

func provisioned() *v1alpha1.ADXCluster {
	return adx("obs", "obseastus2", v1alpha1.ADXClusterSpec{Provision: &v1alpha1.ProvisionSpec{
		SubscriptionID: "00000000-0000-0000-0000-000000000000",
		ResourceGroup:  "observability-eastus2",
		Location:       "eastus2",
		SkuName:        "Standard_L8as_v3",
		Tier:           v1alpha1.TierStandard,
	}})
}

func partition() *v1alpha1.ADXCluster {
	return adx("eu-partition", "eu-partition", v1alpha1.ADXClusterSpec{
		Endpoint: "https://eu-partition.kusto.windows.net",
		Role:     v1alpha1.RolePartition,
		Federation: &v1alpha1.FederationSpec{
			FederatedTargets: []v1alpha1.FederatedTarget{{
				Endpoint: "https://hub.kusto.windows.net", HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats",
				ManagedIdentityClientID: "22222222-2222-2222-2222-222222222222",
			}},
			Partitioning: kustov1alpha1.Partitioning{"geo": "EU", "tenant": "contoso"},
		},
	})
}

func hub() *v1alpha1.ADXCluster {
	return adx("global-hub", "global-hub", v1alpha1.ADXClusterSpec{
		Endpoint: "https://global-hub.kusto.windows.net",
		Role:     v1alpha1.RoleFederated,
		Federation: &v1alpha1.FederationSpec{
			HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats", HeartbeatTTL: "2h",
			BlockedClusters: &kustov1alpha1.BlockedClusters{
				Static:        []string{"https://rogue-partition.kusto.windows.net"},
				KustoFunction: &kustov1alpha1.KustoFunctionRef{Database: "FleetDiscovery", Name: "GetBlockedPartitions"},
			},
		},
	})
}

// provisionedHub is a provisioned cluster in the hub role.
func provisionedHub() *v1alpha1.ADXCluster {
	xr := provisioned()
	xr.Spec.Role = v1alpha1.RoleFederated
	xr.Spec.Federation = &v1alpha1.FederationSpec{HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats"}
	return xr
}

// Observed composed resources.

func resourceGroup() *ct.Resource {
	return ct.Observed(azureAPIVersion, "ResourceGroup", "observability-eastus2")
}

// cluster is the cluster's MR after it created the cluster; foundCluster
// one that found it in Azure.
func cluster() *ct.Resource      { return created(foundCluster()) }
func foundCluster() *ct.Resource { return ct.Observed(kustoAPIVersion, "Cluster", "obseastus2") }

// created marks an observed Azure resource as created by its MR, as
// crossplane-runtime does after a successful Create.
func created(r *ct.Resource) *ct.Resource {
	return r.Annotate(observe.AnnotationCreateSucceeded, "2026-11-23T10:00:00Z")
}

// runningCluster is a cluster its MR created, running.
func runningCluster() *ct.Resource {
	return cluster().Ready().
		AtProvider("uri", "https://obseastus2.eastus2.kusto.windows.net").
		AtProvider("sku", map[string]any{"name": "Standard_L8as_v3", "capacity": 2})
}

// database is a database's MR after it created the database.
func database(name string) *ct.Resource {
	return created(ct.Observed(kustoAPIVersion, "Database", name))
}

func fleetplaneMR(kind string) *ct.Resource {
	return ct.Observed(kustov1alpha1.SchemeGroupVersion.String(), kind, strings.ToLower(kind))
}

func run(t *testing.T, c ct.Call) ct.Response {
	t.Helper()
	return ct.Run(t, Composer, c)
}

func wantCondition(r ct.Response, status fnv1.Status, reason string, msgParts ...string) {
	r.T.Helper()
	r.WantCondition(v1alpha1.ConditionADXCluster, status, reason, msgParts...)
}

func reported(reason, status string) []ct.Condition {
	return []ct.Condition{{Type: v1alpha1.ConditionADXCluster, Status: status, Reason: reason}}
}

func TestBringYourOwnCluster(t *testing.T) {
	r := run(t, ct.Call{XR: byo()})
	r.WantNames()
	wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonProvisioningSkipped, "https://shared-adx.kusto.windows.net")
	r.WantEvent(fnv1.Severity_SEVERITY_NORMAL, ReasonProvisioningSkipped)
	r.Want("", "status", map[string]any{"endpoint": "https://shared-adx.kusto.windows.net", "observedGeneration": 3})
	r.WantDerivedReadiness()

	// Steady state: the same reason again is no transition, so no event.
	r = run(t, ct.Call{XR: byo(), XRConditions: reported(ReasonProvisioningSkipped, "True")})
	r.WantEvent(0, "")
}

func TestProvisionInvalid(t *testing.T) {
	xr := provisioned()
	xr.Spec.Provision.SkuName, xr.Spec.Provision.Tier = "", ""
	r := run(t, ct.Call{XR: xr})
	r.WantNames()
	wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonProvisioningInvalid, "skuName, tier", "they are")
	r.WantEvent(fnv1.Severity_SEVERITY_WARNING, ReasonProvisioningInvalid)
	r.WantNotReady()

	// What exists stays: an edit that breaks provision never deletes.
	r = run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready()}})
	r.WantNames("resource-group")
	r.Want("resource-group", "metadata.annotations", map[string]any{externalName: "observability-eastus2"})
}

func TestProvisionOrder(t *testing.T) {
	// The policy names the upjet config of the subscription.
	policy := ct.Permissive()
	policy.Spec.Azure.Provisioning[0].ProviderConfigRef = fpv1alpha1.ProviderConfigReference{Kind: "ProviderConfig", Name: "azure-observability"}
	cases := map[string]struct {
		xr       []ct.Condition
		observed map[string]*ct.Resource
		names    []string
		status   fnv1.Status
		reason   string
		ready    bool
	}{
		"fresh: only the resource group": {
			names: []string{"resource-group"}, status: fnv1.Status_STATUS_CONDITION_UNKNOWN, reason: ReasonCreating,
		},
		"resource group ready: the cluster": {
			observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready()},
			names:    []string{"resource-group", "cluster"}, status: fnv1.Status_STATUS_CONDITION_UNKNOWN, reason: ReasonCreating,
		},
		"cluster provisioning: waiting, databases held": {
			observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": cluster()},
			names:    []string{"resource-group", "cluster"}, status: fnv1.Status_STATUS_CONDITION_UNKNOWN, reason: ReasonWaiting,
		},
		"cluster ready without a URI yet: databases held": {
			observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": cluster().Ready()},
			names:    []string{"resource-group", "cluster"}, status: fnv1.Status_STATUS_CONDITION_UNKNOWN, reason: ReasonWaiting,
		},
		"cluster running: the databases": {
			xr:       reported(ReasonWaiting, "Unknown"),
			observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()},
			names:    []string{"resource-group", "cluster", "database-Metrics", "database-Logs"}, status: fnv1.Status_STATUS_CONDITION_TRUE, reason: ReasonClusterReady, ready: true,
		},
		"cluster turns unready: databases are kept": {
			observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": cluster(), "database-Metrics": database("Metrics").Ready()},
			names:    []string{"resource-group", "cluster", "database-Metrics"}, status: fnv1.Status_STATUS_CONDITION_UNKNOWN, reason: ReasonWaiting,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, ct.Call{XR: provisioned(), XRConditions: tc.xr, Policy: policy, Observed: tc.observed})
			r.WantNames(tc.names...)
			wantCondition(r, tc.status, tc.reason)
			if tc.ready {
				r.WantDerivedReadiness()
			} else {
				r.WantNotReady()
			}
			if r.Has("resource-group") && observedReady(tc.observed["resource-group"]) && r.ReadyOf("resource-group") != fnv1.Ready_READY_TRUE {
				t.Error("a ready resource group must be marked ready")
			}
			// Every Azure resource goes to the ProviderConfig the policy
			// names for the subscription, is updated only once its MR
			// created it, and is kept in Azure when its MR goes.
			for _, n := range r.Names() {
				r.Want(n, "spec.providerConfigRef", map[string]any{"kind": "ProviderConfig", "name": "azure-observability"})
				want := []string{"Observe", "Create"}
				if o := tc.observed[n]; o != nil && o.Object()["metadata"].(map[string]any)["annotations"].(map[string]any)[observe.AnnotationCreateSucceeded] != nil {
					want = append(want, "Update")
				}
				r.Want(n, "spec.managementPolicies", want)
			}
		})
	}
}

func observedReady(r *ct.Resource) bool {
	if r == nil {
		return false
	}
	conds, _ := r.Object()["status"].(map[string]any)["conditions"].([]any)
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

func TestProvisionedResources(t *testing.T) {
	r := run(t, ct.Call{XR: provisioned(), Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()}})
	r.Want("resource-group", "apiVersion", "azure.m.upbound.io/v1beta1")
	r.Want("resource-group", "spec.forProvider", map[string]any{"location": "eastus2"})
	r.Want("cluster", "apiVersion", "kusto.azure.m.upbound.io/v1beta1")
	r.Want("cluster", "metadata.annotations", map[string]any{externalName: "obseastus2"})
	// Where it runs is kept on Azure; the seed's defaults are set at
	// creation only, and so, once Azure runs them, are the SKU and
	// identity the spec asks for (azureChanges Keep: TestAzureChanges).
	r.Want("cluster", "spec.forProvider", map[string]any{
		"location": "eastus2", "resourceGroupName": "observability-eastus2",
	})
	r.Want("cluster", "spec.initProvider", map[string]any{
		"sku":                        map[string]any{"name": "Standard_L8as_v3", "capacity": 2},
		"identity":                   map[string]any{"type": "SystemAssigned"},
		"autoStopEnabled":            false,
		"streamingIngestionEnabled":  false,
		"publicNetworkAccessEnabled": false,
	})
	r.Want("cluster", "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "default"})
	r.Want("database-Metrics", "spec.forProvider", map[string]any{"location": "eastus2", "clusterName": "obseastus2", "resourceGroupName": "observability-eastus2"})
	r.Want("database-Metrics", "spec.initProvider", map[string]any{"hotCachePeriod": "P30D", "softDeletePeriod": "P30D"})
	r.Want("database-Logs", "metadata.annotations", map[string]any{externalName: "Logs"})
	wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonClusterReady, "https://obseastus2.eastus2.kusto.windows.net")
	r.Want("", "status.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
	r.Want("", "status.appliedProvisionState", map[string]any{
		"skuName": "Standard_L8as_v3", "tier": "Standard",
		"subscriptionId": "00000000-0000-0000-0000-000000000000", "resourceGroup": "observability-eastus2", "location": "eastus2",
		"resourceGroupOrigin": "Existing", "spec": map[string]any{"skuName": "Standard_L8as_v3"},
	})
}

// TestAzureChanges: with azureChanges Keep (the default, as the
// controller seed says), the SKU, capacity and identities are pressed on
// Azure at creation and after each edit of the spec, until Azure runs
// them; then they are creation-time, so a change made in Azure stays.
// With Revert they are always pressed, and such a change is set back.
func TestAzureChanges(t *testing.T) {
	pressed := func(r ct.Response) bool {
		r.T.Helper()
		fp, ip := r.Value("cluster", "spec.forProvider.sku"), r.Value("cluster", "spec.initProvider.sku.name")
		if (fp == nil) == (ip == nil) {
			r.T.Fatalf("the SKU is in forProvider (%v) and initProvider (%v), or in neither", fp, ip)
		}
		if (r.Value("cluster", "spec.forProvider.identity") == nil) != (fp == nil) {
			r.T.Fatal("the identity is not where the SKU is")
		}
		return fp != nil
	}
	reached := &v1alpha1.AppliedProvisionState{SkuName: "Standard_L8as_v3", Spec: &v1alpha1.ProvisionIntent{SkuName: "Standard_L8as_v3"}}
	scaledInAzure := cluster().Ready().AtProvider("uri", "https://obseastus2.eastus2.kusto.windows.net").
		AtProvider("sku", map[string]any{"name": "Standard_L16as_v3", "capacity": 3})
	for name, tc := range map[string]struct {
		policy    v1alpha1.AzureChanges
		sku       string
		applied   *v1alpha1.AppliedProvisionState
		cluster   *ct.Resource
		wantPress bool
		wantSpec  any
	}{
		"creating: pressed":                           {cluster: nil, wantPress: true},
		"provisioning: pressed":                       {cluster: cluster(), wantPress: true},
		"Azure runs the spec: creation-time":          {cluster: runningCluster(), wantSpec: map[string]any{"skuName": "Standard_L8as_v3"}},
		"changed in Azure since: kept":                {applied: reached, cluster: scaledInAzure, wantSpec: map[string]any{"skuName": "Standard_L8as_v3"}},
		"the spec edited: pressed until Azure has it": {sku: "Standard_L16as_v3", applied: reached, cluster: runningCluster(), wantPress: true},
		"the edit reached: creation-time again":       {sku: "Standard_L16as_v3", applied: reached, cluster: scaledInAzure, wantSpec: map[string]any{"skuName": "Standard_L16as_v3"}},
		"Revert: pressed when Azure runs the spec":    {policy: v1alpha1.AzureChangesRevert, applied: reached, cluster: runningCluster(), wantPress: true, wantSpec: map[string]any{"skuName": "Standard_L8as_v3"}},
		"Revert: a change made in Azure is set back":  {policy: v1alpha1.AzureChangesRevert, applied: reached, cluster: scaledInAzure, wantPress: true},
	} {
		t.Run(name, func(t *testing.T) {
			xr := provisioned()
			xr.Spec.Provision.AzureChanges = tc.policy
			if tc.sku != "" {
				xr.Spec.Provision.SkuName = tc.sku
			}
			xr.Status.AppliedProvisionState = tc.applied
			observed := map[string]*ct.Resource{"resource-group": resourceGroup().Ready()}
			if tc.cluster != nil {
				observed["cluster"] = tc.cluster
			}
			r := run(t, ct.Call{XR: xr, Observed: observed})
			if got := pressed(r); got != tc.wantPress {
				t.Errorf("SKU and identity in forProvider: %v, want %v", got, tc.wantPress)
			}
			if tc.wantSpec != nil {
				r.Want("", "status.appliedProvisionState.spec", tc.wantSpec)
			}
		})
	}
}

func TestProvisionOptions(t *testing.T) {
	xr := provisioned()
	p := xr.Spec.Provision
	p.AutoScale, p.AutoScaleMin, p.AutoScaleMax = true, 3, 12
	p.UserAssignedIdentities = []string{
		"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/zeta",
		"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/alpha",
	}
	xr.Spec.DeletionPolicy = v1alpha1.DeletionDelete
	days := int32(90)
	xr.Spec.Databases = []v1alpha1.DatabaseSpec{{DatabaseName: "Traces", TelemetryType: v1alpha1.TelemetryTraces, RetentionInDays: &days}}

	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()}})
	r.WantNames("resource-group", "cluster", "database-Traces")
	// Autoscale is applied at creation only: Azure's scaling owns the
	// instance count from then on.
	r.Want("cluster", "spec.initProvider.optimizedAutoScale", map[string]any{"minimumInstances": 3, "maximumInstances": 12})
	r.Want("cluster", "spec.forProvider.optimizedAutoScale", nil)
	r.Want("cluster", "spec.initProvider.sku", nil)
	r.Want("cluster", "spec.forProvider.sku", map[string]any{"name": "Standard_L8as_v3"})
	r.Want("cluster", "spec.forProvider.identity", map[string]any{"type": "UserAssigned", "identityIds": []string{
		"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/alpha",
		"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/zeta",
	}})
	// The cluster carries the proof of creation: it is kept in step, and
	// deletable.
	r.Want("cluster", "spec.managementPolicies", []string{"Observe", "Create", "Update", "Delete"})
	// The database does not yet: it may only be created.
	r.Want("database-Traces", "spec.managementPolicies", []string{"Observe", "Create"})
	r.Want("database-Traces", "spec.forProvider.softDeletePeriod", "P90D")
	r.Want("database-Traces", "spec.initProvider", map[string]any{"hotCachePeriod": "P30D"})
}

// TestCapacity: a capacity the spec sets is kept on Azure (an ADXMon's
// autoscaler scales the cluster through it); unset, the tier's minimum is
// the size at creation only.
func TestCapacity(t *testing.T) {
	xr := provisioned()
	xr.Spec.Provision.Capacity = ptr.To[int32](4)
	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()}})
	r.Want("cluster", "spec.forProvider.sku", map[string]any{"name": "Standard_L8as_v3", "capacity": 4})
	r.Want("cluster", "spec.initProvider.sku", nil)

	// Unset, the tier's minimum is the size at creation only (and, the
	// cluster running the spec's SKU, so is the SKU: TestAzureChanges).
	xr.Spec.Provision.Capacity = nil
	r = run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready()}})
	r.Want("cluster", "spec.forProvider.sku", map[string]any{"name": "Standard_L8as_v3"})
	r.Want("cluster", "spec.initProvider.sku", map[string]any{"capacity": 2})
}

// TestDeleteOnlyWhatWasCreated: deletionPolicy Delete adds Delete to a
// composed Azure resource only once crossplane-runtime recorded that its MR
// created it; a resource group found in Azure is never deleted, and the
// condition and status say so.
func TestDeleteOnlyWhatWasCreated(t *testing.T) {
	xr := provisioned()
	xr.Spec.DeletionPolicy = v1alpha1.DeletionDelete
	deletable := []string{"Observe", "Create", "Update", "Delete"}
	kept := []string{"Observe", "Create"}

	t.Run("all created here", func(t *testing.T) {
		r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{
			"resource-group": created(resourceGroup().Ready()), "cluster": created(runningCluster()), "database-Metrics": created(database("Metrics").Ready()),
		}})
		r.Want("resource-group", "spec.managementPolicies", deletable)
		r.Want("cluster", "spec.managementPolicies", deletable)
		r.Want("database-Metrics", "spec.managementPolicies", deletable)
		r.Want("database-Logs", "spec.managementPolicies", kept) // not created yet
		r.Want("", "status.appliedProvisionState.resourceGroupOrigin", "Created")
	})
	t.Run("resource group found in Azure", func(t *testing.T) {
		r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{
			"resource-group": resourceGroup().Ready(), "cluster": created(runningCluster()),
		}})
		r.Want("resource-group", "spec.managementPolicies", kept)
		r.Want("cluster", "spec.managementPolicies", deletable)
		r.Want("", "status.appliedProvisionState.resourceGroupOrigin", "Existing")
		wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonClusterReady, "Resource group observability-eastus2 existed before this ADXCluster: it is used as it is, never changed or deleted")
	})
	t.Run("resource group not ready: origin unknown", func(t *testing.T) {
		r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup()}})
		r.Want("resource-group", "spec.managementPolicies", kept)
		r.Want("", "status.appliedProvisionState", nil)
	})
	t.Run("orphan policy never deletes", func(t *testing.T) {
		r := run(t, ct.Call{XR: provisioned(), Observed: map[string]*ct.Resource{"resource-group": created(resourceGroup().Ready())}})
		r.Want("resource-group", "spec.managementPolicies", []string{"Observe", "Create", "Update"})
	})
}

// TestMissingRegistration: Azure's refusal for an unregistered resource
// provider comes with the one command that fixes it.
func TestMissingRegistration(t *testing.T) {
	unregistered := cluster().Failing(`async create failed: creating Cluster: unexpected status 409 (409 Conflict) with error: MissingSubscriptionRegistration: The subscription is not registered to use namespace 'Microsoft.Kusto'.`)
	r := run(t, ct.Call{XR: provisioned(), Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": unregistered}})
	wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonFailed, "MissingSubscriptionRegistration", "az provider register --namespace Microsoft.Kusto --subscription 00000000-0000-0000-0000-000000000000")
}

// TestDatabasePrincipals: each principal gets its role on each database,
// once that database exists, through upjet's principal assignments.
func TestDatabasePrincipals(t *testing.T) {
	xr := provisioned()
	xr.Spec.Provision.DatabasePrincipals = []v1alpha1.DatabasePrincipal{
		{ClientID: "11111111-AAAA-1111-1111-111111111111", TenantID: "33333333-3333-3333-3333-333333333333"},
		{ClientID: "22222222-2222-2222-2222-222222222222", TenantID: "33333333-3333-3333-3333-333333333333", Role: v1alpha1.DatabaseRoleIngestor},
	}
	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{
		"resource-group": resourceGroup().Ready(), "cluster": runningCluster(), "database-Metrics": database("Metrics").Ready(), "database-Logs": database("Logs"),
	}})
	admin := "principal-Metrics-11111111-aaaa-1111-1111-111111111111-admin"
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", admin, "principal-Metrics-22222222-2222-2222-2222-222222222222-ingestor")
	r.Want(admin, "kind", "DatabasePrincipalAssignment")
	r.Want(admin, "metadata.annotations", map[string]any{externalName: "11111111-aaaa-1111-1111-111111111111-admin"})
	r.Want(admin, "spec.forProvider", map[string]any{
		"clusterName": "obseastus2", "databaseName": "Metrics", "resourceGroupName": "observability-eastus2",
		"principalId": "11111111-aaaa-1111-1111-111111111111", "principalType": "App", "role": "Admin", "tenantId": "33333333-3333-3333-3333-333333333333",
	})
}

// TestPublicNetworkAccess: unset, the cluster is created closed and a later
// change in Azure is left alone; set, the spec's value is kept on Azure.
func TestPublicNetworkAccess(t *testing.T) {
	for _, v := range []bool{true, false} {
		xr := provisioned()
		xr.Spec.Provision.PublicNetworkAccessEnabled = &v
		r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready()}})
		r.Want("cluster", "spec.forProvider.publicNetworkAccessEnabled", v)
		r.Want("cluster", "spec.initProvider.publicNetworkAccessEnabled", nil)
	}
}

// TestEditsReachWhatExists is the gating rule of compose.Set for
// ADXClusters: a spec edit reaches every composed resource that exists,
// whether or not the resources before it are Ready.
func TestEditsReachWhatExists(t *testing.T) {
	xr := provisioned()
	xr.Spec.Provision.SkuName = "Standard_L16as_v3"
	days := int32(7)
	xr.Spec.Databases = []v1alpha1.DatabaseSpec{{DatabaseName: "Metrics", RetentionInDays: &days}}
	// The resource group is being re-created and the cluster is updating:
	// neither is Ready.
	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{
		"resource-group": resourceGroup(), "cluster": cluster(), "database-Metrics": database("Metrics").Ready(),
	}})
	r.WantNames("resource-group", "cluster", "database-Metrics")
	r.Want("cluster", "spec.forProvider.sku.name", "Standard_L16as_v3")
	r.Want("database-Metrics", "spec.forProvider.softDeletePeriod", "P7D")
	if r.ReadyOf("cluster") != fnv1.Ready_READY_FALSE {
		t.Error("an updating cluster is not ready, so neither is the XR")
	}

	// A hub whose heartbeat table is not Ready still gets its edited
	// Federation.
	h := hub()
	h.Spec.Federation.HeartbeatTTL = "4h"
	r = run(t, ct.Call{XR: h, Observed: map[string]*ct.Resource{"heartbeat-table": fleetplaneMR("Table"), "federation": fleetplaneMR("Federation").Ready()}})
	r.Want("federation", "spec.forProvider.heartbeatTTL", "4h")
}

func TestAzureFailures(t *testing.T) {
	t.Run("403 restricts permission and federation proceeds", func(t *testing.T) {
		xr := provisioned()
		xr.Spec.Endpoint = "https://obseastus2.eastus2.kusto.windows.net"
		xr.Spec.Role = v1alpha1.RolePartition
		xr.Spec.Federation = &v1alpha1.FederationSpec{FederatedTargets: []v1alpha1.FederatedTarget{{Endpoint: "https://hub.kusto.windows.net", HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats"}}}
		denied := cluster().Failing(`async create failed: creating Cluster: unexpected status 403 (403 Forbidden) with error: AuthorizationFailed: The client does not have authorization`)
		r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": denied}})
		wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonPermissionRestricted, "AuthorizationFailed", "Federation continues on https://obseastus2.eastus2.kusto.windows.net",
			"Grant the identity of the Azure ProviderConfig default the Contributor role on resource group observability-eastus2 in subscription 00000000-0000-0000-0000-000000000000")
		r.WantEvent(fnv1.Severity_SEVERITY_WARNING, ReasonPermissionRestricted)
		r.WantNames("resource-group", "cluster", "heartbeat")
		r.Want("heartbeat", "spec.forProvider.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
		r.Want("", "status.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
	})
	t.Run("403 without a known endpoint says how to federate", func(t *testing.T) {
		r := run(t, ct.Call{XR: provisioned(), Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Failing("403 Forbidden")}})
		wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonPermissionRestricted, "set spec.endpoint")
	})
	t.Run("other errors fail the condition", func(t *testing.T) {
		bad := cluster().Failing(`async create failed: SkuNotAvailable in eastus2`)
		r := run(t, ct.Call{XR: provisioned(), Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": bad}})
		wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonFailed, "SkuNotAvailable", "Cluster obseastus2")
		r.WantNames("resource-group", "cluster")
		r.WantNotReady()
	})
}

func TestPartition(t *testing.T) {
	// Kusto resources name the ClusterProviderConfig that governs the
	// namespace, here the one its label names.
	in := &v1beta1.Input{Kusto: &v1beta1.Kusto{Interval: "10s"}}
	policy := ct.Permissive()
	policy.Name = "local-kusto"
	r := run(t, ct.Call{XR: partition(), Input: in, Policy: policy, NamespaceLabels: map[string]string{"fleetplane.io/policy": "local-kusto"}})
	r.WantNames("heartbeat")
	r.Want("heartbeat", "apiVersion", "kusto.m.fleetplane.io/v1alpha1")
	r.Want("heartbeat", "kind", "Heartbeat")
	r.Want("heartbeat", "spec", map[string]any{
		"forProvider": map[string]any{
			"endpoint":     "https://eu-partition.kusto.windows.net",
			"interval":     "10s",
			"partitioning": map[string]any{"geo": "EU", "tenant": "contoso"},
			"targets": []any{map[string]any{
				"endpoint": "https://hub.kusto.windows.net", "heartbeatDatabase": "FleetDiscovery",
				"heartbeatTable": "Heartbeats", "managedIdentityClientId": "22222222-2222-2222-2222-222222222222",
			}},
		},
		"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "local-kusto"},
	})
	if r.Value("heartbeat", "status") != nil {
		t.Error("a function must not set a composed resource's status")
	}
	if r.ReadyOf("heartbeat") != fnv1.Ready_READY_FALSE {
		t.Error("a heartbeat not yet observed is not ready")
	}
}

func TestFederatedHub(t *testing.T) {
	r := run(t, ct.Call{XR: hub()})
	r.WantNames("heartbeat-table")
	r.Want("heartbeat-table", "spec.forProvider", map[string]any{
		"endpoint": "https://global-hub.kusto.windows.net", "database": "FleetDiscovery", "table": "Heartbeats",
		"columns": []any{
			map[string]any{"name": "Timestamp", "type": "datetime"},
			map[string]any{"name": "ClusterEndpoint", "type": "string"},
			map[string]any{"name": "Schema", "type": "dynamic"},
			map[string]any{"name": "PartitionMetadata", "type": "dynamic"},
		},
	})
	r.Want("heartbeat-table", "spec.managementPolicies", []string{"Observe", "Create", "Update", "LateInitialize"})
	r.WantNotReady()

	r = run(t, ct.Call{XR: hub(), Observed: map[string]*ct.Resource{"heartbeat-table": fleetplaneMR("Table").Ready()}})
	r.WantNames("heartbeat-table", "federation")
	r.Want("federation", "spec.forProvider", map[string]any{
		"endpoint": "https://global-hub.kusto.windows.net", "heartbeatDatabase": "FleetDiscovery", "heartbeatTable": "Heartbeats",
		"heartbeatTTL": "2h", "interval": "10m0s", "allowInsecureEndpoints": false,
		"blockedClusters": map[string]any{
			"static":        []string{"https://rogue-partition.kusto.windows.net"},
			"kustoFunction": map[string]any{"database": "FleetDiscovery", "name": "GetBlockedPartitions"},
		},
	})
	r.WantDerivedReadiness()
}

func TestProvisionedHub(t *testing.T) {
	observed := map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()}
	r := run(t, ct.Call{XR: provisionedHub(), Observed: observed})
	// The heartbeat database joins the defaults; its table waits for it.
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery")
	r.WantNotReady()

	observed["database-FleetDiscovery"] = database("FleetDiscovery").Ready()
	r = run(t, ct.Call{XR: provisionedHub(), Observed: observed})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "heartbeat-table")
	r.Want("heartbeat-table", "spec.forProvider.endpoint", "https://obseastus2.eastus2.kusto.windows.net")
}

func TestProvisionedHubCreatesDiscoveredDatabases(t *testing.T) {
	fed := fleetplaneMR("Federation").Ready().AtProvider("missingDatabases", []any{"Traces", "bad'name", "Metrics"})
	observed := map[string]*ct.Resource{
		"resource-group": resourceGroup().Ready(), "cluster": runningCluster(), "database-FleetDiscovery": database("FleetDiscovery").Ready(),
		"heartbeat-table": fleetplaneMR("Table").Ready(), "federation": fed,
	}
	// Names from heartbeat rows become Azure databases only where the
	// policy says the hub may create them.
	reported := ct.Permissive()
	reported.Spec.Kusto.Endpoints[0].Hub.CreateDatabasesFromPartitions = false
	r := run(t, ct.Call{XR: provisionedHub(), Observed: observed, Policy: reported})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "heartbeat-table", "federation")

	r = run(t, ct.Call{XR: provisionedHub(), Observed: observed})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "database-Traces", "heartbeat-table", "federation")
	r.Want("database-Traces", "metadata.annotations", map[string]any{externalName: "Traces", discoveredAnnotation: "true"})
	r.Want("database-Metrics", "metadata.annotations", map[string]any{externalName: "Metrics"})

	// Once it exists the hub no longer reports it missing; it stays composed.
	observed["federation"] = fleetplaneMR("Federation").Ready()
	observed["database-Traces"] = database("Traces").Ready().Annotate(discoveredAnnotation, "true")
	r = run(t, ct.Call{XR: provisionedHub(), Observed: observed})
	if !r.Has("database-Traces") {
		t.Error("a discovered database must stay composed once created")
	}

	// A bring-your-own hub never provisions.
	r = run(t, ct.Call{XR: hub(), Observed: map[string]*ct.Resource{"heartbeat-table": fleetplaneMR("Table").Ready(), "federation": fed}})
	r.WantNames("heartbeat-table", "federation")
}

// TestPrincipalTenantFromPolicy: a database principal without a tenant
// (the seed's complete adx-mon example names only the identity) gets its
// role in the tenant the policy names for the subscription.
func TestPrincipalTenantFromPolicy(t *testing.T) {
	xr := provisioned()
	xr.Spec.Provision.DatabasePrincipals = []v1alpha1.DatabasePrincipal{
		{ClientID: "22222222-2222-2222-2222-222222222222"},
		{ClientID: "11111111-1111-1111-1111-111111111111", TenantID: "44444444-4444-4444-4444-444444444444"},
	}
	policy := ct.Permissive()
	policy.Spec.Azure.Provisioning[0].TenantID = "33333333-3333-3333-3333-333333333333"
	r := run(t, ct.Call{XR: xr, Policy: policy, Observed: map[string]*ct.Resource{
		"resource-group": created(resourceGroup()).Ready(), "cluster": runningCluster(), "database-Metrics": database("Metrics").Ready(), "database-Logs": database("Logs").Ready(),
	}})
	r.Want(string(PrincipalName("Metrics", xr.Spec.Provision.DatabasePrincipals[0])), "spec.forProvider.tenantId", "33333333-3333-3333-3333-333333333333")
	r.Want(string(PrincipalName("Metrics", xr.Spec.Provision.DatabasePrincipals[1])), "spec.forProvider.tenantId", "44444444-4444-4444-4444-444444444444")
}

// TestRemovedDatabaseIsKeptInAzure: a database removed from the spec of
// an ADXCluster with deletionPolicy Delete is not deleted in Azure. Its MR
// is composed once more without Delete in its managementPolicies, then,
// observed so, dropped; removedDatabases: Delete drops it at once.
func TestRemovedDatabaseIsKeptInAzure(t *testing.T) {
	xr := provisioned()
	xr.Spec.DeletionPolicy = v1alpha1.DeletionDelete
	xr.Spec.Databases = []v1alpha1.DatabaseSpec{{DatabaseName: "Metrics", TelemetryType: v1alpha1.TelemetryMetrics}}
	withDelete := []any{"Observe", "Create", "Update", "Delete"}
	observed := func(logsPolicies []any) map[string]*ct.Resource {
		return map[string]*ct.Resource{
			"resource-group": created(resourceGroup()).Ready(), "cluster": runningCluster(),
			"database-Metrics": database("Metrics").Ready().Set("spec.managementPolicies", withDelete),
			"database-Logs":    database("Logs").Ready().Set("spec.managementPolicies", logsPolicies).Set("spec.forProvider.hotCachePeriod", "P31D"),
		}
	}

	r := run(t, ct.Call{XR: xr, Observed: observed(withDelete)})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs")
	r.Want("database-Logs", "spec.managementPolicies", []any{"Observe", "Create", "Update"})
	r.Want("database-Logs", "spec.forProvider.hotCachePeriod", "P31D")
	r.Want("database-Metrics", "spec.managementPolicies", withDelete)

	r = run(t, ct.Call{XR: xr, Observed: observed([]any{"Observe", "Create", "Update"})})
	r.WantNames("resource-group", "cluster", "database-Metrics")

	xr.Spec.RemovedDatabases = v1alpha1.DeletionDelete
	r = run(t, ct.Call{XR: xr, Observed: observed(withDelete)})
	r.WantNames("resource-group", "cluster", "database-Metrics")
}

func labels(data any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": environmentConfigAPIVersion, "kind": environmentConfigKind,
		"metadata": map[string]any{"name": v1beta1.DefaultEnvironmentConfigName},
		"data":     map[string]any{"labels": data},
	}}
}

var euGold = labels(map[string]any{"geo": "eu", "tier": "gold"})

func gated(expr string) *v1alpha1.ADXCluster {
	xr := partition()
	xr.Spec.CriteriaExpression = expr
	return xr
}

func found(objs ...runtime.Object) map[string][]runtime.Object {
	return map[string][]runtime.Object{labelsRequirement: objs}
}

func TestCriteriaExpression(t *testing.T) {
	t.Run("first call asks for the labels and composes nothing", func(t *testing.T) {
		r := run(t, ct.Call{XR: gated(`geo == "eu"`)})
		r.WantNames()
		sel := r.GetRequirements().GetResources()[labelsRequirement]
		if sel.GetKind() != environmentConfigKind || sel.GetMatchName() != v1beta1.DefaultEnvironmentConfigName || sel.GetApiVersion() != environmentConfigAPIVersion {
			t.Errorf("requirement = %v", sel)
		}
		if ttl := r.GetMeta().GetTtl().AsDuration(); ttl > criteriaTTL {
			t.Errorf("TTL = %s, want at most %s so that label changes are noticed", ttl, criteriaTTL)
		}
		wantCondition(r, fnv1.Status_STATUS_CONDITION_UNKNOWN, ReasonCriteriaPending)
	})
	for _, expr := range []string{`labels["geo"] == "eu" && labels.has("tier")`, `geo == "eu" && tier == "gold"`} {
		t.Run("true: "+expr, func(t *testing.T) {
			r := run(t, ct.Call{XR: gated(expr), Required: found(euGold)})
			r.WantNames("heartbeat")
			wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonProvisioningSkipped)
			if r.GetRequirements().GetResources()[labelsRequirement] == nil {
				t.Error("the requirement must stay stable across calls")
			}
		})
	}
	t.Run("false composes nothing new and keeps what exists", func(t *testing.T) {
		xr := gated(`geo == "us"`)
		xr.Spec.Role = "" // removed while gated
		r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"heartbeat": fleetplaneMR("Heartbeat").Ready()}, Required: found(euGold)})
		wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonCriteriaExpressionFalse)
		r.WantEvent(fnv1.Severity_SEVERITY_NORMAL, ReasonCriteriaExpressionFalse)
		r.WantNames("heartbeat")
		r.Want("heartbeat", "metadata.annotations", map[string]any{externalName: "heartbeat"})
		if r.Value("heartbeat", "status") != nil {
			t.Error("a kept resource must not carry its status into desired state")
		}
		r.WantNotReady()

		r = run(t, ct.Call{XR: gated(`geo == "us"`), Required: found(euGold)})
		r.WantNames()
	})
	t.Run("errors", func(t *testing.T) {
		for name, c := range map[string]struct {
			expr     string
			required []runtime.Object
			msg      string
		}{
			"unknown label":  {`region == "eu"`, []runtime.Object{euGold}, "undeclared reference to 'region'"},
			"syntax":         {`geo ==`, []runtime.Object{euGold}, "parse"},
			"no env config":  {`geo == "eu"`, nil, "does not exist"},
			"labels not map": {`geo == "eu"`, []runtime.Object{labels([]any{"a"})}, "map of strings"},
			"label not text": {`geo == "eu"`, []runtime.Object{labels(map[string]any{"geo": int64(1)})}, "data.labels.geo must be a string"},
		} {
			t.Run(name, func(t *testing.T) {
				r := run(t, ct.Call{XR: gated(c.expr), Required: map[string][]runtime.Object{labelsRequirement: c.required}})
				wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonCriteriaExpressionError, c.msg, "nothing is removed")
				r.WantEvent(fnv1.Severity_SEVERITY_WARNING, ReasonCriteriaExpressionError)
				r.WantNames()
			})
		}
	})
	t.Run("environment config name from input", func(t *testing.T) {
		in := &v1beta1.Input{Criteria: &v1beta1.Criteria{EnvironmentConfigName: "operator-labels"}}
		r := run(t, ct.Call{XR: gated(`geo == "eu"`), Input: in})
		if n := r.GetRequirements().GetResources()[labelsRequirement].GetMatchName(); n != "operator-labels" {
			t.Errorf("required EnvironmentConfig = %q, want operator-labels", n)
		}
	})
}

func TestBadInput(t *testing.T) {
	for name, interval := range map[string]string{"not a duration": "soon", "too short": "10ms"} {
		t.Run(name, func(t *testing.T) {
			req := ct.Call{XR: byo()}.Wire(t)
			_, err := Composer.Compose(req, fnwire.NewResponse(req, time.Minute), &v1beta1.Input{Kusto: &v1beta1.Kusto{Interval: interval}})
			if err == nil || !strings.Contains(err.Error(), `kusto.interval "`+interval+`"`) {
				t.Errorf("error = %v, want one naming kusto.interval", err)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	c := ct.Call{XR: hub(), Observed: map[string]*ct.Resource{"heartbeat-table": fleetplaneMR("Table").Ready()}}
	first, err := proto.MarshalOptions{Deterministic: true}.Marshal(run(t, c).RunFunctionResponse)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := proto.MarshalOptions{Deterministic: true}.Marshal(run(t, c).RunFunctionResponse)
		if string(again) != string(first) {
			t.Fatal("the same request rendered different responses")
		}
	}
}

func TestDatabasesDifferingByCaseAreOne(t *testing.T) {
	xr := provisionedHub()
	xr.Spec.Federation.HeartbeatDatabase = "fleetdiscovery"
	xr.Spec.Databases = []v1alpha1.DatabaseSpec{{DatabaseName: "Metrics"}, {DatabaseName: "metrics"}, {DatabaseName: "FleetDiscovery"}}
	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()}})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-FleetDiscovery")
}

func TestHeartbeatTableWaitsForItsDatabaseInAnySpelling(t *testing.T) {
	xr := provisionedHub()
	xr.Spec.Federation.HeartbeatDatabase = "fleetdiscovery"
	xr.Spec.Databases = []v1alpha1.DatabaseSpec{{DatabaseName: "FleetDiscovery"}}
	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{
		"resource-group": resourceGroup().Ready(), "cluster": runningCluster(), "database-FleetDiscovery": database("FleetDiscovery").Ready(),
	}})
	if !r.Has("heartbeat-table") {
		t.Errorf("the heartbeat table waits for database-fleetdiscovery, which is database-FleetDiscovery: %v", r.Names())
	}
}

// autoProvisioned asks for zero-config provisioning: only the cluster name.
func autoProvisioned() *v1alpha1.ADXCluster {
	return adx("zero", "zeroconfig01", v1alpha1.ADXClusterSpec{Provision: &v1alpha1.ProvisionSpec{Auto: true}})
}

func defaultsFound() *ct.Resource {
	return fleetplaneMR("ProvisioningDefaults").Ready().
		AtProvider("subscriptionId", "44444444-4444-4444-4444-444444444444").
		AtProvider("resourceGroup", "platform-rg").
		AtProvider("location", "westeurope").
		AtProvider("skuName", "Standard_L16as_v3").
		AtProvider("tier", "Standard").
		AtProvider("sources", []any{"subscriptionId: IMDS", "resourceGroup: IMDS, the resource group of AKS cluster platform", "location: IMDS", "skuName: Standard_L8as_v3 not offered in westeurope; Standard_L16as_v3 is offered in westeurope"})
}

// TestAutoProvision: provision.auto composes a ProvisioningDefaults
// first, waits for it, provisions with what it found (never writing the
// XR's spec), shows it in status, and keeps what a cluster was created
// with when discovery later sees something else.
func TestAutoProvision(t *testing.T) {
	t.Run("discovering: only the ProvisioningDefaults", func(t *testing.T) {
		r := run(t, ct.Call{XR: autoProvisioned()})
		r.WantNames("provisioning-defaults")
		r.Want("provisioning-defaults", "kind", "ProvisioningDefaults")
		r.Want("provisioning-defaults", "spec.managementPolicies", []string{"Observe"})
		r.Want("provisioning-defaults", "spec.forProvider", nil)
		wantCondition(r, fnv1.Status_STATUS_CONDITION_UNKNOWN, ReasonDiscovering, "subscriptionId, resourceGroup, location, skuName, tier")
		r.WantNotReady()
	})
	t.Run("given values are passed on", func(t *testing.T) {
		xr := autoProvisioned()
		xr.Spec.Provision.Location = "northeurope"
		r := run(t, ct.Call{XR: xr})
		r.Want("provisioning-defaults", "spec.forProvider", map[string]any{"location": "northeurope"})
	})
	t.Run("all found: provisioned with them", func(t *testing.T) {
		r := run(t, ct.Call{XR: autoProvisioned(), Observed: map[string]*ct.Resource{"provisioning-defaults": defaultsFound()}})
		r.WantNames("provisioning-defaults", "resource-group")
		r.Want("resource-group", "metadata.annotations", map[string]any{externalName: "platform-rg"})
		r.Want("resource-group", "spec.forProvider", map[string]any{"location": "westeurope"})
		wantCondition(r, fnv1.Status_STATUS_CONDITION_UNKNOWN, ReasonCreating, "platform-rg")

		r = run(t, ct.Call{XR: autoProvisioned(), Observed: map[string]*ct.Resource{
			"provisioning-defaults": defaultsFound(), "resource-group": ct.Observed(azureAPIVersion, "ResourceGroup", "platform-rg").Ready().Set("spec.forProvider.location", "westeurope"),
		}})
		r.Want("cluster", "metadata.annotations", map[string]any{externalName: "zeroconfig01", annotationSubscription: "44444444-4444-4444-4444-444444444444"})
		r.Want("cluster", "spec.forProvider.sku", map[string]any{"name": "Standard_L16as_v3"})
		r.Want("cluster", "spec.initProvider.sku", map[string]any{"capacity": 2})
	})
	t.Run("running: discovered values in status", func(t *testing.T) {
		running := created(ct.Observed(kustoAPIVersion, "Cluster", "zeroconfig01")).Ready().
			Annotate(annotationSubscription, "44444444-4444-4444-4444-444444444444").
			Set("spec.forProvider", map[string]any{"location": "westeurope", "resourceGroupName": "platform-rg", "sku": map[string]any{"name": "Standard_L16as_v3"}}).
			AtProvider("uri", "https://zeroconfig01.westeurope.kusto.windows.net").AtProvider("sku", map[string]any{"name": "Standard_L16as_v3"})
		r := run(t, ct.Call{XR: autoProvisioned(), Observed: map[string]*ct.Resource{
			"provisioning-defaults": defaultsFound(), "resource-group": ct.Observed(azureAPIVersion, "ResourceGroup", "platform-rg").Ready(), "cluster": running,
		}})
		wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonClusterReady)
		r.Want("", "status.appliedProvisionState.subscriptionId", "44444444-4444-4444-4444-444444444444")
		r.Want("", "status.appliedProvisionState.location", "westeurope")
		r.Want("", "status.appliedProvisionState.discovered", []string{"subscriptionId: as created", "resourceGroup: as created", "location: as created", "skuName: as created"})
		if r.Has("database-Metrics") == false {
			t.Error("a running cluster gets its databases")
		}

		// Discovery now sees another region and SKU: the cluster stays
		// where and as what it was created.
		moved := fleetplaneMR("ProvisioningDefaults").Ready().AtProvider("subscriptionId", "55555555-5555-5555-5555-555555555555").
			AtProvider("resourceGroup", "elsewhere").AtProvider("location", "eastus").AtProvider("skuName", "Standard_L32as_v3")
		r = run(t, ct.Call{XR: autoProvisioned(), Observed: map[string]*ct.Resource{
			"provisioning-defaults": moved, "resource-group": ct.Observed(azureAPIVersion, "ResourceGroup", "platform-rg").Ready(), "cluster": running,
		}})
		r.Want("cluster", "spec.forProvider.location", "westeurope")
		r.Want("cluster", "spec.initProvider.sku.name", "Standard_L16as_v3")
		r.Want("cluster", "spec.forProvider.resourceGroupName", "platform-rg")
		r.Want("cluster", "metadata.annotations", map[string]any{externalName: "zeroconfig01", annotationSubscription: "44444444-4444-4444-4444-444444444444"})
	})
	t.Run("discovery failed: nothing composed, the reason shown", func(t *testing.T) {
		failed := fleetplaneMR("ProvisioningDefaults").Unavailable("cannot reach Azure's instance metadata service at http://169.254.169.254 (is provider-fleetplane running in Azure?): dial tcp: i/o timeout; give subscriptionId, resourceGroup and location in spec.provision instead")
		r := run(t, ct.Call{XR: autoProvisioned(), Observed: map[string]*ct.Resource{"provisioning-defaults": failed}})
		r.WantNames("provisioning-defaults")
		wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonDiscoveryFailed, "Cannot discover subscriptionId, resourceGroup, location, skuName, tier", "instance metadata service", "spec.provision gives them")
		r.WantEvent(fnv1.Severity_SEVERITY_WARNING, ReasonDiscoveryFailed)
	})
	t.Run("discovered values Azure would refuse are not used", func(t *testing.T) {
		bad := defaultsFound().AtProvider("resourceGroup", "bad/group")
		r := run(t, ct.Call{XR: autoProvisioned(), Observed: map[string]*ct.Resource{"provisioning-defaults": bad}})
		r.WantNames("provisioning-defaults")
		wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonDiscoveryFailed, `resourceGroup "bad/group"`)
	})
	t.Run("without auto, missing values stay invalid", func(t *testing.T) {
		xr := autoProvisioned()
		xr.Spec.Provision.Auto = false
		r := run(t, ct.Call{XR: xr})
		r.WantNames()
		wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonProvisioningInvalid, "or provision.auto is true")
	})
}

// TestChangeCheck: the input's change check reaches both sides of a
// federation, the partition's Heartbeat and the hub's Federation; without
// it neither sets one and the MRs' defaults apply.
func TestChangeCheck(t *testing.T) {
	in := &v1beta1.Input{Kusto: &v1beta1.Kusto{Interval: "10s", ChangeCheckInterval: "2s"}}
	r := run(t, ct.Call{XR: partition(), Input: in})
	r.Want("heartbeat", "spec.forProvider.schemaCheckInterval", "2s")
	r = run(t, ct.Call{XR: hub(), Input: in, Observed: map[string]*ct.Resource{"heartbeat-table": fleetplaneMR("Table").Ready()}})
	r.Want("federation", "spec.forProvider.changeCheckInterval", "2s")

	r = run(t, ct.Call{XR: partition()})
	r.Want("heartbeat", "spec.forProvider.schemaCheckInterval", nil)

	for _, bad := range []string{"often", "100ms"} {
		req := ct.Call{XR: partition()}.Wire(t)
		_, err := Composer.Compose(req, fnwire.NewResponse(req, time.Minute), &v1beta1.Input{Kusto: &v1beta1.Kusto{ChangeCheckInterval: bad}})
		if err == nil || !strings.Contains(err.Error(), `kusto.changeCheckInterval "`+bad+`"`) {
			t.Errorf("changeCheckInterval %q: error = %v", bad, err)
		}
	}
}

// teamPolicy is what an admin writes for team-b: provisioning only in
// its own resource groups of one subscription, with its own upjet
// config, identities and principal.
func teamPolicy() *fpv1alpha1.ClusterProviderConfig {
	p := ct.Permissive()
	p.Name = "team-b"
	p.Spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"fleetplane.io/policy": "team-b"}}
	p.Spec.Azure = &fpv1alpha1.AzurePolicy{Provisioning: []fpv1alpha1.AzureProvisioning{{
		SubscriptionID:         ct.Subscription,
		ResourceGroups:         []string{"team-b-*"},
		ProviderConfigRef:      fpv1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "azure-team-b"},
		UserAssignedIdentities: []string{"/subscriptions/" + ct.Subscription + "/resourceGroups/team-b-ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/*"},
		DatabasePrincipals:     []string{"11111111-bbbb-1111-1111-111111111111"},
	}}}
	p.Spec.Kusto = &fpv1alpha1.KustoPolicy{Endpoints: []fpv1alpha1.KustoEndpointGrant{
		{Endpoint: "https://team-b-*.kusto.windows.net"},
		{Endpoint: "https://hub-b.kusto.windows.net", Databases: []string{"FleetDiscovery"}, Hub: &fpv1alpha1.KustoHubGrant{}},
	}}
	return p
}

// onKusto is a partition or hub XR moved to endpoint, with its heartbeat
// targets (a partition's) at target, asking for no identity.
func onKusto(xr *v1alpha1.ADXCluster, endpoint, target, database string) *v1alpha1.ADXCluster {
	xr.Spec.Endpoint = endpoint
	for i := range xr.Spec.Federation.FederatedTargets {
		t := &xr.Spec.Federation.FederatedTargets[i]
		t.Endpoint, t.HeartbeatDatabase, t.ManagedIdentityClientID = target, database, ""
	}
	if xr.Spec.Role == v1alpha1.RoleFederated {
		xr.Spec.Federation.HeartbeatDatabase = database
	}
	return xr
}

// TestPolicyRefuses: an ADXCluster composes nothing its namespace's
// policy does not grant. Each case is an attack a tenant could make
// with the platform's Azure identity before the function checked.
func TestPolicyRefuses(t *testing.T) {
	teamB := map[string]string{"fleetplane.io/policy": "team-b"}
	inGroup := func(rg string) *v1alpha1.ADXCluster {
		xr := provisioned()
		xr.Spec.Provision.ResourceGroup = rg
		return xr
	}
	cases := map[string]struct {
		xr      *v1alpha1.ADXCluster
		labels  map[string]string
		policy  *fpv1alpha1.ClusterProviderConfig
		message []string
	}{
		"another team's resource group": {
			xr: inGroup("team-a-prod"), labels: teamB, policy: teamPolicy(),
			message: []string{"ClusterProviderConfig team-b grants no provisioning in resource group team-a-prod of subscription " + ct.Subscription, "resourceGroups allows team-b-*"},
		},
		"a subscription not granted": {
			xr: func() *v1alpha1.ADXCluster {
				xr := inGroup("team-b-prod")
				xr.Spec.Provision.SubscriptionID = ct.MovedSubscription
				return xr
			}(), labels: teamB, policy: teamPolicy(),
			message: []string{"grants no provisioning in Azure subscription " + ct.MovedSubscription, "spec.azure.provisioning"},
		},
		"an identity not granted": {
			xr: func() *v1alpha1.ADXCluster {
				xr := inGroup("team-b-prod")
				xr.Spec.Provision.UserAssignedIdentities = []string{"/subscriptions/" + ct.Subscription + "/resourceGroups/team-a-ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/team-a-writer"}
				return xr
			}(), labels: teamB, policy: teamPolicy(),
			message: []string{"does not let clusters in subscription " + ct.Subscription + " carry the user-assigned identities /subscriptions/" + ct.Subscription + "/resourceGroups/team-a-ids/"},
		},
		"a principal not granted": {
			xr: func() *v1alpha1.ADXCluster {
				xr := inGroup("team-b-prod")
				xr.Spec.Provision.DatabasePrincipals = []v1alpha1.DatabasePrincipal{{ClientID: "11111111-aaaa-1111-1111-111111111111", TenantID: "33333333-3333-3333-3333-333333333333"}}
				return xr
			}(), labels: teamB, policy: teamPolicy(),
			message: []string{"does not let databases in subscription " + ct.Subscription + " grant roles to 11111111-aaaa-1111-1111-111111111111"},
		},
		"a principal without a tenant, where the policy names none": {
			xr: func() *v1alpha1.ADXCluster {
				xr := provisioned()
				xr.Spec.Provision.DatabasePrincipals = []v1alpha1.DatabasePrincipal{{ClientID: "22222222-2222-2222-2222-222222222222"}}
				return xr
			}(), policy: ct.Permissive(),
			message: []string{"database principal 22222222-2222-2222-2222-222222222222 names no tenant, and ClusterProviderConfig default names none for subscription " + ct.Subscription + " (spec.azure.provisioning[subscriptionId=" + ct.Subscription + "].tenantId)"},
		},
		"a heartbeat identity not granted": {
			xr: partition(), labels: teamB, policy: teamPolicy(),
			message: []string{"heartbeat target https://hub.kusto.windows.net: managedIdentityClientId 22222222-2222-2222-2222-222222222222 is not among the identities ClusterProviderConfig team-b allows"},
		},
		"heartbeats into another team's hub": {
			xr: onKusto(partition(), "https://team-b-eu.kusto.windows.net", "https://hub-a.kusto.windows.net", "FleetDiscovery"), labels: teamB, policy: teamPolicy(),
			message: []string{"heartbeat target https://hub-a.kusto.windows.net: ClusterProviderConfig team-b does not grant Kusto endpoint https://hub-a.kusto.windows.net (spec.federation.federatedTargets[].heartbeatDatabase); spec.kusto.endpoints grants https://team-b-*.kusto.windows.net, https://hub-b.kusto.windows.net"},
		},
		"heartbeats into another database of its hub": {
			xr: onKusto(partition(), "https://team-b-eu.kusto.windows.net", "https://hub-b.kusto.windows.net", "TeamA"), labels: teamB, policy: teamPolicy(),
			message: []string{"does not grant database TeamA on Kusto endpoint https://hub-b.kusto.windows.net", "allows there: FleetDiscovery"},
		},
		"a partition on another team's cluster": {
			xr: onKusto(partition(), "https://team-a-eu.kusto.windows.net", "https://hub-b.kusto.windows.net", "FleetDiscovery"), labels: teamB, policy: teamPolicy(),
			message: []string{"does not grant Kusto endpoint https://team-a-eu.kusto.windows.net (spec.endpoint)"},
		},
		"a hub on an endpoint granted, but not as a hub": {
			xr: onKusto(hub(), "https://team-b-eu.kusto.windows.net", "", "FleetDiscovery"), labels: teamB, policy: teamPolicy(),
			message: []string{"grants Kusto endpoint https://team-b-eu.kusto.windows.net (spec.endpoint) but not as a hub"},
		},
		"a hub in a database not granted": {
			xr: onKusto(hub(), "https://hub-b.kusto.windows.net", "", "TeamA"), labels: teamB, policy: teamPolicy(),
			message: []string{"does not grant database TeamA on Kusto endpoint https://hub-b.kusto.windows.net (spec.federation.heartbeatDatabase)"},
		},
		"a namespace the config does not select": {
			xr: inGroup("team-b-prod"), policy: teamPolicy(),
			message: []string{"namespace team-a is granted nothing: it is governed by ClusterProviderConfig default", "whose spec.namespaceSelector does not select it"},
		},
		"a bring-your-own cluster in a namespace granted nothing": {
			xr: byo(), policy: teamPolicy(),
			message: []string{"namespace team-a is granted nothing"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			policy := tc.policy
			if tc.labels == nil {
				policy = policy.DeepCopy()
				policy.Name = "default"
			}
			r := run(t, ct.Call{XR: tc.xr, Policy: policy, NamespaceLabels: tc.labels})
			r.WantNames()
			wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNotGranted, tc.message...)
			r.WantEvent(fnv1.Severity_SEVERITY_FATAL, ReasonNotGranted)
			r.WantNotReady()

			// What was composed before the policy changed stays as it was.
			r = run(t, ct.Call{XR: tc.xr, Policy: policy, NamespaceLabels: tc.labels, Observed: map[string]*ct.Resource{
				"resource-group": resourceGroup().Ready(), "heartbeat": fleetplaneMR("Heartbeat").Ready(),
			}})
			r.WantNames("heartbeat", "resource-group")
			wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonNotGranted)
		})
	}

	t.Run("granted: its own Kusto endpoints", func(t *testing.T) {
		r := run(t, ct.Call{XR: onKusto(partition(), "https://team-b-eu.kusto.windows.net", "https://hub-b.kusto.windows.net", "FleetDiscovery"), Policy: teamPolicy(), NamespaceLabels: teamB})
		r.WantNames("heartbeat")
		r = run(t, ct.Call{XR: onKusto(hub(), "https://hub-b.kusto.windows.net", "", "FleetDiscovery"), Policy: teamPolicy(), NamespaceLabels: teamB})
		r.WantNames("heartbeat-table")
	})
	t.Run("granted: the policy's upjet config acts", func(t *testing.T) {
		xr := inGroup("team-b-prod")
		xr.Spec.Provision.DatabasePrincipals = []v1alpha1.DatabasePrincipal{{ClientID: "11111111-BBBB-1111-1111-111111111111", TenantID: "33333333-3333-3333-3333-333333333333"}}
		r := run(t, ct.Call{XR: xr, Policy: teamPolicy(), NamespaceLabels: teamB})
		r.WantNames("resource-group")
		r.Want("resource-group", "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "azure-team-b"})
		r.Want("resource-group", "spec.managementPolicies", []string{"Observe", "Create"})
	})
	t.Run("until Crossplane supplies the policy, nothing", func(t *testing.T) {
		r := run(t, ct.Call{XR: provisioned(), PolicyUnanswered: true, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready()}})
		r.WantNames("resource-group")
		wantCondition(r, fnv1.Status_STATUS_CONDITION_UNKNOWN, "ReadingPolicy")
		r.WantEvent(0, "")
	})
}

// TestNeverTakeOver: a cluster or database Azure already had, of the
// name an ADXCluster asks for, is observed only, never updated or
// deleted, and the XR says so instead of going on.
func TestNeverTakeOver(t *testing.T) {
	xr := provisioned()
	xr.Spec.DeletionPolicy = v1alpha1.DeletionDelete
	found := foundCluster().Ready().AtProvider("uri", "https://obseastus2.eastus2.kusto.windows.net")
	r := run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": found}})
	r.WantNames("resource-group", "cluster")
	r.Want("cluster", "spec.managementPolicies", []string{"Observe", "Create"})
	r.Want("resource-group", "spec.managementPolicies", []string{"Observe", "Create"})
	wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonAlreadyExists, "Azure already has Cluster obseastus2, which this ADXCluster did not create", "never takes over")
	r.WantEvent(fnv1.Severity_SEVERITY_WARNING, ReasonAlreadyExists)
	r.Want("", "status.endpoint", nil)

	// A database of the name in a cluster it created: the same.
	r = run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{
		"resource-group": resourceGroup().Ready(), "cluster": runningCluster(),
		"database-Metrics": ct.Observed(kustoAPIVersion, "Database", "Metrics").Ready(),
	}})
	r.WantNames("resource-group", "cluster", "database-Metrics")
	r.Want("database-Metrics", "spec.managementPolicies", []string{"Observe", "Create"})
	wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, ReasonAlreadyExists, "Database Metrics")

	// Still creating (not Ready): nothing is known yet.
	r = run(t, ct.Call{XR: xr, Observed: map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": foundCluster()}})
	wantCondition(r, fnv1.Status_STATUS_CONDITION_UNKNOWN, ReasonWaiting)
}
