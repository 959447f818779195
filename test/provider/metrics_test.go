package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// scrape reads the provider's metrics endpoint as Prometheus would, with
// the scraper's token.
func scrape(t *testing.T) map[string][]*model.Sample {
	t.Helper()
	body, _, err := support.Scrape(context.Background(), metricsURL, scrapeToken)
	if err != nil {
		t.Fatalf("scraping the provider: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the provider's metrics do not parse: %v", err)
	}
	out := map[string][]*model.Sample{}
	for name, f := range families {
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, f)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = vec
	}
	return out
}

// TestMetricsNeedAScraper: the provider's metrics, which name every
// team's resources, are served over TLS only to a caller the API server
// authenticates and authorizes for get on /metrics (issue 45): no token,
// a token the API server does not know, and a tenant's ServiceAccount
// without fleetplane:metrics-reader are each refused; plain HTTP is not
// served at all; the shipped role's scraper reads them.
func TestMetricsNeedAScraper(t *testing.T) {
	ctx := context.Background()
	tenant, err := controlPlane.ServiceAccountToken(ctx, namespace(t), "curious")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the scraper bound to fleetplane:metrics-reader reading the metrics", func() (bool, string) {
		_, s, err := support.Scrape(ctx, metricsURL, scrapeToken)
		if err != nil {
			return false, err.Error()
		}
		return s.Series("go_goroutines") > 0, "no go_goroutines"
	})
	for _, c := range []struct {
		name, token, want string
	}{
		{"no token", "", "401 Unauthorized"},
		// controller-runtime's filter answers a token the API server
		// rejects as its own failure to authenticate.
		{"an unknown token", "not-a-token", "500 Internal Server Error"},
		{"a tenant's ServiceAccount", tenant, "403 Forbidden"},
	} {
		_, _, err := support.Scrape(ctx, metricsURL, c.token)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: scrape error %v, want %s", c.name, err, c.want)
		}
	}
	if _, _, err := support.Scrape(ctx, strings.Replace(metricsURL, "https:", "http:", 1), ""); err == nil {
		t.Error("the provider served its metrics over plain HTTP")
	}
}

// value is the sample named metric whose gvk label is gvk, and whether
// there is one. A histogram's _count and _sum are samples of its family.
func value(samples map[string][]*model.Sample, metric, gvk string) (float64, bool) {
	family := strings.TrimSuffix(strings.TrimSuffix(metric, "_count"), "_sum")
	for _, s := range samples[family] {
		if string(s.Metric[model.MetricNameLabel]) == metric && string(s.Metric["gvk"]) == gvk {
			return float64(s.Value), true
		}
	}
	return 0, false
}

// TestManagedResourceMetrics: the provider serves crossplane-runtime's
// managed-resource metrics under the names and labels Crossplane's
// dashboards read (as provider-kubernetes and the upjet providers do): a
// Table that turns Ready is counted as existing, ready and synced, and
// its time to first readiness is observed.
func TestManagedResourceMetrics(t *testing.T) {
	ns := namespace(t)
	hub := support.KustoServer(t, "FleetDiscovery")
	tbl := heartbeatTable(ns, hub.URL)
	create(t, tbl)
	eventually(t, time.Minute, "the Table Ready", func() (bool, string) {
		got := get(t, &kustov1alpha1.Table{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tbl.Name}})
		return ready(got.GetCondition("Ready")), fmt.Sprint(got.Status.Conditions)
	})
	gvk := kustov1alpha1.TableGroupVersionKind.String()
	eventually(t, 30*time.Second, "the Table counted in the state metrics", func() (bool, string) {
		m := scrape(t)
		exists, _ := value(m, "crossplane_managed_resource_exists", gvk)
		readyCount, _ := value(m, "crossplane_managed_resource_ready", gvk)
		synced, _ := value(m, "crossplane_managed_resource_synced", gvk)
		return exists >= 1 && readyCount >= 1 && synced >= 1, fmt.Sprintf("exists %v, ready %v, synced %v", exists, readyCount, synced)
	})
	m := scrape(t)
	if n, ok := value(m, "crossplane_managed_resource_first_time_to_readiness_seconds_count", gvk); !ok || n < 1 {
		t.Errorf("no time to first readiness observed for %s (count %v)", gvk, n)
	}
	// Every kind of the provider is counted, whether or not it has
	// resources: a dashboard sees the kinds at zero, not missing, once
	// their controllers have started (the CRD gate starts each as its
	// CRD is seen, so a test run alone can be first).
	eventually(t, 30*time.Second, "every kind in the state metrics", func() (bool, string) {
		m := scrape(t)
		for _, k := range []string{
			kustov1alpha1.HeartbeatGroupVersionKind.String(), kustov1alpha1.FederationGroupVersionKind.String(),
		} {
			if _, ok := value(m, "crossplane_managed_resource_exists", k); !ok {
				return false, "no state metric for " + k
			}
		}
		return true, ""
	})
}
