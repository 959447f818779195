package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/support"
	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

// pushVClusterImages builds hack/vcluster, which plays vcluster's control
// plane, and pushes it as the two images a vcluster target runs: the
// control plane's (the binary as its entrypoint, root as vcluster's
// image runs) and the Kubernetes binaries' (the binary as /bin/cp, the
// command the init container runs, beside a /kubernetes tree to copy).
func pushVClusterImages(t *testing.T) (controlPlane, kubernetes string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "vcluster")
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", bin, "./hack/vcluster")
	build.Dir, build.Env = support.Root(), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/vcluster: %v\n%s", err, out)
	}
	tree := filepath.Join(dir, "kubernetes")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "kube-apiserver"), []byte("stand-in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	controlPlane, _, err := env.Registry.PushImage(t.Context(), image.Image{Binary: bin, Path: "/vcluster", User: "0:0"}, "loft-sh/vcluster-oss", "0.30.0")
	if err != nil {
		t.Fatal(err)
	}
	kubernetes, _, err = env.Registry.PushImage(t.Context(), image.Image{Binary: bin, Path: "/bin/cp", Dirs: map[string]string{"/kubernetes": tree}}, "loft-sh/kubernetes", "v1.34.2")
	if err != nil {
		t.Fatal(err)
	}
	return controlPlane, kubernetes
}

// TestExperimentVCluster is a vcluster target's journey on the control
// plane's real nodes: the admin grants vcluster targets to one namespace
// with the images it trusts; the example Experiment there gets a virtual
// cluster in its own namespace whose control plane runs as a real pod (a
// stand-in for vcluster's image, under the ServiceAccount and binding
// Crossplane composed), which exports its kubeconfig; Argo CD gets the
// cluster registered at the virtual cluster's Service and the application
// goes there; the workflow validates; the exported credentials are the
// virtual cluster's own (its API answers them, and only them); and
// deleting the Experiment removes the application, then the registration,
// then the virtual cluster, whose kubeconfig Secret goes with it.
func TestExperimentVCluster(t *testing.T) {
	ctx := t.Context()
	applyComponents(t)
	workflowTemplate(t, "smoke-check", "Succeeded")
	controlPlane, kubernetes := pushVClusterImages(t)

	ns := namespace(t)
	policy := environment.DefaultProviderConfig()
	policy.Name = "vcluster-lab"
	// The chart's default resources request ephemeral storage, which
	// these nodes do not account (their kubelets run without local
	// storage capacity isolation): the admin's resources, as a platform
	// sizes its virtual clusters.
	policy.Spec.Experiments.VCluster = &v1alpha1.VClusterPolicy{Image: controlPlane, KubernetesImage: kubernetes, Resources: &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}}
	grantNamespace(t, ns, policy)

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := watchKinds(t, wctx, ns, [2]string{experimentAPI, "Experiment"}, [2]string{"apps/v1", "StatefulSet"},
		[2]string{"argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration"}, [2]string{"kubernetes.m.crossplane.io/v1alpha1", "Object"})

	xr := example(t, "experiment/vcluster-sandbox.yaml", ns)
	apply(t, xr)
	target := untilComplete(t, ns, xr.GetName(), func() string { return describeVCluster(ctx, ns) })
	name, _ := target["clusterName"].(string)
	server := "https://" + name + "." + ns + ".svc:443"
	if target["endpoint"] != server {
		t.Errorf("target endpoint %v, want the virtual cluster's Service %s", target["endpoint"], server)
	}
	if got := w.seen(); !strings.Contains(strings.Join(got, ","), "Provisioning") {
		t.Errorf("phases %v never showed the virtual cluster provisioning", got)
	}

	// The control plane ran as a pod of the StatefulSet, under the
	// composed ServiceAccount, from the policy's images.
	pods := &corev1.PodList{}
	if err := env.Kube.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "vcluster", "release": name}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("the virtual cluster's pods: %v (%v)", len(pods.Items), err)
	}
	pod := pods.Items[0]
	if pod.Spec.ServiceAccountName != "vc-"+name || pod.Spec.Containers[0].Image != controlPlane || pod.Spec.InitContainers[0].Image != kubernetes {
		t.Errorf("pod %s runs as %s with %s after %s", pod.Name, pod.Spec.ServiceAccountName, pod.Spec.Containers[0].Image, pod.Spec.InitContainers[0].Image)
	}

	// The kubeconfig it exported is registered with Argo CD, and holds
	// the virtual cluster's own credentials: its API answers them, at
	// the name the Service gives it, and refuses a client without them.
	kubeconfig := &corev1.Secret{}
	if err := env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vc-" + name}, kubeconfig); err != nil {
		t.Fatal(err)
	}
	if len(kubeconfig.OwnerReferences) != 1 || kubeconfig.OwnerReferences[0].Kind != "StatefulSet" {
		t.Errorf("kubeconfig Secret owners %v, want its StatefulSet", kubeconfig.OwnerReferences)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig.Data["config"])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != server {
		t.Errorf("exported kubeconfig names %s, want %s", cfg.Host, server)
	}
	// This machine reaches pods, not Service names: the pod's address,
	// verified as the Service's name.
	cfg.Host = "https://" + net.JoinHostPort(pod.Status.PodIP, "8443")
	cfg.ServerName = name + "." + ns + ".svc"
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := dc.ServerVersion(); err != nil || v.GitVersion == "" {
		t.Errorf("the virtual cluster's API with its exported credentials: %v, %v", v, err)
	}
	anonymous := *cfg
	anonymous.CertData, anonymous.KeyData = nil, nil
	if dc, err := discovery.NewDiscoveryClientForConfig(&anonymous); err == nil {
		if _, err := dc.ServerVersion(); err == nil {
			t.Error("the virtual cluster's API answered a client without its credentials")
		}
	}
	wantRegistered(t, server)

	// Teardown: the application, then the registration, then the virtual
	// cluster; its kubeconfig Secret goes with it.
	if err := env.Kube.Delete(ctx, xr); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the virtual cluster gone with the experiment", func() (bool, string) {
		left := []string{}
		for _, o := range []client.Object{&appsv1.StatefulSet{}, &corev1.Secret{}, &corev1.Service{}, &corev1.ServiceAccount{}} {
			key := client.ObjectKey{Namespace: ns, Name: name}
			switch o.(type) {
			case *corev1.Secret:
				key.Name = "vc-" + name
			case *corev1.ServiceAccount:
				key.Name = "vc-" + name
			}
			if err := env.Kube.Get(ctx, key, o); !kerrors.IsNotFound(err) {
				left = append(left, key.Name)
			}
		}
		return len(left) == 0 && get(t, experimentAPI, "Experiment", ns, xr.GetName()) == nil, strings.Join(left, ", ") + " " + describeVCluster(ctx, ns)
	})
	sts, _ := w.goneAt("StatefulSet/" + name)
	reg, app := w.goneKind("ClusterRegistration"), w.goneKind("Object")
	if reg.IsZero() || app.IsZero() || sts.IsZero() || !app.Before(reg) || !reg.Before(sts) {
		t.Errorf("teardown order: application %v, registration %v, StatefulSet %v; want in that order", app, reg, sts)
	}
}

// describeVCluster says where the virtual clusters of ns are, for a wait
// that times out.
func describeVCluster(ctx context.Context, ns string) string {
	pods := &corev1.PodList{}
	if err := env.Kube.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "vcluster"}); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		b.WriteString("[pod " + p.Name + " " + string(p.Status.Phase))
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				b.WriteString(" " + string(c.Type) + "=" + string(c.Status) + " " + c.Reason + " " + c.Message)
			}
		}
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			b.WriteString(" " + c.Name)
			if c.State.Waiting != nil {
				b.WriteString(" waiting " + c.State.Waiting.Reason + " " + c.State.Waiting.Message)
			}
			if l := c.LastTerminationState.Terminated; l != nil {
				b.WriteString(" last " + l.Reason + " " + l.Message)
			}
		}
		b.WriteString("]")
	}
	return b.String()
}
