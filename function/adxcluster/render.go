package adxcluster

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
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
	// where the cluster is provisioned: the spec's provision block, with
	// what provision.auto discovered filled in.
	where Where
	// azureConfig is the upjet Azure config the policy names for where.
	azureConfig xpv2.ProviderConfigReference
}

// managementPolicies never let an MR take over what Azure already has:
// until its MR created a resource (created: crossplane-runtime's proof of
// a successful Create), it may only observe and create it, so an existing
// resource of the same name is never updated nor deleted. Once created,
// it is kept in step (Update), and deleted with its MR only when the XR
// opts in. LateInitialize is left out on purpose: it copies Azure's values
// into forProvider, and upjet reconciles every forProvider field back
// onto Azure, so a field set once at creation (in initProvider, which
// upjet tells Terraform to ignore afterwards) would be chased after all.
func (r renderer) managementPolicies(created bool) []any {
	p := []any{string(xpv2.ManagementActionObserve), string(xpv2.ManagementActionCreate)}
	if !created {
		return p
	}
	p = append(p, string(xpv2.ManagementActionUpdate))
	if r.xr.Spec.DeletionPolicy == v1alpha1.DeletionDelete {
		p = append(p, string(xpv2.ManagementActionDelete))
	}
	return p
}

// azure renders an upjet MR. forProvider is what the spec says and is kept
// on Azure; initProvider is what fleetplane defaults, set at creation only.
func (r renderer) azure(apiVersion, kind, name string, forProvider, initProvider map[string]any, created bool) *composed.Unstructured {
	pc := r.azureConfig
	spec := map[string]any{
		"forProvider":        forProvider,
		"managementPolicies": r.managementPolicies(created),
		"providerConfigRef":  map[string]any{"kind": pc.Kind, "name": pc.Name},
	}
	if len(initProvider) > 0 {
		spec["initProvider"] = initProvider
	}
	// Written as the map it is: the Unstructured setters copy every value
	// they set, for each of an XR's tens of databases on every call.
	o := composed.New()
	o.Object = map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"annotations": map[string]any{externalName: name}},
		"spec":       spec,
	}
	return o
}

// annotate adds an annotation to an object azure rendered.
func annotate(o *composed.Unstructured, key, value string) {
	md, _ := o.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	ann[key] = value
}

// provisioningDefaults asks provider-fleetplane to discover what
// provision.auto leaves out; the values the spec gives are passed on, so
// that what it reports is complete. It only observes.
func (r renderer) provisioningDefaults() (*composed.Unstructured, error) {
	p := r.xr.Spec.Provision
	spec, _ := r.kustoSpec()
	spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	pd := &kustov1alpha1.ProvisioningDefaults{Spec: kustov1alpha1.ProvisioningDefaultsSpec{
		ManagedResourceSpec: spec,
		ForProvider: kustov1alpha1.ProvisioningDefaultsParameters{
			SubscriptionID: p.SubscriptionID, ResourceGroup: p.ResourceGroup, Location: p.Location, SkuName: p.SkuName,
		},
	}}
	return compose.Typed(pd)
}

// Each Azure resource is updated, and deleted with deletionPolicy Delete,
// only once it is known that its MR created it (created): an ADXCluster
// changes and removes what it made, never what it found. For a resource
// group that matters most, as Azure deletes everything in it.
func (r renderer) resourceGroup(created bool) *composed.Unstructured {
	return r.azure(azureAPIVersion, "ResourceGroup", r.where.ResourceGroup, map[string]any{"location": r.where.Location}, nil, created)
}

// clusterCapacity is Azure's smallest cluster for a tier; upjet needs a
// capacity unless optimized autoscale sets it.
func clusterCapacity(t v1alpha1.Tier) int64 {
	if t == v1alpha1.TierBasic {
		return 1
	}
	return 2
}

// cluster renders the Kusto cluster. What the spec says (location, SKU,
// identities, public access when given) is kept on Azure; what fleetplane
// defaults (auto-stop and streaming ingestion off, public access off,
// the initial capacity) and autoscale, which the seed applies at creation
// only, go to initProvider. A capacity the spec sets is kept, like the
// SKU. Azure's engine is always V3 (upjet has no engine field any more).
//
// With press false (see pressAzure), the SKU, capacity and identities go
// to initProvider as well: Azure reached them, and a change made there
// since is left alone.
func (r renderer) cluster(created, press bool) *composed.Unstructured {
	p := r.xr.Spec.Provision
	w := r.where
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
		"location":          w.Location,
		"resourceGroupName": w.ResourceGroup,
		"sku":               map[string]any{"name": w.SkuName},
		"identity":          identity,
	}
	ip := map[string]any{
		// Azure's auto-stop would silence a cluster that only serves
		// federated queries; the operators this replaces turned it off too.
		"autoStopEnabled":            false,
		"streamingIngestionEnabled":  false,
		"publicNetworkAccessEnabled": false,
	}
	if p.PublicNetworkAccessEnabled != nil {
		fp["publicNetworkAccessEnabled"] = *p.PublicNetworkAccessEnabled
		delete(ip, "publicNetworkAccessEnabled")
	}
	switch {
	case p.Capacity != nil:
		// Asked for, so kept: the instance count follows the spec (an
		// ADXMon's autoscaler decides it).
		fp["sku"] = map[string]any{"name": w.SkuName, "capacity": int64(*p.Capacity)}
	case p.AutoScale:
		lo, hi := int64(p.AutoScaleMin), int64(p.AutoScaleMax)
		if lo == 0 {
			lo = defaultAutoScaleMin
		}
		if hi == 0 {
			hi = defaultAutoScaleMax
		}
		ip["optimizedAutoScale"] = map[string]any{"minimumInstances": lo, "maximumInstances": hi}
	default:
		ip["sku"] = map[string]any{"capacity": clusterCapacity(w.Tier)}
	}
	if !press {
		// Creation-time, like the defaults: merged into initProvider.
		sku, _ := ip["sku"].(map[string]any)
		if sku == nil {
			sku = map[string]any{}
		}
		asked, _ := fp["sku"].(map[string]any)
		maps.Copy(sku, asked)
		ip["sku"], ip["identity"] = sku, fp["identity"]
		delete(fp, "sku")
		delete(fp, "identity")
	}
	o := r.azure(kustoAPIVersion, "Cluster", r.xr.Spec.ClusterName, fp, ip, created)
	if p.Auto {
		annotate(o, annotationSubscription, w.SubscriptionID)
	}
	return o
}

// defaultDatabasePeriod is the seed's standard retention: 30 days of soft
// delete and of hot cache.
const defaultDatabasePeriod = "P30D"

// database renders a database. retentionInDays is the spec's and kept on
// Azure; the standard periods are set at creation only.
func (r renderer) database(db v1alpha1.DatabaseSpec, created bool) *composed.Unstructured {
	w := r.where
	fp := map[string]any{
		"location":          w.Location,
		"clusterName":       r.xr.Spec.ClusterName,
		"resourceGroupName": w.ResourceGroup,
	}
	ip := map[string]any{"hotCachePeriod": defaultDatabasePeriod, "softDeletePeriod": defaultDatabasePeriod}
	if db.RetentionInDays != nil {
		fp["softDeletePeriod"] = fmt.Sprintf("P%dD", *db.RetentionInDays)
		delete(ip, "softDeletePeriod")
	}
	return r.azure(kustoAPIVersion, "Database", db.DatabaseName, fp, ip, created)
}

// principalPrefix starts the composition resource name of a database
// principal assignment.
const principalPrefix = "principal-"

// PrincipalName is the composition resource name of a principal's role
// on a database.
func PrincipalName(db string, pr v1alpha1.DatabasePrincipal) resource.Name {
	return resource.Name(principalPrefix + db + "-" + strings.ToLower(pr.ClientID) + "-" + strings.ToLower(string(principalRole(pr))))
}

func principalRole(pr v1alpha1.DatabasePrincipal) v1alpha1.DatabaseRole {
	if pr.Role == "" {
		return v1alpha1.DatabaseRoleAdmin
	}
	return pr.Role
}

// databasePrincipal gives a principal its role on a database. Azure names
// an assignment within its database, so the client ID and role name it.
func (r renderer) databasePrincipal(db string, pr v1alpha1.DatabasePrincipal, created bool) *composed.Unstructured {
	w := r.where
	role := principalRole(pr)
	fp := map[string]any{
		"clusterName":       r.xr.Spec.ClusterName,
		"databaseName":      db,
		"resourceGroupName": w.ResourceGroup,
		// Kusto takes an application's client ID for principal type App,
		// which managed identities are.
		"principalId":   strings.ToLower(pr.ClientID),
		"principalType": "App",
		"role":          string(role),
		"tenantId":      strings.ToLower(pr.TenantID),
	}
	return r.azure(kustoAPIVersion, "DatabasePrincipalAssignment", strings.ToLower(pr.ClientID)+"-"+strings.ToLower(string(role)), fp, nil, created)
}

// discoveredAnnotation marks databases a hub created for its partitions.
const discoveredAnnotation = "adx.fleetplane.io/discovered"

func (r renderer) discoveredDatabase(name string, created bool) *composed.Unstructured {
	o := r.database(v1alpha1.DatabaseSpec{DatabaseName: name}, created)
	annotate(o, discoveredAnnotation, "true")
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

// changeCheck is the input's change check, nil when it sets none.
func (r renderer) changeCheck() *metav1.Duration {
	if r.cfg.ChangeCheck == 0 {
		return nil
	}
	return &metav1.Duration{Duration: r.cfg.ChangeCheck}
}

func (r renderer) heartbeat(endpoint string) (*composed.Unstructured, error) {
	f := r.xr.Spec.Federation
	spec, interval := r.kustoSpec()
	hb := &kustov1alpha1.Heartbeat{Spec: kustov1alpha1.HeartbeatSpec{
		ManagedResourceSpec: spec,
		ForProvider: kustov1alpha1.HeartbeatParameters{
			Endpoint:            endpoint,
			Partitioning:        f.Partitioning,
			Interval:            interval,
			SchemaCheckInterval: r.changeCheck(),
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
			// Unset, the Federation's own default applies.
			ChangeCheckInterval: r.changeCheck(),
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
