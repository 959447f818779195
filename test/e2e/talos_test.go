package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/environment"
)

// TestExperimentTalos is a talos target's journey: the admin grants talos
// targets to one namespace, on Cluster API's Docker infrastructure (CAPD)
// at pinned versions; the example Experiment there gets a Cluster API
// cluster (the real CRDs of Cluster API, its Talos providers and CAPD,
// with a stand-in for their controllers) whose objects Crossplane writes
// under package/rbac/crossplane-talos.yaml; its workers wait for the
// control plane; Argo CD gets the cluster from the kubeconfig Cluster API
// wrote, at its control plane endpoint; the workflow validates; and
// deleting the Experiment removes the application, the registration, the
// workers and then the cluster.
func TestExperimentTalos(t *testing.T) {
	ctx := t.Context()
	applyComponents(t)
	workflowTemplate(t, "smoke-check", "Succeeded")

	ns := namespace(t)
	policy := environment.DefaultProviderConfig()
	policy.Name = "talos-lab"
	policy.Spec.Experiments.Talos = &v1alpha1.TalosPolicy{
		KubernetesVersion: "v1.34.2", TalosVersion: "v1.11",
		Infrastructure: v1alpha1.TalosInfrastructure{
			APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", ClusterKind: "DockerCluster", MachineTemplateKind: "DockerMachineTemplate",
			MachineSpec: &runtime.RawExtension{Raw: []byte(`{"customImage":"ghcr.io/siderolabs/talos:v1.11.5"}`)},
		},
	}
	grantNamespace(t, ns, policy)

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := watchKinds(t, wctx, ns, [2]string{experimentAPI, "Experiment"}, [2]string{"cluster.x-k8s.io/v1beta2", "Cluster"}, [2]string{"cluster.x-k8s.io/v1beta2", "MachineDeployment"},
		[2]string{"argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration"}, [2]string{"kubernetes.m.crossplane.io/v1alpha1", "Object"})

	xr := example(t, "experiment/talos-edge.yaml", ns)
	apply(t, xr)
	target := untilComplete(t, ns, xr.GetName(), func() string { return describeTalos(t, ns) })
	if got := w.seen(); !strings.Contains(strings.Join(got, ","), "Provisioning") {
		t.Errorf("phases %v never showed the cluster provisioning", got)
	}

	// What Crossplane wrote: the policy's infrastructure and versions,
	// the example's two workers.
	name, _ := target["clusterName"].(string)
	c := composedByResourceName(t, ns, xr.GetName())
	for res, want := range map[string]string{
		"talos-machines-edge": "DockerMachineTemplate", "talos-workerconfig-edge": "TalosConfigTemplate", "cluster-edge": "Cluster", "nodepool-edge": "MachineDeployment",
	} {
		if c[res] == nil || c[res].GetKind() != want || !strings.HasPrefix(c[res].GetName(), name) {
			t.Errorf("%s: %v, want a %s of cluster %s", res, describe(c[res]), want, name)
		}
	}
	// The infrastructure's cluster and the control plane came through
	// provider-kubernetes Objects, and Cluster API's Cluster controls
	// them.
	for res, want := range map[string]struct{ apiVersion, kind, name string }{
		"talos-infrastructure-edge": {"infrastructure.cluster.x-k8s.io/v1beta2", "DockerCluster", name},
		"talos-controlplane-edge":   {"controlplane.cluster.x-k8s.io/v1alpha3", "TalosControlPlane", name + "-cp"},
	} {
		if c[res] == nil || c[res].GetKind() != "Object" {
			t.Errorf("%s: %v, want an Object", res, describe(c[res]))
			continue
		}
		o := get(t, want.apiVersion, want.kind, ns, want.name)
		if o == nil {
			t.Errorf("%s: no %s %s", res, want.kind, want.name)
			continue
		}
		owners := o.GetOwnerReferences()
		if len(owners) != 1 || owners[0].Kind != "Cluster" || owners[0].Name != name || owners[0].Controller == nil || !*owners[0].Controller {
			t.Errorf("%s %s owners %v, want Cluster %s alone, as controller", want.kind, want.name, owners, name)
		}
	}
	if img, _, _ := unstructured.NestedString(c["talos-machines-edge"].Object, "spec", "template", "spec", "customImage"); img != "ghcr.io/siderolabs/talos:v1.11.5" {
		t.Errorf("machine template image %q, want the policy's", img)
	}
	if r, _, _ := unstructured.NestedInt64(c["nodepool-edge"].Object, "spec", "replicas"); r != 2 {
		t.Errorf("%d workers, want the example's 2", r)
	}

	// Argo CD has the cluster at its control plane endpoint, from the
	// kubeconfig Cluster API wrote.
	host, _, _ := unstructured.NestedString(c["cluster-edge"].Object, "spec", "controlPlaneEndpoint", "host")
	server := "https://" + host + ":6443"
	if host == "" || target["endpoint"] != server {
		t.Errorf("target endpoint %v, want the Cluster's control plane endpoint %s", target["endpoint"], server)
	}
	kubeconfig := &corev1.Secret{}
	if err := env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-kubeconfig"}, kubeconfig); err != nil {
		t.Fatal(err)
	}
	if cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig.Data["value"]); err != nil || cfg.Host != server {
		t.Errorf("Cluster API's kubeconfig names %v (%v), want %s", cfg, err, server)
	}
	wantRegistered(t, server)

	// Teardown: the application, the registration, the workers, then the
	// cluster, whose kubeconfig goes with it, then the Objects that
	// delivered its infrastructure and control plane.
	objects := map[string]string{}
	for _, res := range []string{"application-edge", "talos-infrastructure-edge", "talos-controlplane-edge"} {
		if c[res] != nil {
			objects[res] = "Object/" + c[res].GetName()
		}
	}
	// The Usages that order the teardown are composed once both of their
	// sides exist, a composition after the registration: delete once they
	// hold, as one reading crossplane beta trace would see them.
	eventually(t, 2*time.Minute, "the teardown's Usages in force", func() (bool, string) {
		c := composedByResourceName(t, ns, xr.GetName())
		var waiting []string
		for _, u := range []string{"usage-cluster-edge-by-registration-edge", "usage-cluster-edge-by-nodepool-edge", "usage-registration-edge-by-application-edge",
			"usage-talos-infrastructure-edge-by-cluster-edge", "usage-talos-controlplane-edge-by-cluster-edge"} {
			if c[u] == nil {
				waiting = append(waiting, u+" (not composed)")
			} else if s, _, _ := condition(c[u], "Ready"); s != "True" {
				waiting = append(waiting, u+" (not Ready)")
			}
		}
		return len(waiting) == 0, strings.Join(waiting, ", ")
	})
	deleted := time.Now()
	if err := env.Kube.Delete(ctx, xr); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the talos cluster gone with the experiment", func() (bool, string) {
		left := composedByResourceName(t, ns, xr.GetName())
		err := env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-kubeconfig"}, &corev1.Secret{})
		return len(left) == 0 && kerrors.IsNotFound(err) && get(t, experimentAPI, "Experiment", ns, xr.GetName()) == nil,
			fmt.Sprintf("left %v, kubeconfig Secret: %v", keysOf(left), err)
	})
	app, _ := w.goneAt(objects["application-edge"])
	infra, _ := w.goneAt(objects["talos-infrastructure-edge"])
	cp, _ := w.goneAt(objects["talos-controlplane-edge"])
	reg := w.goneKind("ClusterRegistration")
	workers, _ := w.goneAt("MachineDeployment/" + name + "-workers")
	cluster, _ := w.goneAt("Cluster/" + name)
	for _, at := range []time.Time{app, infra, cp, reg, workers, cluster} {
		if at.IsZero() {
			t.Fatalf("teardown not seen whole: application %v, registration %v, workers %v, cluster %v, infrastructure %v, control plane %v", app, reg, workers, cluster, infra, cp)
		}
	}
	since := func(at time.Time) time.Duration { return at.Sub(deleted).Round(100 * time.Millisecond) }
	t.Logf("gone after the Experiment's deletion: application %s, workers %s, registration %s, cluster %s, infrastructure %s, control plane %s",
		since(app), since(workers), since(reg), since(cluster), since(infra), since(cp))
	if !app.Before(reg) || !reg.Before(cluster) || !workers.Before(cluster) || !cluster.Before(infra) || !cluster.Before(cp) {
		t.Errorf("teardown: application %v, registration %v, workers %v, cluster %v, infrastructure %v, control plane %v; want the application before the registration, both and the workers before the cluster, the cluster before its infrastructure and control plane",
			app, reg, workers, cluster, infra, cp)
	}
}

// describeTalos says where the talos clusters of ns are, for a wait that
// times out.
func describeTalos(t *testing.T, ns string) string {
	t.Helper()
	var b strings.Builder
	for _, k := range []struct{ api, kind string }{{"cluster.x-k8s.io/v1beta2", "Cluster"}, {"cluster.x-k8s.io/v1beta2", "MachineDeployment"}} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(k.api)
		l.SetKind(k.kind + "List")
		if err := env.Kube.List(t.Context(), l, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		for _, o := range l.Items {
			st, _ := json.Marshal(o.Object["status"])
			fmt.Fprintf(&b, "[%s %s %s]", k.kind, o.GetName(), st)
		}
	}
	return b.String()
}

func describe(o *unstructured.Unstructured) string {
	if o == nil {
		return "none"
	}
	return o.GetKind() + " " + o.GetName()
}
