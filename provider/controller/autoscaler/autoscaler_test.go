package autoscaler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// adxCluster is an ADX cluster as armkusto reads it and its CPU as
// armmonitor reads it: the SDKs' response types, fed to the controller.
// (provider/measure runs armmonitor's client against its fake server.)
type adxCluster struct {
	capacity int32
	cpu      float64
	failGet  bool
}

func (c *adxCluster) Get(context.Context, string, string, *armkusto.ClustersClientGetOptions) (armkusto.ClustersClientGetResponse, error) {
	if c.failGet {
		return armkusto.ClustersClientGetResponse{}, errNotFound
	}
	return armkusto.ClustersClientGetResponse{Cluster: armkusto.Cluster{SKU: &armkusto.AzureSKU{Capacity: new(c.capacity)}}}, nil
}

func (c *adxCluster) List(_ context.Context, _ string, o *armmonitor.MetricsClientListOptions) (armmonitor.MetricsClientListResponse, error) {
	return armmonitor.MetricsClientListResponse{Response: armmonitor.Response{Value: []*armmonitor.Metric{{
		Name:       &armmonitor.LocalizableString{Value: o.Metricnames},
		Timeseries: []*armmonitor.TimeSeriesElement{{Data: []*armmonitor.MetricValue{{TimeStamp: new(t0.Add(-time.Minute)), Average: new(c.cpu)}}}},
	}}}}, nil
}

// errNotFound is an error as the SDK words one that is not a
// ResponseError: over lines, of which status keeps the first.
var errNotFound = errors.New("GET …/clusters/adxeu\nRESPONSE 404: ResourceNotFound")

func adxAutoscaler() *v1alpha1.Autoscaler {
	return &v1alpha1.Autoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "adx", Generation: 1},
		Spec: v1alpha1.AutoscalerSpec{ForProvider: v1alpha1.AutoscalerParameters{
			ADX:     &v1alpha1.ADXTarget{SubscriptionID: "00000000-0000-0000-0000-000000000001", ResourceGroup: "rg", ClusterName: "adxeu"},
			Metrics: []v1alpha1.ScaleMetric{{Type: v1alpha1.MetricSystemLoad, ScaleUpThreshold: 80, ScaleDownThreshold: 30, Weight: 0.4}},
			Min:     2, Max: 4, Cooldown: &metav1.Duration{Duration: 15 * time.Minute},
		}},
	}
}

// TestADXEvaluations walks an ADX cluster through a day: the schedule, the
// cooldown, the bounds, and a source that fails.
func TestADXEvaluations(t *testing.T) {
	cluster := &adxCluster{capacity: 2, cpu: 95}
	now := t0
	e := &external{monitor: cluster, clusters: cluster, now: func() time.Time { return now }}
	mg := adxAutoscaler()
	ctx := context.Background()

	step := func(what string, wantUpToDate bool, want func(v1alpha1.AutoscalerObservation) string) {
		t.Helper()
		obs, err := e.Observe(ctx, mg)
		if err != nil {
			t.Fatal(err)
		}
		if obs.ResourceUpToDate != wantUpToDate {
			t.Fatalf("%s: up to date = %v, want %v", what, obs.ResourceUpToDate, wantUpToDate)
		}
		if !obs.ResourceUpToDate {
			if _, err := e.Update(ctx, mg); err != nil {
				t.Fatal(err)
			}
		}
		if msg := want(mg.Status.AtProvider); msg != "" {
			t.Errorf("%s: %s; atProvider %+v", what, msg, mg.Status.AtProvider)
		}
	}
	decided := func(size int32, decision, reason string) func(v1alpha1.AutoscalerObservation) string {
		return func(at v1alpha1.AutoscalerObservation) string {
			if at.DesiredSize != size || at.Decision != decision || !strings.Contains(at.Reason, reason) {
				return "want " + decision + " with " + reason
			}
			return ""
		}
	}

	step("first evaluation, at once", false, decided(3, "Up", "up: score 1.00 ≥ 0.50"))
	if at := mg.Status.AtProvider; !at.NextEvaluationTime.Equal(&metav1.Time{Time: t0.Add(5 * time.Minute)}) || *at.ObservedSize != 2 || !at.LastScaleTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("atProvider = %+v, want the next evaluation at 12:05, observed 2, scaled at 12:00", at)
	}
	now = t0.Add(4 * time.Minute)
	step("before the schedule's next time", true, decided(3, "Up", ""))
	now = t0.Add(5 * time.Minute)
	cluster.capacity = 3
	step("on schedule, cooling down", false, decided(3, "Hold", "cooling down until 2026-11-23T12:15:00Z"))
	now = t0.Add(15 * time.Minute)
	step("cooldown over", false, decided(4, "Up", "up"))
	now = t0.Add(35 * time.Minute)
	cluster.capacity = 4
	step("at max", false, decided(4, "Hold", "at max 4"))
	cluster.cpu = 10
	now = t0.Add(40 * time.Minute)
	step("load gone: down, never below min", false, decided(3, "Down", "down"))
	if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %s %q", c.Status, c.Message)
	}
	cluster.failGet = true
	now = t0.Add(60 * time.Minute)
	step("the cluster cannot be read: hold where it was", false, decided(3, "Hold", "hold: cannot read cluster /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Kusto/clusters/adxeu: GET …/clusters/adxeu"))
	if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "cannot read cluster") {
		t.Errorf("Ready = %s %q, want False saying why", c.Status, c.Message)
	}
	if at := mg.Status.AtProvider; at.Metrics != nil || at.Score != nil {
		t.Errorf("a failed evaluation still shows the last one's metrics %v and score %v", at.Metrics, at.Score)
	}
	cluster.failGet = false
	mg.Spec.ForProvider.Schedule = "0 * * * *"
	mg.Generation = 2
	now = t0.Add(61 * time.Minute)
	step("a spec change is evaluated at once", false, decided(2, "Down", "down"))
	if !mg.Status.AtProvider.NextEvaluationTime.Equal(&metav1.Time{Time: t0.Add(2 * time.Hour)}) {
		t.Errorf("next evaluation %v, want 14:00 on the new schedule", mg.Status.AtProvider.NextEvaluationTime)
	}
}

func TestBadSchedule(t *testing.T) {
	mg := adxAutoscaler()
	mg.Spec.ForProvider.Schedule = "10-5 * * * *" // the pattern lets it through
	e := &external{monitor: &adxCluster{}, clusters: &adxCluster{capacity: 2}, now: func() time.Time { return t0 }}
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "beginning of range (10) beyond end of range (5)") {
		t.Errorf("Ready = %s %q", c.Status, c.Message)
	}
	if mg.Status.AtProvider.DesiredSize != 0 {
		t.Errorf("a bad schedule decided %d", mg.Status.AtProvider.DesiredSize)
	}
}

func TestAllowed(t *testing.T) {
	adx := adxAutoscaler().Spec.ForProvider
	ingestor := v1alpha1.AutoscalerParameters{Ingestor: &v1alpha1.IngestorTarget{StatefulSet: "ingestor", Service: "ingestor"}}
	cluster := &tenancy.Grant{Kind: fpv1alpha1.ClusterProviderConfigKind, Name: "default"}
	monitoring := &tenancy.Grant{Kind: fpv1alpha1.ClusterProviderConfigKind, Name: "default", Azure: fpv1alpha1.AzurePolicy{
		AllowMonitoring: true,
		Provisioning:    []fpv1alpha1.AzureProvisioning{{SubscriptionID: adx.ADX.SubscriptionID, ResourceGroups: []string{"r*"}}},
	}}
	elsewhere := &tenancy.Grant{Kind: fpv1alpha1.ClusterProviderConfigKind, Name: "default", Azure: fpv1alpha1.AzurePolicy{
		AllowMonitoring: true,
		Provisioning:    []fpv1alpha1.AzureProvisioning{{SubscriptionID: adx.ADX.SubscriptionID, ResourceGroups: []string{"team-b-*"}}},
	}}
	own := &tenancy.Grant{Kind: fpv1alpha1.ProviderConfigKind, Name: "team-a"}
	cases := map[string]struct {
		g    *tenancy.Grant
		p    v1alpha1.AutoscalerParameters
		want string
	}{
		"ADX with the provider's identity, not granted":     {g: cluster, p: adx, want: "ClusterProviderConfig default does not allow monitoring (spec.azure.allowMonitoring), so ADX cluster /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Kusto/clusters/adxeu is not read"},
		"ADX with the provider's identity, granted":         {g: monitoring, p: adx},
		"ADX outside the resource groups the config grants": {g: elsewhere, p: adx, want: "monitoring covers only where it grants provisioning, and ClusterProviderConfig default grants no provisioning in resource group rg"},
		"ADX with the tenant's own credentials":             {g: own, p: adx},
		"an ingestor in the Autoscaler's namespace":         {g: cluster, p: ingestor},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := allowed(tc.g, tc.p)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("allowed = %v, want %q", err, tc.want)
			}
		})
	}
}
