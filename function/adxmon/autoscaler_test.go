package adxmon

import (
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// scaledStack is the complete example with the seed's autoscaler.
func scaledStack() *v1alpha1.ADXMon {
	x := complete()
	x.Spec.Autoscaler = &v1alpha1.Autoscaler{
		Enabled: true,
		ADX: &v1alpha1.ScaleTarget{
			Metrics: []scalingv1alpha1.ScaleMetric{
				{Type: scalingv1alpha1.MetricIngestionVolume, ScaleUpThreshold: 75, ScaleDownThreshold: 25, Weight: 0.6},
				{Type: scalingv1alpha1.MetricSystemLoad, ScaleUpThreshold: 80, ScaleDownThreshold: 30, Weight: 0.4},
			},
			MinNodes: 2, MaxNodes: 10, CooldownMinutes: ptr.To[int32](15),
		},
		Ingestor: &v1alpha1.ScaleTarget{
			Metrics: []scalingv1alpha1.ScaleMetric{
				{Type: scalingv1alpha1.MetricQueueLength, ScaleUpThreshold: 1000, ScaleDownThreshold: 100, Weight: 0.7},
				{Type: scalingv1alpha1.MetricMemoryUsage, ScaleUpThreshold: 85, ScaleDownThreshold: 40, Weight: 0.3},
			},
			MinReplicas: 1, MaxReplicas: 5,
		},
	}
	return x
}

// scaler is an observed Autoscaler that has decided.
func scaler(desired, size int64, decision, reason string) *ct.Resource {
	return ct.Observed(scalingv1alpha1.SchemeGroupVersion.String(), scalingv1alpha1.AutoscalerKind, "x").Ready().
		AtProvider("desiredSize", desired).AtProvider("observedSize", size).
		AtProvider("decision", decision).AtProvider("reason", reason)
}

// TestAutoscalerComposed: each scaled component gets an Autoscaler in the
// stack's namespace, once it is Ready, with the spec's metrics and bounds
// and the seed's defaults.
func TestAutoscalerComposed(t *testing.T) {
	t.Run("held until the stack is installed", func(t *testing.T) {
		for _, step := range []string{"namespace", "adx", "ingestor", "collector"} {
			rsp := ct.Run(t, Composer, ct.Call{XR: scaledStack(), Observed: through(step)})
			if rsp.Has("autoscaler-adx-prodmetrics") || rsp.Has("autoscaler-ingestor") {
				t.Errorf("through %s: Autoscalers composed before the stack is installed: %v", step, rsp.Names())
			}
			rsp.WantNotReady()
			rsp.WantCondition(v1alpha1.ConditionAutoscalerReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonWaiting)
		}
	})
	t.Run("composed once it is", func(t *testing.T) {
		rsp := ct.Run(t, Composer, ct.Call{XR: scaledStack(), Observed: through("alerter"),
			Input: &v1beta1.Input{ADXMon: &v1beta1.ADXMon{ProviderConfigRef: &v1beta1.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}}}})
		rsp.Want("autoscaler-ingestor", "metadata.name", "ingestor")
		rsp.Want("autoscaler-ingestor", "metadata.namespace", "adx-mon")
		rsp.Want("autoscaler-ingestor", "spec.providerConfigRef", map[string]any{"kind": "ProviderConfig", "name": "team"})
		rsp.Want("autoscaler-ingestor", "spec.forProvider.ingestor", map[string]any{"statefulSet": "ingestor", "service": "ingestor", "metricsPort": "metrics", "metricsPath": "/metrics"})
		rsp.Want("autoscaler-ingestor", "spec.forProvider.schedule", "*/5 * * * *")
		rsp.Want("autoscaler-ingestor", "spec.forProvider.min", 1)
		rsp.Want("autoscaler-ingestor", "spec.forProvider.max", 5)
		rsp.Want("autoscaler-ingestor", "spec.forProvider.cooldown", "5m0s")
		rsp.Want("autoscaler-ingestor", "spec.forProvider.metrics", []any{
			map[string]any{"type": "QueueLength", "scaleUpThreshold": 1000, "scaleDownThreshold": 100, "weight": 0.7},
			map[string]any{"type": "MemoryUsage", "scaleUpThreshold": 85, "scaleDownThreshold": 40, "weight": 0.3},
		})
		rsp.Want("autoscaler-adx-prodmetrics", "metadata.name", "complete-prodmetrics")
		rsp.Want("autoscaler-adx-prodmetrics", "spec.forProvider.adx", map[string]any{"subscriptionId": "00000000-0000-0000-0000-000000000000", "resourceGroup": "adx-monitor-prod", "clusterName": "prodmetrics"})
		rsp.Want("autoscaler-adx-prodmetrics", "spec.forProvider.min", 2)
		rsp.Want("autoscaler-adx-prodmetrics", "spec.forProvider.max", 10)
		rsp.Want("autoscaler-adx-prodmetrics", "spec.forProvider.cooldown", "15m0s")
		// Before a decision, sizes stay as they are: the ingestor's the
		// StatefulSet's, the cluster's Azure's.
		rsp.Want("ingestor", "spec.replicas", 3)
		rsp.Want("adx-prodmetrics", "spec.provision.capacity", nil)
		rsp.Want("", "status.ingestor.replicasOwner", OwnerAutoscaler)
		rsp.WantCondition(v1alpha1.ConditionAutoscalerReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonWaiting, "Autoscaler adx-mon/ingestor", "Autoscaler adx-mon/complete-prodmetrics")
		// The Autoscalers do not hold the stack's readiness.
		if rsp.ReadyOf("autoscaler-ingestor") != fnv1.Ready_READY_TRUE {
			t.Errorf("the ingestor's Autoscaler is %v, want ready for the XR's readiness", rsp.ReadyOf("autoscaler-ingestor"))
		}
		rsp.Want("", "status.phase", PhaseInstalled)
	})
	t.Run("a minimum above the default maximum raises it", func(t *testing.T) {
		x := scaledStack()
		x.Spec.Autoscaler.Ingestor.MinReplicas, x.Spec.Autoscaler.Ingestor.MaxReplicas = 12, 0
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: through("alerter")})
		rsp.Want("autoscaler-ingestor", "spec.forProvider.min", 12)
		rsp.Want("autoscaler-ingestor", "spec.forProvider.max", 12)
		rsp.Want("ingestor", "spec.replicas", 12)
	})
	t.Run("an adopted cluster is not scaled", func(t *testing.T) {
		x := scaledStack()
		x.Spec.ADX.Clusters = append(x.Spec.ADX.Clusters, v1alpha1.ADXMonCluster{Name: "shared", Endpoint: "https://shared.westus.kusto.windows.net"})
		obs := through("alerter")
		obs["adx-shared"] = ct.Observed("adx.fleetplane.io/v1alpha1", "ADXCluster", "complete-shared").Set("status.endpoint", "https://shared.westus.kusto.windows.net").Ready()
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		if rsp.Has("autoscaler-adx-shared") {
			t.Error("an Autoscaler was composed for a cluster the stack does not provision")
		}
		rsp.Want("adx-shared", "spec.provision", nil)
	})
	t.Run("disabled: nothing composed, sizes are the spec's", func(t *testing.T) {
		x := scaledStack()
		x.Spec.Autoscaler.Enabled = false
		obs := through("alerter")
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		if rsp.Has("autoscaler-ingestor") || rsp.Has("autoscaler-adx-prodmetrics") {
			t.Errorf("Autoscalers composed while disabled: %v", rsp.Names())
		}
		rsp.Want("ingestor", "spec.replicas", 3)
		rsp.Want("", "status.ingestor.replicasOwner", OwnerADXMon)
		rsp.WantCondition(v1alpha1.ConditionAutoscalerReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonNotRequested, "not enabled")
	})
}

// TestAutoscalerDecides: the Autoscalers' decisions size what the ADXMon
// composes, within the bounds, and a hand edit of replicas is drift.
func TestAutoscalerDecides(t *testing.T) {
	decided := func() map[string]*ct.Resource {
		obs := through("alerter")
		obs["autoscaler-ingestor"] = scaler(4, 3, "Up", "up: score 1.00 >= 0.50")
		obs["autoscaler-adx-prodmetrics"] = scaler(3, 2, "Up", "up: score 0.60 >= 0.50")
		return obs
	}
	t.Run("decisions composed", func(t *testing.T) {
		rsp := ct.Run(t, Composer, ct.Call{XR: scaledStack(), Observed: decided()})
		rsp.Want("ingestor", "spec.replicas", 4)
		rsp.Want("adx-prodmetrics", "spec.provision.capacity", 3)
		rsp.Want("", "status.ingestor.desiredReplicas", 4)
		rsp.Want("", "status.autoscalers", []any{
			map[string]any{"resource": "Autoscaler adx-mon/ingestor", "target": "StatefulSet adx-mon/ingestor", "size": 3, "desired": 4, "decision": "Up", "reason": "up: score 1.00 >= 0.50"},
			map[string]any{"resource": "Autoscaler adx-mon/complete-prodmetrics", "target": "ADXCluster adx-mon/complete-prodmetrics", "size": 2, "desired": 3, "decision": "Up", "reason": "up: score 0.60 >= 0.50"},
		})
		rsp.WantCondition(v1alpha1.ConditionAutoscalerReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonDeciding, "up: score 1.00")
		// The StatefulSet at the size the decision started from: not drift,
		// even with no status from an earlier reconcile.
		rsp.Want("", "status.drift", nil)
		// The StatefulSet still at 3, last composed 3: the apply of the
		// decision, not drift.
		x := scaledStack()
		x.Status.Ingestor = &v1alpha1.IngestorStatus{WorkloadStatus: v1alpha1.WorkloadStatus{DesiredReplicas: ptr.To[int32](3)}}
		rsp = ct.Run(t, Composer, ct.Call{XR: x, Observed: decided()})
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonInstalled)
		rsp.Want("", "status.drift", nil)
	})
	t.Run("a decision outside bounds the spec has since narrowed is clamped", func(t *testing.T) {
		obs := decided()
		obs["autoscaler-ingestor"] = scaler(9, 9, "Up", "up")
		rsp := ct.Run(t, Composer, ct.Call{XR: scaledStack(), Observed: obs})
		rsp.Want("ingestor", "spec.replicas", 5)
	})
	t.Run("before a decision, the StatefulSet's size within the bounds", func(t *testing.T) {
		obs := through("alerter")
		obs["ingestor"] = workload("StatefulSet", 8, 8)
		x := scaledStack()
		x.Status.Ingestor = &v1alpha1.IngestorStatus{WorkloadStatus: v1alpha1.WorkloadStatus{DesiredReplicas: ptr.To[int32](8)}}
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		rsp.Want("ingestor", "spec.replicas", 5)
	})
	t.Run("before the StatefulSet exists, spec.ingestor.replicas within the bounds", func(t *testing.T) {
		x := scaledStack()
		x.Spec.Ingestor.Replicas = ptr.To[int32](7)
		obs := through("adx")
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		if rsp.Has("ingestor") {
			t.Fatal("the StatefulSet was composed before its RBAC and Service")
		}
		rbacOf("ingestor", obs)
		obs["ingestor-service"] = exists("Service")
		rsp = ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		rsp.Want("ingestor", "spec.replicas", 5)
	})
	t.Run("a hand edit of the replicas is drift", func(t *testing.T) {
		obs := decided()
		obs["ingestor"] = workload("StatefulSet", 9, 9).Set("metadata.generation", 2).Set("status.observedGeneration", 2)
		x := scaledStack()
		x.Status.Ingestor = &v1alpha1.IngestorStatus{WorkloadStatus: v1alpha1.WorkloadStatus{DesiredReplicas: ptr.To[int32](4)}}
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		rsp.Want("ingestor", "spec.replicas", 4)
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonDrifted, "spec.replicas", "9", "restoring 4")
	})
	t.Run("a hand edit the Autoscaler observed while holding is still drift", func(t *testing.T) {
		obs := decided()
		obs["autoscaler-ingestor"] = scaler(4, 9, "Hold", "hold: score 1.00, but at max 5")
		obs["ingestor"] = workload("StatefulSet", 9, 9).Set("metadata.generation", 2).Set("status.observedGeneration", 2)
		x := scaledStack()
		x.Status.Ingestor = &v1alpha1.IngestorStatus{WorkloadStatus: v1alpha1.WorkloadStatus{DesiredReplicas: ptr.To[int32](4)}}
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		rsp.Want("ingestor", "spec.replicas", 4)
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonDrifted, "spec.replicas", "9", "restoring 4")
	})
	t.Run("an Autoscaler the provider refuses says why, not that it waits", func(t *testing.T) {
		obs := decided()
		obs["autoscaler-adx-prodmetrics"] = ct.Observed(scalingv1alpha1.SchemeGroupVersion.String(), scalingv1alpha1.AutoscalerKind, "x").
			Failing("ClusterProviderConfig default does not allow monitoring (spec.azure.allowMonitoring)")
		rsp := ct.Run(t, Composer, ct.Call{XR: scaledStack(), Observed: obs})
		rsp.WantCondition(v1alpha1.ConditionAutoscalerReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonCannotEvaluate, "Autoscaler adx-mon/complete-prodmetrics: ClusterProviderConfig default does not allow monitoring", "sizes are held")
		rsp.Want("adx-prodmetrics", "spec.provision.capacity", nil)
	})
	t.Run("an Autoscaler that cannot measure holds and says why", func(t *testing.T) {
		obs := decided()
		obs["autoscaler-ingestor"] = scaler(3, 3, "Hold", "hold: score 0.00")
		obs["autoscaler-adx-prodmetrics"] = scaler(3, 3, "Hold", "hold: CPU: no value").Unavailable("hold: CPU: no value")
		rsp := ct.Run(t, Composer, ct.Call{XR: scaledStack(), Observed: obs})
		rsp.Want("adx-prodmetrics", "spec.provision.capacity", 3)
		rsp.WantCondition(v1alpha1.ConditionAutoscalerReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonMetricsMissing, "Autoscaler adx-mon/complete-prodmetrics: hold: CPU: no value", "sizes are held")
		warned := false
		for _, r := range rsp.GetResults() {
			warned = warned || (r.GetReason() == ReasonMetricsMissing && r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING)
		}
		if !warned {
			t.Errorf("no warning event for MetricsMissing in %v", rsp.GetResults())
		}
		rsp.Want("", "status.phase", PhaseInstalled)
	})
}

// TestZeroConfig: with provision.auto the stack leaves where the cluster
// goes, and its SKU, to its ADXCluster's discovery (under the same policy),
// and uses what it discovered: the ADX Autoscaler waits until the
// ADXCluster reports its subscription and resource group, and the
// collectors' region is the discovered one.
func TestZeroConfig(t *testing.T) {
	auto := scaledStack()
	auto.Spec.ADX.Clusters[0].Provision = &v1alpha1.ADXMonProvision{Auto: true}

	rsp := ct.Run(t, Composer, ct.Call{XR: auto, Observed: through("alerter")})
	rsp.Want("adx-prodmetrics", "spec.provision", map[string]any{"auto": true})
	if rsp.Has("autoscaler-adx-prodmetrics") {
		t.Error("the ADX Autoscaler composed before the ADXCluster says where its cluster is")
	}
	if !rsp.Has("autoscaler-ingestor") {
		t.Error("the ingestor's Autoscaler waits for nothing of the cluster's")
	}

	obs := through("alerter")
	obs["adx-prodmetrics"] = obs["adx-prodmetrics"].Set("status.appliedProvisionState", map[string]any{
		"subscriptionId": "44444444-4444-4444-4444-444444444444", "resourceGroup": "platform-rg", "location": "West Europe", "skuName": "Standard_L16as_v3",
	})
	rsp = ct.Run(t, Composer, ct.Call{XR: auto, Observed: obs})
	rsp.Want("autoscaler-adx-prodmetrics", "spec.forProvider.adx", map[string]any{"subscriptionId": "44444444-4444-4444-4444-444444444444", "resourceGroup": "platform-rg", "clusterName": "prodmetrics"})
	if toml, _ := rsp.Value("collector-config", "data").(map[string]any); !strings.Contains(fmt.Sprint(toml), `region = "westeurope"`) {
		t.Errorf("collector config: want the discovered region westeurope in %v", toml)
	}

	// Given values win; the SKU given is used, with its tier.
	auto.Spec.ADX.Clusters[0].Provision = &v1alpha1.ADXMonProvision{Auto: true, ResourceGroup: "mine", Sku: "Dev(No SLA)_Standard_E2a_v4"}
	rsp = ct.Run(t, Composer, ct.Call{XR: auto, Observed: obs})
	rsp.Want("adx-prodmetrics", "spec.provision", map[string]any{"auto": true, "resourceGroup": "mine", "skuName": "Dev(No SLA)_Standard_E2a_v4", "tier": "Basic"})
	rsp.Want("autoscaler-adx-prodmetrics", "spec.forProvider.adx.resourceGroup", "mine")
}
