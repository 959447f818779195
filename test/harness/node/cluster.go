package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/registry"
	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

// Cluster is a control plane with one real node, a registry its pods pull
// from, cluster DNS and Services: what a pod needs to run as it would on
// a cluster. test/node and the demo's real-pods journey run on one.
type Cluster struct {
	Network  *Network
	CP       *controlplane.ControlPlane
	Registry *registry.Registry
	// Node is the first node, which runs the scheduler and cluster DNS;
	// Nodes are all of them, Node first (AddNode adds more).
	Node  *Node
	Nodes []*Node
	// Started is how long StartCluster took.
	Started time.Duration

	dir, pause string
}

// StartCluster starts a Cluster whose node is called name, everything
// under dir. o tunes its control plane: o.Controllers run beside those
// every such cluster runs (job-controller, say); o.BindAddress is the
// cluster's own. The network comes first: the API server and the
// registry listen where the node's pods reach this machine.
func StartCluster(ctx context.Context, root, dir, name string, o controlplane.Options) (_ *Cluster, err error) {
	start := time.Now()
	for _, d := range []string{"controlplane", "node", "registry"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	c := &Cluster{}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.Network, err = NewNetwork(name); err != nil {
		return nil, err
	}
	// The node lifecycle controller takes the not-ready taint kubelet
	// registers the node with off once it is Ready; the root CA publisher
	// gives every namespace the kube-root-ca.crt pods verify the API
	// server with; the ServiceAccount controller makes the default
	// account pods run as; the EndpointSlice controller gives Services
	// (cluster DNS's among them) the pods behind them.
	o.Controllers = append([]string{"node-lifecycle-controller", "root-ca-certificate-publisher-controller", "serviceaccount-controller", "endpointslice-controller"}, o.Controllers...)
	o.BindAddress = c.Network.HostIP
	if c.CP, err = controlplane.StartWith(ctx, root, filepath.Join(dir, "controlplane"), o); err != nil {
		return nil, err
	}
	if c.Registry, err = registry.StartOn(filepath.Join(dir, "registry"), c.Network.HostIP); err != nil {
		return nil, err
	}
	pause, _, err := c.PushCommand(ctx, root, "./hack/pause", "/pause", "fleetplane/pause", "3.10")
	if err != nil {
		return nil, err
	}
	dns, err := DNSImage(ctx, root, c.Registry)
	if err != nil {
		return nil, err
	}
	c.dir, c.pause = dir, pause
	if c.Node, err = Start(ctx, root, filepath.Join(dir, "node"), c.CP, Options{
		Name: name, Registry: c.Registry.Host, RegistryCA: c.Registry.CAFile, PauseImage: pause, Network: c.Network, DNSImage: dns, Scheduler: true,
	}); err != nil {
		return nil, err
	}
	c.Nodes = []*Node{c.Node}
	c.Started = time.Since(start)
	return c, nil
}

// AddNode starts another node called name, in a network namespace of its
// own, and joins it to the cluster: it pulls from the cluster's registry
// (which listens on the first node's link, reached through the
// machine), and its pods reach the other nodes' pods, Services and the
// API server through the machine, which routes every pod subnet to its
// node. A workload that spreads its pods (a required anti-affinity)
// needs as many nodes as pods.
func (c *Cluster) AddNode(ctx context.Context, root, name string) (*Node, error) {
	nw, err := NewNetwork(name)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.dir, "node-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		nw.Close()
		return nil, err
	}
	n, err := Start(ctx, root, dir, c.CP, Options{
		Name: name, Registry: c.Registry.Host, RegistryCA: c.Registry.CAFile, PauseImage: c.pause, Network: nw,
	})
	if err != nil {
		nw.Close()
		return nil, err
	}
	c.Nodes = append(c.Nodes, n)
	return n, nil
}

// PushCommand builds the Go command at pkg (relative to root) into a
// single-binary image with the binary at path, as the runtime images are
// built, pushes it to repo:tag and returns its reference and digest.
func (c *Cluster) PushCommand(ctx context.Context, root, pkg, path, repo, tag string) (string, string, error) {
	bin := filepath.Join(c.CP.Dir, "bin", filepath.Base(path))
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, pkg)
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	ref, d, err := c.Registry.PushImage(ctx, image.Image{Binary: bin, Path: path}, repo, tag)
	return ref, d.String(), err
}

// NodeNamed is the cluster's node called name, nil if none is.
func (c *Cluster) NodeNamed(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// PushAdxMon builds adx-mon's ingestor, collector and alerter (tools.sh
// adx-mon-ingestor, adx-mon-collector, adx-mon-alerter) into images laid
// out as adx-mon's Dockerfiles lay theirs out
// (build/images/Dockerfile.<component>: the binary at /<component>, its
// entrypoint, the distroless base's root user), pushes them to the
// cluster's registry as azure/adx-mon/<component>:v0.3.0 and returns
// their references by component.
func (c *Cluster) PushAdxMon(ctx context.Context, root string) (map[string]string, error) {
	refs := map[string]string{}
	for _, name := range []string{"ingestor", "collector", "alerter"} {
		bin, err := controlplane.Tool(root, "adx-mon-"+name)
		if err != nil {
			return nil, err
		}
		ref, _, err := c.Registry.PushImage(ctx, image.Image{Binary: bin, Path: "/" + name, User: "0:0"}, "azure/adx-mon/"+name, "v0.3.0")
		if err != nil {
			return nil, fmt.Errorf("adx-mon's %s image: %w", name, err)
		}
		refs[name] = ref
	}
	return refs, nil
}

// Stop stops the nodes, the registry and the control plane, and removes
// the networks.
func (c *Cluster) Stop() {
	for _, n := range slices.Backward(c.Nodes) {
		n.Stop()
		if n != c.Node {
			n.Network.Close()
		}
	}
	if c.Registry != nil {
		c.Registry.Close()
	}
	if c.CP != nil {
		c.CP.Stop()
	}
	if c.Network != nil {
		c.Network.Close()
	}
}
