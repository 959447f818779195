package measure

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor/fake"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
)

const ingestorMetrics = `# HELP adxmon_ingestor_queue_size Gauge indicating the size of the queue for an ingestor instance
# TYPE adxmon_ingestor_queue_size gauge
adxmon_ingestor_queue_size{queue="upload"} %v
adxmon_ingestor_queue_size{queue="transfer"} 10
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 5.36870912e+08
# TYPE adxmon_ingestor_requests_received_total counter
adxmon_ingestor_requests_received_total{path="/transfer",code="200"} 7
adxmon_ingestor_requests_received_total{path="/transfer",code="500"} 3
# TYPE latency histogram
latency_bucket{le="+Inf"} 1
latency_sum 1
latency_count 1
`

func serve(t *testing.T, body func() string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body()) }))
	t.Cleanup(s.Close)
	return s.URL + "/metrics"
}

func TestIngestor(t *testing.T) {
	queue := func(n int) func() string { return func() string { return fmt.Sprintf(ingestorMetrics, n) } }
	gib := float64(1 << 30)
	metrics := []v1alpha1.ScaleMetric{
		{Type: v1alpha1.MetricQueueLength, ScaleUpThreshold: 1000, ScaleDownThreshold: 100, Weight: 0.7},
		{Type: v1alpha1.MetricMemoryUsage, ScaleUpThreshold: 85, ScaleDownThreshold: 40, Weight: 0.3},
		{Type: v1alpha1.MetricCustom, Series: &v1alpha1.SeriesSelector{Name: "adxmon_ingestor_requests_received_total", MatchLabels: map[string]string{"code": "500"}}, ScaleUpThreshold: 10, ScaleDownThreshold: 1, Weight: 0.1},
	}
	t.Run("averaged over the pods", func(t *testing.T) {
		pods := []Pod{{Name: "a", URL: serve(t, queue(90)), MemoryLimit: gib}, {Name: "b", URL: serve(t, queue(290)), MemoryLimit: gib}}
		got := Ingestor(context.Background(), http.DefaultClient, pods, metrics)
		want := []float64{(100 + 300) / 2, 50, 3}
		for i, m := range got {
			if m.Missing() || m.Value != want[i] {
				t.Errorf("%s = %v (missing %v: %s), want %v", m.Name, m.Value, m.Missing(), m.Err, want[i])
			}
		}
		if got[2].Name != "adxmon_ingestor_requests_received_total" || !got[0].ProportionalN {
			t.Errorf("metrics = %+v", got)
		}
	})
	cases := map[string]struct {
		pods   func(t *testing.T) []Pod
		metric v1alpha1.ScaleMetric
		want   string
	}{
		"no pods": {pods: func(*testing.T) []Pod { return nil }, metric: metrics[0], want: "no ready ingestor pod"},
		"a pod that does not answer": {pods: func(t *testing.T) []Pod {
			t.Helper()
			return []Pod{{Name: "a", URL: serve(t, queue(1))}, {Name: "b", URL: "http://127.0.0.1:1/metrics"}}
		}, metric: metrics[0], want: "1 of 2 pods: b: dial tcp 127.0.0.1:1"},
		"garbage": {pods: func(t *testing.T) []Pod {
			t.Helper()
			return []Pod{{Name: "a", URL: serve(t, func() string { return "<html>hello</html>" })}}
		}, metric: metrics[0], want: "a: not Prometheus text"},
		"no such series": {pods: func(t *testing.T) []Pod { t.Helper(); return []Pod{{Name: "a", URL: serve(t, queue(1))}} },
			metric: v1alpha1.ScaleMetric{Type: v1alpha1.MetricCustom, Series: &v1alpha1.SeriesSelector{Name: "nope"}}, want: "no nope sample"},
		"no matching labels": {pods: func(t *testing.T) []Pod { t.Helper(); return []Pod{{Name: "a", URL: serve(t, queue(1))}} },
			metric: v1alpha1.ScaleMetric{Type: v1alpha1.MetricCustom, Series: &v1alpha1.SeriesSelector{Name: "adxmon_ingestor_queue_size", MatchLabels: map[string]string{"queue": "other"}}}, want: "no adxmon_ingestor_queue_size sample with labels map[queue:other]"},
		"a histogram": {pods: func(t *testing.T) []Pod { t.Helper(); return []Pod{{Name: "a", URL: serve(t, queue(1))}} },
			metric: v1alpha1.ScaleMetric{Type: v1alpha1.MetricCustom, Series: &v1alpha1.SeriesSelector{Name: "latency"}}, want: "latency: is a HISTOGRAM"},
		"memory without a limit": {pods: func(t *testing.T) []Pod { t.Helper(); return []Pod{{Name: "a", URL: serve(t, queue(1))}} },
			metric: metrics[1], want: "has none"},
		"not finite": {pods: func(t *testing.T) []Pod {
			t.Helper()
			return []Pod{{Name: "a", URL: serve(t, func() string { return "adxmon_ingestor_queue_size NaN\n" })}}
		}, metric: metrics[0], want: "not a finite number"},
		"too big": {pods: func(t *testing.T) []Pod {
			t.Helper()
			return []Pod{{Name: "a", URL: serve(t, func() string { return strings.Repeat("#\n", MaxScrapeBytes) })}}
		}, metric: metrics[0], want: "more than 4194304 bytes"},
		"an error status": {pods: func(t *testing.T) []Pod {
			t.Helper()
			s := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(s.Close)
			return []Pod{{Name: "a", URL: s.URL}}
		}, metric: metrics[0], want: "a: HTTP 404"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Ingestor(context.Background(), http.DefaultClient, tc.pods(t), []v1alpha1.ScaleMetric{tc.metric})
			if !got[0].Missing() || !strings.Contains(got[0].Err, tc.want) {
				t.Errorf("got %+v, want a missing value saying %q", got[0], tc.want)
			}
		})
	}
}

func TestPods(t *testing.T) {
	pod := func(name, ip string, ready corev1.ConditionStatus, ports ...corev1.ContainerPort) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ingestor", Ports: ports, Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
			}}}},
			Status: corev1.PodStatus{PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}},
		}
	}
	metrics := corev1.ContainerPort{Name: "metrics", ContainerPort: 9091}
	got, err := Pods([]corev1.Pod{
		pod("ingestor-1", "10.0.0.2", corev1.ConditionTrue, metrics),
		pod("ingestor-0", "fd00::1", corev1.ConditionTrue, metrics),
		pod("starting", "10.0.0.3", corev1.ConditionFalse, metrics),
	}, intstr.FromString("metrics"), "/metrics", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pod{{Name: "ingestor-0", URL: "http://[fd00::1]:9091/metrics", MemoryLimit: 2 << 30}, {Name: "ingestor-1", URL: "http://10.0.0.2:9091/metrics", MemoryLimit: 2 << 30}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Pods = %v, want %v", got, want)
	}
	if got, _ := Pods([]corev1.Pod{pod("p", "10.0.0.2", corev1.ConditionTrue)}, intstr.FromInt32(8080), "/m", false); len(got) != 1 || got[0].URL != "http://10.0.0.2:8080/m" {
		t.Errorf("a numbered port: %v", got)
	}
	for name, pods := range map[string][]corev1.Pod{
		"no such port":         {pod("p", "10.0.0.2", corev1.ConditionTrue)},
		"a bad IP":             {pod("p", "10.0.0.2/8", corev1.ConditionTrue, metrics)},
		"no IP":                {pod("p", "", corev1.ConditionTrue, metrics)},
		"loopback":             {pod("p", "127.0.0.1", corev1.ConditionTrue, metrics)},
		"IPv4-mapped loopback": {pod("p", "::ffff:127.0.0.1", corev1.ConditionTrue, metrics)},
		"the metadata service": {pod("p", "169.254.169.254", corev1.ConditionTrue, metrics)},
		"IPv6 link-local":      {pod("p", "fe80::1", corev1.ConditionTrue, metrics)},
		"unspecified":          {pod("p", "0.0.0.0", corev1.ConditionTrue, metrics)},
		"multicast":            {pod("p", "224.0.0.1", corev1.ConditionTrue, metrics)},
		"host network": {func() corev1.Pod {
			p := pod("p", "10.0.0.2", corev1.ConditionTrue, metrics)
			p.Spec.HostNetwork = true
			return p
		}()},
	} {
		if _, err := Pods(pods, intstr.FromString("metrics"), "/metrics", false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A local control plane's stand-in pods listen on loopback.
	if got, err := Pods([]corev1.Pod{pod("p", "127.0.0.5", corev1.ConditionTrue, metrics)}, intstr.FromString("metrics"), "/metrics", true); err != nil || len(got) != 1 {
		t.Errorf("loopback allowed: %v, %v", got, err)
	}
}

// TestADX runs armmonitor's own client against its fake server.
func TestADX(t *testing.T) {
	target := v1alpha1.ADXTarget{SubscriptionID: "00000000-0000-0000-0000-000000000001", ResourceGroup: "rg", ClusterName: "adxeu"}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var asked []string
	srv := &fake.MetricsServer{List: func(_ context.Context, uri string, o *armmonitor.MetricsClientListOptions) (resp azfake.Responder[armmonitor.MetricsClientListResponse], errResp azfake.ErrorResponder) {
		asked = append(asked, fmt.Sprintf("%s %s %s %s", uri, *o.Metricnames, *o.Aggregation, *o.Timespan))
		name := *o.Metricnames
		switch name {
		case "Broken":
			errResp.SetResponseError(http.StatusForbidden, "AuthorizationFailed")
			return resp, errResp
		case "Empty":
			resp.SetResponse(http.StatusOK, armmonitor.MetricsClientListResponse{Response: armmonitor.Response{Value: []*armmonitor.Metric{{Name: &armmonitor.LocalizableString{Value: &name}, Timeseries: []*armmonitor.TimeSeriesElement{{Data: []*armmonitor.MetricValue{{TimeStamp: new(now)}}}}}}}}, nil)
			return resp, errResp
		}
		points := []*armmonitor.MetricValue{
			{TimeStamp: new(now.Add(-3 * time.Minute)), Average: new(40.0), Maximum: new(90.0)},
			{TimeStamp: new(now.Add(-2 * time.Minute)), Average: new(55.5), Maximum: new(70.0)},
			{TimeStamp: new(now.Add(-1 * time.Minute))}, // not yet aggregated
		}
		resp.SetResponse(http.StatusOK, armmonitor.MetricsClientListResponse{Response: armmonitor.Response{Value: []*armmonitor.Metric{
			{Name: &armmonitor.LocalizableString{Value: &name}, Timeseries: []*armmonitor.TimeSeriesElement{{Data: points}}},
		}}}, nil)
		return resp, errResp
	}}
	client, err := armmonitor.NewMetricsClient(target.SubscriptionID, &azfake.TokenCredential{}, &arm.ClientOptions{ClientOptions: policy.ClientOptions{Transport: fake.NewMetricsServerTransport(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	got := ADX(context.Background(), client, target, []v1alpha1.ScaleMetric{
		{Type: v1alpha1.MetricIngestionVolume},
		{Type: v1alpha1.MetricCPUUsage},
		{Type: v1alpha1.MetricCustom, AzureMetric: &v1alpha1.AzureMetric{Name: "CacheUtilization", Aggregation: "Maximum"}},
		{Type: v1alpha1.MetricCustom, AzureMetric: &v1alpha1.AzureMetric{Name: "Broken"}},
		{Type: v1alpha1.MetricCustom, AzureMetric: &v1alpha1.AzureMetric{Name: "Empty"}},
		{Type: v1alpha1.MetricQueueLength},
	}, now)
	want := []string{"IngestionVolume 55.5", "CPUUsage 55.5", "CacheUtilization 70", "Broken: reading Broken from Azure Monitor: HTTP 403 AuthorizationFailed", "Empty: no Average of Empty from Azure Monitor in the last 15m0s", "QueueLength: QueueLength is not an ADX metric"}
	for i, m := range got {
		s := fmt.Sprintf("%s %v", m.Name, m.Value)
		if m.Missing() {
			s = m.Name + ": " + m.Err
		}
		if s != want[i] {
			t.Errorf("metric %d = %q, want %q", i, s, want[i])
		}
		if m.ProportionalN {
			t.Errorf("%s: a cluster-wide utilization is not a per-node load", m.Name)
		}
	}
	// The fake server reads the path without its leading slash.
	uri, _ := url.PathUnescape(asked[0])
	if want := "subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Kusto/clusters/adxeu IngestionUtilization Average 2026-11-23T11:45:00Z/2026-11-23T12:00:00Z"; uri != want {
		t.Errorf("asked %q, want %q", uri, want)
	}
}

// TestScrapesAreBounded: a pod's answer is untrusted. Four MiB of samples
// cost 123 MiB a scrape when parsed whole; streamed, the scrape holds a
// line at a time. A pod that dribbles its answer cost 10 s per pod, one
// pod after the other; scraped together under one deadline, an
// evaluation of many such pods costs that deadline once.
func TestScrapesAreBounded(t *testing.T) {
	metrics := []v1alpha1.ScaleMetric{{Type: v1alpha1.MetricQueueLength, ScaleUpThreshold: 1000, ScaleDownThreshold: 100, Weight: 1}}
	t.Run("four MiB of samples", func(t *testing.T) {
		var b strings.Builder
		for i := 0; b.Len() < MaxScrapeBytes-200; i++ {
			fmt.Fprintf(&b, "adxmon_ingestor_queue_size{queue=\"q%d\",pod=\"p\"} 1\n", i)
		}
		body := b.String()
		pod := []Pod{{Name: "a", URL: serve(t, func() string { return body })}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got := Ingestor(context.Background(), http.DefaultClient, pod, metrics)
		runtime.ReadMemStats(&after)
		if got[0].Missing() || got[0].Value < 50_000 {
			t.Fatalf("got %+v", got[0])
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("a %d MiB scrape allocated %d MiB", len(body)>>20, alloc>>20)
		}
		t.Logf("%d samples summed, %d KiB allocated", int(got[0].Value), (after.TotalAlloc-before.TotalAlloc)>>10)
	})
	t.Run("pods that dribble their answers", func(t *testing.T) {
		stop := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := fmt.Fprint(w, "#\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}))
		t.Cleanup(func() { close(stop); slow.Close() })
		var pods []Pod
		for i := range 40 {
			pods = append(pods, Pod{Name: fmt.Sprintf("p%02d", i), URL: slow.URL})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		got := Ingestor(ctx, http.DefaultClient, pods, metrics)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("40 slow pods took %s under a 500ms deadline", took)
		}
		if !got[0].Missing() || !strings.Contains(got[0].Err, "40 of 40 pods") {
			t.Errorf("got %+v", got[0])
		}
	})
	t.Run("a line too long, too many labels", func(t *testing.T) {
		for body, want := range map[string]string{
			"x " + strings.Repeat("1", MaxLineBytes) + "\n":                                 "a line longer than 65536 bytes",
			"adxmon_ingestor_queue_size{" + strings.Repeat(`a="1",`, MaxLabels+1) + "} 1\n": "more than 64 labels",
		} {
			got := Ingestor(context.Background(), http.DefaultClient, []Pod{{Name: "a", URL: serve(t, func() string { return body })}}, metrics)
			if !strings.Contains(got[0].Err, want) {
				t.Errorf("got %q, want %q", got[0].Err, want)
			}
		}
	})
}

// FuzzReadSums: whatever a pod answers, reading it allocates a small
// multiple of a line, never of the answer, and never panics.
func FuzzReadSums(f *testing.F) {
	f.Add(fmt.Sprintf(ingestorMetrics, 5))
	f.Add("a{b=\"c\\\"d\"} 1 2\n# TYPE a summary\n")
	f.Add("<html>")
	want := []Series{{Name: "adxmon_ingestor_queue_size", Match: map[string]string{"queue": "upload"}}, {Name: "a"}}
	f.Fuzz(func(t *testing.T, s string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = ReadSums(strings.NewReader(s), want)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(len(s))+64<<10 {
			t.Fatalf("%d bytes allocated %d", len(s), alloc)
		}
	})
}
