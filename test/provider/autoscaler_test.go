package provider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// ingestorPod is a Prometheus endpoint on loopback standing in for one
// ingestor pod: the Pod object carries its address in status, as a
// kubelet would write it.
type ingestorPod struct {
	queue  atomic.Int64
	broken atomic.Bool
	port   int
}

func startIngestorPod(t *testing.T, ns, name string) *ingestorPod {
	t.Helper()
	p := &ingestorPod{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if p.broken.Load() {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "# TYPE adxmon_ingestor_queue_size gauge\nadxmon_ingestor_queue_size{queue=\"upload\"} %d\nadxmon_ingestor_queue_size{queue=\"transfer\"} 0\n", p.queue.Load())
	}))
	t.Cleanup(s.Close)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	p.port, _ = strconv.Atoi(port)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "ingestor"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ingestor", Image: "ghcr.io/azure/adx-mon/ingestor:v0.3.0", Ports: []corev1.ContainerPort{
			{Name: "metrics", ContainerPort: int32(p.port)},
		}}}},
	}
	create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}}, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := kube.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAutoscalerScalesTheIngestor: the provider, under the RBAC it ships,
// scrapes the pods an ingestor Service selects, and decides one replica at
// a time: up while the queue is long, held by the cooldown and by max,
// down when the queue drains. The test plays the function's part and
// applies each decision to the StatefulSet.
func TestAutoscalerScalesTheIngestor(t *testing.T) {
	ns := namespace(t)
	// Pods need their ServiceAccount; no controller here makes "default".
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})
	pods := []*ingestorPod{startIngestorPod(t, ns, "ingestor-a"), startIngestorPod(t, ns, "ingestor-b")}
	setQueue := func(n int64) {
		for _, p := range pods {
			p.queue.Store(n)
		}
	}
	// The StatefulSet selects other labels than the Service, so that the
	// statefulset controller leaves the stand-in pods alone.
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ingestor"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingestor-sts"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ingestor-sts"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ingestor", Image: "ghcr.io/azure/adx-mon/ingestor:v0.3.0"}}},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ingestor"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "ingestor"}, Ports: []corev1.ServicePort{{Port: 443}}},
	}
	create(t, sts, svc)

	setQueue(2000)
	as := &scalingv1alpha1.Autoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ingestor"},
		Spec: scalingv1alpha1.AutoscalerSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(ns)},
			ForProvider: scalingv1alpha1.AutoscalerParameters{
				Ingestor: &scalingv1alpha1.IngestorTarget{StatefulSet: "ingestor", Service: "ingestor"},
				Metrics: []scalingv1alpha1.ScaleMetric{
					{Type: scalingv1alpha1.MetricQueueLength, ScaleUpThreshold: 1000, ScaleDownThreshold: 100, Weight: 0.7},
				},
				Min: 1, Max: 3,
				Cooldown: every(time.Hour),
			},
		},
	}
	create(t, as)

	// evaluated waits for an evaluation of the current spec and applies
	// its decision as the function would.
	evaluated := func(what string, want func(scalingv1alpha1.AutoscalerObservation) bool) scalingv1alpha1.AutoscalerObservation {
		t.Helper()
		var at scalingv1alpha1.AutoscalerObservation
		eventually(t, 30*time.Second, what, func() (bool, string) {
			a := get(t, &scalingv1alpha1.Autoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ingestor"}})
			at = a.Status.AtProvider
			return at.ObservedGeneration == a.Generation && want(at), fmt.Sprintf("generation %d, atProvider %+v", a.Generation, at)
		})
		update(t, sts, func() { sts.Spec.Replicas = new(at.DesiredSize) })
		return at
	}
	respec := func(change func(*scalingv1alpha1.AutoscalerParameters)) {
		t.Helper()
		update(t, as, func() { change(&as.Spec.ForProvider) })
	}
	desired := func(n int32, decision string) func(scalingv1alpha1.AutoscalerObservation) bool {
		return func(at scalingv1alpha1.AutoscalerObservation) bool {
			return at.DesiredSize == n && at.Decision == decision
		}
	}

	at := evaluated("1 → 2 on a long queue", desired(2, "Up"))
	if at.ObservedSize == nil || *at.ObservedSize != 1 || at.Score == nil || *at.Score != 1 || at.LastScaleTime == nil ||
		len(at.Metrics) != 1 || at.Metrics[0].Value == nil || *at.Metrics[0].Value != 2000 || at.Metrics[0].Vote != 1 {
		t.Errorf("atProvider = %+v, want 1 observed, score 1, the queue averaged over both pods", at)
	}

	// A spec change is evaluated at once; the cooldown holds.
	respec(func(p *scalingv1alpha1.AutoscalerParameters) { p.Metrics[0].Weight = 0.8 })
	at = evaluated("held by the cooldown", desired(2, "Hold"))
	if want := "hold: score 1.00, but cooling down until"; len(at.Reason) < len(want) || at.Reason[:len(want)] != want {
		t.Errorf("reason = %q", at.Reason)
	}

	respec(func(p *scalingv1alpha1.AutoscalerParameters) { p.Cooldown = every(0) })
	at = evaluated("2 → 3 once the cooldown allows", desired(3, "Up"))
	if at.ObservedSize == nil || *at.ObservedSize != 2 {
		t.Errorf("observed size = %v, want the StatefulSet's 2", at.ObservedSize)
	}

	respec(func(p *scalingv1alpha1.AutoscalerParameters) { p.Metrics[0].Weight = 0.9 })
	at = evaluated("held at max", desired(3, "Hold"))
	if at.Reason != "hold: score 1.00, but at max 3" {
		t.Errorf("reason = %q", at.Reason)
	}

	setQueue(10)
	respec(func(p *scalingv1alpha1.AutoscalerParameters) { p.Metrics[0].Weight = 1 })
	evaluated("3 → 2 when the queue drains", desired(2, "Down"))

	// A pod that fails is an error for the metric, and a hold: never a
	// guess.
	pods[1].broken.Store(true)
	setQueue(5000)
	respec(func(p *scalingv1alpha1.AutoscalerParameters) { p.Metrics[0].Weight = 0.5 })
	at = evaluated("held while a pod fails", desired(2, "Hold"))
	if want := "hold: no value for QueueLength: 1 of 2 pods: ingestor-b: HTTP 500"; at.Reason != want || at.Metrics[0].Value != nil || at.Score != nil {
		t.Errorf("atProvider = %+v, want the reason %q and no value", at, want)
	}
	a := get(t, &scalingv1alpha1.Autoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ingestor"}})
	if c := a.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || c.Message != at.Reason {
		t.Errorf("Ready = %s %q, want False with the reason", c.Status, c.Message)
	}
}

// TestAutoscalerScalesADX: an ADX cluster's Autoscaler reads the
// cluster's size from Azure Resource Manager and its metrics from Azure
// Monitor through the Azure SDK's clients, against a loopback stand-in
// that speaks their REST shapes. With the provider's identity it needs the
// admin's allowMonitoring; it decides up on high utilization, holds when
// a metric fails, and down when load falls. The test applies each decision
// to the stand-in's cluster, as upjet would from the ADXCluster's capacity.
func TestAutoscalerScalesADX(t *testing.T) {
	ns := namespace(t)
	const sub, rg, cluster = "0f000000-0000-4000-8000-0000000000a1", "adx-scaling", "scaledprov01"
	var capacity atomic.Int32
	capacity.Store(2)
	azureAPI.ServeClusters(func(name string) (int32, bool) { return capacity.Load(), name == cluster })
	azureAPI.SetMetric(sub, rg, cluster, "IngestionUtilization", 90)
	azureAPI.SetMetric(sub, rg, cluster, "CPU", 85)

	// First the namespace's config without allowMonitoring: refused.
	monitoring := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "monitoring-" + ns}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}, NamespaceSelector: metav1.LabelSelector{},
		// Monitoring covers the resource groups where provisioning is
		// granted, and only those.
		Azure: &v1alpha1.AzurePolicy{Provisioning: []v1alpha1.AzureProvisioning{{
			SubscriptionID: sub, ResourceGroups: []string{"adx-*"},
			ProviderConfigRef: v1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
		}}},
	}}
	create(t, monitoring)
	govern(t, ns, monitoring.Name)

	as := &scalingv1alpha1.Autoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster},
		Spec: scalingv1alpha1.AutoscalerSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(ns)},
			ForProvider: scalingv1alpha1.AutoscalerParameters{
				ADX: &scalingv1alpha1.ADXTarget{SubscriptionID: sub, ResourceGroup: rg, ClusterName: cluster},
				Metrics: []scalingv1alpha1.ScaleMetric{
					{Type: scalingv1alpha1.MetricIngestionVolume, ScaleUpThreshold: 75, ScaleDownThreshold: 25, Weight: 0.6},
					{Type: scalingv1alpha1.MetricSystemLoad, ScaleUpThreshold: 80, ScaleDownThreshold: 30, Weight: 0.4},
				},
				Min: 2, Max: 4,
				Cooldown: every(0),
			},
		},
	}
	create(t, as)
	key := &scalingv1alpha1.Autoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster}}
	eventually(t, 30*time.Second, "refused without allowMonitoring", func() (bool, string) {
		c := get(t, key).GetCondition(xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "does not allow monitoring (spec.azure.allowMonitoring)"), c.Message
	})

	evaluated := func(what string, decision string, desired int32) scalingv1alpha1.AutoscalerObservation {
		t.Helper()
		var at scalingv1alpha1.AutoscalerObservation
		eventually(t, 30*time.Second, what, func() (bool, string) {
			a := get(t, key)
			at = a.Status.AtProvider
			return at.ObservedGeneration == a.Generation && at.Decision == decision && at.DesiredSize == desired, fmt.Sprintf("generation %d, atProvider %+v", a.Generation, at)
		})
		capacity.Store(at.DesiredSize)
		return at
	}
	respec := func(change func(*scalingv1alpha1.Autoscaler)) {
		t.Helper()
		update(t, as, func() { change(as) })
	}

	update(t, monitoring, func() { monitoring.Spec.Azure.AllowMonitoring = true })
	// A change of spec, so that the refused Autoscaler is tried again now.
	respec(func(a *scalingv1alpha1.Autoscaler) { a.Spec.ForProvider.Metrics[1].Weight = 0.45 })
	at := evaluated("2 → 3 on high utilization", "Up", 3)
	if at.ObservedSize == nil || *at.ObservedSize != 2 || len(at.Metrics) != 2 || at.Metrics[0].Value == nil || *at.Metrics[0].Value != 90 || at.Metrics[1].Value == nil || *at.Metrics[1].Value != 85 {
		t.Errorf("atProvider = %+v, want Azure's capacity 2 and the metrics 90 and 85", at)
	}

	// A metric Azure Monitor refuses is an error and a hold.
	azureAPI.FailMetric(sub, rg, cluster, "CPU")
	respec(func(a *scalingv1alpha1.Autoscaler) { a.Spec.ForProvider.Metrics[1].Weight = 0.5 })
	at = evaluated("held while CPU fails", "Hold", 3)
	if at.Metrics[1].Value != nil || !strings.Contains(at.Metrics[1].Error, "HTTP 400 BadRequest") || at.Score != nil {
		t.Errorf("atProvider = %+v, want CPU's HTTP 400 and no score", at)
	}

	azureAPI.SetMetric(sub, rg, cluster, "IngestionUtilization", 10)
	azureAPI.SetMetric(sub, rg, cluster, "CPU", 20)
	respec(func(a *scalingv1alpha1.Autoscaler) { a.Spec.ForProvider.Metrics[1].Weight = 0.4 })
	at = evaluated("3 → 2 when load falls", "Down", 2)
	if at.ObservedSize == nil || *at.ObservedSize != 3 {
		t.Errorf("observed size = %v, want Azure's 3", at.ObservedSize)
	}
}
