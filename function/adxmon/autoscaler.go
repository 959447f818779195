package adxmon

import (
	"fmt"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/scaling"
)

// Reasons of AutoscalerReady.
const (
	ReasonDeciding       = "Deciding"
	ReasonWaiting        = "WaitingForDecision"
	ReasonMetricsMissing = "MetricsMissing"
	// ReasonCannotEvaluate: the provider refuses or fails to evaluate an
	// Autoscaler (Synced False), e.g. a ClusterProviderConfig that does
	// not allow monitoring.
	ReasonCannotEvaluate = "CannotEvaluate"
)

// Replica owners of status.ingestor.replicasOwner.
const (
	OwnerADXMon     = "ADXMon"
	OwnerAutoscaler = "Autoscaler"
	OwnerCluster    = "Cluster"
)

// NameIngestorAutoscaler is the composition resource name of the
// ingestor's Autoscaler.
const NameIngestorAutoscaler resource.Name = "autoscaler-ingestor"

// autoscalerPrefix starts the composition resource name of an ADX
// cluster's Autoscaler.
const autoscalerPrefix = "autoscaler-"

// Defaults of spec.autoscaler, after the seed's example.
const (
	defaultMinReplicas      = 1
	defaultMaxReplicas      = 10
	defaultIngestorCooldown = 5 * time.Minute
	defaultMinNodes         = 2
	defaultMaxNodes         = 10
	defaultADXCooldown      = 15 * time.Minute
)

// scaled is one Autoscaler the stack composes: what it scales, within
// which bounds, and what it decided.
type scaled struct {
	name     resource.Name
	resource string // Autoscaler namespace/name
	target   string // Kind namespace/name
	min, max int32
	observed *composed.Unstructured
	obj      *scalingv1alpha1.Autoscaler
	after    resource.Name // the target's composition resource
}

// decision is the Autoscaler's desired size within the target's bounds
// (its spec may have moved since it last evaluated), or 0 before its
// first decision.
func (s *scaled) decision() int32 {
	n, ok := observe.Int(s.observed, "status", "atProvider", "desiredSize")
	if !ok || n <= 0 {
		return 0
	}
	return clamp(int32(min(n, 1<<20)), s.min, s.max)
}

func clamp(n, lo, hi int32) int32 {
	return max(lo, min(n, hi))
}

func or(n, def int32) int32 {
	if n > 0 {
		return n
	}
	return def
}

// planScaling works out the stack's Autoscalers before anything is
// composed: their decisions size the ingestor and the ADXClusters.
func (p *planner) planScaling() {
	a := p.xr.Spec.Autoscaler
	if a == nil || !a.Enabled {
		return
	}
	if t := a.Ingestor; t != nil && p.xr.Spec.Ingestor != nil {
		s := p.scaler(NameIngestorAutoscaler, "ingestor", "StatefulSet", NameIngestor, t,
			or(t.MinReplicas, defaultMinReplicas), or(t.MaxReplicas, defaultMaxReplicas), defaultIngestorCooldown)
		port := intstr.FromString("metrics")
		s.obj.Spec.ForProvider.Ingestor = &scalingv1alpha1.IngestorTarget{StatefulSet: "ingestor", Service: "ingestor", MetricsPort: &port, MetricsPath: "/metrics"}
		p.ingestorScale = s
	}
	if t := a.ADX; t != nil && p.xr.Spec.ADX != nil {
		p.adxScale = map[int]*scaled{}
		for i, c := range p.xr.Spec.ADX.Clusters {
			// A cluster brought as it is belongs to someone else.
			if c.Provision == nil {
				continue
			}
			cluster := p.clusterName(i)
			where := p.where(i)
			if where.SubscriptionID == "" || where.ResourceGroup == "" {
				// Discovered (provision.auto) and not yet known: the
				// cluster is measured once its ADXCluster says where it is.
				continue
			}
			s := p.scaler(resource.Name(autoscalerPrefix+adxPrefix+strings.ToLower(cluster)), p.objectName(cluster), "ADXCluster",
				resource.Name(adxPrefix+strings.ToLower(cluster)), t, or(t.MinNodes, defaultMinNodes), or(t.MaxNodes, defaultMaxNodes), defaultADXCooldown)
			s.obj.Spec.ForProvider.ADX = &scalingv1alpha1.ADXTarget{SubscriptionID: where.SubscriptionID, ResourceGroup: where.ResourceGroup, ClusterName: cluster}
			p.adxScale[i] = s
		}
	}
}

// scaler is the Autoscaler named objName (after the object it scales) of
// composition resource name.
func (p *planner) scaler(name resource.Name, objName, kind string, after resource.Name, t *v1alpha1.ScaleTarget, lo, hi int32, cooldown time.Duration) *scaled {
	if t.CooldownMinutes != nil {
		cooldown = time.Duration(*t.CooldownMinutes) * time.Minute
	}
	// A minimum given alone may exceed the default maximum: it wins.
	hi = max(hi, lo)
	schedule := p.xr.Spec.Autoscaler.Schedule
	if schedule == "" {
		schedule = scaling.DefaultSchedule
	}
	obj := &scalingv1alpha1.Autoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: scalingv1alpha1.SchemeGroupVersion.String(), Kind: scalingv1alpha1.AutoscalerKind},
		ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: p.ns, Labels: p.labels("autoscaler")},
		Spec: scalingv1alpha1.AutoscalerSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: p.cfg.Fleetplane.Kind, Name: p.cfg.Fleetplane.Name}},
			ForProvider: scalingv1alpha1.AutoscalerParameters{
				Schedule: schedule,
				Metrics:  append([]scalingv1alpha1.ScaleMetric(nil), t.Metrics...),
				Min:      lo,
				Max:      hi,
				Cooldown: &metav1.Duration{Duration: cooldown},
				Bound:    t.Bound,
			},
		},
	}
	return &scaled{
		name: name, resource: p.ns + "/" + objName, target: kind + " " + p.ns + "/" + objName,
		min: lo, max: hi, observed: p.set.Observed(name), obj: obj, after: after,
	}
}

// scalers lists the stack's Autoscalers: the ingestor's, then the ADX
// clusters' in spec order.
func (p *planner) scalers() []*scaled {
	var out []*scaled
	if p.ingestorScale != nil {
		out = append(out, p.ingestorScale)
	}
	if p.xr.Spec.ADX != nil {
		for i := range p.xr.Spec.ADX.Clusters {
			if s := p.adxScale[i]; s != nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// composeScaling composes the Autoscalers once the stack is installed:
// there is nothing to measure before, and resizing a component while the
// ones after it are being installed would only add churn (and watch
// events, which Crossplane's circuit breaker counts). It reports them. An
// Autoscaler counts as ready for the ADXMon's readiness: one that cannot
// measure holds its target's size and says why in AutoscalerReady while
// the stack runs on.
func (p *planner) composeScaling(installed bool) {
	all := p.scalers()
	for _, s := range all {
		u, err := compose.Typed(s.obj)
		if err != nil {
			p.set.Fail(fmt.Errorf("cannot compose Autoscaler %s: %w", s.resource, err))
			continue
		}
		if p.set.AddWhen(installed, s.name, u, s.after) {
			p.set.MarkReady(s.name)
		}
	}
	p.scaleStatus(all)
}

// adxCapacity is the node count the Autoscaler of cluster i decided, or
// nil: before its first decision the cluster keeps the size it has.
func (p *planner) adxCapacity(i int) *int32 {
	s := p.adxScale[i]
	if s == nil {
		return nil
	}
	if n := s.decision(); n > 0 {
		return &n
	}
	return nil
}

// ingestorReplicas is the replica count the ingestor StatefulSet is
// composed with and who decides it: the Autoscaler's decision; before it,
// the size the StatefulSet has (or spec.ingestor.replicas, or min), within
// the bounds; without the autoscaler, spec.ingestor.replicas or nobody.
// adopted says the count is the StatefulSet's own, moved into the bounds:
// a difference then is this ADXMon's change, not drift.
func (p *planner) ingestorReplicas() (replicas *int32, owner string, adopted bool) {
	in, s := p.xr.Spec.Ingestor, p.ingestorScale
	if s == nil {
		if in.Replicas != nil {
			return in.Replicas, OwnerADXMon, false
		}
		return nil, OwnerCluster, false
	}
	if n := s.decision(); n > 0 {
		return &n, OwnerAutoscaler, false
	}
	start := s.min
	if n, ok := observe.Int(p.set.Observed(NameIngestor), "spec", "replicas"); ok {
		start, adopted = int32(min(n, 1<<20)), true //nolint:gosec // bounded above
	} else if in.Replicas != nil {
		start = *in.Replicas
	}
	start = clamp(start, s.min, s.max)
	return &start, OwnerAutoscaler, adopted
}

// scaleStatus reports the Autoscalers in status and AutoscalerReady.
func (p *planner) scaleStatus(all []*scaled) {
	if len(all) == 0 {
		msg := "spec.autoscaler is not enabled: sizes are the spec's"
		if a := p.xr.Spec.Autoscaler; a != nil && a.Enabled {
			msg = "spec.autoscaler names no component this stack runs"
		}
		p.notRequested(v1alpha1.ConditionAutoscalerReady, msg)
		return
	}
	var failing, waiting, missing, deciding []string
	for _, s := range all {
		st := v1alpha1.ScalingStatus{Resource: "Autoscaler " + s.resource, Target: s.target}
		o := s.observed
		if n, ok := observe.Int(o, "status", "atProvider", "observedSize"); ok {
			st.Size = ptrInt32(n)
		}
		if n := s.decision(); n > 0 {
			st.Desired = &n
		}
		st.Decision, _ = observe.String(o, "status", "atProvider", "decision")
		reason, _ := observe.String(o, "status", "atProvider", "reason")
		st.Reason = observe.Bound(reason)
		p.status.Autoscalers = append(p.status.Autoscalers, st)

		f, failed := observe.Failed(o)
		switch c := observe.ConditionOf(o, string(xpv2.TypeReady)); {
		case failed:
			failing = append(failing, fmt.Sprintf("%s: %s", st.Resource, f.Message))
		case o == nil || st.Decision == "":
			waiting = append(waiting, st.Resource)
		case c.Status == corev1.ConditionFalse:
			missing = append(missing, fmt.Sprintf("%s: %s", st.Resource, st.Reason))
		default:
			deciding = append(deciding, fmt.Sprintf("%s: %s", st.Resource, st.Reason))
		}
	}
	switch {
	case len(failing) > 0:
		p.setCondition(v1alpha1.ConditionAutoscalerReady, corev1.ConditionFalse, ReasonCannotEvaluate, strings.Join(failing, "; ")+"; sizes are held")
	case len(missing) > 0:
		p.setCondition(v1alpha1.ConditionAutoscalerReady, corev1.ConditionFalse, ReasonMetricsMissing, strings.Join(missing, "; ")+"; sizes are held")
	case len(waiting) > 0:
		p.setCondition(v1alpha1.ConditionAutoscalerReady, corev1.ConditionFalse, ReasonWaiting, "waiting for the first evaluation of "+strings.Join(waiting, ", "))
	default:
		p.setCondition(v1alpha1.ConditionAutoscalerReady, corev1.ConditionTrue, ReasonDeciding, strings.Join(deciding, "; "))
	}
}
