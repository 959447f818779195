package adxcluster

import (
	"fmt"
	"sort"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/compose"
)

// Composition resource names: the stable keys Crossplane matches observed
// to desired resources by.
const (
	NameResourceGroup  resource.Name = "resource-group"
	NameCluster        resource.Name = "cluster"
	NameHeartbeat      resource.Name = "heartbeat"
	NameHeartbeatTable resource.Name = "heartbeat-table"
	NameFederation     resource.Name = "federation"
	databasePrefix                   = "database-"
)

// DatabaseName is the composition resource name of a database.
func DatabaseName(db string) resource.Name { return resource.Name(databasePrefix + db) }

// The upjet kinds composed in provision mode.
const (
	azureAPIVersion = "azure.m.upbound.io/v1beta1"
	kustoAPIVersion = "kusto.azure.m.upbound.io/v1beta1"
	externalName    = "crossplane.io/external-name"
)

// HeartbeatColumns is the schema of a hub's heartbeat table.
var HeartbeatColumns = []kustov1alpha1.Column{
	{Name: "Timestamp", Type: "datetime"},
	{Name: "ClusterEndpoint", Type: "string"},
	{Name: "Schema", Type: "dynamic"},
	{Name: "PartitionMetadata", Type: "dynamic"},
}

// Defaults the XRD applies; repeated here for XRs that reach the function
// without them (crossplane render without --xrd, older XRDs).
const (
	defaultHeartbeatTTL = "1h"
	defaultAutoScaleMin = 2
	defaultAutoScaleMax = 10
)

// renderer builds the composed resources of one ADXCluster.
type renderer struct {
	xr  *v1alpha1.ADXCluster
	cfg Config
}

// managementPolicies keep Azure resources when their MR is deleted unless
// the XR opts in to deletion.
func (r renderer) managementPolicies() []any {
	if r.xr.Spec.DeletionPolicy == v1alpha1.DeletionDelete {
		return []any{string(xpv2.ManagementActionAll)}
	}
	return []any{
		string(xpv2.ManagementActionObserve),
		string(xpv2.ManagementActionCreate),
		string(xpv2.ManagementActionUpdate),
		string(xpv2.ManagementActionLateInitialize),
	}
}

func (r renderer) azure(apiVersion, kind, name string, forProvider map[string]any) *composed.Unstructured {
	pc := r.cfg.azureProviderConfig(r.xr.Spec.Provision.SubscriptionID)
	o := composed.New()
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetAnnotations(map[string]string{externalName: name})
	o.Object["spec"] = map[string]any{
		"forProvider":        forProvider,
		"managementPolicies": r.managementPolicies(),
		"providerConfigRef":  map[string]any{"kind": pc.Kind, "name": pc.Name},
	}
	return o
}

func (r renderer) resourceGroup() *composed.Unstructured {
	p := r.xr.Spec.Provision
	return r.azure(azureAPIVersion, "ResourceGroup", p.ResourceGroup, map[string]any{"location": p.Location})
}

// clusterCapacity is Azure's smallest cluster for a tier; upjet needs a
// capacity unless optimized autoscale sets it.
func clusterCapacity(t v1alpha1.Tier) int64 {
	if t == v1alpha1.TierBasic {
		return 1
	}
	return 2
}

func (r renderer) cluster() *composed.Unstructured {
	p := r.xr.Spec.Provision
	sku := map[string]any{"name": p.SkuName}
	identity := map[string]any{"type": "SystemAssigned"}
	if len(p.UserAssignedIdentities) > 0 {
		ids := append([]string(nil), p.UserAssignedIdentities...)
		sort.Strings(ids)
		list := make([]any, len(ids))
		for i, id := range ids {
			list[i] = id
		}
		identity = map[string]any{"type": "UserAssigned", "identityIds": list}
	}
	fp := map[string]any{
		"location":          p.Location,
		"resourceGroupName": p.ResourceGroup,
		"sku":               sku,
		"identity":          identity,
		// Azure's auto-stop would silence a cluster that only serves
		// federated queries; the operators this replaces turned it off too.
		"autoStopEnabled": false,
	}
	if p.AutoScale {
		lo, hi := int64(p.AutoScaleMin), int64(p.AutoScaleMax)
		if lo == 0 {
			lo = defaultAutoScaleMin
		}
		if hi == 0 {
			hi = defaultAutoScaleMax
		}
		fp["optimizedAutoScale"] = map[string]any{"minimumInstances": lo, "maximumInstances": hi}
	} else {
		sku["capacity"] = clusterCapacity(p.Tier)
	}
	return r.azure(kustoAPIVersion, "Cluster", r.xr.Spec.ClusterName, fp)
}

func (r renderer) database(db v1alpha1.DatabaseSpec) *composed.Unstructured {
	p := r.xr.Spec.Provision
	fp := map[string]any{
		"location":          p.Location,
		"clusterName":       r.xr.Spec.ClusterName,
		"resourceGroupName": p.ResourceGroup,
	}
	if db.RetentionInDays != nil {
		fp["softDeletePeriod"] = fmt.Sprintf("P%dD", *db.RetentionInDays)
	}
	return r.azure(kustoAPIVersion, "Database", db.DatabaseName, fp)
}

// discoveredAnnotation marks databases a hub created for its partitions.
const discoveredAnnotation = "adx.fleetplane.io/discovered"

func (r renderer) discoveredDatabase(name string) *composed.Unstructured {
	o := r.database(v1alpha1.DatabaseSpec{DatabaseName: name})
	ann := o.GetAnnotations()
	ann[discoveredAnnotation] = "true"
	o.SetAnnotations(ann)
	return o
}

// databases is the list a provisioned cluster gets: the spec's, Metrics and
// Logs when it is empty, and a hub's heartbeat database.
func (r renderer) databases() []v1alpha1.DatabaseSpec {
	// One resource per Kusto database: names that differ only by case are
	// one database (the XRD refuses them; an older XR may hold them).
	var dbs []v1alpha1.DatabaseSpec
	for _, d := range r.xr.Spec.Databases {
		if !hasDatabase(dbs, d.DatabaseName) {
			dbs = append(dbs, d)
		}
	}
	if len(dbs) == 0 {
		dbs = []v1alpha1.DatabaseSpec{
			{DatabaseName: "Metrics", TelemetryType: v1alpha1.TelemetryMetrics},
			{DatabaseName: "Logs", TelemetryType: v1alpha1.TelemetryLogs},
		}
	}
	if hb := r.heartbeatDatabase(); hb != "" && !hasDatabase(dbs, hb) {
		dbs = append(dbs, v1alpha1.DatabaseSpec{DatabaseName: hb, TelemetryType: v1alpha1.TelemetryLogs})
	}
	return dbs
}

// databaseResource is the composition resource name of the database a
// name refers to, in the spelling it is composed under.
func (r renderer) databaseResource(name string) resource.Name {
	for _, d := range r.databases() {
		if strings.EqualFold(d.DatabaseName, name) {
			return DatabaseName(d.DatabaseName)
		}
	}
	return DatabaseName(name)
}

// hasDatabase compares names as Kusto does, ignoring case.
func hasDatabase(dbs []v1alpha1.DatabaseSpec, name string) bool {
	for _, d := range dbs {
		if strings.EqualFold(d.DatabaseName, name) {
			return true
		}
	}
	return false
}

// heartbeatDatabase is the hub's heartbeat database, or "" for non-hubs.
func (r renderer) heartbeatDatabase() string {
	if r.xr.Spec.Role != v1alpha1.RoleFederated || r.xr.Spec.Federation == nil {
		return ""
	}
	return r.xr.Spec.Federation.HeartbeatDatabase
}

func (r renderer) kustoSpec() (xpv2.ManagedResourceSpec, *metav1.Duration) {
	pc := r.cfg.Kusto
	return xpv2.ManagedResourceSpec{ProviderConfigReference: &pc}, &metav1.Duration{Duration: r.cfg.Interval}
}

func (r renderer) heartbeat(endpoint string) (*composed.Unstructured, error) {
	f := r.xr.Spec.Federation
	spec, interval := r.kustoSpec()
	hb := &kustov1alpha1.Heartbeat{Spec: kustov1alpha1.HeartbeatSpec{
		ManagedResourceSpec: spec,
		ForProvider: kustov1alpha1.HeartbeatParameters{
			Endpoint:     endpoint,
			Partitioning: f.Partitioning,
			Interval:     interval,
		},
	}}
	for _, t := range f.FederatedTargets {
		hb.Spec.ForProvider.Targets = append(hb.Spec.ForProvider.Targets, kustov1alpha1.HeartbeatTarget{
			Endpoint:                t.Endpoint,
			HeartbeatDatabase:       t.HeartbeatDatabase,
			HeartbeatTable:          t.HeartbeatTable,
			ManagedIdentityClientID: t.ManagedIdentityClientID,
		})
	}
	return compose.Typed(hb)
}

func (r renderer) heartbeatTable(endpoint string) (*composed.Unstructured, error) {
	f := r.xr.Spec.Federation
	spec, _ := r.kustoSpec()
	// The heartbeat table holds the fleet's discovery data: keep it when
	// the MR goes, like the Azure resources.
	spec.ManagementPolicies = xpv2.ManagementPolicies{
		xpv2.ManagementActionObserve, xpv2.ManagementActionCreate,
		xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize,
	}
	if r.xr.Spec.DeletionPolicy == v1alpha1.DeletionDelete {
		spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	}
	t := &kustov1alpha1.Table{Spec: kustov1alpha1.TableSpec{
		ManagedResourceSpec: spec,
		ForProvider: kustov1alpha1.TableParameters{
			Endpoint: endpoint,
			Database: f.HeartbeatDatabase,
			Table:    f.HeartbeatTable,
			Columns:  append([]kustov1alpha1.Column(nil), HeartbeatColumns...),
		},
	}}
	return compose.Typed(t)
}

func (r renderer) federation(endpoint string) (*composed.Unstructured, error) {
	f := r.xr.Spec.Federation
	spec, interval := r.kustoSpec()
	ttl := f.HeartbeatTTL
	if ttl == "" {
		ttl = defaultHeartbeatTTL
	}
	fed := &kustov1alpha1.Federation{Spec: kustov1alpha1.FederationSpec{
		ManagedResourceSpec: spec,
		ForProvider: kustov1alpha1.FederationParameters{
			Endpoint:          endpoint,
			HeartbeatDatabase: f.HeartbeatDatabase,
			HeartbeatTable:    f.HeartbeatTable,
			HeartbeatTTL:      ttl,
			Interval:          interval,
			// Partitions of a hub allowed plain http are local emulators too.
			AllowInsecureEndpoints: r.xr.Spec.AllowInsecureEndpoints,
		},
	}}
	if f.BlockedClusters != nil {
		fed.Spec.ForProvider.BlockedClusters = f.BlockedClusters.DeepCopy()
	}
	return compose.Typed(fed)
}

// tierOf is the tier Azure derives from a SKU name.
func tierOf(sku string) v1alpha1.Tier {
	if strings.HasPrefix(sku, "Dev(No SLA)") {
		return v1alpha1.TierBasic
	}
	return v1alpha1.TierStandard
}
