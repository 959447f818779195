// Package autoscaler reconciles Autoscaler managed resources: on their
// schedule it measures the target (package measure), decides its size
// (package scaling) and reports the decision in atProvider. It never
// changes the target: the function composes the desired size, so that one
// owner writes each field.
package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/scaling"
	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/controller/cycle"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	"github.com/fleetplane/fleetplane/provider/measure"
)

// Config says where Azure Resource Manager is, and whether pods may be
// scraped on loopback IPs; tests point both at loopback.
type Config struct {
	ResourceManagerEndpoint string
	// LoopbackPods lets ingestor pods whose IP is a loopback address be
	// scraped: only on local control planes, whose stand-in pods listen
	// there.
	LoopbackPods bool
}

// scrapeTimeout bounds one evaluation's scrapes, all its pods together;
// measureTimeout one evaluation of an ADX cluster, its size and every
// metric. Both are well inside crossplane-runtime's reconcile timeout
// (a minute), so a slow target costs its own evaluation, never the
// worker's whole reconcile.
const (
	scrapeTimeout  = 10 * time.Second
	measureTimeout = 30 * time.Second
)

// Setup adds the Autoscaler controller to mgr. Services, Pods and
// StatefulSets are read uncached (mgr.GetAPIReader): the provider reads a
// few per evaluation and must not cache every pod of the cluster.
func Setup(mgr ctrl.Manager, o controller.Options, c *shared.KustoConnector, cfg Config, m *fleetmetrics.Metrics) error {
	return shared.Managed(mgr, o, v1alpha1.AutoscalerGroupVersionKind, &v1alpha1.Autoscaler{},
		&connector{c: c, kube: mgr.GetAPIReader(), cfg: cfg, http: scrapeClient(), metrics: m}, periodic(time.Now).Options())
}

// periodic evaluates on the schedule: the next time after the last
// evaluation.
func periodic(now func() time.Time) cycle.Kind[*v1alpha1.Autoscaler] {
	return cycle.Kind[*v1alpha1.Autoscaler]{
		Last: func(a *v1alpha1.Autoscaler) *metav1.Time { return a.Status.AtProvider.LastEvaluationTime },
		Interval: func(a *v1alpha1.Autoscaler) time.Duration {
			last := a.Status.AtProvider.LastEvaluationTime
			sched, err := scaling.ParseSchedule(a.Spec.ForProvider.Schedule)
			if err != nil || last == nil {
				return time.Minute // the error is reported by the evaluation
			}
			return sched.Next(last.Time).Sub(last.Time)
		},
		Now: now,
	}
}

type connector struct {
	c    *shared.KustoConnector
	kube client.Reader
	cfg  Config
	// http is shared by every evaluation: a client per Connect would leave
	// a transport and its idle connections behind each reconcile.
	http    *http.Client
	metrics *fleetmetrics.Metrics
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.Autoscaler) (managed.TypedExternalClient[*v1alpha1.Autoscaler], error) {
	s, err := c.c.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	if err := allowed(s.Grant(), mg.Spec.ForProvider); err != nil {
		return nil, err
	}
	e := &external{kube: c.kube, http: c.http, now: time.Now, loopback: c.cfg.LoopbackPods, metrics: c.metrics}
	if t := mg.Spec.ForProvider.ADX; t != nil {
		cred, opts, err := s.ARM(c.cfg.ResourceManagerEndpoint)
		if err != nil {
			return nil, err
		}
		mon, err := armmonitor.NewMetricsClient(t.SubscriptionID, cred, opts)
		if err != nil {
			return nil, err
		}
		clusters, err := armkusto.NewClustersClient(t.SubscriptionID, cred, opts)
		if err != nil {
			return nil, err
		}
		e.monitor, e.clusters = mon, clusters
	}
	return e, nil
}

// allowed refuses what the config does not grant: reading an ADX
// cluster with a ClusterProviderConfig's credentials (the provider's
// identity) needs the admin's spec.azure.allowMonitoring, and only where
// the config grants provisioning (tenancy.Grant.Monitoring). An ingestor
// is read in the Autoscaler's own namespace and needs nothing.
func allowed(g *tenancy.Grant, p v1alpha1.AutoscalerParameters) error {
	if p.ADX == nil {
		return nil
	}
	return g.Monitoring(p.ADX.SubscriptionID, p.ADX.ResourceGroup, "ADX cluster "+measure.ClusterURI(*p.ADX))
}

// scrapeClient reads pods' metrics: no proxy and no redirects, so that a
// pod cannot send the provider elsewhere.
func scrapeClient() *http.Client {
	return &http.Client{
		Timeout:       scrapeTimeout,
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute, ResponseHeaderTimeout: scrapeTimeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// clusterGetter is armkusto's ClustersClient.
type clusterGetter interface {
	Get(ctx context.Context, resourceGroupName, clusterName string, options *armkusto.ClustersClientGetOptions) (armkusto.ClustersClientGetResponse, error)
}

type external struct {
	kube     client.Reader
	http     *http.Client
	monitor  measure.MetricsLister
	clusters clusterGetter
	now      func() time.Time
	loopback bool // scrape pods on loopback IPs (Config.LoopbackPods)
	metrics  *fleetmetrics.Metrics
}

// Observe: an Autoscaler has nothing to create; it is out of date when an
// evaluation is due.
func (e *external) Observe(_ context.Context, mg *v1alpha1.Autoscaler) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		e.metrics.ForgetAutoscaler(mg.Namespace, mg.Name)
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.metrics.Autoscaler(mg)
	due := periodic(e.now).Due(mg) || mg.Status.AtProvider.ObservedGeneration != mg.GetGeneration()
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: !due}, nil
}

func (e *external) Create(context.Context, *v1alpha1.Autoscaler) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Update evaluates once and records the decision.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Autoscaler) (managed.ExternalUpdate, error) {
	// An evaluation never fails the reconcile: what it could not measure
	// is in the status, and the size stays.
	e.evaluate(ctx, mg)
	e.metrics.AutoscalerDecision(mg, scaling.Direction(mg.Status.AtProvider.Decision))
	e.metrics.Autoscaler(mg)
	return managed.ExternalUpdate{}, nil
}

// evaluate measures, decides and writes the decision into the status.
func (e *external) evaluate(ctx context.Context, mg *v1alpha1.Autoscaler) {
	now := e.now()
	p := mg.Spec.ForProvider
	at := &mg.Status.AtProvider
	at.LastEvaluationTime = &metav1.Time{Time: now}
	at.ObservedGeneration = mg.GetGeneration()
	sched, err := scaling.ParseSchedule(p.Schedule)
	if err != nil {
		fail(mg, err)
		return
	}
	at.NextEvaluationTime = &metav1.Time{Time: sched.Next(now)}

	size, metrics, err := e.measure(ctx, mg)
	if err != nil {
		fail(mg, err)
		return
	}
	at.ObservedSize = size

	base := at.DesiredSize
	switch {
	case base > 0:
	case size != nil:
		base = *size
	default:
		base = p.Min
	}
	var lastScale time.Time
	if at.LastScaleTime != nil {
		lastScale = at.LastScaleTime.Time
	}
	d := scaling.Decide(metrics, base, lastScale, now, policy(p))
	if d.To != d.From {
		at.LastScaleTime = &metav1.Time{Time: now}
	}
	at.DesiredSize = d.To
	at.Decision, at.Reason = string(d.Direction), observe.Bound(d.Reason)
	at.Metrics = observations(metrics)
	at.Score = nil
	if missingAny(metrics) {
		mg.SetConditions(xpv2.Unavailable().WithMessage(at.Reason))
	} else {
		at.Score = new(d.Score)
		// The decision in the condition too, so that `crossplane beta
		// trace -o wide` and `kubectl describe` show it.
		mg.SetConditions(xpv2.Available().WithMessage(at.Reason))
	}
}

// fail records an evaluation that could not measure: the desired size
// stays where it was, and the last evaluation's metrics and score, no
// longer current, are not shown beside it.
func fail(mg *v1alpha1.Autoscaler, err error) {
	at := &mg.Status.AtProvider
	at.Decision, at.Reason = string(scaling.Hold), observe.Bound("hold: "+err.Error())
	at.Metrics, at.Score = nil, nil
	mg.SetConditions(xpv2.Unavailable().WithMessage(at.Reason))
}

func policy(p v1alpha1.AutoscalerParameters) scaling.Policy {
	pol := scaling.Policy{Min: p.Min, Max: p.Max, Cooldown: 5 * time.Minute}
	if p.Cooldown != nil {
		pol.Cooldown = p.Cooldown.Duration
	}
	if p.Bound != nil {
		pol.Bound = *p.Bound
	}
	return pol
}

func missingAny(ms []scaling.Metric) bool {
	for _, m := range ms {
		if m.Missing() {
			return true
		}
	}
	return false
}

func observations(ms []scaling.Metric) []v1alpha1.MetricObservation {
	out := make([]v1alpha1.MetricObservation, len(ms))
	for i, m := range ms {
		out[i] = v1alpha1.MetricObservation{Name: m.Name, Vote: int32(m.Vote()), Error: observe.Bound(m.Err)} //nolint:gosec // -1, 0 or 1
		if !m.Missing() {
			out[i].Value = new(m.Value)
		}
	}
	return out
}

// measure reads the target's size and metrics.
func (e *external) measure(ctx context.Context, mg *v1alpha1.Autoscaler) (*int32, []scaling.Metric, error) {
	p := mg.Spec.ForProvider
	switch {
	case p.Ingestor != nil:
		return e.ingestor(ctx, mg.GetNamespace(), *p.Ingestor, p.Metrics)
	case p.ADX != nil:
		if e.monitor == nil || e.clusters == nil {
			return nil, nil, errors.New("no Azure clients")
		}
		// The cluster's size and every metric within one deadline, well
		// inside the reconcile's minute however many metrics there are.
		ctx, cancel := context.WithTimeout(ctx, measureTimeout)
		defer cancel()
		resp, err := e.clusters.Get(ctx, p.ADX.ResourceGroup, p.ADX.ClusterName, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot read cluster %s: %s", measure.ClusterURI(*p.ADX), measure.AzureError(err))
		}
		var size *int32
		if resp.SKU != nil && resp.SKU.Capacity != nil {
			size = resp.SKU.Capacity
		}
		return size, measure.ADX(ctx, e.monitor, *p.ADX, p.Metrics, e.now()), nil
	}
	return nil, nil, errors.New("spec.forProvider names neither ingestor nor adx")
}

// ingestor reads the StatefulSet's replicas and scrapes the pods the
// Service selects, all in the Autoscaler's own namespace.
func (e *external) ingestor(ctx context.Context, ns string, t v1alpha1.IngestorTarget, metrics []v1alpha1.ScaleMetric) (*int32, []scaling.Metric, error) {
	var size *int32
	sts := &appsv1.StatefulSet{}
	switch err := e.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: t.StatefulSet}, sts); {
	case kerrors.IsNotFound(err):
		// Not created yet: the decision starts from min.
	case err != nil:
		return nil, nil, fmt.Errorf("cannot read StatefulSet %s/%s: %w", ns, t.StatefulSet, err)
	default:
		size = new(int32(1))
		if sts.Spec.Replicas != nil {
			size = sts.Spec.Replicas
		}
	}
	svc := &corev1.Service{}
	if err := e.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: t.Service}, svc); err != nil {
		return size, nil, fmt.Errorf("cannot read Service %s/%s: %w", ns, t.Service, err)
	}
	if len(svc.Spec.Selector) == 0 {
		return size, nil, fmt.Errorf("service %s/%s has no selector, so it names no pods", ns, t.Service)
	}
	pods := &corev1.PodList{}
	if err := e.kube.List(ctx, pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(svc.Spec.Selector)}, client.Limit(measure.MaxPods)); err != nil {
		return size, nil, fmt.Errorf("cannot list the pods of Service %s/%s: %w", ns, t.Service, err)
	}
	port, path := intstr.FromString("metrics"), "/metrics"
	if t.MetricsPort != nil {
		port = *t.MetricsPort
	}
	if t.MetricsPath != "" {
		path = t.MetricsPath
	}
	targets, err := measure.Pods(pods.Items, port, path, e.loopback)
	if err != nil {
		return size, nil, err
	}
	// One deadline for the whole evaluation: its pods are scraped
	// together, so a pod that dribbles its answer costs scrapeTimeout
	// once, not once per pod, and never the reconcile's whole budget.
	sctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	return size, measure.Ingestor(sctx, e.http, targets, metrics), nil
}

func (e *external) Delete(context.Context, *v1alpha1.Autoscaler) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
