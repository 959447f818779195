package standin

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kubelet plays what runs pods on a real cluster and is missing here: the
// scheduler binding each pending pod to the one node, the node's kubelet
// reporting the pod's containers started and ready, and the node
// lifecycle controller lifting the not-ready taint the API server puts on
// a new node. kube-controller-manager's workload controllers then compute
// StatefulSet, DaemonSet and Deployment status from those pods exactly as
// they would on a real cluster.
//
// It serves only the namespaces Serve names, so that other pods of the
// control plane (the package runtime's Deployments) stay pending as they
// would without a node for them.
type Kubelet struct {
	kube client.Client
	// Node is the node's name.
	Node string

	mu         sync.Mutex
	namespaces map[string]bool
	ready      map[string]time.Time // namespace/pod -> when it became ready
	lastErr    error
	ports      map[string]portServer   // namespace -> what its pods serve
	listeners  map[string]*http.Server // namespace/pod -> its server
	nextIP     int                     // of the loopback pod addresses
}

// portServer is what the containers of a namespace's pods serve at a
// named container port.
type portServer struct {
	port    string
	handler func(pod string) http.Handler
}

// ServePort plays, for the pods of namespace ns, what their containers
// listen on at the container port named port: the kubelet gives each such
// pod its own loopback address (127.0.0.N, as a pod network gives each pod
// its own IP) as status.podIP, and serves handler(pod name) there at the
// port's number until the pod is deleted.
func (k *Kubelet) ServePort(ns, port string, handler func(pod string) http.Handler) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ports[ns] = portServer{port: port, handler: handler}
}

// listen starts serving a pod's named port, and returns the pod's IP.
func (k *Kubelet) listen(p *corev1.Pod) (string, error) {
	k.mu.Lock()
	ps, ok := k.ports[p.Namespace]
	k.mu.Unlock()
	if !ok {
		return "10.2.0.10", nil
	}
	var number int32
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == ps.port {
				number = cp.ContainerPort
			}
		}
	}
	if number == 0 {
		return "10.2.0.10", nil
	}
	k.mu.Lock()
	k.nextIP++
	ip := fmt.Sprintf("127.0.%d.%d", k.nextIP/250, k.nextIP%250+2)
	k.mu.Unlock()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(number))))
	if err != nil {
		return "", fmt.Errorf("pod %s/%s port %s: %w", p.Namespace, p.Name, ps.port, err)
	}
	srv := &http.Server{Handler: ps.handler(p.Name), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	k.mu.Lock()
	if old := k.listeners[p.Namespace+"/"+p.Name]; old != nil {
		_ = old.Close()
	}
	k.listeners[p.Namespace+"/"+p.Name] = srv
	k.mu.Unlock()
	return ip, nil
}

// stop closes what a deleted pod served.
func (k *Kubelet) stop(p *corev1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if srv := k.listeners[p.Namespace+"/"+p.Name]; srv != nil {
		_ = srv.Close()
		delete(k.listeners, p.Namespace+"/"+p.Name)
	}
}

// Err is the last error the kubelet met, for test failure messages.
func (k *Kubelet) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastErr
}

func (k *Kubelet) fail(err error) {
	if err == nil {
		return
	}
	k.mu.Lock()
	k.lastErr = err
	k.mu.Unlock()
}

// NewKubelet returns a stand-in for one node, named node.
func NewKubelet(kube client.Client, node string) *Kubelet {
	return &Kubelet{kube: kube, Node: node, namespaces: map[string]bool{}, ready: map[string]time.Time{},
		ports: map[string]portServer{}, listeners: map[string]*http.Server{}, nextIP: 100}
}

// Serve makes the node run the pods of namespace ns.
func (k *Kubelet) Serve(ns string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.namespaces[ns] = true
}

// ReadyAt is when the kubelet reported the pod ready, zero if never.
func (k *Kubelet) ReadyAt(ns, pod string) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ready[ns+"/"+pod]
}

// Run registers the node and runs pods until ctx is done.
func (k *Kubelet) Run(ctx context.Context) {
	every(ctx, func() {
		if err := k.register(ctx); err != nil {
			k.fail(fmt.Errorf("node %s: %w", k.Node, err))
			return
		}
		k.runPods(ctx)
	})
}

// register creates the node, reports it Ready, and lifts the taints the
// API server adds to a node that has not reported yet.
func (k *Kubelet) register(ctx context.Context) error {
	n := &corev1.Node{}
	if err := k.kube.Get(ctx, client.ObjectKey{Name: k.Node}, n); kerrors.IsNotFound(err) {
		n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.Node, Labels: map[string]string{
			"kubernetes.io/hostname": k.Node, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		}}}
		if err := k.kube.Create(ctx, n); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if c := nodeReady(n); c == nil || c.Status != corev1.ConditionTrue {
		now := metav1.Now()
		capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n.Status = corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status (stand-in)", LastHeartbeatTime: now, LastTransitionTime: now}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.0.10"}, {Type: corev1.NodeHostName, Address: k.Node}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.34.2", OperatingSystem: "linux", Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.1.0"},
		}
		if err := k.kube.Status().Update(ctx, n); err != nil {
			return err
		}
	}
	taints := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool {
		return t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable
	})
	if len(taints) != len(n.Spec.Taints) {
		n.Spec.Taints = taints
		return k.kube.Update(ctx, n)
	}
	return nil
}

func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// runPods binds the pending pods of the served namespaces to the node and
// reports every container of a bound pod running and ready.
func (k *Kubelet) runPods(ctx context.Context) {
	k.mu.Lock()
	namespaces := make([]string, 0, len(k.namespaces))
	for ns := range k.namespaces {
		namespaces = append(namespaces, ns)
	}
	k.mu.Unlock()
	for _, ns := range namespaces {
		pods := &corev1.PodList{}
		if err := k.kube.List(ctx, pods, client.InNamespace(ns)); err != nil {
			continue
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil {
				// The kubelet stops the containers, then removes the pod
				// for good; without it a deleted pod stays Terminating.
				if p.Spec.NodeName == k.Node {
					k.stop(p)
					k.fail(client.IgnoreNotFound(k.kube.Delete(ctx, p, client.GracePeriodSeconds(0))))
				}
				continue
			}
			if p.Spec.NodeName == "" {
				b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: k.Node}}
				k.fail(k.kube.SubResource("binding").Create(ctx, p, b))
				continue
			}
			if p.Spec.NodeName == k.Node && p.Status.Phase != corev1.PodRunning && k.volumesExist(ctx, p) {
				k.start(ctx, p)
			}
		}
	}
}

// volumesExist reports whether the Secrets and ConfigMaps a pod mounts
// exist: until they do, a kubelet leaves the pod ContainerCreating.
func (k *Kubelet) volumesExist(ctx context.Context, p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		var obj client.Object
		var name string
		switch {
		case v.Secret != nil && (v.Secret.Optional == nil || !*v.Secret.Optional):
			obj, name = &corev1.Secret{}, v.Secret.SecretName
		case v.ConfigMap != nil && (v.ConfigMap.Optional == nil || !*v.ConfigMap.Optional):
			obj, name = &corev1.ConfigMap{}, v.ConfigMap.Name
		default:
			continue
		}
		if err := k.kube.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: name}, obj); err != nil {
			return false
		}
	}
	return true
}

// start reports a pod's containers started and ready, as the kubelet does
// once the images are pulled and the readiness probes pass.
func (k *Kubelet) start(ctx context.Context, p *corev1.Pod) {
	ip, err := k.listen(p)
	if err != nil {
		k.fail(err)
		return
	}
	now := metav1.Now()
	st := corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.1.0.10", PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now, QOSClass: p.Status.QOSClass}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	p.Status = st
	if err := k.kube.Status().Update(ctx, p); err != nil {
		k.stop(p)
		k.fail(err)
		return
	}
	k.mu.Lock()
	k.ready[p.Namespace+"/"+p.Name] = now.Time
	k.mu.Unlock()
}
