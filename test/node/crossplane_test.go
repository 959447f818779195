package node_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// TestCrossplaneRunsPackagesAsPods: Crossplane, installed from its own
// chart, runs as pods on the node, and its package manager runs
// fleetplane's function and provider as pods of the images that were
// pushed (the runtime each package embeds), under the ServiceAccounts
// and RBAC Crossplane gives them, until both revisions are Healthy.
func TestCrossplaneRunsPackagesAsPods(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	xp, err := controlplane.InstallCrossplaneChart(ctx, cp, support.Root(), reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Crossplane's chart installed and its pods available in %s", time.Since(start).Round(100*time.Millisecond))

	start = time.Now()
	out := filepath.Join(dir, "packages")
	build := exec.CommandContext(ctx, filepath.Join(support.Root(), "tools", "package.sh"), out)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("tools/package.sh: %v\n%s", err, b)
	}
	cli, err := controlplane.Tool(support.Root(), "crossplane")
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, p := range []string{"function-fleetplane", "provider-fleetplane"} {
		if err := reg.Push(ctx, cli, filepath.Join(out, p+".xpkg"), "fleetplane/"+p, "v0.0.1-node"); err != nil {
			t.Fatal(err)
		}
		digests[p] = pushedDigest(t, "fleetplane/"+p, "v0.0.1-node")
	}
	t.Logf("packages built and pushed in %s", time.Since(start).Round(100*time.Millisecond))

	start = time.Now()
	kube := xp.Kube()
	// The provider as docs/install.md installs it: under the
	// ServiceAccount package/rbac binds the provider's further rights to.
	rbacDir := filepath.Join(support.Root(), "package", "rbac")
	if err := cp.ApplyRBAC(ctx, filepath.Join(rbacDir, "provider-fleetplane.yaml")); err != nil {
		t.Fatal(err)
	}
	// The runtime config as shipped, with the one flag a Kusto emulator
	// beyond loopback needs: the node network's host address, where the
	// emulator below listens, opened to credentials None.
	emulator := kustoserver.New("FleetDiscovery")
	if err := emulator.Start(cluster.Network.HostIP + ":0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emulator.Close() })
	rc := readObject(t, filepath.Join(rbacDir, "runtime-config.yaml"))
	if err := unstructured.SetNestedField(rc.Object, map[string]any{"spec": map[string]any{
		"selector": map[string]any{},
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
			"name": "package-runtime", "args": []any{"--debug", "--plain-http-networks=127.0.0.0/8,::1," + cluster.Network.HostIP + "/32"},
		}}}},
	}}, "spec", "deploymentTemplate"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	// Named as the fleetplane Configuration's dependency resolution
	// names them, which its Compositions' function references expect.
	fn := &pkgv1.Function{ObjectMeta: metav1.ObjectMeta{Name: functionName}}
	fn.Spec.Package = reg.Ref("fleetplane/function-fleetplane", "v0.0.1-node")
	pr := &pkgv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: providerName}}
	pr.Spec.Package = reg.Ref("fleetplane/provider-fleetplane", "v0.0.1-node")
	pr.Spec.RuntimeConfigReference = &pkgv1.RuntimeConfigReference{Name: "provider-fleetplane"}
	for _, o := range []client.Object{fn, pr} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, pkg := range []string{functionName, providerName} {
		if err := xp.WaitRuntimeHealthy(ctx, pkg, 4*time.Minute); err != nil {
			t.Fatalf("%v; pods: %s", err, podsSay(ctx, kube))
		}
	}
	t.Logf("both revisions Healthy %s after their install", time.Since(start).Round(100*time.Millisecond))

	for pkg, d := range map[string]string{functionName: digests["function-fleetplane"], providerName: digests["provider-fleetplane"]} {
		p := packagePod(t, kube, pkg)
		if got := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(got, "@"+d) {
			t.Errorf("%s's pod runs %s, want the pushed package %s", pkg, got, d)
		}
		if cluster.NodeNamed(p.Spec.NodeName) == nil {
			t.Errorf("%s's pod is on %q, not one of the cluster's nodes", pkg, p.Spec.NodeName)
		}
	}
	if sa := packagePod(t, kube, providerName).Spec.ServiceAccountName; sa != "provider-fleetplane" {
		t.Errorf("the provider's pod runs as %q, want runtime-config.yaml's provider-fleetplane", sa)
	}

	t.Run("the function's pod composes", func(t *testing.T) {
		composes(t, kube)
	})
	t.Run("the provider's pod reconciles under its RBAC, and a killed pod loses nothing", func(t *testing.T) {
		providerReconciles(t, kube)
	})
	t.Run("the provider's pod reaches a Kusto emulator on the node's network", func(t *testing.T) {
		reachesEmulator(t, kube, emulator)
	})
	t.Run("provider-kubernetes runs as the pod of its package and applies an Object", func(t *testing.T) {
		providerKubernetes(t, kube, cli)
	})
	t.Run("an upgrade replaces the function's pod", func(t *testing.T) {
		upgradeFunction(t, kube, out, cli)
	})
}

// upgradeFunction publishes a new function package (the same runtime, an
// annotation more, so another digest), points the Function at it, and
// expects the package manager to replace the old revision's pod with one
// of the new package, which then composes.
func upgradeFunction(t *testing.T, kube client.Client, out, cli string) {
	t.Helper()
	ctx := t.Context()
	old := packagePod(t, kube, functionName)
	root := filepath.Join(dir, "function-v0.0.2")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(support.Root(), "package", "function"))); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(root, "crossplane.yaml")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "  annotations:\n", "  annotations:\n    fleetplane.io/release: v0.0.2-node\n", 1)
	if edited == string(b) {
		t.Fatal("package/function/crossplane.yaml has no annotations to add a release to")
	}
	if err := os.WriteFile(meta, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	file := root + ".xpkg"
	if b, err := exec.CommandContext(ctx, cli, "xpkg", "build", "--package-root", root, "--examples-root", empty,
		"--embed-runtime-image-tarball", filepath.Join(out, "function-runtime.tar"), "-o", file).CombinedOutput(); err != nil {
		t.Fatalf("crossplane xpkg build: %v\n%s", err, b)
	}
	if err := reg.Push(ctx, cli, file, "fleetplane/function-fleetplane", "v0.0.2-node"); err != nil {
		t.Fatal(err)
	}
	digest := pushedDigest(t, "fleetplane/function-fleetplane", "v0.0.2-node")

	fn := &pkgv1.Function{}
	if err := kube.Get(ctx, client.ObjectKey{Name: functionName}, fn); err != nil {
		t.Fatal(err)
	}
	fn.Spec.Package = reg.Ref("fleetplane/function-fleetplane", "v0.0.2-node")
	if err := kube.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
	support.Eventually(t, 3*time.Minute, "the old revision's pod gone and the new package's serving", func() (bool, string) {
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.InNamespace(controlplane.CrossplaneNamespace), client.MatchingLabels{pkgv1.LabelFunction: functionName}); err != nil {
			return false, err.Error()
		}
		var says []string
		newReady, oldThere := false, false
		for _, p := range pods.Items {
			oldThere = oldThere || p.UID == old.UID
			if len(p.Status.ContainerStatuses) > 0 {
				c := p.Status.ContainerStatuses[0]
				newReady = newReady || (c.Ready && strings.HasSuffix(c.ImageID, "@"+digest))
				says = append(says, fmt.Sprintf("%s %s ready=%t", p.Name, c.ImageID, c.Ready))
			}
		}
		return newReady && !oldThere, strings.Join(says, "; ")
	})
	// The new pod composes: a change to the Component is composed again.
	xr := &unstructured.Unstructured{}
	xr.SetAPIVersion("experiments.fleetplane.io/v1alpha1")
	xr.SetKind("Component")
	if err := kube.Get(ctx, client.ObjectKey{Name: "podinfo"}, xr); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(xr.Object, "after the upgrade", "spec", "description"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Update(ctx, xr); err != nil {
		t.Fatal(err)
	}
	support.Eventually(t, 2*time.Minute, "the changed Component composed by the new pod", func() (bool, string) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(xr.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKey{Name: "podinfo"}, got); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Synced" && m["status"] == "True" && m["observedGeneration"] == got.GetGeneration() {
				return true, ""
			}
		}
		return false, fmt.Sprintf("generation %d, conditions %v", got.GetGeneration(), conds)
	})
}

// pushedDigest is the digest of repo:tag in the registry.
func pushedDigest(t *testing.T, repo, tag string) string {
	t.Helper()
	ref, err := name.ParseReference(reg.Ref(repo, tag))
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(ref, remote.WithContext(t.Context()), remote.WithTransport(reg.Transport()))
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

const (
	functionName = "fleetplane-function-fleetplane"
	providerName = "fleetplane-provider-fleetplane"
)

// packagePod is the ready pod of package pkg's active revision.
func packagePod(t *testing.T, kube client.Client, pkg string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	support.Eventually(t, 2*time.Minute, "a ready pod of "+pkg, func() (bool, string) {
		pods := &corev1.PodList{}
		if err := kube.List(t.Context(), pods, client.InNamespace(controlplane.CrossplaneNamespace), client.HasLabels{pkgv1.LabelRevision}); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Labels[pkgv1.LabelFunction]+p.Labels[pkgv1.LabelProvider] != pkg {
				continue
			}
			if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
				pod = p
				return true, ""
			}
		}
		return false, podsSay(t.Context(), kube)
	})
	return pod
}

// apply applies a YAML file as the cluster admin, with kubectl.
func apply(t *testing.T, files ...string) {
	t.Helper()
	bin, err := controlplane.Tool(support.Root(), "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", cp.Kubeconfig, "apply"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	if out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// composes: a Component, whose Composition calls the function, is
// composed by the function's pod, which Crossplane's pod reaches through
// the function's Service by its cluster DNS name.
func composes(t *testing.T, kube client.Client) {
	t.Helper()
	cfg := filepath.Join(support.Root(), "package", "configuration")
	apply(t, filepath.Join(cfg, "xrds", "components.experiments.fleetplane.io.yaml"), filepath.Join(cfg, "compositions", "component.yaml"))
	xr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "experiments.fleetplane.io/v1alpha1", "kind": "Component",
		"metadata": map[string]any{"name": "podinfo"},
		"spec": map[string]any{"type": "app", "sources": []any{map[string]any{
			"repoURL": "https://stefanprodan.github.io/podinfo", "chart": "podinfo", "targetRevision": "6.9.2",
		}}},
	}}
	support.Eventually(t, 2*time.Minute, "the Component created (its XRD established)", func() (bool, string) {
		err := kube.Create(t.Context(), xr)
		return err == nil, fmt.Sprint(err)
	})
	support.Eventually(t, 2*time.Minute, "the Component composed by the function's pod", func() (bool, string) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(xr.GroupVersionKind())
		if err := kube.Get(t.Context(), client.ObjectKey{Name: "podinfo"}, got); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == expv1alpha1.ConditionComponent && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %v", conds)
	})
}

// providerReconciles: the provider's pod registers a cluster with Argo
// CD (reads a tenant's kubeconfig Secret, writes Argo CD's), with the
// rights Crossplane's RBAC manager and package/rbac give it and no
// others; killed with SIGKILL, its Deployment's next pod carries on
// where it stopped.
func providerReconciles(t *testing.T, kube client.Client) {
	t.Helper()
	ctx := t.Context()
	namespace(t, "team-a")
	namespace(t, "argocd")
	create := func(o client.Object) {
		t.Helper()
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "m.fleetplane.io/v1alpha1", "kind": "ClusterProviderConfig",
		// "default": it governs team-a, which has no fleetplane.io/policy
		// label, and the provider uses no other config for its resources.
		"metadata": map[string]any{"name": "default"},
		"spec": map[string]any{
			"credentials":       map[string]any{"source": "None"},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{corev1.LabelMetadataName: "team-a"}},
			"argocd":            map[string]any{"namespace": "argocd", "project": "experiments"},
			// reachesEmulator's Table: the emulator on the node's network.
			"kusto": map[string]any{"endpoints": []any{map[string]any{"endpoint": "http://*:*"}}},
		},
	}}
	support.Eventually(t, time.Minute, "the ClusterProviderConfig created (the provider's kinds active)", func() (bool, string) {
		err := kube.Create(ctx, pc)
		return err == nil, fmt.Sprint(err)
	})
	kubeconfig := func(token string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge-kubeconfig"}, Data: map[string][]byte{"kubeconfig": support.Kubeconfig("https://10.1.2.3", token)}}
	}
	create(kubeconfig("token-one"))
	create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argocd.m.fleetplane.io/v1alpha1", "kind": "ClusterRegistration",
		"metadata": map[string]any{"namespace": "team-a", "name": "edge"},
		"spec": map[string]any{
			"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "default"},
			"forProvider": map[string]any{
				"clusterName": "edge", "kubeconfigSecretRef": map[string]any{"name": "edge-kubeconfig", "key": "kubeconfig"},
			},
		},
	}})
	argoSecret := func(token string) {
		t.Helper()
		support.Eventually(t, 2*time.Minute, "Argo CD's cluster Secret with "+token, func() (bool, string) {
			s := &corev1.Secret{}
			if err := kube.Get(ctx, client.ObjectKey{Namespace: "argocd", Name: "cluster-edge"}, s); err != nil {
				return false, err.Error() + "; " + podsSay(ctx, kube)
			}
			return strings.Contains(string(s.Data["config"]), token), "another token"
		})
	}
	argoSecret("token-one")

	// SIGKILL, as the OOM killer ends a process: no handler runs. The
	// token rotates while the provider is down, and lands through the
	// restarted container. Then the pod itself goes, as with a node
	// drain, and the next pod carries on.
	pod := packagePod(t, kube, providerName)
	if err := cluster.NodeNamed(pod.Spec.NodeName).Kill(ctx, pod.Status.ContainerStatuses[0].ContainerID); err != nil {
		t.Fatal(err)
	}
	if err := kube.Update(ctx, kubeconfig("token-two")); err != nil {
		t.Fatal(err)
	}
	argoSecret("token-two")
	if p := packagePod(t, kube, providerName); p.UID != pod.UID || p.Status.ContainerStatuses[0].RestartCount == 0 {
		t.Errorf("pod %s restarted %d times, want the killed container restarted in it", p.Name, p.Status.ContainerStatuses[0].RestartCount)
	}
	if err := kube.Delete(ctx, &pod); err != nil {
		t.Fatal(err)
	}
	if err := kube.Update(ctx, kubeconfig("token-three")); err != nil {
		t.Fatal(err)
	}
	argoSecret("token-three")
	if p := packagePod(t, kube, providerName); p.UID == pod.UID {
		t.Errorf("pod %s still serves after it was deleted", p.Name)
	}
}

// podsSay is what the pods in Crossplane's namespace are doing.
func podsSay(ctx context.Context, kube client.Client) string {
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(controlplane.CrossplaneNamespace)); err != nil {
		return err.Error()
	}
	return controlplane.DescribePods(pods.Items)
}

// readObject reads a YAML file of one object.
func readObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return u
}

// reachesEmulator: a tenant's Table, without credentials, on a Kusto
// emulator listening on the node network's host address rather than
// loopback (as Kustainer in a pod would be): the provider's pod creates
// it there. Before --plain-http-networks reached azkustodata's trusted
// hosts, the SDK refused every plain-http host but loopback, so a
// provider in a pod could use no emulator at all.
func reachesEmulator(t *testing.T, kube client.Client, emulator *kustoserver.Server) {
	t.Helper()
	ctx := t.Context()
	table := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kusto.m.fleetplane.io/v1alpha1", "kind": "Table",
		"metadata": map[string]any{"namespace": "team-a", "name": "heartbeats"},
		"spec": map[string]any{
			"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "default"},
			"forProvider": map[string]any{"endpoint": emulator.URL, "database": "FleetDiscovery", "table": "Heartbeats", "columns": []any{
				map[string]any{"name": "Timestamp", "type": "datetime"}, map[string]any{"name": "ClusterEndpoint", "type": "string"},
			}},
		},
	}}
	if err := kube.Create(ctx, table); err != nil {
		t.Fatal(err)
	}
	support.Eventually(t, 2*time.Minute, "the Heartbeats table on the emulator at "+emulator.URL, func() (bool, string) {
		if _, ok := emulator.Tables("FleetDiscovery")["Heartbeats"]; ok {
			return true, ""
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(table.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKeyFromObject(table), got); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		return false, fmt.Sprintf("conditions %v", conds)
	})
}

// providerKubernetes: provider-kubernetes' package as the environment
// builds it (its module's metadata and CRDs, its runtime image from the
// binary tools.sh builds) runs as the pod the package manager makes of
// it, under a ServiceAccount its runtime config names, and its pod
// applies an Object with the identity injected there.
func providerKubernetes(t *testing.T, kube client.Client, cli string) {
	t.Helper()
	ctx := t.Context()
	const pkg, sa = "crossplane-contrib-provider-kubernetes", "provider-kubernetes"
	file, err := environment.BuildProviderKubernetes(support.Root(), cli, filepath.Join(dir, "provider-kubernetes"))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Push(ctx, cli, file, "crossplane-contrib/provider-kubernetes", "v1.0.0"); err != nil {
		t.Fatal(err)
	}
	digest := pushedDigest(t, "crossplane-contrib/provider-kubernetes", "v1.0.0")
	// As a platform team grants it: what the Objects it applies need,
	// here ConfigMaps, bound to the ServiceAccount its runtime config
	// names.
	for _, o := range []client.Object{
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "DeploymentRuntimeConfig",
			"metadata": map[string]any{"name": sa},
			"spec":     map[string]any{"serviceAccountTemplate": map[string]any{"metadata": map[string]any{"name": sa}}},
		}},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "provider-kubernetes-configmaps"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "provider-kubernetes-configmaps"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "provider-kubernetes-configmaps"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controlplane.CrossplaneNamespace, Name: sa}},
		},
	} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pr := &pkgv1.Provider{ObjectMeta: metav1.ObjectMeta{Name: pkg}}
	pr.Spec.Package = reg.Ref("crossplane-contrib/provider-kubernetes", "v1.0.0")
	pr.Spec.RuntimeConfigReference = &pkgv1.RuntimeConfigReference{Name: sa}
	if err := kube.Create(ctx, pr); err != nil {
		t.Fatal(err)
	}
	support.Eventually(t, 4*time.Minute, "provider-kubernetes' pod ready", func() (bool, string) {
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.InNamespace(controlplane.CrossplaneNamespace), client.MatchingLabels{pkgv1.LabelProvider: pkg}); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
				return true, ""
			}
		}
		return false, podsSay(ctx, kube)
	})
	p := packagePod(t, kube, pkg)
	if got := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(got, "@"+digest) {
		t.Errorf("provider-kubernetes' pod runs %s, want the pushed package %s", got, digest)
	}
	if p.Spec.ServiceAccountName != sa {
		t.Errorf("provider-kubernetes' pod runs as %q, want its runtime config's %s", p.Spec.ServiceAccountName, sa)
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"credentials": map[string]any{"source": "InjectedIdentity"}},
	}}
	support.Eventually(t, time.Minute, "provider-kubernetes' ClusterProviderConfig created (its kinds served)", func() (bool, string) {
		err := kube.Create(ctx, pc)
		return err == nil, fmt.Sprint(err)
	})
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
		"metadata": map[string]any{"namespace": "team-a", "name": "greeting"},
		"spec": map[string]any{
			"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "default"},
			"forProvider": map[string]any{"manifest": map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "team-a", "name": "greeting"},
				"data":     map[string]any{"hello": "from provider-kubernetes' pod"},
			}},
		},
	}}
	support.Eventually(t, time.Minute, "the Object created (its CRD established)", func() (bool, string) {
		err := kube.Create(ctx, obj)
		return err == nil, fmt.Sprint(err)
	})
	support.Eventually(t, 2*time.Minute, "the ConfigMap the Object applies", func() (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "greeting"}, cm); err != nil {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			_ = kube.Get(ctx, client.ObjectKeyFromObject(obj), got)
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			return false, fmt.Sprintf("%v; the Object's conditions %v", err, conds)
		}
		return cm.Data["hello"] == "from provider-kubernetes' pod", fmt.Sprint(cm.Data)
	})
}
