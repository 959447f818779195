package tenancy

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// QuotaError is a refusal because a namespace asks for more than its
// policy's quota allows, rather than for something it is not granted at
// all: callers report it with reason QuotaExceeded instead of NotGranted.
type QuotaError struct {
	// Field of the policy that sets the quota, such as
	// spec.experiments.quota.maxNodes.
	Field string
	msg   string
}

func (e *QuotaError) Error() string { return e.msg }

// Exceeded is a QuotaError on field, whose message is the formatted text
// followed by the field.
func Exceeded(field, format string, a ...any) error {
	return &QuotaError{Field: field, msg: fmt.Sprintf(format, a...) + " (" + field + ")"}
}

// IsQuota reports whether err is, or wraps, a QuotaError.
func IsQuota(err error) bool {
	var q *QuotaError
	return errors.As(err, &q)
}

// Defaults of the quotas, where a policy sets none. They are modest on
// purpose: an admin raises what a team needs, and a namespace governed
// by a config written before quotas existed is bounded all the same.
const (
	DefaultMaxExperiments    = 5
	DefaultMaxTargets        = 4
	DefaultMaxNodesPerTarget = 3
	DefaultMaxNodes          = 8
	DefaultMaxTTLDays        = 7

	DefaultMaxADXCapacity  = 10
	DefaultMaxADXDatabases = 16

	DefaultMaxPlacementClusters = 100
	DefaultMaxPlacementCopies   = 1000

	DefaultMinFederationInterval  = time.Minute
	DefaultMinChangeCheckInterval = 15 * time.Second
)

// Default lists of the quotas and of what GKE nodes run with.
var (
	DefaultGKEMachineTypes = []string{"e2-medium", "e2-standard-2", "e2-standard-4"}
	// DefaultNodeOAuthScopes is GKE's own default set for a node pool.
	DefaultNodeOAuthScopes = []string{
		"https://www.googleapis.com/auth/devstorage.read_only",
		"https://www.googleapis.com/auth/logging.write",
		"https://www.googleapis.com/auth/monitoring",
		"https://www.googleapis.com/auth/service.management.readonly",
		"https://www.googleapis.com/auth/servicecontrol",
		"https://www.googleapis.com/auth/trace.append",
	}
	DefaultADXSKUs = []string{
		"Dev(No SLA)_Standard_D11_v2", "Dev(No SLA)_Standard_E2a_v4",
		"Standard_E2ads_v5", "Standard_E4ads_v5", "Standard_E8ads_v5",
		"Standard_E2d_v5", "Standard_E4d_v5", "Standard_E8d_v5",
		"Standard_E2a_v4", "Standard_E4a_v4", "Standard_E8a_v4",
		"Standard_L8as_v3", "Standard_L16as_v3",
	}
)

// ExperimentsLimits are an experiments policy's quotas, defaults applied.
type ExperimentsLimits struct {
	Experiments, Targets, NodesPerTarget, Nodes, TTLDays int32
}

func experimentsLimits(q *v1alpha1.ExperimentsQuota) ExperimentsLimits {
	if q == nil {
		q = &v1alpha1.ExperimentsQuota{}
	}
	return ExperimentsLimits{
		Experiments:    or(q.MaxExperiments, DefaultMaxExperiments),
		Targets:        or(q.MaxTargets, DefaultMaxTargets),
		NodesPerTarget: or(q.MaxNodesPerTarget, DefaultMaxNodesPerTarget),
		Nodes:          or(q.MaxNodes, DefaultMaxNodes),
		TTLDays:        or(q.MaxTTLDays, DefaultMaxTTLDays),
	}
}

// ADXLimits are a provisioning grant's quotas, defaults applied.
type ADXLimits struct {
	SKUs                []string
	Capacity, Databases int32
	// fieldTrail is the quota's place in the policy, for messages.
	fieldTrail string
}

// ADXLimits are the quotas of clusters provisioned under p.
func (g *Grant) ADXLimits(p v1alpha1.AzureProvisioning) ADXLimits {
	q := p.Quota
	if q == nil {
		q = &v1alpha1.ADXQuota{}
	}
	l := ADXLimits{SKUs: q.SKUs, Capacity: or(q.MaxCapacity, DefaultMaxADXCapacity), Databases: or(q.MaxDatabases, DefaultMaxADXDatabases),
		fieldTrail: fmt.Sprintf("spec.azure.provisioning[subscriptionId=%s].quota", p.SubscriptionID)}
	if len(l.SKUs) == 0 {
		l.SKUs = DefaultADXSKUs
	}
	return l
}

// SKU checks that a cluster may be created with sku ("" is decided
// later, by discovery, and checked then).
func (l ADXLimits) SKU(sku string) error {
	if sku == "" || MatchAny(l.SKUs, sku) {
		return nil
	}
	return Exceeded(l.fieldTrail+".skus", "SKU %s is not one the policy allows here", sku)
}

// CapacityOf checks an instance count asked for as field.
func (l ADXLimits) CapacityOf(field string, n int32) error {
	if n <= l.Capacity {
		return nil
	}
	return Exceeded(l.fieldTrail+".maxCapacity", "%s %d is more than the %d instances a cluster may have", field, n, l.Capacity)
}

// DatabasesField is the policy field of maxDatabases, for messages.
func (l ADXLimits) DatabasesField() string { return l.fieldTrail + ".maxDatabases" }

// DatabaseCount checks the number of databases a cluster would get.
func (l ADXLimits) DatabaseCount(n int) error {
	if n <= int(l.Databases) {
		return nil
	}
	return Exceeded(l.DatabasesField(), "%d databases are more than the %d a cluster may have", n, l.Databases)
}

// PlacementLimits are a placement policy's quotas, defaults applied.
type PlacementLimits struct{ Clusters, Copies int }

func placementLimits(q *v1alpha1.PlacementQuota) PlacementLimits {
	if q == nil {
		q = &v1alpha1.PlacementQuota{}
	}
	return PlacementLimits{Clusters: int(or(q.MaxClusters, DefaultMaxPlacementClusters)), Copies: int(or(q.MaxCopies, DefaultMaxPlacementCopies))}
}

// Deliveries checks that a Placement may deliver objects to clusters.
func (l PlacementLimits) Deliveries(objects, clusters int) error {
	if clusters > l.Clusters {
		return Exceeded("spec.placement.quota.maxClusters", "%d clusters are more than the %d one Placement may deliver to", clusters, l.Clusters)
	}
	if objects*clusters > l.Copies {
		return Exceeded("spec.placement.quota.maxCopies", "%d copies (its objects times its clusters) are more than the %d one Placement may deliver", objects*clusters, l.Copies)
	}
	return nil
}

// FederationIntervals checks a Federation's interval and change check
// against the Kusto quota; nil intervals are the CRD's defaults, which
// the API server writes, and pass.
func (g *Grant) FederationIntervals(interval, changeCheck *metav1.Duration) error {
	q := g.Kusto.Quota
	if q == nil {
		q = &v1alpha1.KustoQuota{}
	}
	minInterval, minCheck := orDuration(q.MinFederationInterval, DefaultMinFederationInterval), orDuration(q.MinChangeCheckInterval, DefaultMinChangeCheckInterval)
	if interval != nil && interval.Duration < minInterval {
		return Exceeded("spec.kusto.quota.minFederationInterval", "spec.forProvider.interval %s is shorter than the %s %s allows", interval.Duration, minInterval, g)
	}
	if changeCheck != nil && changeCheck.Duration < minCheck {
		return Exceeded("spec.kusto.quota.minChangeCheckInterval", "spec.forProvider.changeCheckInterval %s is shorter than the %s %s allows", changeCheck.Duration, minCheck, g)
	}
	return nil
}

func or(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func orDuration(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}
