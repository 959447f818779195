// Package federation reconciles Federation managed resources: once per
// interval it reads the latest heartbeats on the hub, drops blocked
// partitions, plans the hub's tables, entity groups and functions against
// what the hub has, and runs only the difference.
package federation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/controller/cycle"
	"github.com/fleetplane/fleetplane/provider/controller/fairshare"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	fed "github.com/fleetplane/fleetplane/provider/kusto/federation"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

const (
	// maxErrors errors, and as many warnings, are kept in status; the rest
	// are counted.
	maxErrors = 10
	// maxPartitionsInStatus keeps the status of a large fleet small.
	maxPartitionsInStatus = 100
	// maxMetadataBytesInStatus bounds the partitions' metadata the status
	// lists: a hundred partitions at the per-partition limits would be a
	// megabyte, near etcd's object limit.
	maxMetadataBytesInStatus = 32 << 10
)

// Defaults of spec.forProvider.safety.
const (
	defaultMinimumRetention = 15 * time.Minute
	defaultMaxLeavePercent  = 50
)

// Setup adds the Federation controller to mgr; share is every
// namespace's share of cycle time.
func Setup(mgr ctrl.Manager, o controller.Options, c *shared.KustoConnector, m *fleetmetrics.Metrics, share *fairshare.Share) error {
	kind := periodic(time.Now)
	kind.Hold = func(f *v1alpha1.Federation) time.Duration { return share.Wait(f.Namespace) }
	return shared.Managed(mgr, o, v1alpha1.FederationGroupVersionKind, &v1alpha1.Federation{}, &connector{c: c, kube: mgr.GetClient(), schemas: newSchemaCaches(), metrics: m, share: share}, kind.Options())
}

// TypeCycleScheduled is the condition that says whether a Federation's
// cycles run at its interval or are held back by its namespace's share.
const TypeCycleScheduled xpv2.ConditionType = "CycleScheduled"

// Reasons of CycleScheduled.
const (
	ReasonWithinShare = "WithinShare"
	ReasonOverShare   = fairshare.ReasonOverShare
)

// periodic says where a Federation keeps its cycle.
func periodic(now func() time.Time) cycle.Kind[*v1alpha1.Federation] {
	return cycle.Kind[*v1alpha1.Federation]{
		Last: func(f *v1alpha1.Federation) *metav1.Time {
			if t := f.Status.AtProvider.LastCycleTime; t != nil {
				return t
			}
			return f.Status.AtProvider.LastSyncTime
		},
		Interval: func(f *v1alpha1.Federation) time.Duration { return cycle.Interval(f.Spec.ForProvider.Interval) },
		Now:      now,
		// Between cycles Observe asks the hub for digests (changed), at
		// this interval rather than only at the provider's poll.
		Check: func(f *v1alpha1.Federation) time.Duration {
			return cycle.Optional(f.Spec.ForProvider.ChangeCheckInterval)
		},
	}
}

// hubClient is what a federation cycle needs of the hub.
type hubClient interface {
	fed.Kusto
	Close() error
}

type connector struct {
	c       *shared.KustoConnector
	kube    client.Reader
	schemas *schemaCaches
	metrics *fleetmetrics.Metrics
	share   *fairshare.Share
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.Federation) (managed.TypedExternalClient[*v1alpha1.Federation], error) {
	s, err := c.c.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	p := mg.Spec.ForProvider
	g := s.Grant()
	if !meta.WasDeleted(mg) {
		if err := granted(g, p); err != nil {
			return nil, err
		}
	}
	e := newExternal(func(endpoint string) (hubClient, error) { return s.Client(endpoint, "") }, time.Now)
	e.kube, e.metrics, e.share = c.kube, c.metrics, c.share
	e.databases = g.KustoDatabasePatterns(p.Endpoint)
	if meta.WasDeleted(mg) {
		c.schemas.forget(mg.GetUID())
	} else {
		e.schemas = c.schemas.get(mg.GetUID(), time.Now())
	}
	return e, nil
}

// granted checks that the namespace may federate the hub: it is granted
// as a hub, with the heartbeat database and the block list's database,
// and asks for cycles and change checks no more often than its quota
// allows.
func granted(g *tenancy.Grant, p v1alpha1.FederationParameters) error {
	if _, err := g.KustoHub("spec.forProvider.endpoint", p.Endpoint); err != nil {
		return err
	}
	if err := g.FederationIntervals(p.Interval, p.ChangeCheckInterval); err != nil {
		return err
	}
	if err := g.KustoDatabase("spec.forProvider.heartbeatDatabase", p.Endpoint, p.HeartbeatDatabase); err != nil {
		return err
	}
	if b := p.BlockedClusters; b != nil && b.KustoFunction != nil {
		return g.KustoDatabase("spec.forProvider.blockedClusters.kustoFunction.database", p.Endpoint, b.KustoFunction.Database)
	}
	return nil
}

func newExternal(open func(endpoint string) (hubClient, error), now func() time.Time) *external {
	return &external{open: open, now: now, kind: periodic(now)}
}

type external struct {
	open func(endpoint string) (hubClient, error)
	now  func() time.Time
	kind cycle.Kind[*v1alpha1.Federation]
	// kube lists the other Federations, to find a hub's owner; nil skips
	// the check (unit tests of the cycle).
	kube client.Reader
	// schemas are the partitions earlier cycles decoded; nil decodes
	// every heartbeat.
	schemas *fed.Schemas
	metrics *fleetmetrics.Metrics
	// databases of the hub the cycle may write, as the policy's patterns;
	// nil: every one.
	databases []string
	// share holds a cycle back while its namespace is over its share of
	// cycle time; nil never does (unit tests of the cycle).
	share *fairshare.Share
}

// retryBackoffCap is the longest crossplane-runtime's controller rate
// limiter makes a failing resource wait before it is tried again.
const retryBackoffCap = time.Minute

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Federation) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// The hub's functions keep serving queries after the Federation
		// goes; fleetplane deletes nothing users may rely on.
		e.metrics.ForgetFederation(mg.Namespace, mg.Name)
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	owner, conflict, err := e.owner(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider.Owner = owner
	// Gauges follow the status at every reconcile, so a provider that
	// restarts has them back as soon as it has seen each Federation.
	e.metrics.Federation(mg)
	switch {
	case len(conflict) > 0:
		mg.SetConditions(xpv2.Unavailable().WithMessage(observe.Bound(fmt.Sprintf("hub %s is granted to namespace %s and to %s, which have Federations on it too; a hub is one namespace's, so none runs a cycle until the cluster admin grants it (spec.kusto.endpoints[].hub) to one",
			mg.Spec.ForProvider.Endpoint, mg.Namespace, strings.Join(conflict, ", ")))))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case owner != "":
		mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("hub %s is federated by Federation %s; a hub has one Federation in its namespace, the oldest, and this one runs no cycle", mg.Spec.ForProvider.Endpoint, owner)))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	setAvailability(mg)
	upToDate := !e.kind.Due(mg)
	if upToDate && e.share.Wait(mg.Namespace) == 0 && e.changed(ctx, mg) {
		// A partition's schema changed since the last cycle: run the
		// next now rather than at the interval, so a new table reaches
		// the hub within a change check of its heartbeat.
		upToDate = false
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// changed asks the hub, between cycles, whether any partition's heartbeat
// digest differs from what the last cycle decoded: one query of a digest
// per partition. A check that fails is no change; the next cycle reports
// what is wrong.
func (e *external) changed(ctx context.Context, mg *v1alpha1.Federation) bool {
	// A provider that just started has decoded nothing: it waits for the
	// cycle that is due rather than running every Federation at once.
	if e.schemas == nil || !e.schemas.Warm() {
		return false
	}
	p := mg.Spec.ForProvider
	_, window, err := windows(p)
	if err != nil {
		return false
	}
	hub, err := e.open(p.Endpoint)
	if err != nil {
		return false
	}
	defer func() { _ = hub.Close() }()
	changed, err := e.schemas.Changed(ctx, hub, p.HeartbeatDatabase, p.HeartbeatTable, window, p.AllowInsecureEndpoints)
	return err == nil && changed
}

// windows are a Federation's heartbeat TTL and the window heartbeats are
// read back over: the TTL or the minimum retention, whichever is longer,
// so a partition silent for longer than a short TTL stays until the
// retention has passed too.
func windows(p v1alpha1.FederationParameters) (ttl, window time.Duration, err error) {
	if ttl, err = heartbeat.ParseTTL(p.HeartbeatTTL); err != nil {
		return 0, 0, err
	}
	retention, _ := safety(p)
	return ttl, max(ttl, retention), nil
}

// owner names the Federation that federates mg's hub when it is another
// of mg's namespace: the oldest one there on the same hub, so that two
// never fight over its groups and functions. Federations of other
// namespaces never own it: a hub is federated only by a namespace the
// policy grants it to, and when the configs governing two namespaces
// with Federations on it both grant it, neither runs (conflict names
// the others) until the admin grants it to one.
func (e *external) owner(ctx context.Context, mg *v1alpha1.Federation) (owner string, conflict []string, err error) {
	if e.kube == nil {
		return "", nil, nil
	}
	hub := kql.NormalizeEndpoint(mg.Spec.ForProvider.Endpoint)
	list := &v1alpha1.FederationList{}
	if err := e.kube.List(ctx, list); err != nil {
		return "", nil, fmt.Errorf("cannot list Federations to find the hub's owner: %w", err)
	}
	first := mg
	others := map[string]bool{}
	for i := range list.Items {
		f := &list.Items[i]
		if f.UID == mg.UID || meta.WasDeleted(f) || kql.NormalizeEndpoint(f.Spec.ForProvider.Endpoint) != hub {
			continue
		}
		if f.Namespace != mg.Namespace {
			others[f.Namespace] = true
			continue
		}
		if older(f, first) {
			first = f
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(others)) {
		if e.grantsHub(ctx, ns, mg.Spec.ForProvider.Endpoint) {
			conflict = append(conflict, ns)
		}
	}
	if first == mg {
		return "", conflict, nil
	}
	return first.Namespace + "/" + first.Name, conflict, nil
}

// grantsHub reports whether the config governing namespace grants it the
// hub at endpoint. A namespace granted nothing is granted no hub.
func (e *external) grantsHub(ctx context.Context, namespace, endpoint string) bool {
	ns := &corev1.Namespace{}
	if err := e.kube.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		return false
	}
	g, err := shared.Governing(ctx, e.kube, ns)
	return err == nil && g.GrantsKustoHub(endpoint)
}

// older orders Federations by creation, then by namespace and name.
func older(a, b *v1alpha1.Federation) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// setAvailability marks the federation Available when its last cycle ran
// every command it planned.
func setAvailability(mg *v1alpha1.Federation) {
	at := mg.Status.AtProvider
	switch {
	case at.LastSyncTime == nil && at.LastCycleTime == nil:
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

// heldSuffix ends the error of a cycle held back after one that failed.
const heldSuffix = " (the next cycle waits for the namespace's share: condition CycleScheduled)"

// lastCycleError is why the last cycle failed, "" when it did not: its
// own record in the status, which crossplane-runtime writes with the
// failure.
func lastCycleError(mg *v1alpha1.Federation) string {
	return mg.Status.AtProvider.LastCycleError
}

// scheduled sets CycleScheduled: False while held (the namespace is over
// its share), True otherwise.
func (e *external) scheduled(mg *v1alpha1.Federation, held *fairshare.Held) {
	if held != nil {
		mg.SetConditions(xpv2.Condition{Type: TypeCycleScheduled, Status: corev1.ConditionFalse, Reason: xpv2.ConditionReason(held.Reason),
			Message: held.Message, LastTransitionTime: metav1.Now()})
		return
	}
	mg.SetConditions(xpv2.Condition{Type: TypeCycleScheduled, Status: corev1.ConditionTrue, Reason: ReasonWithinShare,
		Message:            fmt.Sprintf("cycles run at the interval: namespace %s is within its share of the provider's time (%s a minute)", mg.Namespace, e.share.PerMinute()),
		LastTransitionTime: metav1.Now()})
}

// safety is the Federation's safety settings with defaults.
func safety(p v1alpha1.FederationParameters) (time.Duration, float64) {
	retention, leave := defaultMinimumRetention, int32(defaultMaxLeavePercent)
	if s := p.Safety; s != nil {
		if s.MinimumRetention != nil && s.MinimumRetention.Duration > 0 {
			retention = s.MinimumRetention.Duration
		}
		if s.MaxLeavePercent != nil {
			leave = *s.MaxLeavePercent
		}
	}
	return retention, float64(leave) / 100
}

// run is what one federation cycle read, planned and ran.
type run struct {
	ttl, window time.Duration
	parts       []heartbeat.Partition
	held        []fed.Member
	down        *metav1.Time
	matched     int
	plan        fed.Plan
	failures    []fed.Failure
	applyErr    error
	warnings    []string
	rejected    int
	newest      time.Time
}

// Update runs one federation cycle and records it, unless its namespace
// is running another or spent its share of cycle time: then the cycle
// waits (the poll hook comes back when it may run), and a namespace over
// its share is told so on the Federation.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Federation) (managed.ExternalUpdate, error) {
	if e.share != nil {
		done, held := e.share.Start(mg.Namespace, "Federation "+mg.Name)
		if held != nil {
			if held.Reason == fairshare.ReasonOverShare {
				e.scheduled(mg, held)
			}
			// A cycle held back did nothing: it must not turn a failing
			// Federation Synced, which would hide why its last cycle
			// failed (a hub down, each retry charged) while it waits.
			if last := lastCycleError(mg); last != "" {
				return managed.ExternalUpdate{}, fmt.Errorf("%s%s", last, heldSuffix)
			}
			return managed.ExternalUpdate{}, nil
		}
		// What users see between cycles is the status written after
		// one: whether this cycle put the namespace over its share.
		defer func() {
			done()
			e.scheduled(mg, e.share.OverShare(mg.Namespace))
		}()
	}
	start := time.Now()
	c, err := e.cycle(ctx, mg)
	mg.Status.AtProvider.LastCycleError = ""
	if err != nil {
		mg.Status.AtProvider.LastCycleError = observe.Bound(err.Error())
	}
	result, commands, failed := fleetmetrics.CycleError, 0, 0
	if err == nil {
		result, commands, failed = fleetmetrics.CycleSynced, c.plan.Count(), len(c.failures)
		if failed > 0 {
			result = fleetmetrics.CycleCommandsFailed
		}
	}
	e.metrics.FederationCycle(mg, time.Since(start), result, commands, failed)
	e.metrics.Federation(mg)
	return managed.ExternalUpdate{}, err
}

// cycle runs one federation cycle and returns what it planned and ran,
// when it ran.
func (e *external) cycle(ctx context.Context, mg *v1alpha1.Federation) (*run, error) {
	p := mg.Spec.ForProvider
	ttl, window, err := windows(p)
	if err != nil {
		return nil, err
	}
	_, leave := safety(p)
	hub, err := e.open(p.Endpoint)
	if err != nil {
		return nil, err
	}
	defer func() { _ = hub.Close() }()

	c := &run{ttl: ttl, window: window}
	schemas := e.schemas
	if schemas == nil {
		schemas = fed.NewSchemas()
	}
	parts, blocklist, err := c.read(ctx, hub, schemas, p)
	if err != nil {
		return nil, err
	}
	ev := fed.Evidence{Read: len(parts), Now: e.now()}
	for _, part := range parts {
		if part.LastHeartbeat.After(ev.Newest) {
			ev.Newest = part.LastHeartbeat
		}
	}
	c.newest = ev.Newest
	if t := mg.Status.AtProvider.HeartbeatPathDownTime; t != nil {
		ev.LastDown = t.Time
	}
	// Half the TTL: a fleet heard from has a heartbeat younger than one
	// interval, and the TTL is several intervals. Settle over the window
	// (a partition leaves after that long a silence) plus the longest a
	// heartbeat that failed through the outage waits before it retries
	// (crossplane-runtime's backoff cap): partitions come back one by one,
	// not when the path does.
	guard := fed.Safety{MaxLeaveFraction: leave, StallAfter: ttl / 2, Settle: c.window + retryBackoffCap}
	if guard.Down(ev) {
		c.down = &metav1.Time{Time: ev.Now.UTC()}
	}
	c.parts, c.matched = blocklist.Filter(parts)
	live, _, err := schemas.ReadHub(ctx, hub)
	if err != nil {
		return nil, err
	}
	c.held = fed.Guard(ev, c.parts, blocklist, live, guard)
	c.plan = schemas.Plan(fed.Input{Partitions: c.parts, Held: c.held, Hub: live, Databases: e.databases})
	c.failures, c.applyErr = fed.Apply(ctx, hub, c.plan)
	c.report(mg, e.now().UTC())
	if c.applyErr != nil {
		return nil, c.applyErr
	}
	return c, nil
}

// read reads the heartbeats and the block list; a block list that cannot
// be read stops the cycle, lest blocked partitions come back in.
func (c *run) read(ctx context.Context, hub hubClient, schemas *fed.Schemas, p v1alpha1.FederationParameters) ([]heartbeat.Partition, fed.Blocklist, error) {
	parts, rejected, _, err := schemas.Read(ctx, hub, p.HeartbeatDatabase, p.HeartbeatTable, c.window, p.AllowInsecureEndpoints)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read heartbeats from %s.%s: %w", p.HeartbeatDatabase, p.HeartbeatTable, err)
	}
	c.rejected = len(rejected)
	for _, r := range rejected {
		c.warnings = append(c.warnings, "rejected heartbeat "+r.String())
	}
	var static, fromFunction []string
	if b := p.BlockedClusters; b != nil {
		static = b.Static
		if f := b.KustoFunction; f != nil {
			eps, found, err := fed.BlockedFromFunction(ctx, hub, f.Database, f.Name)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot read the block list from %s.%s: %w", f.Database, f.Name, err)
			}
			if !found {
				c.warnings = append(c.warnings, fmt.Sprintf("block-list function %s.%s does not exist; using the static list only", f.Database, f.Name))
			}
			fromFunction = eps
		}
	}
	return parts, fed.NewBlocklist(static, fromFunction), nil
}

// report writes the cycle into status. A script that could not run at all
// moves neither time: the cycle is retried with backoff. Failed commands
// move the cycle time, which paces cycles, but not the sync time.
func (c *run) report(mg *v1alpha1.Federation, now time.Time) {
	var errs []string
	for _, f := range c.failures {
		errs = append(errs, "command failed: "+f.String())
	}
	if c.applyErr != nil {
		errs = append(errs, c.applyErr.Error())
	}
	for _, db := range c.plan.MissingDatabases {
		c.warnings = append(c.warnings, fmt.Sprintf("database %s, reported by partitions, does not exist on the hub", db))
	}
	c.warnings = append(c.warnings, c.plan.Problems...)
	if len(c.held) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%d partitions that stopped heartbeating are held in the federation (status.atProvider.heldBack says why)", len(c.held)))
	}
	prev := mg.Status.AtProvider
	at := v1alpha1.FederationObservation{
		BlockedMatched:   observe.Count(c.matched),
		Databases:        observe.Count(c.plan.Databases),
		Tables:           observe.Count(c.plan.Tables),
		Functions:        observe.Count(c.plan.Functions),
		CommandsIssued:   observe.Count(c.plan.Count()),
		MissingDatabases: slices.Clone(c.plan.MissingDatabases), // the plan may be the next cycle's too
		PartitionCount:   observe.Count(len(c.parts) + len(c.held)),
		LastCycleTime:    prev.LastCycleTime,
		LastSyncTime:     prev.LastSyncTime,
		// Kept across cycles: the Guard needs it for a whole window.
		HeartbeatPathDownTime: prev.HeartbeatPathDownTime,
	}
	if c.down != nil {
		at.HeartbeatPathDownTime = c.down
	}
	var heldBack, retained []string
	for _, h := range c.held {
		heldBack = append(heldBack, h.Endpoint+": "+h.Reason)
	}
	sort.Slice(c.parts, func(i, j int) bool { return c.parts[i].Endpoint < c.parts[j].Endpoint })
	metaBudget := maxMetadataBytesInStatus
	for i, part := range c.parts {
		if now.Sub(part.LastHeartbeat) > c.ttl {
			retained = append(retained, fmt.Sprintf("%s: silent since %s, past the TTL; stays until %s", part.Endpoint, part.LastHeartbeat.UTC().Format(time.RFC3339), part.LastHeartbeat.Add(c.window).UTC().Format(time.RFC3339)))
		}
		if i < maxPartitionsInStatus {
			fp := v1alpha1.FederatedPartition{Endpoint: part.Endpoint, LastHeartbeatTime: &metav1.Time{Time: part.LastHeartbeat}}
			switch n := metadataBytes(part.Metadata); {
			case len(part.Metadata) == 0:
			case metaBudget >= n:
				fp.Metadata, metaBudget = part.Metadata, metaBudget-n
			default:
				at.MetadataOmitted++
			}
			at.Partitions = append(at.Partitions, fp)
		}
	}
	at.HeldBack, at.Retained = capped(heldBack), capped(retained)
	at.HeldBackCount, at.RetainedCount, at.RejectedCount = observe.Count(len(heldBack)), observe.Count(len(retained)), observe.Count(c.rejected)
	if !c.newest.IsZero() {
		at.NewestHeartbeatTime = &metav1.Time{Time: c.newest.UTC()}
	}
	at.Errors, at.Warnings = capped(errs), capped(c.warnings)
	if c.applyErr == nil {
		at.LastCycleTime = &metav1.Time{Time: now}
		if len(c.failures) == 0 {
			at.LastSyncTime = &metav1.Time{Time: now}
		}
	}
	mg.Status.AtProvider = at
	setAvailability(mg)
}

// metadataBytes is what a partition's metadata adds to the status, near
// enough: its keys and values.
func metadataBytes(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
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
