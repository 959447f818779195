// Command footprint measures provider-fleetplane beside provider-kubernetes
// on one local control plane (make footprint): Heartbeats against local
// Kusto servers and ClusterRegistrations for fleetplane, Objects for
// provider-kubernetes, both providers at the same --poll and log level.
// Once every managed resource is Ready it samples, over a window, each
// provider's resident memory and processor time from /proc and counts the
// API requests each made from kube-apiserver's audit log, and prints a
// Markdown table; with -heap it also saves provider-fleetplane's heap
// profile. It takes minutes (-quick: about five on an idle two-core
// machine; the default scale about twenty), so it is a command, not a
// test.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

type config struct {
	heartbeats, registrations, objects, partitions int
	poll, settle, window, ready                    time.Duration
	heap                                           string
}

func main() {
	var c config
	flag.IntVar(&c.heartbeats, "heartbeats", 1000, "Heartbeat managed resources")
	flag.IntVar(&c.registrations, "registrations", 200, "ClusterRegistration managed resources")
	flag.IntVar(&c.objects, "objects", 1000, "provider-kubernetes Objects")
	flag.IntVar(&c.partitions, "partitions", 10, "local Kusto servers the Heartbeats read, round robin")
	flag.DurationVar(&c.poll, "poll", time.Minute, "--poll of both providers")
	flag.DurationVar(&c.settle, "settle", time.Minute, "wait after everything is Ready before measuring")
	flag.DurationVar(&c.window, "window", 3*time.Minute, "how long to measure")
	flag.DurationVar(&c.ready, "ready-timeout", 20*time.Minute, "how long every managed resource may take to turn Ready")
	flag.StringVar(&c.heap, "heap", "", "write provider-fleetplane's heap profile (pprof) here after the window")
	quick := flag.Bool("quick", false, "a run of minutes: 300 Heartbeats, 60 ClusterRegistrations and 300 Objects, settled 30s, measured 2m (flags after it still apply)")
	flag.Parse()
	if *quick {
		c.heartbeats, c.registrations, c.objects, c.settle, c.window = 300, 60, 300, 30*time.Second, 2*time.Minute
		// Flags given explicitly win over the preset.
		flag.Visit(func(f *flag.Flag) { _ = flag.Set(f.Name, f.Value.String()) })
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "footprint:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fleetplane-footprint-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pprofPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	audit := filepath.Join(dir, "audit.log")
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "footprint: "+f+"\n", a...) }
	env, err := environment.Start(ctx, support.Root(), dir, environment.Options{
		Poll: c.poll, Quiet: true, AuditLog: audit, Logf: logf, Nodes: 1,
		ProviderArgs: []string{fmt.Sprintf("--pprof-address=:%d", pprofPort)},
	})
	if err != nil {
		return err
	}
	defer env.Stop()

	if err := populate(ctx, env, c); err != nil {
		return err
	}
	logf("waiting for every managed resource to be Ready")
	if err := waitReady(ctx, env.Kube, c); err != nil {
		return err
	}
	logf("all Ready; settling for %s", c.settle)
	time.Sleep(c.settle)

	// Both providers run as pods: what they report of their own
	// processes, at their /metrics, is what is measured.
	var procs []meter
	for _, p := range []struct{ pkg, agent string }{
		{environment.ProviderName, "provider-fleetplane"},
		{environment.PackageName(environment.ProviderKubernetesSource), "crossplane-kubernetes-provider"},
	} {
		url, err := env.MetricsOf(ctx, p.pkg)
		if err != nil {
			return err
		}
		procs = append(procs, meter{agent: p.agent, url: url, token: env.ScrapeToken})
	}
	logf("measuring for %s", c.window)
	m, err := measure(procs, c.window)
	if err != nil {
		return err
	}
	requests, err := countRequests(audit, m.start, m.end)
	if err != nil {
		return err
	}
	if c.heap != "" {
		ip, err := env.PackagePodIP(ctx, environment.ProviderName)
		if err != nil {
			return err
		}
		if err := saveHeap(ctx, fmt.Sprintf("http://%s/debug/pprof/heap", net.JoinHostPort(ip, strconv.Itoa(pprofPort))), c.heap); err != nil {
			return err
		}
		logf("heap profile of provider-fleetplane in %s", c.heap)
	}
	report(os.Stdout, c, procs, m, requests)
	return nil
}

// populate creates the namespaces, Kusto servers and managed resources.
func populate(ctx context.Context, env *environment.Env, c config) error {
	hub, err := env.KustoServer("FleetDiscovery")
	if err != nil {
		return err
	}
	if err := hub.Exec("FleetDiscovery", support.HeartbeatTable); err != nil {
		return err
	}
	var partitions []string
	for range c.partitions {
		s, err := env.KustoServer("Metrics")
		if err != nil {
			return err
		}
		// A schema of a few tables for each heartbeat to report.
		for t := range 5 {
			if err := s.Exec("Metrics", fmt.Sprintf(".create table ['T%d'] (['Timestamp']:datetime, ['Value']:real)", t)); err != nil {
				return err
			}
		}
		partitions = append(partitions, s.URL)
	}
	for _, ns := range []string{"footprint-heartbeats", "footprint-registrations", "footprint-objects"} {
		if err := env.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	pc := &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: environment.DefaultProviderConfig().Name}
	for i := range c.heartbeats {
		hb := &kustov1alpha1.Heartbeat{
			ObjectMeta: metav1.ObjectMeta{Namespace: "footprint-heartbeats", Name: fmt.Sprintf("p%04d", i)},
			Spec: kustov1alpha1.HeartbeatSpec{
				ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: pc},
				ForProvider: kustov1alpha1.HeartbeatParameters{
					Endpoint:     partitions[i%len(partitions)],
					Interval:     &metav1.Duration{Duration: 10 * time.Minute},
					Partitioning: kustov1alpha1.Partitioning{"name": kustov1alpha1.PartitionValue(fmt.Sprintf("p%04d", i))},
					Targets:      []kustov1alpha1.HeartbeatTarget{{Endpoint: hub.URL, HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats"}},
				},
			},
		}
		if err := env.Kube.Create(ctx, hb); err != nil {
			return fmt.Errorf("heartbeat %d: %w", i, err)
		}
	}
	for i := range c.registrations {
		name := fmt.Sprintf("c%04d", i)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "footprint-registrations", Name: name + "-kubeconfig"}, Data: map[string][]byte{"kubeconfig": kubeconfig(i)}}
		if err := env.Kube.Create(ctx, secret); err != nil {
			return err
		}
		r := &argocdv1alpha1.ClusterRegistration{
			ObjectMeta: metav1.ObjectMeta{Namespace: "footprint-registrations", Name: name},
			Spec: argocdv1alpha1.ClusterRegistrationSpec{
				ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: pc},
				ForProvider: argocdv1alpha1.ClusterRegistrationParameters{
					ClusterName: name, KubeconfigSecretRef: argocdv1alpha1.SecretKeyRef{Name: secret.Name, Key: "kubeconfig"},
				},
			},
		}
		if err := env.Kube.Create(ctx, r); err != nil {
			return fmt.Errorf("registration %d: %w", i, err)
		}
	}
	for i := range c.objects {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
			"metadata": map[string]any{"namespace": "footprint-objects", "name": fmt.Sprintf("o%04d", i)},
			"spec": map[string]any{
				"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "default"},
				"forProvider": map[string]any{"manifest": map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"namespace": "footprint-objects", "name": fmt.Sprintf("o%04d", i)},
					"data":     map[string]any{"index": strconv.Itoa(i)},
				}},
			},
		}}
		if err := env.Kube.Create(ctx, o); err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
	}
	return nil
}

// kubeconfig is registration i's: a server of its own (a server is
// registered once).
func kubeconfig(i int) []byte {
	return support.Kubeconfig(fmt.Sprintf("https://10.%d.%d.1", i/250+1, i%250), fmt.Sprintf("token-%d", i))
}

// waitReady polls until every managed resource of the three kinds is
// Ready, reporting progress.
func waitReady(ctx context.Context, kube client.Client, c config) error {
	kinds := []struct {
		apiVersion, kind, namespace string
		want                        int
	}{
		{"kusto.m.fleetplane.io/v1alpha1", "HeartbeatList", "footprint-heartbeats", c.heartbeats},
		{"argocd.m.fleetplane.io/v1alpha1", "ClusterRegistrationList", "footprint-registrations", c.registrations},
		{"kubernetes.m.crossplane.io/v1alpha1", "ObjectList", "footprint-objects", c.objects},
	}
	deadline := time.Now().Add(c.ready)
	for {
		var progress []string
		done := true
		for _, k := range kinds {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion(k.apiVersion)
			l.SetKind(k.kind)
			if err := kube.List(ctx, l, client.InNamespace(k.namespace)); err != nil {
				return err
			}
			ready := 0
			for i := range l.Items {
				if readyTrue(&l.Items[i]) {
					ready++
				}
			}
			done = done && ready >= k.want
			progress = append(progress, fmt.Sprintf("%s %d/%d", strings.TrimSuffix(k.kind, "List"), ready, k.want))
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not Ready after %s: %s", c.ready, strings.Join(progress, ", "))
		}
		fmt.Fprintf(os.Stderr, "footprint: %s\n", strings.Join(progress, ", "))
		time.Sleep(10 * time.Second)
	}
}

func readyTrue(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// sample is what the window saw of one process.
type sample struct {
	rssMax, rssEnd int64
	cpu            time.Duration
}

type measurement struct {
	start, end time.Time
	procs      []sample
}

// meter is a provider's pod as its /metrics report its process: the
// Prometheus client's process collector, which both providers serve.
type meter struct {
	// agent is the program's name, as its requests' user agent gives
	// it; token is what its scrape sends (fleetplane's metrics are
	// secure; provider-kubernetes' ignore it).
	agent, url, token string
}

func (m meter) value(name string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, s, err := support.Scrape(ctx, m.url, m.token)
	if err != nil {
		return 0, err
	}
	v, ok := s.Value(name, nil)
	if !ok {
		return 0, fmt.Errorf("%s reports no %s", m.url, name)
	}
	return v, nil
}

// CPU is the processor time the process has used.
func (m meter) CPU() (time.Duration, error) {
	v, err := m.value("process_cpu_seconds_total")
	return time.Duration(v * float64(time.Second)), err
}

// RSS is the process's resident memory in bytes.
func (m meter) RSS() (int64, error) {
	v, err := m.value("process_resident_memory_bytes")
	return int64(v), err
}

// measure samples resident memory every 5 s and processor time at both
// ends of the window.
func measure(procs []meter, window time.Duration) (measurement, error) {
	m := measurement{start: time.Now(), procs: make([]sample, len(procs))}
	cpu0 := make([]time.Duration, len(procs))
	for i, p := range procs {
		c, err := p.CPU()
		if err != nil {
			return m, err
		}
		cpu0[i] = c
	}
	for end := m.start.Add(window); ; {
		for i, p := range procs {
			rss, err := p.RSS()
			if err != nil {
				return m, err
			}
			m.procs[i].rssMax = max(m.procs[i].rssMax, rss)
			m.procs[i].rssEnd = rss
		}
		if !time.Now().Before(end) {
			break
		}
		time.Sleep(min(5*time.Second, time.Until(end)))
	}
	m.end = time.Now()
	for i, p := range procs {
		c, err := p.CPU()
		if err != nil {
			return m, err
		}
		m.procs[i].cpu = c - cpu0[i]
	}
	return m, nil
}

// requests counts audit events per client (the user agent's program
// name) and verb, for requests received within [start, end).
type requests map[string]map[string]int

func countRequests(path string, start, end time.Time) (requests, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := requests{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string    `json:"verb"`
			UserAgent string    `json:"userAgent"`
			Received  time.Time `json:"requestReceivedTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		if ev.Received.Before(start) || !ev.Received.Before(end) {
			continue
		}
		agent, _, _ := strings.Cut(ev.UserAgent, "/")
		if out[agent] == nil {
			out[agent] = map[string]int{}
		}
		out[agent][ev.Verb]++
	}
	return out, sc.Err()
}

func saveHeap(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, rsp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rsp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func report(w io.Writer, c config, procs []meter, m measurement, reqs requests) {
	minutes := m.end.Sub(m.start).Minutes()
	fmt.Fprintf(w, "\n%d Heartbeats (%d partitions) and %d ClusterRegistrations; %d Objects; --poll %s; %s window after %s settled\n\n",
		c.heartbeats, c.partitions, c.registrations, c.objects, c.poll, m.end.Sub(m.start).Round(time.Second), c.settle)
	fmt.Fprintln(w, "| provider | RSS at end | RSS max | CPU per minute | API requests per minute | of which |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for i, p := range procs {
		verbs := reqs[p.agent]
		total := 0
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(verbs)) {
			total += verbs[v]
			parts = append(parts, fmt.Sprintf("%s %.0f", v, float64(verbs[v])/minutes))
		}
		s := m.procs[i]
		fmt.Fprintf(w, "| %s | %.0f MiB | %.0f MiB | %.2f s | %.0f | %s |\n", p.agent,
			float64(s.rssEnd)/(1<<20), float64(s.rssMax)/(1<<20), s.cpu.Seconds()/minutes, float64(total)/minutes, strings.Join(parts, ", "))
	}
	fmt.Fprintln(w, "\nEvery client of the API server in the window (requests per minute):")
	for _, agent := range slices.Sorted(maps.Keys(reqs)) {
		total := 0
		for _, n := range reqs[agent] {
			total += n
		}
		fmt.Fprintf(w, "  %-40s %8.0f\n", agent, float64(total)/minutes)
	}
}
