// Package federation reconciles Federation managed resources: once per
// interval it reads the latest heartbeats on the hub, drops blocked
// partitions, plans the hub's tables, entity groups and functions against
// what the hub has, and runs only the difference.
package federation

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/controller/cycle"
	"github.com/fleetplane/fleetplane/internal/controller/kustoconn"
	"github.com/fleetplane/fleetplane/internal/controller/setup"
	fed "github.com/fleetplane/fleetplane/internal/federation"
	hb "github.com/fleetplane/fleetplane/internal/heartbeat"
	"github.com/fleetplane/fleetplane/internal/observe"
)

const (
	// maxErrors errors, and as many warnings, are kept in status; the rest
	// are counted.
	maxErrors = 10
	// maxPartitionsInStatus keeps the status of a large fleet small.
	maxPartitionsInStatus = 100
)

// Setup adds the Federation controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, c *kustoconn.Connector) error {
	return setup.Managed(mgr, o, v1alpha1.FederationGroupVersionKind, &v1alpha1.Federation{}, &connector{c: c}, periodic(time.Now).Options())
}

// periodic says where a Federation keeps its cycle.
func periodic(now func() time.Time) cycle.Kind[*v1alpha1.Federation] {
	return cycle.Kind[*v1alpha1.Federation]{
		Last:     func(f *v1alpha1.Federation) *metav1.Time { return f.Status.AtProvider.LastSyncTime },
		Interval: func(f *v1alpha1.Federation) time.Duration { return cycle.Interval(f.Spec.ForProvider.Interval) },
		Now:      now,
	}
}

// hubClient is what a federation cycle needs of the hub.
type hubClient interface {
	fed.Kusto
	Close() error
}

type connector struct{ c *kustoconn.Connector }

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.Federation) (managed.TypedExternalClient[*v1alpha1.Federation], error) {
	s, err := c.c.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	return newExternal(func(endpoint string) (hubClient, error) { return s.Client(endpoint, "") }, time.Now), nil
}

func newExternal(open func(endpoint string) (hubClient, error), now func() time.Time) *external {
	return &external{open: open, now: now, kind: periodic(now)}
}

type external struct {
	open func(endpoint string) (hubClient, error)
	now  func() time.Time
	kind cycle.Kind[*v1alpha1.Federation]
}

func (e *external) Observe(_ context.Context, mg *v1alpha1.Federation) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// The hub's functions keep serving queries after the Federation
		// goes; fleetplane deletes nothing users may rely on.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	setAvailability(mg)
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: !e.kind.Due(mg)}, nil
}

// setAvailability marks the federation Available when its last cycle ran
// every command it planned.
func setAvailability(mg *v1alpha1.Federation) {
	at := mg.Status.AtProvider
	switch {
	case at.LastSyncTime == nil:
		mg.SetConditions(xpv2.Unavailable().WithMessage("no federation cycle has completed yet"))
	case len(at.Errors) > 0:
		mg.SetConditions(xpv2.Unavailable().WithMessage(observe.Bound("the last cycle had errors: " + strings.Join(at.Errors, "; "))))
	default:
		mg.SetConditions(xpv2.Available())
	}
}

func (e *external) Create(context.Context, *v1alpha1.Federation) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Update runs one federation cycle.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Federation) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	ttl, err := hb.ParseTTL(p.HeartbeatTTL)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	hub, err := e.open(p.Endpoint)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	defer func() { _ = hub.Close() }()

	var warnings, errs []string
	parts, rejected, err := fed.Heartbeats(ctx, hub, p.HeartbeatDatabase, p.HeartbeatTable, ttl, p.AllowInsecureEndpoints)
	if err != nil {
		return managed.ExternalUpdate{}, fmt.Errorf("cannot read heartbeats from %s.%s: %w", p.HeartbeatDatabase, p.HeartbeatTable, err)
	}
	for _, r := range rejected {
		warnings = append(warnings, "rejected heartbeat "+r.String())
	}

	var fromFunction []string
	if b := p.BlockedClusters; b != nil && b.KustoFunction != nil {
		eps, found, err := fed.BlockedFromFunction(ctx, hub, b.KustoFunction.Database, b.KustoFunction.Name)
		if err != nil {
			// A block list that cannot be read must not let blocked
			// partitions back in: stop the cycle.
			return managed.ExternalUpdate{}, fmt.Errorf("cannot read the block list from %s.%s: %w", b.KustoFunction.Database, b.KustoFunction.Name, err)
		}
		if !found {
			warnings = append(warnings, fmt.Sprintf("block-list function %s.%s does not exist; using the static list only", b.KustoFunction.Database, b.KustoFunction.Name))
		}
		fromFunction = eps
	}
	var static []string
	if p.BlockedClusters != nil {
		static = p.BlockedClusters.Static
	}
	parts, matched := fed.NewBlocklist(static, fromFunction).Filter(parts)

	live, err := fed.ReadHub(ctx, hub)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	plan := fed.Compute(parts, live)
	failures, applyErr := fed.Apply(ctx, hub, plan)
	for _, db := range plan.MissingDatabases {
		warnings = append(warnings, fmt.Sprintf("database %s, reported by partitions, does not exist on the hub", db))
	}
	warnings = append(warnings, plan.Problems...)
	for _, f := range failures {
		errs = append(errs, "command failed: "+f.String())
	}
	if applyErr != nil {
		errs = append(errs, applyErr.Error())
	}

	sort.Slice(parts, func(i, j int) bool { return parts[i].Endpoint < parts[j].Endpoint })
	at := v1alpha1.FederationObservation{
		BlockedMatched:   observe.Count(matched),
		Databases:        observe.Count(plan.Databases),
		Tables:           observe.Count(plan.Tables),
		Functions:        observe.Count(plan.Functions),
		CommandsIssued:   observe.Count(plan.Count()),
		LastSyncTime:     &metav1.Time{Time: e.now().UTC()},
		MissingDatabases: plan.MissingDatabases,
	}
	for i, part := range parts {
		if i == maxPartitionsInStatus {
			break
		}
		at.Partitions = append(at.Partitions, v1alpha1.FederatedPartition{Endpoint: part.Endpoint, LastHeartbeatTime: &metav1.Time{Time: part.LastHeartbeat}})
	}
	at.PartitionCount = observe.Count(len(parts))
	at.Errors, at.Warnings = capped(errs), capped(warnings)
	mg.Status.AtProvider = at
	setAvailability(mg)
	if applyErr != nil {
		return managed.ExternalUpdate{}, applyErr
	}
	return managed.ExternalUpdate{}, nil
}

// capped keeps the first maxErrors messages, bounded, and counts the rest.
func capped(msgs []string) []string {
	var out []string
	for i, m := range msgs {
		if i == maxErrors {
			return append(out, fmt.Sprintf("and %d more", len(msgs)-maxErrors))
		}
		out = append(out, observe.Bound(m))
	}
	return out
}

func (e *external) Delete(context.Context, *v1alpha1.Federation) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
