package experiment

import (
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/internal/observe"
)

func talosExperiment(nodes int32) *v1alpha1.Experiment {
	return &v1alpha1.Experiment{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ExperimentKind},
		ObjectMeta: metav1.ObjectMeta{Name: "metal", Namespace: "lab", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))},
		Spec: v1alpha1.ExperimentSpec{
			Targets:  []v1alpha1.Target{{Name: "edge", Cluster: v1alpha1.ClusterSpec{Type: v1alpha1.ClusterTalos, NodeCount: nodes}, Components: []v1alpha1.ComponentRef{{App: "envoy-gateway"}}}},
			Workflow: v1alpha1.WorkflowSpec{Template: "t"},
		},
	}
}

// capiCluster is an observed Cluster API Cluster: its endpoint once the
// infrastructure set it, initialized once its control plane is.
func observedCAPICluster(name, host string, initialized bool) *ct.Resource {
	r := kube("cluster.x-k8s.io/v1beta2", "Cluster", name)
	if host != "" {
		r = r.Set("spec.controlPlaneEndpoint.host", host).Set("spec.controlPlaneEndpoint.port", 6443)
	}
	return r.Set("status.initialization.infrastructureProvisioned", host != "").
		Set("status.initialization.controlPlaneInitialized", initialized)
}

func observedWorkers(name string, replicas, ready int) *ct.Resource {
	return kube("cluster.x-k8s.io/v1beta2", "MachineDeployment", name+"-workers").
		Set("metadata.generation", 1).Set("spec.replicas", replicas).
		Set("status.observedGeneration", 1).Set("status.readyReplicas", ready)
}

// TestTalos: a talos target is a Cluster API cluster in the Experiment's
// namespace: the infrastructure's cluster and machine template from the
// policy, a TalosControlPlane and the Cluster at once; the workers once
// the control plane is initialized; the registration from Cluster API's
// kubeconfig Secret once the endpoint is known; the application once
// the workers are ready and Argo CD has the cluster.
func TestTalos(t *testing.T) {
	xr := talosExperiment(2)
	name := renderer{xr: xr}.talosName("edge")
	cluster := []string{"talos-infrastructure-edge", "talos-machines-edge", "talos-controlplane-edge", "cluster-edge", "talos-workerconfig-edge"}

	// First the cluster, whole; no workers before its control plane.
	r := run(t, ct.Call{XR: xr, Input: conventionInput, Required: components()})
	r.WantNames(append([]string{"expiry"}, cluster...)...)
	// Cluster API makes the Cluster the controller of the infrastructure's
	// cluster and of the control plane: those two are delivered by
	// provider-kubernetes Objects, which may only create them.
	const infra, cp = "talos-infrastructure-edge", "talos-controlplane-edge"
	for _, o := range []string{infra, cp} {
		r.Want(o, "kind", "Object")
		r.Want(o, "spec.managementPolicies", []any{"Observe", "Create"})
	}
	m := func(path string) string { return "spec.forProvider.manifest." + path }
	for _, o := range cluster {
		path := "metadata"
		if o == infra || o == cp {
			path = m(path)
		}
		r.Want(o, path+".namespace", "lab")
		if l := r.Value(o, path+".labels").(map[string]any); l["cluster.x-k8s.io/cluster-name"] != name {
			t.Errorf("%s is not labelled with its cluster: %v", o, l)
		}
	}
	r.Want(infra, m("apiVersion"), "infrastructure.cluster.x-k8s.io/v1beta1")
	r.Want(infra, m("kind"), "DockerCluster")
	r.Want(infra, m("metadata.name"), name)
	r.Want(infra, "spec.readiness.celQuery", infrastructureProvisioned)
	r.Want("talos-machines-edge", "kind", "DockerMachineTemplate")
	r.Want("talos-machines-edge", "metadata.name", name+"-machines")
	r.Want(cp, m("kind"), "TalosControlPlane")
	r.Want(cp, m("spec.version"), "v1.34.2")
	r.Want(cp, m("spec.replicas"), int64(1))
	r.Want(cp, m("spec.infrastructureTemplate"), map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": name + "-machines", "namespace": "lab",
	})
	r.Want(cp, m("spec.controlPlaneConfig.controlplane"), map[string]any{"generateType": "controlplane", "talosVersion": "v1.11"})
	r.Want(cp, "spec.readiness.celQuery", controlPlaneReady)
	r.Want("cluster-edge", "apiVersion", "cluster.x-k8s.io/v1beta2")
	r.Want("cluster-edge", "spec.controlPlaneRef", map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "TalosControlPlane", "name": name + "-cp"})
	r.Want("cluster-edge", "spec.infrastructureRef", map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": name})
	r.Want("talos-workerconfig-edge", "spec.template.spec", map[string]any{"generateType": "worker", "talosVersion": "v1.11"})
	r.Want("", "status.targets.0.phase", "Provisioning")
	r.Want("", "status.targets.0.clusterName", name)
	r.Want("", "status.targets.0.message", "Cluster API is provisioning talos cluster "+name+"'s control plane (Cluster lab/"+name+")")

	observed := map[string]*ct.Resource{
		"talos-infrastructure-edge": createdObject(name).Ready(),
		"talos-machines-edge":       kube("infrastructure.cluster.x-k8s.io/v1beta1", "DockerMachineTemplate", name+"-machines"),
		"talos-controlplane-edge":   createdObject(name + "-cp").Ready(),
		"talos-workerconfig-edge":   kube("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", name+"-workers"),
		"cluster-edge":              observedCAPICluster(name, "", false),
	}

	// The endpoint known, the control plane not initialized: Argo CD may
	// be told where the cluster is, but no workers yet.
	observed["cluster-edge"] = observedCAPICluster(name, "10.0.0.5", false)
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	// Created here: the Objects may now update what they delivered.
	for _, o := range []string{infra, cp} {
		if r.Value(o, "spec.managementPolicies") != nil {
			t.Errorf("%s is still limited to Observe and Create once it created its object", o)
		}
	}
	if r.Has("nodepool-edge") || r.Has("registration-edge") {
		t.Errorf("workers or registration before the control plane is initialized: %v", r.Names())
	}
	r.Want("", "status.targets.0.endpoint", "https://10.0.0.5:6443")

	// Initialized: the workers, nodeCount of them, and the registration
	// from the kubeconfig Cluster API wrote.
	observed["cluster-edge"] = observedCAPICluster(name, "10.0.0.5", true)
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.Want("nodepool-edge", "kind", "MachineDeployment")
	r.Want("nodepool-edge", "spec.replicas", int64(2))
	r.Want("nodepool-edge", "spec.clusterName", name)
	r.Want("nodepool-edge", "spec.template.spec.version", "v1.34.2")
	r.Want("nodepool-edge", "spec.template.spec.bootstrap.configRef", map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "TalosConfigTemplate", "name": name + "-workers"})
	r.Want("nodepool-edge", "spec.template.spec.infrastructureRef", map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": name + "-machines"})
	r.Want("nodepool-edge", "spec.selector.matchLabels", r.Value("nodepool-edge", "spec.template.metadata.labels"))
	r.Want("registration-edge", "spec.forProvider.clusterName", name)
	r.Want("registration-edge", "spec.forProvider.kubeconfigSecretRef", map[string]any{"name": name + "-kubeconfig", "key": "value"})
	r.Want("registration-edge", "spec.forProvider.execCredential", nil)
	r.Want("", "status.targets.0.message", "the workers of talos cluster "+name+" are starting (MachineDeployment lab/"+name+"-workers)")

	// Workers partly ready, then registered: no application until both.
	observed["nodepool-edge"] = observedWorkers(name, 2, 1)
	observed["registration-edge"] = registration().Ready()
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	if r.Has("application-edge") {
		t.Error("the application went to a cluster whose workers are not ready")
	}
	observed["nodepool-edge"] = observedWorkers(name, 2, 2)
	delete(observed, "registration-edge")
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.Want("", "status.targets.0.phase", "Registering")
	r.Want("", "status.targets.0.message", "registering talos cluster "+name+" with Argo CD (kubeconfig Secret lab/"+name+"-kubeconfig)")

	observed["registration-edge"] = registration().Ready()
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.Want("application-edge", "spec.forProvider.manifest.spec.destination.server", "https://10.0.0.5:6443")
	r.Want("", "status.targets.0.phase", "Deploying")

	// Argo CD forgets the cluster before it goes; the workers go first.
	observed["application-edge"] = application("a").Ready()
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	for _, u := range []string{"usage-cluster-edge-by-nodepool-edge", "usage-cluster-edge-by-registration-edge", "usage-registration-edge-by-application-edge",
		"usage-talos-infrastructure-edge-by-cluster-edge", "usage-talos-controlplane-edge-by-cluster-edge"} {
		if !r.Has(u) {
			t.Errorf("no %s: %v", u, r.Names())
		}
	}
}

// TestTalosPolicy: the infrastructure's specs, the versions and the
// control plane's size are the policy's; without spec.experiments.talos
// nothing is composed.
func TestTalosPolicy(t *testing.T) {
	p := ct.Permissive()
	tp := p.Spec.Experiments.Talos
	tp.KubernetesVersion, tp.TalosVersion, tp.ControlPlaneReplicas = "v1.33.1", "v1.10.6", 3
	tp.Infrastructure.APIVersion = "infrastructure.cluster.x-k8s.io/v1beta2"
	tp.Infrastructure.ClusterKind, tp.Infrastructure.MachineTemplateKind = "AWSCluster", "AWSMachineTemplate"
	tp.Infrastructure.ClusterSpec = &runtime.RawExtension{Raw: []byte(`{"region":"eu-west-1"}`)}
	tp.Infrastructure.MachineSpec = &runtime.RawExtension{Raw: []byte(`{"instanceType":"m5.large","ami":{"id":"ami-talos"}}`)}
	r := run(t, ct.Call{XR: talosExperiment(0), Input: conventionInput, Required: components(), Policy: p})
	r.Want("talos-infrastructure-edge", "spec.forProvider.manifest.apiVersion", "infrastructure.cluster.x-k8s.io/v1beta2")
	r.Want("talos-infrastructure-edge", "spec.forProvider.manifest.kind", "AWSCluster")
	r.Want("talos-infrastructure-edge", "spec.forProvider.manifest.spec", map[string]any{"region": "eu-west-1"})
	r.Want("talos-machines-edge", "spec.template.spec", map[string]any{"instanceType": "m5.large", "ami": map[string]any{"id": "ami-talos"}})
	r.Want("talos-controlplane-edge", "spec.forProvider.manifest.spec.replicas", int64(3))
	r.Want("talos-controlplane-edge", "spec.forProvider.manifest.spec.version", "v1.33.1")
	r.Want("talos-workerconfig-edge", "spec.template.spec.talosVersion", "v1.10.6")

	// One worker when nodeCount is unset.
	name := renderer{xr: talosExperiment(0)}.talosName("edge")
	observed := map[string]*ct.Resource{"cluster-edge": observedCAPICluster(name, "h.example.com", true),
		"talos-workerconfig-edge": kube("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", name+"-workers")}
	r = run(t, ct.Call{XR: talosExperiment(0), Input: conventionInput, Required: components(), Policy: p, Observed: observed})
	r.Want("nodepool-edge", "spec.replicas", int64(1))

	p.Spec.Experiments.Talos = nil
	r = run(t, ct.Call{XR: talosExperiment(0), Input: conventionInput, Required: components(), Policy: p})
	r.WantNames()
	r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "NotGranted", "spec.experiments.talos")
}

// createdObject is an observed provider-kubernetes Object that created
// the object it delivers.
func createdObject(name string) *ct.Resource {
	return application(name).Annotate(observe.AnnotationCreateSucceeded, "2026-11-20T08:00:00Z")
}

// TestTalosNeverAdopts: an infrastructure cluster or control plane of the
// target's name that existed before (the Object found it rather than
// created it) fails the target, names the object, and nothing more is
// composed for it; the Object stays limited to Observe and Create, so
// the object is neither changed nor deleted.
func TestTalosNeverAdopts(t *testing.T) {
	xr := talosExperiment(1)
	name := renderer{xr: xr}.talosName("edge")
	for res, want := range map[string]string{
		"talos-infrastructure-edge": "DockerCluster lab/" + name + " existed before this Experiment",
		"talos-controlplane-edge":   "TalosControlPlane lab/" + name + "-cp existed before this Experiment",
	} {
		found := application(res).Set("spec.managementPolicies", []any{"Observe", "Create"}).Set("status.atProvider.manifest", map[string]any{"kind": "Someone's"})
		observed := map[string]*ct.Resource{res: found}
		r := run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
		r.Want("", "status.targets.0.phase", "Failed")
		if msg, _ := r.Value("", "status.targets.0.message").(string); !strings.Contains(msg, want) {
			t.Errorf("%s: message %q, want %q", res, msg, want)
		}
		if r.Has("nodepool-edge") || r.Has("application-edge") || r.Has("registration-edge") {
			t.Errorf("%s: composed on after the target failed: %v", res, r.Names())
		}
		// Kept as it was: still Observe and Create only.
		r.Want(res, "spec.managementPolicies", []any{"Observe", "Create"})
	}
}

// TestCAPIEndpoint: the server Argo CD is told is the Cluster's control
// plane endpoint, and nothing when the endpoint is missing or not a host.
func TestCAPIEndpoint(t *testing.T) {
	for _, c := range []struct {
		host string
		port int
		want string
	}{
		{"10.0.0.5", 6443, "https://10.0.0.5:6443"},
		{"api.edge.example.com", 443, "https://api.edge.example.com:443"},
		{"fd00::5", 6443, "https://[fd00::5]:6443"},
		{"", 6443, ""},
		{"10.0.0.5", 0, ""},
		{"10.0.0.5", 70000, ""},
		{"evil.example.com/path", 443, ""},
		{"user@evil.example.com", 443, ""},
		{strings.Repeat("a", 254), 443, ""},
	} {
		o := kube("cluster.x-k8s.io/v1beta2", "Cluster", "c").Set("spec.controlPlaneEndpoint.host", c.host).Set("spec.controlPlaneEndpoint.port", c.port)
		if got := capiEndpoint(&composed.Unstructured{Unstructured: unstructured.Unstructured{Object: o.Object()}}); got != c.want {
			t.Errorf("%s:%d: %q, want %q", c.host, c.port, got, c.want)
		}
	}
	if got := capiEndpoint(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
}
