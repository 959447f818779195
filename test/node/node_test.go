// Package node_test runs fleetplane's images on a real node: containerd
// and runc under kubelet, images pulled over TLS from the loopback
// registry, pods on a CNI bridge. It is the first layer of real pods
// (test/README.md): what a Deployment runtime runs is an image, and this
// shows the image starts, listens and answers.
package node_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/node"
	"github.com/fleetplane/fleetplane/test/harness/registry"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// nodeName is the node's name.
const nodeName = "fleetplane-node-test"

var (
	cp   *controlplane.ControlPlane
	kube kubernetes.Interface
	reg  *registry.Registry
	dir  string
	// cluster is the control plane, registry and node the tests share;
	// cp and reg are its.
	cluster *node.Cluster
)

func TestMain(m *testing.M) {
	support.Harness(m, "node tests (containerd, runc, kubelet)", run)
}

func run(m *testing.M) int {
	var err error
	if dir, err = os.MkdirTemp("", "fleetplane-node-test-"); err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	c, err := node.StartCluster(context.Background(), support.Root(), dir, nodeName, controlplane.Options{})
	if err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	defer c.Stop()
	cluster, cp, reg = c, c.CP, c.Registry
	fmt.Fprintf(os.Stderr, "node: control plane, registry and a Ready node in %s\n", c.Started.Round(100*time.Millisecond))

	if kube, err = kubernetes.NewForConfig(cp.Config); err != nil {
		support.SetupFailedf("%v", err)
		return 1
	}
	return m.Run()
}

// TestFunctionRunsAsAPod: function-fleetplane's image, pulled from the
// registry by the node, starts as its non-root user, listens, and answers
// a RunFunction over the pod network.
func TestFunctionRunsAsAPod(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	ref, digest, err := cluster.PushCommand(ctx, support.Root(), "./function", "/function-fleetplane", "fleetplane/function-fleetplane", "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("function image built and pushed in %s", time.Since(start).Round(100*time.Millisecond))
	namespace(t, "function")
	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "function-fleetplane", Namespace: "function"},
		Spec: corev1.PodSpec{
			// No nodeName: kube-scheduler binds it, as it binds what a
			// Deployment makes.
			AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{
				Name: "function", Image: ref,
				Args:  []string{"--insecure", "--debug"},
				Ports: []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9443}, {Name: "metrics", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("grpc")}},
					PeriodSeconds: 1,
				},
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(true), AllowPrivilegeEscalation: &no},
			}},
		},
	}
	if _, err := kube.CoreV1().Pods("function").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ip string
	support.Eventually(t, 2*time.Minute, "the function's pod Ready", func() (bool, string) {
		p, err := kube.CoreV1().Pods("function").Get(ctx, "function-fleetplane", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ip = p.Status.PodIP
				return true, ""
			}
		}
		return false, fmt.Sprintf("%s %v", p.Status.Phase, p.Status.ContainerStatuses)
	})
	t.Logf("pod Ready %s after the push", time.Since(start).Round(100*time.Millisecond))

	p, err := kube.CoreV1().Pods("function").Get(ctx, "function-fleetplane", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cluster.NodeNamed(p.Spec.NodeName) == nil {
		t.Errorf("the pod was bound to %q, not one of the cluster's nodes", p.Spec.NodeName)
	}
	if got := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(got, "@"+digest) {
		t.Errorf("the pod runs image %s, want the pushed %s", got, digest)
	}

	conn, err := grpc.NewClient(ip+":9443", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := composetest.Call{XR: &expv1alpha1.Component{
		TypeMeta:   metav1.TypeMeta{APIVersion: expv1alpha1.SchemeGroupVersion.String(), Kind: expv1alpha1.ComponentKind},
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec:       expv1alpha1.ComponentSpec{Type: expv1alpha1.ComponentApp},
	}}.Request(t)
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rsp, err := fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(callCtx, req)
	if err != nil {
		t.Fatalf("RunFunction to the pod: %v", err)
	}
	if len(rsp.GetConditions()) == 0 || rsp.GetConditions()[0].GetType() != expv1alpha1.ConditionComponent {
		t.Errorf("the pod's answer has conditions %v, want %s", rsp.GetConditions(), expv1alpha1.ConditionComponent)
	}

	// Its log, as kubectl logs reads it: through the API server, from the
	// kubelet, from containerd.
	logs, err := kube.CoreV1().Pods("function").GetLogs("function-fleetplane", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("the pod's log: %v", err)
	}
	if !strings.Contains(string(logs), "Composed") || !strings.Contains(string(logs), "Component") {
		t.Errorf("the pod's log does not show the call:\n%s", logs)
	}
	// The pod mounts no ServiceAccount token, so nothing can review a
	// scraper: its metrics are off, and it says so, rather than crashing.
	if !strings.Contains(string(logs), "Metrics are off") {
		t.Errorf("the pod's log does not say why its metrics are off:\n%s", logs)
	}
}

// TestKubeletRefusesAnonymous: the node's kubelet answers no request
// without credentials (the pods it runs, their logs and exec would be
// anyone's on this network), while the API server, with its client
// certificate, still reads logs (TestFunctionRunsAsAPod).
func TestKubeletRefusesAnonymous(t *testing.T) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		// The kubelet's serving certificate is its own, self-signed.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	for _, path := range []string{"/pods", "/runningpods/", "/containerLogs/function/function-fleetplane/function"} {
		rsp, err := c.Get(cluster.Node.KubeletURL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_ = rsp.Body.Close()
		if rsp.StatusCode != http.StatusUnauthorized {
			t.Errorf("an anonymous GET %s answered %s, want 401 Unauthorized", path, rsp.Status)
		}
	}
}

// deleteNamespace deletes a namespace and waits until its pods are gone.
func deleteNamespace(t *testing.T, name string) {
	t.Helper()
	deleteNamespaceOn(t, kube, name)
}

// deleteNamespaceOn deletes a namespace of the cluster kube reaches and
// waits for its pods to be gone.
func deleteNamespaceOn(t *testing.T, kube kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if err := kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting namespace %s: %v", name, err)
		return
	}
	support.Eventually(t, 2*time.Minute, "namespace "+name+"'s pods gone", func() (bool, string) {
		l, err := kube.CoreV1().Pods(name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items))
	})
}

// namespace makes namespace name and waits for its default
// ServiceAccount, without which no pod is admitted.
func namespace(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	support.Eventually(t, 30*time.Second, "namespace "+name+"'s default ServiceAccount", func() (bool, string) {
		_, err := kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

// TestPodReachesTheAPIServer: a pod's in-cluster client reaches the API
// server as its ServiceAccount, as a provider's pod must, and the pod
// resolves Services' names through cluster DNS, as Crossplane does when
// it calls a function. The pod dials
// the `kubernetes` Service's ClusterIP, which kube-proxy translates to
// the API server on the machine; it verifies the server with its
// namespace's kube-root-ca.crt and authenticates with the token kubelet
// projected. Without kube-proxy the dial times out; without the CA the
// handshake fails; without the token the answer is system:anonymous;
// without CoreDNS the name does not resolve.
func TestPodReachesTheAPIServer(t *testing.T) {
	ctx := t.Context()
	ref, _, err := cluster.PushCommand(ctx, support.Root(), "./hack/whoami", "/whoami", "fleetplane/whoami", "test")
	if err != nil {
		t.Fatal(err)
	}
	namespace(t, "tenant")
	if _, err := kube.CoreV1().ServiceAccounts("tenant").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "whoami", Namespace: "tenant"},
		Spec: corev1.PodSpec{
			ServiceAccountName: "reader",
			RestartPolicy:      corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "whoami", Image: ref,
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(65532))},
			}},
		},
	}
	if _, err := kube.CoreV1().Pods("tenant").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var phase corev1.PodPhase
	support.Eventually(t, 2*time.Minute, "the whoami pod to finish", func() (bool, string) {
		p, err := kube.CoreV1().Pods("tenant").Get(ctx, "whoami", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, fmt.Sprintf("%s %v", phase, p.Status.ContainerStatuses)
	})
	logs, err := kube.CoreV1().Pods("tenant").GetLogs("whoami", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("the pod's log: %v", err)
	}
	if phase != corev1.PodSucceeded {
		t.Fatalf("the pod %s:\n%s", phase, logs)
	}
	if want := "server=https://10.0.0.1:443 user=system:serviceaccount:tenant:reader kubernetes.default.svc=10.0.0.1"; strings.TrimSpace(string(logs)) != want {
		t.Errorf("the pod says %q, want %q", strings.TrimSpace(string(logs)), want)
	}
}
