// Package adxmon composes an ADXMon: a whole adx-mon installation. Its ADX
// clusters are ADXCluster XRs (nested, so provisioning and adoption work
// exactly as they do alone); then the ingestor, the collectors and the
// alerter, shaped after adx-mon's own manifests, each installed only once
// the one before is ready; and adx-mon's CRDs through provider-kubernetes
// Objects that never delete them.
//
// The XR reports one condition per phase (ADXReady, DatabasesReady,
// IngestorReady, CollectorReady, AlerterReady) and AutoscalerReady, which
// is not a phase; its status has the phase, what it observes of each
// workload, and the hand-made changes it undid. Each phase gates the next
// through the Set alone: its objects are added when the phase before is
// done (AddObjectWhen's precondition) and after the objects they need
// (its predecessors).
package adxmon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// DefaultNamespace is where a stack goes unless its spec says otherwise,
// as in adx-mon's own manifests.
const DefaultNamespace = "adx-mon"

// Reasons of the phase conditions. NotInstalled, Installing, Installed
// and Drifted are adx-mon's operator's own; NotRequested, Failed and
// IngestorMissing say what that operator leaves to a log line.
// AutoscalerReady has reasons of its own (autoscaler.go).
const (
	ReasonNotRequested    = "NotRequested"
	ReasonNotInstalled    = "NotInstalled"
	ReasonInstalling      = "Installing"
	ReasonInstalled       = "Installed"
	ReasonDrifted         = "Drifted"
	ReasonFailed          = "Failed"
	ReasonIngestorMissing = "IngestorMissing"
	// ReasonEndpointInvalid: spec.collector.ingestorEndpoint names an
	// in-cluster ingestor Service in a way that cannot reach it.
	ReasonEndpointInvalid = "EndpointInvalid"
)

// Phases of status.phase, in order.
const (
	PhaseADX       = "ProvisioningADX"
	PhaseDatabases = "CreatingDatabases"
	PhaseIngestor  = "InstallingIngestor"
	PhaseCollector = "InstallingCollector"
	PhaseAlerter   = "InstallingAlerter"
	PhaseInstalled = "Installed"
	PhaseFailed    = "Failed"
)

// Composition resource names.
const (
	NameNamespace resource.Name = "namespace"
	NameIngestor  resource.Name = "ingestor"
	NameCollector resource.Name = "collector"
	NameAlerter   resource.Name = "alerter"
	// NameCollectorConfig is the collector's ConfigMap.
	NameCollectorConfig resource.Name = "collector-config"
	// NameIngestorService is the ingestor's Service.
	NameIngestorService resource.Name = "ingestor-service"
)

// adxPrefix starts the composition resource name of each ADX cluster.
const adxPrefix = "adx-"

// maxDrift bounds status.drift.
const maxDrift = 10

// Composer composes ADXMons.
var Composer = compose.Run(plan)

// endpointDB is a database and the endpoint of its cluster.
type endpointDB struct {
	Name     string
	Type     v1alpha1.TelemetryType
	Endpoint string
}

type planner struct {
	r   *compose.Request[v1alpha1.ADXMon]
	xr  *v1alpha1.ADXMon
	cfg Config
	set *compose.Set
	ns  string

	status v1alpha1.ADXMonStatus
	conds  map[string]compose.Condition
	failed bool

	// The stack's Autoscalers, when spec.autoscaler is enabled: the
	// ingestor's, and each provisioned cluster's by position.
	ingestorScale *scaled
	adxScale      map[int]*scaled
}

func plan(r *compose.Request[v1alpha1.ADXMon]) (compose.Outcome, error) {
	p := &planner{r: r, xr: r.XR, cfg: ConfigFrom(r.Input), set: r.Resources, ns: r.XR.Spec.Namespace, conds: map[string]compose.Condition{}}
	if p.ns == "" {
		p.ns = DefaultNamespace
	}
	p.plan()
	out := compose.Outcome{Status: &p.status, Pending: p.status.Phase != PhaseInstalled, Settled: p.status.Phase == PhaseFailed}
	for _, t := range []string{v1alpha1.ConditionADXReady, v1alpha1.ConditionDatabasesReady, v1alpha1.ConditionIngestorReady, v1alpha1.ConditionCollectorReady, v1alpha1.ConditionAlerterReady, v1alpha1.ConditionAutoscalerReady} {
		out.Conditions = append(out.Conditions, p.conds[t])
	}
	return out, nil
}

func (p *planner) plan() {
	spec := p.xr.Spec
	p.planScaling()
	nsOK := p.namespace()
	dbs, dbReady := p.adx(nsOK)

	ingestorOK := spec.Ingestor == nil
	if spec.Ingestor != nil {
		ingestorOK = p.ingestorPhase(nsOK && dbReady, dbs)
	} else {
		p.notRequested(v1alpha1.ConditionIngestorReady, "spec.ingestor is not set: this stack runs no ingestor")
	}

	collectorOK := spec.Collector == nil
	if spec.Collector != nil {
		collectorOK = p.collectorPhase(nsOK && dbReady && ingestorOK, dbs)
	} else {
		p.notRequested(v1alpha1.ConditionCollectorReady, "spec.collector is not set: this stack runs no collector")
	}

	alerterOK := spec.Alerter == nil
	if spec.Alerter != nil {
		alerterOK = p.alerterPhase(nsOK && dbReady && ingestorOK && collectorOK, dbs)
	} else {
		p.notRequested(v1alpha1.ConditionAlerterReady, "spec.alerter is not set: this stack runs no alerter")
	}

	p.keepDrift()
	p.status.Phase = p.phase(dbReady, ingestorOK, collectorOK, alerterOK)
	p.composeScaling(p.status.Phase == PhaseInstalled)
}

func (p *planner) phase(dbReady, ingestorOK, collectorOK, alerterOK bool) string {
	switch {
	case p.failed:
		return PhaseFailed
	case p.conds[v1alpha1.ConditionADXReady].Status != corev1.ConditionTrue:
		return PhaseADX
	case !dbReady:
		return PhaseDatabases
	case !ingestorOK:
		return PhaseIngestor
	case !collectorOK:
		return PhaseCollector
	case !alerterOK:
		return PhaseAlerter
	}
	return PhaseInstalled
}

func (p *planner) setCondition(t string, s corev1.ConditionStatus, reason, msg string) {
	c := compose.Condition{Type: t, Status: s, Reason: reason, Message: msg}
	if reason == ReasonFailed || reason == ReasonDrifted || reason == ReasonIngestorMissing || reason == ReasonEndpointInvalid || reason == ReasonMetricsMissing || reason == ReasonCannotEvaluate {
		c.Warning = true
	}
	if reason == ReasonFailed {
		p.failed = true
	}
	// Steps on the way are visible in the conditions; events are for
	// arrivals and trouble.
	if reason == ReasonNotInstalled || reason == ReasonInstalling || reason == ReasonNotRequested || reason == ReasonWaiting {
		c.Quiet = true
	}
	p.conds[t] = c
}

func (p *planner) notRequested(t, msg string) {
	p.setCondition(t, corev1.ConditionTrue, ReasonNotRequested, msg)
}

// namespace composes the stack's namespace unless it exists already and
// is not this ADXMon's: a namespace someone else made is used, never
// taken over, so deleting the ADXMon never deletes it.
func (p *planner) namespace() bool {
	if !p.set.Exists(NameNamespace) {
		items, resolved := p.r.Require(string(NameNamespace), compose.Selector{APIVersion: "v1", Kind: "Namespace", Name: p.ns})
		if !resolved {
			return false
		}
		if len(items) > 0 {
			return true
		}
	}
	ns := &corev1.Namespace{}
	ns.Name = p.ns
	ns.Labels = map[string]string{labelPartOf: partOf, labelInstance: p.xr.Name}
	p.set.AddObject(NameNamespace, ns)
	return p.set.Ready(NameNamespace)
}

// azureName is a provisioned cluster's generated name: Azure wants 4 to
// 22 lowercase letters and digits starting with a letter, unique across
// Azure, so it is "adx", a readable part of the XR's name, and a hash of
// the XR's UID (or name) and the cluster's position.
func (p *planner) azureName(i int) string {
	readable := strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, strings.ToLower(p.xr.Name))
	if len(readable) > 11 {
		readable = readable[:11]
	}
	id := string(p.xr.UID)
	if id == "" {
		id = p.xr.Name
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", id, i))
	return "adx" + readable + hex.EncodeToString(sum[:])[:8]
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName is a Kubernetes name of at most 63 characters for the
// ADXCluster of cluster name, unique per ADXMon.
func (p *planner) objectName(name string) string {
	n := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(p.xr.Name+"-"+name), "-"), "-")
	if len(n) <= 63 {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return strings.TrimRight(n[:54], "-") + "-" + hex.EncodeToString(sum[:])[:8]
}

// clusterName is the name of the i-th cluster: its own or generated.
func (p *planner) clusterName(i int) string {
	c := p.xr.Spec.ADX.Clusters[i]
	if c.Name != "" {
		return c.Name
	}
	return p.azureName(i)
}

// databases of a cluster: its own, or adx-mon's defaults.
func databases(c v1alpha1.ADXMonCluster) []v1alpha1.ADXMonDatabase {
	if len(c.Databases) > 0 {
		return c.Databases
	}
	dbs := []v1alpha1.ADXMonDatabase{{Name: "Metrics", TelemetryType: v1alpha1.TelemetryMetrics}, {Name: "Logs", TelemetryType: v1alpha1.TelemetryLogs}}
	if c.Provision != nil {
		dbs = append(dbs, v1alpha1.ADXMonDatabase{Name: "Traces", TelemetryType: v1alpha1.TelemetryTraces})
	}
	return dbs
}

func (p *planner) adxCluster(i int) *v1alpha1.ADXCluster {
	c := p.xr.Spec.ADX.Clusters[i]
	x := &v1alpha1.ADXCluster{}
	x.Name = p.objectName(p.clusterName(i))
	x.Namespace = p.ns
	x.Labels = p.labels("adx")
	x.Spec = v1alpha1.ADXClusterSpec{
		ClusterName:            p.clusterName(i),
		Endpoint:               c.Endpoint,
		AllowInsecureEndpoints: c.AllowInsecureEndpoints,
		DeletionPolicy:         v1alpha1.DeletionOrphan,
	}
	if c.DeletionPolicy != "" {
		x.Spec.DeletionPolicy = c.DeletionPolicy
	}
	for _, d := range databases(c) {
		x.Spec.Databases = append(x.Spec.Databases, v1alpha1.DatabaseSpec{DatabaseName: d.Name, TelemetryType: d.TelemetryType})
	}
	if pr := c.Provision; pr != nil {
		// With auto, what is left out is the nested ADXCluster's to
		// discover, the SKU included (one the region offers, not the
		// input's default), under the same policy.
		sku := pr.Sku
		if sku == "" && !pr.Auto {
			sku = p.cfg.DefaultSku
		}
		tier := pr.Tier
		if tier == "" && sku != "" {
			tier = v1alpha1.TierStandard
			if strings.HasPrefix(sku, "Dev(No SLA)") {
				tier = v1alpha1.TierBasic
			}
		}
		x.Spec.Provision = &v1alpha1.ProvisionSpec{Auto: pr.Auto, SubscriptionID: pr.SubscriptionID, ResourceGroup: pr.ResourceGroup, Location: pr.Region, SkuName: sku, Tier: tier, Capacity: p.adxCapacity(i),
			UserAssignedIdentities: slices.Clone(pr.UserAssignedIdentities)}
		// The seed's role assignment: the identity the components use
		// administers the databases they write to. Without a tenant the
		// ADXCluster takes the policy's for the subscription, or refuses
		// (the ingestor could not create its tables).
		if id, tenant := componentIdentity(c); id != "" {
			x.Spec.Provision.DatabasePrincipals = []v1alpha1.DatabasePrincipal{{ClientID: id, TenantID: tenant, Role: v1alpha1.DatabaseRoleAdmin}}
		}
	}
	return x
}

// componentIdentity is the client and tenant of the identity the
// components use for cluster c: connection's, else provision's; the
// tenant of either where only one names it.
func componentIdentity(c v1alpha1.ADXMonCluster) (client, tenant string) {
	if cn := c.Connection; cn != nil {
		client, tenant = cn.ClientID, cn.TenantID
	}
	if pr := c.Provision; pr != nil {
		if client == "" {
			client = pr.ManagedIdentityClientID
		}
		if tenant == "" {
			tenant = pr.TenantID
		}
	}
	return client, tenant
}

// adx composes the ADXClusters and reports ADXReady (every endpoint is
// known) and DatabasesReady (every ADXCluster is Ready: its databases
// exist). It returns the databases with their endpoints.
func (p *planner) adx(nsOK bool) ([]endpointDB, bool) {
	if p.xr.Spec.ADX == nil {
		p.notRequested(v1alpha1.ConditionADXReady, "spec.adx is not set: this stack writes to no ADX cluster of its own")
		p.notRequested(v1alpha1.ConditionDatabasesReady, "spec.adx is not set")
		return nil, true
	}
	var dbs []endpointDB
	var noEndpoint, notReady, failing []string
	for i, c := range p.xr.Spec.ADX.Clusters {
		name := resource.Name(adxPrefix + strings.ToLower(p.clusterName(i)))
		x := p.adxCluster(i)
		p.set.AddObjectWhen(nsOK, name, x)
		o := p.set.Observed(name)
		ref := x.Namespace + "/" + x.Name
		endpoint, _ := observe.String(o, "status", "endpoint")
		p.status.Clusters = append(p.status.Clusters, v1alpha1.ADXMonClusterStatus{Name: x.Spec.ClusterName, Endpoint: endpoint, Resource: ref})
		if f, bad := clusterFailure(o); bad {
			failing = append(failing, fmt.Sprintf("ADXCluster %s: %s", ref, f))
		}
		if endpoint == "" {
			noEndpoint = append(noEndpoint, "ADXCluster "+ref)
			continue
		}
		if !p.set.Ready(name) {
			notReady = append(notReady, "ADXCluster "+ref)
		}
		for _, d := range databases(c) {
			dbs = append(dbs, endpointDB{Name: d.Name, Type: d.TelemetryType, Endpoint: strings.TrimRight(endpoint, "/")})
		}
	}
	switch {
	case len(failing) > 0:
		p.setCondition(v1alpha1.ConditionADXReady, corev1.ConditionFalse, ReasonFailed, strings.Join(failing, "; "))
	case !nsOK:
		p.setCondition(v1alpha1.ConditionADXReady, corev1.ConditionFalse, ReasonNotInstalled, "waiting for namespace "+p.ns)
	case len(noEndpoint) > 0:
		p.setCondition(v1alpha1.ConditionADXReady, corev1.ConditionFalse, ReasonInstalling, "waiting for the endpoint of "+strings.Join(noEndpoint, ", "))
	default:
		p.setCondition(v1alpha1.ConditionADXReady, corev1.ConditionTrue, ReasonInstalled, fmt.Sprintf("%d ADX cluster(s) have endpoints", len(p.xr.Spec.ADX.Clusters)))
	}
	dbReady := len(noEndpoint) == 0 && len(notReady) == 0 && nsOK
	switch {
	case dbReady:
		p.setCondition(v1alpha1.ConditionDatabasesReady, corev1.ConditionTrue, ReasonInstalled, fmt.Sprintf("%d database(s) ready", len(dbs)))
	case len(noEndpoint) > 0 || !nsOK:
		p.setCondition(v1alpha1.ConditionDatabasesReady, corev1.ConditionFalse, ReasonNotInstalled, "waiting for ADX clusters (ADXReady)")
	default:
		p.setCondition(v1alpha1.ConditionDatabasesReady, corev1.ConditionFalse, ReasonInstalling, "waiting for the databases of "+strings.Join(notReady, ", "))
	}
	return dbs, dbReady
}

// clusterFailure reports an ADXCluster that says it cannot proceed.
func clusterFailure(o *composed.Unstructured) (string, bool) {
	if f, bad := observe.Failed(o); bad {
		return f.Message, true
	}
	c := observe.ConditionOf(o, "adxcluster.fleetplane.io")
	switch string(c.Reason) {
	case "Failed", "PermissionRestricted", "ProvisioningInvalid", "CriteriaExpressionError", compose.ReasonNotGranted, compose.ReasonQuotaExceeded:
		// NotGranted, QuotaExceeded: the namespace's policy refuses what
		// the cluster asks (a region, identities, discovery, an SKU or
		// instance count over the quota); the stack says so.
		return c.Message, true
	}
	return "", false
}

// clientID is the managed identity the components use: the first
// cluster's connection, or its provision's identity.
func (p *planner) clientID() string {
	if p.xr.Spec.ADX == nil {
		return ""
	}
	for _, c := range p.xr.Spec.ADX.Clusters {
		if c.Connection != nil && c.Connection.ClientID != "" {
			return c.Connection.ClientID
		}
		if c.Provision != nil && c.Provision.ManagedIdentityClientID != "" {
			return c.Provision.ManagedIdentityClientID
		}
	}
	return ""
}
