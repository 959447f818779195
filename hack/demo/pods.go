package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/node"
)

// realPods installs fleetplane as a user does on a cluster, where the rest
// of the demo plays Crossplane's External runtime: a second control plane
// with a real node (containerd, kubelet, kube-proxy, CoreDNS), Crossplane
// from its own Helm chart running as pods, and fleetplane's function and
// provider as the pods its package manager makes of the packages the demo
// built. Where containers cannot run it says so in one line.
func realPods(ctx context.Context, env *environment.Env, root, dir string) error {
	if err := node.Supported(); err != nil {
		sayf("real pods: skipped: %v. As root on Linux, tools/tools.sh node-runtime installs what a node needs", err)
		return nil
	}
	sayf("real pods: a second control plane with a real node (containerd, kubelet, kube-proxy, CoreDNS), Crossplane from its Helm chart, fleetplane as its package manager runs it")
	c, err := node.StartCluster(ctx, root, filepath.Join(dir, "real-pods"), "fleetplane-demo", controlplane.Options{})
	if err != nil {
		return fmt.Errorf("real pods: %w", err)
	}
	defer c.Stop()
	sayf("node %s Ready, its pods on %s, in %s", c.Node.Name, c.Network.PodSubnet, c.Started.Round(100*time.Millisecond))
	start := time.Now()
	xp, err := controlplane.InstallCrossplaneChart(ctx, c.CP, root, c.Registry)
	if err != nil {
		return fmt.Errorf("real pods: %w", err)
	}
	sayf("Crossplane's chart installed; core and its RBAC manager available in %s", time.Since(start).Round(100*time.Millisecond))

	cli, err := controlplane.Tool(root, "crossplane")
	if err != nil {
		return err
	}
	start = time.Now()
	pkgs := filepath.Join(env.Dir, "packages")
	fn := &pkgv1.Function{ObjectMeta: metav1.ObjectMeta{Name: "fleetplane-function-fleetplane"}}
	pr := &pkgv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: "fleetplane-provider-fleetplane"}}
	for _, p := range []struct {
		file string
		pkg  client.Object
		set  func(string)
	}{
		{"function-fleetplane", fn, func(ref string) { fn.Spec.Package = ref }},
		{"provider-fleetplane", pr, func(ref string) { pr.Spec.Package = ref }},
	} {
		if err := c.Registry.Push(ctx, cli, filepath.Join(pkgs, p.file+".xpkg"), "fleetplane/"+p.file, environment.Version); err != nil {
			return err
		}
		p.set(c.Registry.Ref("fleetplane/"+p.file, environment.Version))
		if err := xp.Kube().Create(ctx, p.pkg); err != nil {
			return err
		}
	}
	for _, pkg := range []string{fn.Name, pr.Name} {
		if err := xp.WaitRuntimeHealthy(ctx, pkg, 4*time.Minute); err != nil {
			return fmt.Errorf("real pods: %w", err)
		}
	}
	kubectl, err := controlplane.Tool(root, "kubectl")
	if err != nil {
		return err
	}
	pods, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", c.CP.Kubeconfig, "get", "pods", "-n", controlplane.CrossplaneNamespace, "-o", "wide").Output()
	if err != nil {
		return fmt.Errorf("kubectl get pods: %w", err)
	}
	sayf("function and provider pushed and installed; both revisions Healthy %s later, their pods on the node:\n%s", time.Since(start).Round(100*time.Millisecond), pods)
	return nil
}
