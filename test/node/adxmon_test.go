package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/node"
	"github.com/fleetplane/fleetplane/test/harness/sample"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// adxmonGolden is what an ADXMon composes for adx-mon's complete example
// once every stage is ready: the render golden, the function's own
// output through the real `crossplane render`.
const adxmonGolden = "test/render/testdata/adxmon/complete@7-installed.yaml"

// adxmonEndpoint is the ADX cluster of the example.
const adxmonEndpoint = "https://prodmetrics.eastus2.kusto.windows.net"

// pushAdxMonImages pushes adx-mon's images (node.Cluster.PushAdxMon).
func pushAdxMonImages(t *testing.T) map[string]string {
	t.Helper()
	refs, err := cluster.PushAdxMon(t.Context(), support.Root())
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// composedWorkloads are the objects of the complete example's golden
// that run the components named, with the Kusto endpoint kusto in place
// of the example's (composedFrom).
func composedWorkloads(t *testing.T, images map[string]string, kusto string, components ...string) []*unstructured.Unstructured {
	t.Helper()
	// The example's ADX cluster is the Kusto stand-in, as if the ADXMon
	// had named it (spec.adx.clusters[].endpoint).
	return composedFrom(t, adxmonGolden, map[string]string{adxmonEndpoint: kusto}, images, components...)
}

// composedFrom are the objects of a render golden that run the
// components named (Deployments, StatefulSets, DaemonSets, their
// ServiceAccounts, bindings, Services and ConfigMaps), with each key of
// replace replaced by its value, and adx-mon's images from the registry
// in place of ghcr.io's. Owner references go: the ADXMon that owned them
// is not on this control plane, and the garbage collector would delete
// what an absent owner owns.
func composedFrom(t *testing.T, golden string, replace, images map[string]string, components ...string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(support.Root(), golden))
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range replace {
		b = []byte(strings.ReplaceAll(string(b), from, to))
	}
	var out []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		switch u.GetKind() {
		case "Deployment", "StatefulSet", "DaemonSet", "ServiceAccount", "ClusterRoleBinding", "RoleBinding", "Service", "ConfigMap":
		default:
			continue
		}
		app := u.GetLabels()["app"]
		if !slices.Contains(components, app) {
			continue
		}
		u.SetOwnerReferences(nil)
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			m := c.(map[string]any)
			m["image"] = images[app]
		}
		if containers != nil {
			if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, u)
	}
	return out
}

// adxmonPrerequisites are what a stack's components need of a cluster
// before they start, and what the platform or the stack puts there:
// fleetplane's roles for them (package/rbac/adxmon-roles.yaml) and
// adx-mon's CRDs, which the ingestor and alerter read.
func adxmonPrerequisites(t *testing.T, c *controlplane.ControlPlane) {
	t.Helper()
	if err := c.ApplyRBAC(t.Context(), filepath.Join(support.Root(), "package", "rbac", "adxmon-roles.yaml")); err != nil {
		t.Fatal(err)
	}
	crds, err := controlplane.Tool(support.Root(), "adx-mon-crds")
	if err != nil {
		t.Fatal(err)
	}
	if err := controlplane.InstallCRDs(t.Context(), c.Config, filepath.Join(crds, "alertrules_crd.yaml"), filepath.Join(crds, "functions_crd.yaml"), filepath.Join(crds, "managementcommands_crd.yaml"), filepath.Join(crds, "summaryrules_crd.yaml"), filepath.Join(crds, "metricsexporters_crd.yaml")); err != nil {
		t.Fatal(err)
	}
}

// TestADXMonRunsAdxMon: the ingestor, collector and alerter an ADXMon
// composes run adx-mon's own binaries with the flags, configuration,
// mounts, probes and identity fleetplane gives them, against the
// in-memory Kusto server as the ADX cluster. The ingestor turns Ready
// (its HTTPS /readyz, on the storage directory fleetplane mounts) and
// makes adx-mon's functions in the composed databases; a sample
// remote-written to the collector reaches Kusto through the ingestor's
// Service, with the composed TLS and token; the alerter runs. A
// composition whose ingestor lacks the storage mount is not Ready, so a
// wrong mount fails this test; so did the alerter's command and the
// collector's TLS verification of its own stack's ingestor, until
// fleetplane composed them as adx-mon's images need.
//
// adx-mon builds with two replacements (tools/adx-mon): the upstream
// azkustoingest for its fork, and OTLP's messages generated here for the
// buf.build modules; both because the Go module proxy does not serve
// those. The collector is built without cgo, so its journald source is
// adx-mon's own no-op.
func TestADXMonRunsAdxMon(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	// The composed pods mount these from the node, which kubelet makes
	// when they are missing: what this test made goes with it, once its
	// pods are (the namespace's deletion, below, runs first).
	release, err := node.ClaimHostPaths(node.AdxMonHostPaths...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	images := pushAdxMonImages(t)
	t.Logf("adx-mon's ingestor, collector and alerter built and pushed in %s", time.Since(start).Round(100*time.Millisecond))
	adxmonPrerequisites(t, cp)
	kc, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The ADX cluster: the in-memory Kusto server, where pods reach the
	// machine. It speaks Kusto's REST protocol over plain http, which
	// adx-mon takes as Kusto's local emulator: no Azure credential.
	ks := kustoserver.New("Metrics", "Logs", "Traces")
	if err := ks.Start(cluster.Network.HostIP + ":0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	namespace(t, "monitoring")
	t.Cleanup(func() { deleteNamespace(t, "monitoring") })
	// The token the example's collectors send (ingestorAuth), which the
	// user creates.
	if _, err := kube.CoreV1().Secrets("monitoring").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ingestor-auth"}, StringData: map[string]string{"token": "collector-token"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, u := range composedWorkloads(t, images, ks.URL, "ingestor", "collector", "alerter") {
		if u.GetKind() == "StatefulSet" {
			// One node: the composed anti-affinity places one ingestor
			// per node, so the example's three would leave two Pending.
			if err := unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas"); err != nil {
				t.Fatal(err)
			}
		}
		if err := kc.Create(ctx, u); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	ready := func(app string) func() (bool, string) { return readyPod(kc, "app", app) }
	support.Eventually(t, 3*time.Minute, "the ingestor Ready", ready("ingestor"))
	support.Eventually(t, 2*time.Minute, "the alerter Ready", ready("alerter"))
	support.Eventually(t, 2*time.Minute, "the collector Ready", readyPod(kc, "adxmon", "collector"))
	t.Logf("adx-mon's ingestor, collector and alerter Ready %s after the push", time.Since(start).Round(100*time.Millisecond))
	logs, err := kube.CoreV1().Pods("monitoring").GetLogs("ingestor-0", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Refusals of what fleetplane's RBAC grants. adx-mon's shutdown
	// runner reads its pod in namespace adx-mon, a name its code fixes,
	// about a minute after start: that refusal is upstream's (see
	// docs/adxmon.md) and, depending on timing, may or may not be in the
	// log yet, so it is left out rather than left to chance.
	for line := range strings.SplitSeq(string(logs), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") && !strings.Contains(line, `in the namespace \"adx-mon\"`) {
			t.Errorf("the ingestor was refused by the API server: %s", line)
		}
	}

	// A sample through the whole stack, as an application's Prometheus
	// would send it: remote-written to the collector's pod, which keeps
	// it in its WAL and transfers the segment to the ingestor's Service
	// (TLS, the composed token), which uploads it to Kusto (.ingest
	// inline, as adx-mon does for a single-node Kusto).
	collector := pods(t, kc, "adxmon", "collector")[0]
	sample.Post(t, collector.Status.PodIP, t.Name())
	support.Eventually(t, 2*time.Minute, "the sample in Kusto", sample.InKusto(ks, t.Name(), func() string {
		return fmt.Sprintf("collector: %s\ningestor: %s", logTail(ctx, collector.Name), logTail(ctx, "ingestor-0"))
	}))

	// The ingestor reached Kusto at the composed endpoint, for the
	// metrics database the composed flags name: it made the functions
	// adx-mon's queries use.
	for _, f := range []string{"prom_increase", "prom_rate", "prom_delta"} {
		if _, ok := ks.Functions("Metrics")[f]; !ok {
			t.Errorf("the ingestor did not create %s in Metrics; Kusto saw %v", f, ks.Commands())
		}
	}

	t.Run("without the storage mount the ingestor is not Ready", func(t *testing.T) {
		ingestorWithoutStorage(t, kc, images, ks.URL)
	})

	// Neither crashed meanwhile: the alerter, which has no probe, is
	// still its first run.
	pods := &corev1.PodList{}
	if err := kc.List(ctx, pods, client.InNamespace("monitoring"), client.MatchingLabels{"app": "alerter"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("the alerter restarted: %s", controlplane.DescribePods(pods.Items))
		}
	}
}

// ingestorWithoutStorage runs the composed ingestor with its storage
// volume unmounted, under another name: --storage-dir then points into
// the read-only root file system, and the ingestor must not turn Ready.
// Everything else is as above, the working Kusto endpoint included, so
// only the mount can make the difference.
func ingestorWithoutStorage(t *testing.T, kc client.Client, images map[string]string, kusto string) {
	t.Helper()
	ctx := t.Context()
	var sts *unstructured.Unstructured
	for _, u := range composedWorkloads(t, images, kusto, "ingestor") {
		if u.GetKind() == "StatefulSet" {
			sts = u
		}
	}
	sts.SetName("ingestor-mutant")
	sel := map[string]any{"app": "ingestor-mutant"}
	_ = unstructured.SetNestedField(sts.Object, int64(1), "spec", "replicas")
	_ = unstructured.SetNestedMap(sts.Object, map[string]any{"matchLabels": sel}, "spec", "selector")
	_ = unstructured.SetNestedMap(sts.Object, sel, "spec", "template", "metadata", "labels")
	_ = unstructured.SetNestedField(sts.Object, nil, "spec", "template", "spec", "affinity")
	containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	var mounts []any
	for _, m := range c["volumeMounts"].([]any) {
		if m.(map[string]any)["mountPath"] != "/mnt/data" {
			mounts = append(mounts, m)
		}
	}
	c["volumeMounts"] = mounts
	_ = unstructured.SetNestedSlice(sts.Object, containers, "spec", "template", "spec", "containers")
	if err := kc.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	// Held for as long as the real one took and then some: it fails at
	// start, and kubelet restarts it.
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		pods := &corev1.PodList{}
		if err := kc.List(ctx, pods, client.InNamespace("monitoring"), client.MatchingLabels{"app": "ingestor-mutant"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			for _, s := range p.Status.ContainerStatuses {
				if s.Ready {
					t.Fatalf("the ingestor without its storage mount turned Ready: %s", controlplane.DescribePods(pods.Items))
				}
				if s.RestartCount > 0 {
					// Crashed and restarted: the mount matters.
					return
				}
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatal("the ingestor without its storage mount neither crashed nor turned Ready in 45s")
}

// readyPod is readyPodIn for the monitoring namespace of the suite's
// cluster.
func readyPod(kc client.Client, label, value string) func() (bool, string) {
	return stackOn{kc, kube, "monitoring"}.readyPod(label, value)
}

// stackOn is where a test's adx-mon pods run: a cluster's clients and a
// namespace.
type stackOn struct {
	kc   client.Client
	kube kubernetes.Interface
	ns   string
}

// readyPod is a condition: a pod labelled label=value is Ready. Until it
// is, it says what the pods do, with the last run's log of any that
// restarted.
func (s stackOn) readyPod(label, value string) func() (bool, string) {
	kc, kube := s.kc, s.kube
	return func() (bool, string) {
		ctx := context.Background()
		pods := &corev1.PodList{}
		if err := kc.List(ctx, pods, client.InNamespace(s.ns), client.MatchingLabels{label: value}); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return true, ""
				}
			}
		}
		var msg strings.Builder
		msg.WriteString(controlplane.DescribePods(pods.Items))
		for _, p := range pods.Items {
			if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount > 0 {
				b, _ := kube.CoreV1().Pods(s.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true, TailLines: new(int64(20))}).DoRaw(ctx)
				msg.WriteString("\nits last run:\n" + string(b))
			}
		}
		return false, msg.String()
	}
}

// logTail is the end of a monitoring pod's log, for failure messages.
func logTail(ctx context.Context, pod string) string {
	return stackOn{nil, kube, "monitoring"}.logTail(ctx, pod)
}

// logTail is the end of a pod's log, for failure messages.
func (s stackOn) logTail(ctx context.Context, pod string) string {
	b, err := s.kube.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{TailLines: new(int64(15))}).DoRaw(ctx)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// pods are the pods labelled label=value in monitoring.
func pods(t *testing.T, kc client.Client, label, value string) []corev1.Pod {
	t.Helper()
	return stackOn{kc, kube, "monitoring"}.pods(t, label, value)
}

// pods are the pods labelled label=value.
func (s stackOn) pods(t *testing.T, label, value string) []corev1.Pod {
	t.Helper()
	l := &corev1.PodList{}
	if err := s.kc.List(t.Context(), l, client.InNamespace(s.ns), client.MatchingLabels{label: value}); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 {
		t.Fatalf("no pod %s=%s", label, value)
	}
	return l.Items
}
