// Package heartbeat reconciles Heartbeat managed resources: once per
// interval it reads the partition's schema and writes one heartbeat row to
// every target hub. Targets are written to concurrently and independently:
// one that fails or hangs never holds back the others. A Heartbeat with a
// schema check reads the schema between heartbeats too, and sends one at
// once when it differs from the last one sent.
package heartbeat

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/provider/controller/cycle"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	hb "github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// Timeouts bound each step, so that a hung cluster costs one cycle of one
// target, not the loop.
const (
	collectTimeout = 2 * time.Minute
	targetTimeout  = 2 * time.Minute
	// concurrency of target writes.
	concurrency = 4
	// grace on top of the interval before a target counts as stale.
	grace = 30 * time.Second
)

// Setup adds the Heartbeat controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, c *shared.KustoConnector, m *fleetmetrics.Metrics) error {
	return shared.Managed(mgr, o, v1alpha1.HeartbeatGroupVersionKind, &v1alpha1.Heartbeat{}, &connector{c: c, metrics: m}, periodic(time.Now).Options())
}

// periodic says where a Heartbeat keeps its cycle. Between heartbeats
// there is nothing to observe (no external object; availability changes
// only when a heartbeat is sent), so a Heartbeat is reconciled when its
// next one is due, not at every poll: 1,000 Heartbeats at the default
// ten minutes cost 1.7 reconciles a second instead of 17 at a one-minute
// poll, which the provider's default --max-reconcile-rate (10) could not
// keep up with.
func periodic(now func() time.Time) cycle.Kind[*v1alpha1.Heartbeat] {
	return cycle.Kind[*v1alpha1.Heartbeat]{
		Last:     func(h *v1alpha1.Heartbeat) *metav1.Time { return h.Status.AtProvider.LastHeartbeatTime },
		Interval: func(h *v1alpha1.Heartbeat) time.Duration { return cycle.Interval(h.Spec.ForProvider.Interval) },
		Now:      now,
		Idle:     true,
		Check:    schemaCheck,
	}
}

// schemaCheck is how often a Heartbeat's schema is compared between
// heartbeats; 0 when it is not.
func schemaCheck(h *v1alpha1.Heartbeat) time.Duration {
	return cycle.Optional(h.Spec.ForProvider.SchemaCheckInterval)
}

// kustoClient is what a heartbeat needs of a Kusto cluster.
type kustoClient interface {
	hb.Mgmt
	Endpoint() string
	Close() error
}

// opener opens a client to an endpoint, as a user-assigned identity when
// one is named.
type opener func(endpoint, managedIdentityClientID string) (kustoClient, error)

type connector struct {
	c       *shared.KustoConnector
	metrics *fleetmetrics.Metrics
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.Heartbeat) (managed.TypedExternalClient[*v1alpha1.Heartbeat], error) {
	s, err := c.c.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	g := s.Grant()
	// The partition is read with the platform's credentials: only where
	// the namespace is granted, and only its granted databases.
	if !meta.WasDeleted(mg) {
		if err := g.KustoDatabase("spec.forProvider.endpoint", mg.Spec.ForProvider.Endpoint, ""); err != nil {
			return nil, err
		}
	}
	open := func(endpoint, id string) (kustoClient, error) { return s.Client(endpoint, id) }
	e := newExternal(open, time.Now)
	e.metrics = c.metrics
	e.databases = g.KustoDatabases(mg.Spec.ForProvider.Endpoint)
	e.target = func(t v1alpha1.HeartbeatTarget) error {
		return g.KustoDatabase("spec.forProvider.targets[].heartbeatDatabase", t.Endpoint, t.HeartbeatDatabase)
	}
	return e, nil
}

func newExternal(open opener, now func() time.Time) *external {
	return &external{open: open, now: now, kind: periodic(now)}
}

// An external serves one reconcile (Connect makes one each time).
type external struct {
	open opener
	now  func() time.Time
	kind cycle.Kind[*v1alpha1.Heartbeat]
	// checked is the schema a check in Observe found changed, which the
	// Update of the same reconcile sends rather than reading it again.
	checked *collected
	metrics *fleetmetrics.Metrics
	// databases of the partition the heartbeat reports, those the
	// namespace is granted there (nil: every one).
	databases func(string) bool
	// target checks that the namespace is granted a target's endpoint
	// and database; nil in unit tests of the cycle.
	target func(v1alpha1.HeartbeatTarget) error
}

type collected struct {
	schema []hb.DatabaseSchema
	counts hb.Counts
}

func targetKey(endpoint, db, table string) string { return endpoint + "|" + db + "|" + table }

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Heartbeat) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Nothing to remove: hubs forget a partition once its heartbeats
		// age past their TTL.
		e.metrics.ForgetHeartbeat(mg.Namespace, mg.Name)
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.metrics.Heartbeat(mg)
	due := e.kind.Due(mg)
	changed := setAvailability(mg, e.now())
	if !due && !changed && schemaCheck(mg) > 0 {
		changed = e.schemaChanged(ctx, mg)
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: !due && !changed}, nil
}

// schemaChanged reads the partition's schema and reports whether it
// differs from the one the last heartbeat sent. A check that fails is no
// change: the next heartbeat reads the schema again and reports what is
// wrong.
func (e *external) schemaChanged(ctx context.Context, mg *v1alpha1.Heartbeat) bool {
	sent := mg.Status.AtProvider.SchemaDigest
	if sent == "" {
		// Sent by a provider that kept no digest: the next heartbeat
		// records one.
		return false
	}
	partition, err := e.open(mg.Spec.ForProvider.Endpoint, "")
	if err != nil {
		return false
	}
	defer func() { _ = partition.Close() }()
	ctx, cancel := context.WithTimeout(ctx, collectTimeout)
	defer cancel()
	schema, counts, err := hb.Collect(ctx, partition, e.databases)
	if err != nil {
		return false
	}
	d, err := hb.Digest(schema)
	if err != nil || d == sent {
		return false
	}
	e.checked = &collected{schema: schema, counts: counts}
	return true
}

// setAvailability marks the heartbeat Available when every target took a
// heartbeat within its interval, and reports whether the spec names a
// target the status has never seen.
func setAvailability(mg *v1alpha1.Heartbeat, now time.Time) (newTargets bool) {
	status := map[string]v1alpha1.HeartbeatTargetStatus{}
	for _, t := range mg.Status.AtProvider.Targets {
		status[targetKey(t.Endpoint, t.HeartbeatDatabase, t.HeartbeatTable)] = t
	}
	var stale []string
	for _, t := range mg.Spec.ForProvider.Targets {
		s, ok := status[targetKey(t.Endpoint, t.HeartbeatDatabase, t.HeartbeatTable)]
		newTargets = newTargets || !ok
		if ok && s.LastSuccessTime != nil && now.Sub(s.LastSuccessTime.Time) <= cycle.Interval(mg.Spec.ForProvider.Interval)+grace {
			continue
		}
		reason := "no heartbeat yet"
		if s.LastError != "" {
			reason = s.LastError
		}
		stale = append(stale, fmt.Sprintf("%s (%s.%s): %s", t.Endpoint, t.HeartbeatDatabase, t.HeartbeatTable, reason))
	}
	if len(stale) == 0 {
		mg.SetConditions(xpv2.Available())
	} else {
		mg.SetConditions(xpv2.Unavailable().WithMessage(observe.Bound("no recent heartbeat for " + strings.Join(stale, "; "))))
	}
	return newTargets
}

func (e *external) Create(context.Context, *v1alpha1.Heartbeat) (managed.ExternalCreation, error) {
	// Observe always reports the heartbeat as existing.
	return managed.ExternalCreation{}, nil
}

// Update sends one heartbeat.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Heartbeat) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	partition, err := e.open(p.Endpoint, "")
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	defer func() { _ = partition.Close() }()

	var schema []hb.DatabaseSchema
	var counts hb.Counts
	if c := e.checked; c != nil {
		schema, counts = c.schema, c.counts
	} else {
		cctx, cancel := context.WithTimeout(ctx, collectTimeout)
		schema, counts, err = hb.Collect(cctx, partition, e.databases)
		cancel()
		if err != nil {
			return managed.ExternalUpdate{}, fmt.Errorf("cannot read the partition's schema: %w", err)
		}
	}
	now := e.now().UTC()
	rec, err := hb.Row{Timestamp: now, Endpoint: partition.Endpoint(), Schema: schema, Metadata: p.Partitioning.Strings()}.Record()
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	digest, err := hb.Digest(schema)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}

	results := e.sendAll(ctx, mg, rec, now)

	mg.Status.AtProvider = v1alpha1.HeartbeatObservation{
		LastHeartbeatTime: &metav1.Time{Time: now},
		Databases:         observe.Count(counts.Databases),
		Tables:            observe.Count(counts.Tables),
		Views:             observe.Count(counts.Views),
		SchemaDigest:      digest,
		Targets:           results,
	}
	setAvailability(mg, now)
	e.metrics.Heartbeat(mg)
	var failed []string
	for _, r := range results {
		if r.LastError != "" {
			failed = append(failed, r.Endpoint+": "+r.LastError)
		}
	}
	if len(failed) == len(results) && len(results) > 0 {
		return managed.ExternalUpdate{}, fmt.Errorf("no target took the heartbeat: %s", observe.Bound(strings.Join(failed, "; ")))
	}
	return managed.ExternalUpdate{}, nil
}

// sendAll sends rec to every target, a few at a time, and returns each
// target's status in a stable order.
func (e *external) sendAll(ctx context.Context, mg *v1alpha1.Heartbeat, rec string, now time.Time) []v1alpha1.HeartbeatTargetStatus {
	previous := map[string]v1alpha1.HeartbeatTargetStatus{}
	for _, t := range mg.Status.AtProvider.Targets {
		previous[targetKey(t.Endpoint, t.HeartbeatDatabase, t.HeartbeatTable)] = t
	}
	results := make([]v1alpha1.HeartbeatTargetStatus, len(mg.Spec.ForProvider.Targets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, concurrency)
	for i, t := range mg.Spec.ForProvider.Targets {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			st := previous[targetKey(t.Endpoint, t.HeartbeatDatabase, t.HeartbeatTable)]
			st.Endpoint, st.HeartbeatDatabase, st.HeartbeatTable = t.Endpoint, t.HeartbeatDatabase, t.HeartbeatTable
			st.LastAttemptTime = &metav1.Time{Time: now}
			start := time.Now()
			err := e.send(ctx, t, rec)
			e.metrics.HeartbeatSend(mg, time.Since(start), err)
			if err != nil {
				st.LastError = observe.Bound(err.Error())
			} else {
				st.LastError = ""
				st.LastSuccessTime = &metav1.Time{Time: now}
			}
			results[i] = st
		})
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool {
		return targetKey(results[i].Endpoint, results[i].HeartbeatDatabase, results[i].HeartbeatTable) <
			targetKey(results[j].Endpoint, results[j].HeartbeatDatabase, results[j].HeartbeatTable)
	})
	return results
}

func (e *external) send(ctx context.Context, t v1alpha1.HeartbeatTarget, record string) error {
	// Each target is checked alone: one the namespace is not granted is
	// never written, and says so, while the others take their rows.
	if e.target != nil {
		if err := e.target(t); err != nil {
			return err
		}
	}
	c, err := e.open(t.Endpoint, t.ManagedIdentityClientID)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	cmd, err := kql.IngestInline(t.HeartbeatTable, record)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, targetTimeout)
	defer cancel()
	_, err = c.Mgmt(ctx, t.HeartbeatDatabase, cmd)
	return err
}

func (e *external) Delete(context.Context, *v1alpha1.Heartbeat) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
