package experiment

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

func vclusterExperiment() *v1alpha1.Experiment {
	return &v1alpha1.Experiment{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ExperimentKind},
		ObjectMeta: metav1.ObjectMeta{Name: "sandbox", Namespace: "lab", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))},
		Spec: v1alpha1.ExperimentSpec{
			Targets:  []v1alpha1.Target{{Name: "vc", Cluster: v1alpha1.ClusterSpec{Type: v1alpha1.ClusterVCluster}, Components: []v1alpha1.ComponentRef{{App: "envoy-gateway"}}}},
			Workflow: v1alpha1.WorkflowSpec{Template: "t"},
		},
	}
}

// kube is an observed Kubernetes object Crossplane composed: it exists.
func kube(apiVersion, kind, name string) *ct.Resource {
	return ct.Observed(apiVersion, kind, name).Set("metadata.name", name)
}

// runningStatefulSet is an observed StatefulSet whose controller has seen
// its spec and whose one pod is ready.
func runningStatefulSet(name string, ready int) *ct.Resource {
	return kube("apps/v1", "StatefulSet", name).
		Set("metadata.generation", 1).Set("spec.replicas", 1).
		Set("status.observedGeneration", 1).Set("status.readyReplicas", ready)
}

// TestVCluster: a vcluster target is a virtual cluster in the Experiment's
// namespace, made in order (its account, binding, config and Services,
// then the StatefulSet running the policy's images), registered with
// Argo CD from the kubeconfig vcluster exports once it is ready, and the
// target's application goes to it.
func TestVCluster(t *testing.T) {
	xr := vclusterExperiment()
	name := renderer{xr: xr}.vclusterName("vc")
	server := "https://" + name + ".lab.svc:443"
	objects := []string{"vcluster-account-vc", "vcluster-binding-vc", "vcluster-config-vc", "vcluster-service-vc", "vcluster-headless-vc"}

	// First, what the StatefulSet needs; nothing else of the target.
	r := run(t, ct.Call{XR: xr, Input: conventionInput, Required: components()})
	r.WantNames(append([]string{"expiry"}, objects...)...)
	for _, o := range objects {
		r.Want(o, "metadata.namespace", "lab")
	}
	r.Want("vcluster-account-vc", "metadata.name", "vc-"+name)
	r.Want("vcluster-binding-vc", "roleRef", map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": VClusterRole})
	r.Want("vcluster-binding-vc", "subjects", []any{map[string]any{"kind": "ServiceAccount", "name": "vc-" + name, "namespace": "lab"}})
	r.Want("vcluster-service-vc", "spec.selector", map[string]any{"app": "vcluster", "release": name})
	r.Want("", "status.targets.0.phase", "Provisioning")
	r.Want("", "status.targets.0.clusterName", name)
	r.Want("", "status.targets.0.endpoint", server)
	r.Want("", "status.targets.0.message", "virtual cluster "+name+" is starting (StatefulSet lab/"+name+")")
	config := r.Value("vcluster-config-vc", "data").(map[string]any)["config.yaml"].(string)
	var values map[string]any
	if err := yaml.Unmarshal([]byte(unbase64(t, config)), &values); err != nil {
		t.Fatal(err)
	}
	if got := values["exportKubeConfig"]; !equalJSON(got, map[string]any{"server": server}) {
		t.Errorf("exportKubeConfig = %v, want the Service %s", got, server)
	}

	// Then the StatefulSet, with the policy's images.
	observed := map[string]*ct.Resource{
		"vcluster-account-vc":  kube("v1", "ServiceAccount", "vc-"+name),
		"vcluster-binding-vc":  kube("rbac.authorization.k8s.io/v1", "RoleBinding", "vc-"+name),
		"vcluster-config-vc":   kube("v1", "Secret", "vc-config-"+name),
		"vcluster-service-vc":  kube("v1", "Service", name),
		"vcluster-headless-vc": kube("v1", "Service", name+"-headless"),
	}
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.WantNames(append([]string{"expiry", "cluster-vc"}, objects...)...)
	r.Want("cluster-vc", "spec.template.spec.containers.0.image", "ghcr.io/loft-sh/vcluster-oss:0.30.0")
	r.Want("cluster-vc", "spec.template.spec.initContainers.0.image", "ghcr.io/loft-sh/kubernetes:v1.34.2")
	r.Want("cluster-vc", "spec.template.spec.serviceAccountName", "vc-"+name)
	r.Want("cluster-vc", "spec.serviceName", name+"-headless")

	// Not ready: not registered yet.
	observed["cluster-vc"] = runningStatefulSet(name, 0)
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	if r.Has("registration-vc") {
		t.Error("registered before the virtual cluster runs")
	}

	// Ready: registered from vcluster's kubeconfig Secret.
	observed["cluster-vc"] = runningStatefulSet(name, 1)
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.Want("registration-vc", "spec.forProvider.kubeconfigSecretRef", map[string]any{"name": "vc-" + name, "key": "config"})
	r.Want("registration-vc", "spec.forProvider.execCredential", nil)
	r.Want("", "status.targets.0.phase", "Registering")

	// Registered: the application goes to the virtual cluster, into a
	// namespace of the experiment's name, which Argo CD creates there.
	observed["registration-vc"] = registration().Ready()
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.Want("application-vc", "spec.forProvider.manifest.spec.destination", map[string]any{"server": server, "namespace": "sandbox"})
	r.Want("", "status.targets.0.phase", "Deploying")

	// The registration goes before the virtual cluster, the application
	// before the registration.
	observed["application-vc"] = application("a").Ready()
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	for _, u := range []string{"usage-cluster-vc-by-registration-vc", "usage-registration-vc-by-application-vc"} {
		if !r.Has(u) {
			t.Errorf("no %s: %v", u, r.Names())
		}
	}
}

// TestVClusterPolicy: the images and resources are the policy's; without
// spec.experiments.vcluster nothing is composed.
func TestVClusterPolicy(t *testing.T) {
	p := ct.Permissive()
	p.Spec.Experiments.VCluster = &fpv1alpha1.VClusterPolicy{Image: "mirror.example.com/vcluster:1", KubernetesImage: "mirror.example.com/kubernetes:1"}
	observed := map[string]*ct.Resource{}
	for _, o := range []string{"vcluster-account-vc", "vcluster-binding-vc", "vcluster-config-vc", "vcluster-service-vc", "vcluster-headless-vc"} {
		observed[o] = kube("v1", "ConfigMap", o)
	}
	r := run(t, ct.Call{XR: vclusterExperiment(), Input: conventionInput, Required: components(), Policy: p, Observed: observed})
	r.Want("cluster-vc", "spec.template.spec.containers.0.image", "mirror.example.com/vcluster:1")
	r.Want("cluster-vc", "spec.template.spec.initContainers.0.image", "mirror.example.com/kubernetes:1")
	r.Want("cluster-vc", "spec.template.spec.containers.0.resources.limits.memory", "2Gi")

	p.Spec.Experiments.VCluster = nil
	r = run(t, ct.Call{XR: vclusterExperiment(), Input: conventionInput, Required: components(), Policy: p})
	r.WantNames()
	r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "NotGranted", "spec.experiments.vcluster")
}

// TestVClusterNames: every name vcluster derives from the release name
// stays a DNS label, whatever the Experiment and target are called, and
// two experiments never share one.
func TestVClusterNames(t *testing.T) {
	seen := map[string]string{}
	for _, c := range []struct{ ns, xr, target string }{
		{"lab", "sandbox", "vc"},
		{"lab", "a.b", "vc"},
		{"lab", "a-b", "vc"},
		{"other", "sandbox", "vc"},
		{"lab", strings.Repeat("long", 15), strings.Repeat("t", 20)},
		{"lab", "1st", "vc"},
	} {
		r := renderer{xr: &v1alpha1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: c.xr}}}
		n := r.vclusterName(c.target)
		for _, derived := range []string{n, "vc-" + n, "vc-config-" + n, n + "-headless", n + "-0"} {
			if len(derived) > 63 || !dnsLabel(derived) {
				t.Errorf("%v: %q is not a DNS label", c, derived)
			}
		}
		if n[0] < 'a' || n[0] > 'z' {
			t.Errorf("%v: %q does not start with a letter", c, n)
		}
		key := c.ns + "/" + c.xr + "/" + c.target
		if other, ok := seen[n]; ok {
			t.Errorf("%s and %s share %s", key, other, n)
		}
		seen[n] = key
	}
}

func dnsLabel(s string) bool {
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0 && i < len(s)-1
		if !ok {
			return false
		}
	}
	return s != ""
}

func unbase64(t *testing.T, b64 string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("not base64: %v", err)
	}
	return string(b)
}

// equalJSON compares two values as JSON would see them.
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestVClusterShippedRoles: the ClusterRole a vcluster target binds ships
// in package/rbac/vcluster-roles.yaml, and Crossplane holds bind on it and
// on nothing else (crossplane-vcluster.yaml), never the rules it grants.
func TestVClusterShippedRoles(t *testing.T) {
	read := func(f string) map[string]any {
		b, err := os.ReadFile(filepath.Join("..", "..", "package", "rbac", f))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		return m
	}
	if name := read("vcluster-roles.yaml")["metadata"].(map[string]any)["name"]; name != VClusterRole {
		t.Errorf("vcluster-roles.yaml ships %v, the function binds %s", name, VClusterRole)
	}
	var bindable []any
	for _, r := range read("crossplane-vcluster.yaml")["rules"].([]any) {
		rule := r.(map[string]any)
		res, _ := rule["resources"].([]any)
		switch {
		case fmt.Sprint(rule["verbs"]) == "[bind]":
			bindable = append(bindable, rule["resourceNames"].([]any)...)
		case slices.Contains(res, any("clusterroles")) || slices.Contains(res, any("roles")):
			t.Errorf("Crossplane holds more than bind on roles: %v", rule)
		}
	}
	if !equalJSON(bindable, []any{VClusterRole}) {
		t.Errorf("Crossplane may bind %v, a vcluster target binds %s", bindable, VClusterRole)
	}
}
