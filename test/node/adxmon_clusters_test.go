package node_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/node"
	"github.com/fleetplane/fleetplane/test/harness/sample"
	"github.com/fleetplane/fleetplane/test/harness/standin"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// The two halves of adx-mon's multi-cluster layout, as composed for the
// examples: the ingestor cluster's stack and a collector-only stack of
// another cluster.
const (
	remoteIngestorGolden  = "test/render/testdata/adxmon/ingestor-for-remote-collectors@3-ingestor-prerequisites.yaml"
	remoteCollectorGolden = "test/render/testdata/adxmon/collector-for-remote-ingestor@2-collector-prerequisites.yaml"
	// remoteIngestorKusto is the ADX cluster the ingestor example
	// provisions, and remoteIngestorAddress the load balancer's address
	// both examples name.
	remoteIngestorKusto   = "https://adxcentralinge6896c548.eastus2.kusto.windows.net"
	remoteIngestorAddress = "10.10.0.4"
)

// TestADXMonAcrossClusters: adx-mon's multi-cluster layout on two real
// clusters, each with its own API server and node. The ingestor
// cluster (the suite's) runs the ingestor of
// ingestor-for-remote-collectors.yaml as composed: a LoadBalancer Service
// with the example's source ranges replaced by the other cluster's
// addresses, serving the platform's certificate from a kubernetes.io/tls
// Secret. A stand-in for the cloud's layer-4 load balancer
// (standin.LoadBalancer) gives the Service an address, admits only the
// source ranges and passes connections to the Service's nodePort. The
// other cluster, started by this test, runs the collector of
// collector-for-remote-ingestor.yaml as composed, pointed at that
// address and trusting the platform's CA from a ConfigMap. A sample
// remote-written to that collector reaches Kusto through the balancer
// and the ingestor, so the collector verified the ingestor's certificate
// with the CA it was given (its configuration does not skip
// verification: the render golden says so); the ingestor says it serves
// the mounted certificate; a connection from outside the source ranges
// is refused.
func TestADXMonAcrossClusters(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	release, err := node.ClaimHostPaths(node.AdxMonHostPaths...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)

	central, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	centralImages := pushAdxMonImages(t)
	adxmonPrerequisites(t, cp)
	ks := kustoserver.New("Metrics", "Logs", "Traces")
	if err := ks.Start(cluster.Network.HostIP + ":0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })

	// The load balancer's address, in place of the examples': one of
	// this machine's, which the other cluster's pods reach through their
	// node's link.
	lbIP := cluster.Network.HostIP
	caPEM, certPEM, keyPEM, err := support.ServingCertificate("fleetplane platform CA", []net.IP{net.ParseIP(lbIP)}, nil)
	if err != nil {
		t.Fatal(err)
	}

	// The ingestor's cluster: the platform's certificate, as
	// cert-manager would write it, and the composed ingestor, which
	// starts while the other cluster does.
	on := stackOn{central, kube, "adx-mon"}
	namespace(t, on.ns)
	t.Cleanup(func() { deleteNamespace(t, on.ns) })
	if _, err := kube.CoreV1().Secrets(on.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ingestor-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var service *unstructured.Unstructured
	for _, u := range composedFrom(t, remoteIngestorGolden, map[string]string{remoteIngestorKusto: ks.URL}, centralImages, "ingestor") {
		switch u.GetKind() {
		case "StatefulSet":
			// One node: one ingestor (the composed anti-affinity).
			_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas")
		case "Service":
			// Once the other cluster's addresses are known.
			service = u
			continue
		}
		if err := central.Create(ctx, u); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	// The collector's cluster: a control plane, registry and node of its
	// own, in a network namespace of its own.
	edge, err := node.StartCluster(ctx, support.Root(), filepath.Join(dir, "edge"), "fleetplane-node-edge", controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(edge.Stop)
	t.Logf("the collector's cluster started in %s", edge.Started.Round(100*time.Millisecond))
	edgeKube, err := kubernetes.NewForConfig(edge.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	edgeClient, err := client.New(edge.CP.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	edgeImages, err := edge.PushAdxMon(ctx, support.Root())
	if err != nil {
		t.Fatal(err)
	}
	adxmonPrerequisites(t, edge.CP)

	// The ingestor's Service, admitting the collector's pods, which leave
	// their node with their own addresses or, masqueraded, the node's:
	// the ranges admit both, and nothing else.
	_ = unstructured.SetNestedStringSlice(service.Object, []string{edge.Network.PodSubnet, edge.Network.NodeIP + "/32"}, "spec", "loadBalancerSourceRanges")
	if err := central.Create(ctx, service); err != nil {
		t.Fatalf("Service %s: %v", service.GetName(), err)
	}
	lb, err := standin.ExposeService(ctx, central, on.ns, "ingestor", lbIP, cluster.Network.NodeIP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lb.Close)

	// The collector's cluster: the platform's CA, as trust-manager would
	// publish it, the token the stack names, and the composed collector
	// with the balancer's address in place of the example's.
	there := stackOn{edgeClient, edgeKube, "adx-mon"}
	if _, err := edgeKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: there.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespaceOn(t, edgeKube, there.ns) })
	if _, err := edgeKube.CoreV1().ConfigMaps(there.ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "ingestor-ca"}, Data: map[string]string{"ca.crt": string(caPEM)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := edgeKube.CoreV1().Secrets(there.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ingestor-auth"}, StringData: map[string]string{"token": "collector-token"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, u := range composedFrom(t, remoteCollectorGolden, map[string]string{"https://" + remoteIngestorAddress: "https://" + lbIP}, edgeImages, "collector") {
		if u.GetKind() == "ConfigMap" {
			cfg, _, _ := unstructured.NestedString(u.Object, "data", "config.toml")
			if !strings.Contains(cfg, `endpoint = "https://`+lbIP+`"`) || !strings.Contains(cfg, "insecure-skip-verify = false") {
				t.Fatalf("the composed collector configuration does not send to the balancer, verifying:\n%s", cfg)
			}
		}
		if err := edgeClient.Create(ctx, u); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	support.Eventually(t, 3*time.Minute, "the ingestor Ready", on.readyPod("app", "ingestor"))
	support.Eventually(t, 2*time.Minute, "the collector Ready in the other cluster", there.readyPod("adxmon", "collector"))
	t.Logf("ingestor and collector Ready in their clusters %s after the start", time.Since(start).Round(100*time.Millisecond))
	if log := logHead(ctx, on, "ingestor-0"); !strings.Contains(log, "Using TLS from files") {
		t.Errorf("the ingestor does not say it serves the mounted certificate:\n%s", log[:min(len(log), 4096)])
	}

	collector := there.pods(t, "adxmon", "collector")[0]
	sample.Post(t, collector.Status.PodIP, t.Name())
	support.Eventually(t, 2*time.Minute, "the sample in Kusto, through the other cluster's collector", sample.InKusto(ks, t.Name(), func() string {
		return fmt.Sprintf("balancer: %d admitted, %d refused\ncollector: %s\ningestor: %s", lb.Admitted.Load(), lb.Refused.Load(),
			there.logTail(ctx, collector.Name), on.logTail(ctx, "ingestor-0"))
	}))
	t.Logf("the sample in Kusto %s after the start", time.Since(start).Round(100*time.Millisecond))
	if lb.Admitted.Load() == 0 {
		t.Error("the sample reached Kusto, but not through the balancer")
	}

	// From outside the source ranges (this machine, at the balancer's
	// own address) nothing is served.
	refused := lb.Refused.Load()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(lbIP, "443"), &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		_ = conn.Close()
		t.Error("the balancer served a source outside the Service's loadBalancerSourceRanges")
	}
	if lb.Refused.Load() != refused+1 {
		t.Errorf("the balancer refused %d connections, want %d", lb.Refused.Load(), refused+1)
	}
}

// logHead is the start of a pod's log, where the ingestor says which
// certificate it serves.
func logHead(ctx context.Context, s stackOn, pod string) string {
	b, err := s.kube.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{LimitBytes: new(int64(64 << 10))}).DoRaw(ctx)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
