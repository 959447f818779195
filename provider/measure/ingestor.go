package measure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/scaling"
)

// The ingestor's series (adx-mon v0.3.0, metrics/metrics.go).
const (
	queueSeries  = "adxmon_ingestor_queue_size"
	memorySeries = "process_resident_memory_bytes"
)

// MaxPods caps the pods one evaluation scrapes.
const MaxPods = 100

// Pod is one pod to scrape.
type Pod struct {
	Name string
	URL  string
	// MemoryLimit of the container serving the metrics, in bytes; 0 when
	// it has none.
	MemoryLimit float64
}

// Pods are the ready pods' scrape targets, sorted by name: their IP (from
// the pod's status, which the kubelet writes) and the container port named
// or numbered port. A pod on the host's network is refused, and so is an
// IP no pod network hands out (loopback unless loopback is true: local
// control planes, whose stand-in pods listen there; link-local, where
// cloud metadata services answer; unspecified; multicast): pod status is
// writable by whoever holds pods/status, and the provider must not be
// pointed at itself or its node.
func Pods(pods []corev1.Pod, port intstr.IntOrString, path string, loopback bool) ([]Pod, error) {
	var out []Pod
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || !ready(p) {
			continue
		}
		if p.Spec.HostNetwork {
			// Its IP is the node's: scraping it would reach whatever
			// listens on the node, not a pod of this namespace.
			return nil, fmt.Errorf("pod %s uses the host's network, so its IP is the node's; such pods are not scraped", p.Name)
		}
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil {
			return nil, fmt.Errorf("pod %s has no usable IP %q", p.Name, p.Status.PodIP)
		}
		if ip = ip.Unmap(); !podNetwork(ip, loopback) {
			return nil, fmt.Errorf("pod %s reports IP %s, which is not a pod network address; it is not scraped", p.Name, ip)
		}
		c, n, err := containerPort(p, port)
		if err != nil {
			return nil, err
		}
		var limit float64
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			limit = q.AsApproximateFloat64()
		}
		out = append(out, Pod{Name: p.Name, URL: "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(int(n))) + path, MemoryLimit: limit})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > MaxPods {
		out = out[:MaxPods]
	}
	return out, nil
}

func podNetwork(ip netip.Addr, loopback bool) bool {
	switch {
	case ip.IsUnspecified(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(), ip.IsMulticast():
		return false
	case ip.IsLoopback():
		return loopback
	}
	return true
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containerPort(p *corev1.Pod, port intstr.IntOrString) (*corev1.Container, int32, error) {
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		for _, cp := range c.Ports {
			if (port.Type == intstr.String && cp.Name == port.StrVal) || (port.Type == intstr.Int && cp.ContainerPort == port.IntVal) {
				return c, cp.ContainerPort, nil
			}
		}
	}
	if port.Type == intstr.Int && len(p.Spec.Containers) > 0 {
		return &p.Spec.Containers[0], port.IntVal, nil
	}
	return nil, 0, fmt.Errorf("pod %s has no container port %s", p.Name, port.String())
}

// ScrapeParallel is how many pods one evaluation scrapes at once.
const ScrapeParallel = 8

// Ingestor measures metrics on every pod and averages each over the pods:
// the load per replica, which is what adding or removing one changes.
// A metric no pod can give, or that one pod fails to give, has no value
// and says why. Pods are scraped ScrapeParallel at a time, all within
// ctx's deadline, so one slow pod costs its evaluation that deadline at
// most, not one each.
func Ingestor(ctx context.Context, c *http.Client, pods []Pod, metrics []v1alpha1.ScaleMetric) []scaling.Metric {
	out := make([]scaling.Metric, len(metrics))
	for i, m := range metrics {
		out[i] = scaling.Metric{Name: Name(m), Up: m.ScaleUpThreshold, Down: m.ScaleDownThreshold, Weight: m.Weight, ProportionalN: true}
	}
	missing := func(why string) []scaling.Metric {
		for i := range out {
			out[i].Err = why
		}
		return out
	}
	if len(pods) == 0 {
		return missing("no ready ingestor pod to scrape")
	}
	want := make([]Series, len(metrics))
	for i, m := range metrics {
		want[i] = series(m)
	}
	results := make([][]Sum, len(pods))
	failures := make([]error, len(pods))
	var wg sync.WaitGroup
	sem := make(chan struct{}, ScrapeParallel)
	for i, p := range pods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], failures[i] = Scrape(ctx, c, p.URL, want)
		})
	}
	wg.Wait()

	sums := make([]float64, len(metrics))
	errs := make([][]string, len(metrics))
	for pi, p := range pods {
		if err := failures[pi]; err != nil {
			for i := range metrics {
				errs[i] = append(errs[i], fmt.Sprintf("%s: %v", p.Name, err))
			}
			continue
		}
		for i, m := range metrics {
			v, err := podValue(results[pi][i], m, p)
			if err != nil {
				errs[i] = append(errs[i], fmt.Sprintf("%s: %v", p.Name, err))
				continue
			}
			sums[i] += v
		}
	}
	for i := range out {
		if len(errs[i]) > 0 {
			out[i].Err = summarize(errs[i], len(pods))
			continue
		}
		out[i].Value = sums[i] / float64(len(pods))
	}
	return out
}

// series is the sum a metric reads from each pod.
func series(m v1alpha1.ScaleMetric) Series {
	switch {
	case m.Type == v1alpha1.MetricQueueLength:
		return Series{Name: queueSeries}
	case m.Type == v1alpha1.MetricMemoryUsage:
		return Series{Name: memorySeries}
	case m.Series != nil:
		return Series{Name: m.Series.Name, Match: m.Series.MatchLabels}
	}
	return Series{}
}

// Name is how a metric is shown: its type, or for Custom its series or
// Azure metric.
func Name(m v1alpha1.ScaleMetric) string {
	switch {
	case m.Series != nil:
		return m.Series.Name
	case m.AzureMetric != nil:
		return m.AzureMetric.Name
	}
	return m.Type
}

func podValue(s Sum, m v1alpha1.ScaleMetric, p Pod) (float64, error) {
	switch m.Type {
	case v1alpha1.MetricQueueLength, v1alpha1.MetricMemoryUsage, v1alpha1.MetricCustom:
	default:
		return 0, fmt.Errorf("%s is not an ingestor metric", m.Type)
	}
	if m.Type == v1alpha1.MetricCustom && m.Series == nil {
		return 0, fmt.Errorf("%s is not an ingestor metric", m.Type)
	}
	if m.Type == v1alpha1.MetricMemoryUsage && p.MemoryLimit <= 0 {
		return 0, errors.New("MemoryUsage is a percentage of the container's memory limit, and it has none")
	}
	want := series(m)
	switch {
	case s.Err != nil:
		return 0, s.Err
	case !s.Found && len(want.Match) > 0:
		return 0, fmt.Errorf("no %s sample with labels %v", want.Name, want.Match)
	case !s.Found:
		return 0, fmt.Errorf("no %s sample", want.Name)
	case m.Type == v1alpha1.MetricMemoryUsage:
		return s.Value / p.MemoryLimit * 100, nil
	}
	return s.Value, nil
}

// summarize keeps the first errors and counts the rest; the status
// bounds the message (observe.Bound).
func summarize(errs []string, pods int) string {
	head := errs
	if len(head) > 3 {
		head = head[:3]
	}
	return fmt.Sprintf("%d of %d pods: %s", len(errs), pods, strings.Join(head, "; "))
}
