package node

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Network is a node's own network namespace, joined to the machine by a
// veth pair. Everything of the node that touches the network (containerd
// and the pods' bridge, kubelet, kube-proxy's iptables rules) lives in it,
// so two nodes on one machine, or a node and the machine's own rules,
// never see each other's chains, and removing the namespace removes all
// of it.
//
//	machine                        node's namespace
//	HostIP (x.1/30) ── veth ──     NodeIP (x.2/30) ── bridge PodGateway ── pods in PodSubnet
//
// The machine routes PodSubnet through NodeIP, so tests reach pods by
// their IPs; the namespace's default route is HostIP, so pods reach
// whatever listens on HostIP, the control plane's API server among them
// (controlplane.Options.BindAddress).
type Network struct {
	// Namespace is the name of the network namespace (ip netns).
	Namespace string
	// HostIP is the machine's end of the veth pair, and NodeIP the
	// namespace's: the node's InternalIP.
	HostIP, NodeIP string
	// PodSubnet is the pods' network and PodGateway the bridge's address
	// in it.
	PodSubnet, PodGateway string

	hostLink, bridge string
}

// PodNetwork holds every node's PodSubnet. Pods of one node reach those
// of another through the machine, which routes each subnet to its node.
const PodNetwork = "10.200.0.0/16"

// NewNetwork makes the network namespace of the node called name, with
// the first i no other node of this machine uses: the link
// 10.201.i.0/30 and the pods' 10.200.i.0/24.
func NewNetwork(name string) (_ *Network, err error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	id := fmt.Sprintf("%08x", h.Sum32())
	// 11 characters each; Linux allows 15.
	nw := &Network{Namespace: "fpn" + id, hostLink: "fph" + id, bridge: "fpb" + id}
	// Test processes start nodes side by side (the e2e and node suites
	// run in parallel): choosing a free i and taking it is one step.
	unlock, err := lockLinks()
	if err != nil {
		return nil, err
	}
	defer unlock()
	used, err := usedLinks()
	if err != nil {
		return nil, err
	}
	for i := 1; i < 255 && nw.HostIP == ""; i++ {
		if !used[i] {
			nw.HostIP, nw.NodeIP = fmt.Sprintf("10.201.%d.1", i), fmt.Sprintf("10.201.%d.2", i)
			nw.PodSubnet, nw.PodGateway = fmt.Sprintf("10.200.%d.0/24", i), fmt.Sprintf("10.200.%d.1", i)
		}
	}
	if nw.HostIP == "" {
		return nil, errors.New("no free /30 in 10.201.0.0/16 for a node's link")
	}
	defer func() {
		if err != nil {
			nw.Close()
		}
	}()
	// The machine routes between the nodes' pod subnets (a pod on one
	// node asks the cluster DNS on another), which it does only when it
	// forwards. A fresh machine does not: set, as kind and every node
	// image do, and left set, since other nodes may be routing through it.
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644); err != nil {
		return nil, fmt.Errorf("forwarding between nodes: %w", err)
	}
	// A namespace left by a run that was killed goes first: its name is
	// this node's.
	_ = exec.Command("ip", "netns", "del", nw.Namespace).Run()
	peer := "fpv" + id
	for _, args := range [][]string{
		{"netns", "add", nw.Namespace},
		{"link", "add", nw.hostLink, "type", "veth", "peer", "name", peer, "netns", nw.Namespace},
		{"addr", "add", nw.HostIP + "/30", "dev", nw.hostLink},
		{"link", "set", nw.hostLink, "up"},
		{"route", "add", nw.PodSubnet, "via", nw.NodeIP},
		{"-n", nw.Namespace, "link", "set", "lo", "up"},
		{"-n", nw.Namespace, "addr", "add", nw.NodeIP + "/30", "dev", peer},
		{"-n", nw.Namespace, "link", "set", peer, "up"},
		{"-n", nw.Namespace, "route", "add", "default", "via", nw.HostIP},
		{"-n", nw.Namespace, "link", "add", nw.bridge, "type", "bridge"},
		{"-n", nw.Namespace, "addr", "add", nw.PodGateway + "/24", "dev", nw.bridge},
		{"-n", nw.Namespace, "link", "set", nw.bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	// Pods' packets to Services are routed by the namespace (kube-proxy
	// translates them there), so it forwards. /proc/sys/net is the
	// namespace of whoever opens it: the shell nsenter starts in it.
	if out, err := nw.Command("sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("forwarding in %s: %w: %s", nw.Namespace, err, out)
	}
	return nw, nil
}

// lockLinks takes the machine-wide lock on choosing a node's link, and
// returns its release.
func lockLinks() (func(), error) { return lockMachine("node-links") }

// lockMachine takes the machine-wide lock called name, which every test
// process of this machine shares, and returns its release: the lock goes
// with the file's close, or with the process.
func lockMachine(name string) (func(), error) {
	f, err := os.OpenFile("/run/fleetplane-"+name+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return func() { _ = f.Close() }, nil
}

// usedLinks are the i of the 10.201.i.1 addresses of this machine.
func usedLinks() (map[int]bool, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	used := map[int]bool{}
	for _, a := range addrs {
		if ip, _, err := net.ParseCIDR(a.String()); err == nil && ip.To4() != nil && ip.To4()[0] == 10 && ip.To4()[1] == 201 {
			used[int(ip.To4()[2])] = true
		}
	}
	return used, nil
}

// Command is name with args run in the node's network namespace, and
// only there: nsenter joins the network namespace alone, so the process
// shares the machine's mounts (kubelet's volumes must be containerd's).
func (nw *Network) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", nw.Enter(name, args...)...)
}

// Enter is the arguments of nsenter that run bin with args in the
// namespace, for controlplane.Run.
func (nw *Network) Enter(bin string, args ...string) []string {
	return append([]string{"--net=" + filepath.Join("/run/netns", nw.Namespace), "--", bin}, args...)
}

// cniConfig is the CNI configuration that puts pods on the bridge.
// No masquerading and no port maps: pods reach the machine and each
// other, and the machine reaches them, by their addresses.
func (nw *Network) cniConfig(ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %q,
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
`, nw.bridge, nw.bridge, ipamDir, nw.PodSubnet, nw.PodGateway)
}

// Close removes the namespace, and with it the veth pair, the bridge and
// every rule in it, and the machine's route to the pods.
func (nw *Network) Close() {
	_ = exec.Command("ip", "route", "del", nw.PodSubnet, "via", nw.NodeIP).Run()
	_ = exec.Command("ip", "link", "del", nw.hostLink).Run()
	_ = exec.Command("ip", "netns", "del", nw.Namespace).Run()
}

// writeCNI writes the CNI configuration under dir.
func (nw *Network) writeCNI(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "cni"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cni", "10-bridge.conflist"), []byte(nw.cniConfig(filepath.Join(dir, "ipam"))), 0o644)
}
