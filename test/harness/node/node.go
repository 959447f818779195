// Package node runs a real Kubernetes node beside the local control
// plane: containerd with runc, a CNI bridge, kubelet, which pulls images
// from the loopback registry over TLS and runs pods as containers, and
// kube-proxy, which gives pods the Services (the API server's first), all
// in the node's own network namespace (Network). Debian's runc,
// containerd and CNI plugins come from tools.sh (node-runtime), kubelet
// and kube-proxy from the same Kubernetes module as the API server; the
// sandbox image is hack/pause, built from source and pushed to the
// registry, since nothing can be pulled from a public one here.
//
// It needs root, as a node does. Two things are set for the machines
// this runs on, each with its reason below: containerd clamps
// oom_score_adj (root here lacks CAP_SYS_RESOURCE, so a pod sandbox's
// -998 fails in runc), and kubelet does not fail on cgroup v1 or swap.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
)

// Options say where a node pulls its images from.
type Options struct {
	// Name is the node's name, unique on this machine while it runs.
	Name string
	// Registry is the host:port of the loopback registry and RegistryCA
	// the file of the CA that signed its certificate, which containerd
	// trusts for that host only.
	Registry, RegistryCA string
	// PauseImage is the sandbox image, a reference into Registry.
	PauseImage string
	// Network is the node's network namespace (NewNetwork). The node's
	// loopback is not the machine's, so Registry must listen on
	// Network.HostIP (registry.StartOn).
	Network *Network
	// DNSImage, when set, is CoreDNS's image (DNSImage): the node then
	// runs cluster DNS, and pods resolve Services' names.
	DNSImage string
	// Scheduler runs kube-scheduler for the control plane beside the
	// node: a cluster's first node does, the nodes that join it
	// (Cluster.AddNode) do not, as one scheduler binds every pod.
	Scheduler bool
}

// Node is a running node.
type Node struct {
	Name string
	// IP is the node's address, Network.NodeIP.
	IP string
	// Network is the node's network namespace; the caller closes it.
	Network *Network
	// KubeletURL is the kubelet's own API, which answers only the API
	// server (by client certificate) and callers the API server
	// authorizes (by token).
	KubeletURL string

	dir, socket, ctr                      string
	containerd, kubelet, proxy, scheduler *controlplane.Process
}

// PodLogs is the directory where the node's kubelet keeps its
// containers' logs: <namespace>_<pod>_<uid>/<container>/<restarts>.log.
func (n *Node) PodLogs() string { return filepath.Join(n.dir, "pod-logs") }

// Supported says why containers cannot run here, or nil when they can.
func Supported() error {
	if os.Geteuid() != 0 {
		return errors.New("a real node needs root (kubelet and containerd manage namespaces, cgroups and mounts)")
	}
	for _, b := range []string{"runc", "containerd", "ctr", "ip", "iptables", "nsenter"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("a real node needs %s: run tools/tools.sh node-runtime", b)
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		return errors.New("a real node needs the CNI plugins in /usr/lib/cni: run tools/tools.sh node-runtime")
	}
	return nil
}

// Start starts containerd, kubelet and kube-scheduler for the control
// plane cp and waits until the node is Ready. Everything it writes is under dir.
func Start(ctx context.Context, root, dir string, cp *controlplane.ControlPlane, o Options) (_ *Node, err error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if o.Network == nil {
		return nil, errors.New("a node needs its network namespace (node.NewNetwork)")
	}
	kubelet, err := controlplane.Tool(root, "kubelet")
	if err != nil {
		return nil, err
	}
	proxy, err := controlplane.Tool(root, "kube-proxy")
	if err != nil {
		return nil, err
	}
	ctr, err := exec.LookPath("ctr")
	if err != nil {
		return nil, err
	}
	nw := o.Network
	n := &Node{Name: o.Name, IP: nw.NodeIP, Network: nw, dir: dir, socket: filepath.Join(dir, "containerd.sock"), ctr: ctr}
	// n, not the result, which a failed return sets to nil.
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	if err := nw.writeCNI(dir); err != nil {
		return nil, err
	}
	if err := n.startContainerd(o); err != nil {
		return nil, err
	}
	if err := n.startKubelet(kubelet, cp); err != nil {
		return nil, err
	}
	if err := n.startProxy(proxy, cp); err != nil {
		return nil, err
	}
	// The scheduler binds what the package manager's Deployments and the
	// workload controllers create, to this node and those that join it.
	if o.Scheduler {
		scheduler, err := controlplane.Tool(root, "kube-scheduler")
		if err != nil {
			return nil, err
		}
		if n.scheduler, err = controlplane.Run(n.dir, "kube-scheduler", scheduler, []string{
			"--kubeconfig", cp.Kubeconfig, "--authentication-kubeconfig", cp.Kubeconfig, "--authorization-kubeconfig", cp.Kubeconfig,
			"--leader-elect=false", "--secure-port=0",
		}, nil); err != nil {
			return nil, err
		}
	}
	if err := n.waitReady(ctx, cp); err != nil {
		return nil, err
	}
	if o.DNSImage != "" {
		kube, err := kubernetes.NewForConfig(cp.Config)
		if err != nil {
			return nil, err
		}
		if err := startDNS(ctx, kube, o.DNSImage); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (n *Node) startContainerd(o Options) error {
	hosts := filepath.Join(n.dir, "certs.d", o.Registry)
	if err := os.MkdirAll(hosts, 0o755); err != nil {
		return err
	}
	// The test registry, trusted through its own CA, not by skipping
	// verification.
	if err := os.WriteFile(filepath.Join(hosts, "hosts.toml"), fmt.Appendf(nil, `server = "https://%[1]s"

[host."https://%[1]s"]
  capabilities = ["pull", "resolve"]
  ca = %[2]q
`, o.Registry, o.RegistryCA), 0o644); err != nil {
		return err
	}
	// restrict_oom_score_adj: root on these machines lacks
	// CAP_SYS_RESOURCE, so runc cannot lower a process's oom_score_adj
	// below containerd's, and the -998 of every pod sandbox failed with
	// "can't get final child's PID from pipe". Clamped, pods run. Pods'
	// network namespaces under the state directory, so that Stop finds
	// them as its own.
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[5]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[6]q
`, filepath.Join(n.dir, "containerd"), filepath.Join(n.dir, "containerd-state"), n.socket, o.PauseImage,
		filepath.Join(n.dir, "cni"), filepath.Join(n.dir, "certs.d"))
	path := filepath.Join(n.dir, "containerd.toml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return err
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return err
	}
	if n.containerd, err = n.run("containerd", bin, "--config", path); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("unix", n.socket); err == nil {
			_ = c.Close()
			return nil
		}
		if time.Now().After(deadline) || n.containerd.Exited() {
			return fmt.Errorf("containerd did not listen on %s:\n%s", n.socket, n.containerd.Tail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (n *Node) startKubelet(bin string, cp *controlplane.ControlPlane) error {
	port, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	// The kubelet's own port takes no anonymous request: the API server
	// presents the client certificate cp's CA signed, and anyone else a
	// token the API server reviews and authorizes (Webhook), as on a
	// cluster that runs images it did not write. failCgroupV1 and
	// failSwapOn off: these machines have cgroup v1 and may have swap.
	//
	// Two kubelets share a machine here (a cluster's second node, or
	// another suite's node beside this one), and each removes what it
	// takes for an orphan of its own: the log directories of pods it does
	// not know under podLogsDir, and their cgroups under cgroupRoot. Both
	// are the node's own, or one node's kubelet deletes the other's pod
	// logs and kills its containers.
	if err := n.makeCgroupRoot(); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzPort: 0
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization: {mode: Webhook}
evictionHard: {}
localStorageCapacityIsolation: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: /etc/resolv.conf
clusterDNS: [%s]
clusterDomain: %s
podLogsDir: %s
cgroupRoot: %s
`, n.IP, port, n.socket, cp.KubeletClientCA, ClusterDNS, ClusterDomain, n.PodLogs(), n.cgroupRoot())
	n.KubeletURL = "https://" + net.JoinHostPort(n.IP, strconv.Itoa(port))
	if err := grantKubeletAPI(cp); err != nil {
		return err
	}
	path := filepath.Join(n.dir, "kubelet.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return err
	}
	n.kubelet, err = n.run("kubelet", bin,
		"--kubeconfig", cp.Kubeconfig, "--config", path, "--root-dir", filepath.Join(n.dir, "kubelet"),
		"--hostname-override", n.Name, "--node-ip", n.IP,
	)
	return err
}

// startProxy runs kube-proxy in the node's namespace, so that pods reach
// Services, the API server's `kubernetes` Service first: in-cluster
// clients (a provider's, Crossplane's) dial its ClusterIP. iptables mode,
// as Debian's iptables is there and nft is not. It leaves the conntrack
// table's size alone (a machine-wide sysctl) and opens no node port on
// loopback (which needs route_localnet); its health and metrics ports
// are the namespace's own. The cluster's pods are every node's
// (PodNetwork): a Service's backends may be on another node.
func (n *Node) startProxy(bin string, cp *controlplane.ControlPlane) error {
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %q}
hostnameOverride: %s
mode: iptables
clusterCIDR: %s
conntrack: {maxPerCore: 0}
iptables: {localhostNodePorts: false}
`, cp.Kubeconfig, n.Name, PodNetwork)
	path := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return err
	}
	var err error
	n.proxy, err = n.run("kube-proxy", bin, "--config", path)
	return err
}

// cgroupRoot is the cgroup the node's pods go under.
func (n *Node) cgroupRoot() string { return "/fleetplane-" + n.Name }

// cgroupDirs are the directories of the node's cgroupRoot: one per
// controller hierarchy on cgroup v1, one on v2.
func (n *Node) cgroupDirs() ([]string, error) {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return []string{filepath.Join("/sys/fs/cgroup", n.cgroupRoot())}, nil
	}
	entries, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		// unified is v1's empty v2 mount; kubelet wants the rest, the
		// named systemd hierarchy among them.
		if e.IsDir() && e.Name() != "unified" {
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup", e.Name(), n.cgroupRoot()))
		}
	}
	return dirs, nil
}

// makeCgroupRoot makes the node's cgroupRoot, which kubelet requires to
// exist. A new cpuset cgroup of v1 has no CPUs and no memory nodes, so
// no task can join it or its children: it gets its parent's.
func (n *Node) makeCgroupRoot() error {
	dirs, err := n.cgroupDirs()
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cgroup root of node %s: %w", n.Name, err)
		}
		if filepath.Base(filepath.Dir(d)) != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
				return fmt.Errorf("%s of node %s: %w", f, n.Name, err)
			}
		}
	}
	return nil
}

// removeCgroupRoot removes the node's cgroups, deepest first, once its
// containers are gone: a cgroup with no task can be removed.
func (n *Node) removeCgroupRoot() {
	dirs, err := n.cgroupDirs()
	if err != nil {
		return
	}
	for _, d := range dirs {
		var all []string
		_ = filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				all = append(all, path)
			}
			return nil
		})
		for _, p := range slices.Backward(all) {
			_ = os.Remove(p)
		}
	}
}

// run starts bin in the node's network namespace, logging under its
// directory.
func (n *Node) run(name, bin string, args ...string) (*controlplane.Process, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, err
	}
	return controlplane.Run(n.dir, name, nsenter, n.Network.Enter(bin, args...), nil)
}

// grantKubeletAPI lets the API server's kubelet client use every
// kubelet's API (logs, exec, port-forward), as kubeadm grants it: the
// kubelet asks the API server whether it may.
func grantKubeletAPI(cp *controlplane.ControlPlane) error {
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fleetplane:kube-apiserver-kubelet-client"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: controlplane.KubeletClientUser}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot let the API server use the kubelet's API: %w", err)
	}
	return nil
}

// waitReady waits until the node reports Ready.
func (n *Node) waitReady(ctx context.Context, cp *controlplane.ControlPlane) error {
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		node, err := kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		if time.Now().After(deadline) || n.kubelet.Exited() {
			return fmt.Errorf("node %s not Ready within 90s:\n%s", n.Name, n.kubelet.Tail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Kill sends SIGKILL to the container of a pod's status (its
// containerID, containerd://<id>), as the kernel's OOM killer ends a
// process: no handler runs, nothing is flushed. Kubelet then restarts it
// in the same pod.
func (n *Node) Kill(ctx context.Context, containerID string) error {
	id, ok := strings.CutPrefix(containerID, "containerd://")
	if !ok {
		return fmt.Errorf("container %q is not containerd's", containerID)
	}
	if out, err := exec.CommandContext(ctx, n.ctr, "-a", n.socket, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).CombinedOutput(); err != nil {
		return fmt.Errorf("ctr tasks kill %s: %w: %s", id, err, out)
	}
	return nil
}

// Stop stops kubelet, kills every container, stops containerd and
// removes what the node left on the machine: mounts under its
// directory, the pods' network namespaces, its bridge.
func (n *Node) Stop() {
	if n.scheduler != nil {
		n.scheduler.Stop()
	}
	if n.proxy != nil {
		n.proxy.Stop()
	}
	if n.kubelet != nil {
		n.kubelet.Stop()
	}
	if n.containerd != nil && !n.containerd.Exited() {
		// Containers outlive containerd (their shims keep them): kill
		// them first, through containerd.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, _ := exec.CommandContext(ctx, n.ctr, "-a", n.socket, "-n", "k8s.io", "tasks", "ls", "-q").Output()
		for id := range strings.FieldsSeq(string(out)) {
			_ = exec.CommandContext(ctx, n.ctr, "-a", n.socket, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).Run()
		}
		for id := range strings.FieldsSeq(string(out)) {
			_ = exec.CommandContext(ctx, n.ctr, "-a", n.socket, "-n", "k8s.io", "tasks", "rm", "-f", id).Run()
		}
		cancel()
		n.containerd.Stop()
	}
	n.unmount()
	n.removeCgroupRoot()
}

// unmount removes every mount under the node's directory, deepest first:
// pod volumes, container root filesystems, pods' network namespaces.
func (n *Node) unmount() {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	var mine []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], n.dir+"/") {
			mine = append(mine, f[1])
		}
	}
	for _, m := range slices.Backward(mine) {
		_ = exec.Command("umount", "-l", m).Run()
	}
}
