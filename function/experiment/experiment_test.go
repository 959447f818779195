package experiment

import (
	"encoding/json"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// gatewayTutorial is the seed's experiment: an app on GKE and a load
// generator on the hub that depends on it.
func gatewayTutorial() *v1alpha1.Experiment {
	return &v1alpha1.Experiment{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ExperimentKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: "gateway-tutorial", Namespace: "lab", Generation: 2, UID: "0c0c0c0c-1111-2222-3333-444444444444",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)),
		},
		Spec: v1alpha1.ExperimentSpec{
			TTLDays: 2,
			Targets: []v1alpha1.Target{
				{
					Name:    "app",
					Cluster: v1alpha1.ClusterSpec{Type: v1alpha1.ClusterGKE, Zone: "us-central1-a", MachineType: "e2-standard-4", NodeCount: 2},
					Components: []v1alpha1.ComponentRef{
						{App: "envoy-gateway", Params: map[string]string{"replicas": "2", "logLevel": "debug"}},
						{Config: "alloy"},
					},
				},
				{
					Name:       "loadgen",
					Cluster:    v1alpha1.ClusterSpec{Type: v1alpha1.ClusterHub},
					Depends:    []string{"app"},
					Components: []v1alpha1.ComponentRef{{Workflow: "k6"}},
				},
			},
			Workflow: v1alpha1.WorkflowSpec{Template: "gateway-tutorial-validation", Params: map[string]string{"duration": "5m", "rps": "100"}},
		},
	}
}

func component(name string, spec v1alpha1.ComponentSpec) *v1alpha1.Component {
	return &v1alpha1.Component{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ComponentKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}
}

func envoyComponent() *v1alpha1.Component {
	return component("envoy-gateway", v1alpha1.ComponentSpec{
		Type: v1alpha1.ComponentApp,
		Sources: []v1alpha1.Source{
			{RepoURL: "https://charts.example.org/envoy", Chart: "gateway-helm", TargetRevision: "v1.2.0", Helm: &v1alpha1.Helm{
				ReleaseName: "eg",
				Parameters:  []v1alpha1.HelmParameter{{Name: "logLevel", Value: "info"}, {Name: "zone", Value: "a"}},
			}},
			{RepoURL: "https://github.com/example/lab.git", Ref: "values"},
		},
		Parameters: []v1alpha1.Parameter{{Name: "replicas", Default: "1"}, {Name: "logLevel"}},
		Observability: &v1alpha1.Observability{
			ServiceMonitor: true, MetricsPath: "/stats/prometheus", MetricsPort: 19001,
			PodLabels: map[string]v1alpha1.LabelValue{"app.kubernetes.io/name": "envoy", "app.kubernetes.io/component": "proxy"},
		},
	})
}

func k6Component() *v1alpha1.Component {
	return component("k6", v1alpha1.ComponentSpec{
		Type:    v1alpha1.ComponentWorkflow,
		Sources: []v1alpha1.Source{{RepoURL: "https://github.com/example/lab.git", Path: "components/workflows/k6"}},
	})
}

// conventionInput is the function input of a platform team with a
// convention repository. The project and Google service account Argo CD
// reaches GKE clusters as are the policy's (composetest.Permissive).
var conventionInput = &v1beta1.Input{Experiments: &v1beta1.Experiments{
	ComponentRepoURL: "https://github.com/example/lab.git",
}}

func argocdAccess() *ct.Resource {
	return ct.Observed(gcpIAMAPIVersion, "ProjectIAMMember", "argocd-access")
}

// components answers the tutorial's requirements: envoy-gateway and k6
// exist, alloy does not (the convention path serves it).
func components() map[string][]runtime.Object {
	return map[string][]runtime.Object{
		componentsRequirement("envoy-gateway"): {envoyComponent()},
		componentsRequirement("k6"):            {k6Component()},
		componentsRequirement("alloy"):         nil,
	}
}

func gkeCluster() *ct.Resource {
	return ct.Observed(gcpAPIVersion, "Cluster", "gateway-tutorial-app-x")
}

func runningGKE() *ct.Resource { return gkeCluster().Ready().AtProvider("endpoint", "34.1.2.3") }

func nodePool() *ct.Resource { return ct.Observed(gcpAPIVersion, "NodePool", "np") }

// networkReady is the app target's VPC and subnet, made and Ready.
func networkReady() map[string]*ct.Resource {
	return map[string]*ct.Resource{
		"network-app": ct.Observed(gcpComputeAPIVersion, "Network", "vpc").Ready(),
		"subnet-app":  ct.Observed(gcpComputeAPIVersion, "Subnetwork", "subnet").Ready(),
	}
}

// withNetwork is observed with the app target's VPC and subnet Ready.
func withNetwork(observed map[string]*ct.Resource) map[string]*ct.Resource {
	out := networkReady()
	maps.Copy(out, observed)
	return out
}

func registration() *ct.Resource {
	return ct.Observed(argocdv1alpha1.SchemeGroupVersion.String(), "ClusterRegistration", "r")
}

func application(name string) *ct.Resource {
	return ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", name)
}

func run(t *testing.T, c ct.Call) ct.Response {
	t.Helper()
	return ct.Run(t, Composer, c)
}

func extName(r ct.Response, name string) string {
	ann, _ := r.Value(name, "metadata.annotations").(map[string]any)
	s, _ := ann["crossplane.io/external-name"].(string)
	return s
}

func wantPhase(r ct.Response, phase v1alpha1.Phase, msgParts ...string) {
	r.T.Helper()
	r.Want("", "status.phase", phase)
	r.WantCondition(v1alpha1.ConditionExperiment, conditionStatus(phase), string(phase), msgParts...)
}

func conditionStatus(p v1alpha1.Phase) fnv1.Status {
	switch p {
	case v1alpha1.PhaseComplete:
		return fnv1.Status_STATUS_CONDITION_TRUE
	case v1alpha1.PhaseFailed:
		return fnv1.Status_STATUS_CONDITION_FALSE
	default:
		return fnv1.Status_STATUS_CONDITION_UNKNOWN
	}
}

// wantTarget checks the i-th target's phase and what it waits for.
func wantTarget(r ct.Response, i int, phase, msgPart string) {
	r.T.Helper()
	targets, _ := r.Value("", "status.targets").([]any)
	if i >= len(targets) {
		r.T.Fatalf("status.targets has %d targets", len(targets))
	}
	tg := targets[i].(map[string]any)
	if tg["phase"] != phase {
		r.T.Errorf("target %d phase = %v, want %s", i, tg["phase"], phase)
	}
	if msg, _ := tg["message"].(string); !strings.Contains(msg, msgPart) {
		r.T.Errorf("target %d message %q lacks %q", i, msg, msgPart)
	}
}

func TestWalksItsTargetsInOrder(t *testing.T) {
	call := func(observed map[string]*ct.Resource) ct.Call {
		return ct.Call{XR: gatewayTutorial(), Input: conventionInput, Required: components(), Observed: observed}
	}

	t.Run("first: the VPC and the expiry", func(t *testing.T) {
		r := run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput})
		r.WantNames("network-app", "argocd-access", "expiry")
		r.Want("argocd-access", "spec.forProvider", map[string]any{
			"project": "lab-project", "role": "roles/container.developer", "member": "serviceAccount:argocd@lab-project.iam.gserviceaccount.com",
		})
		r.Want("argocd-access", "spec.managementPolicies", []string{"Observe", "Create", "Update", "LateInitialize"})
		r.Want("network-app", "apiVersion", "compute.gcp.m.upbound.io/v1beta1")
		r.Want("network-app", "spec.forProvider", map[string]any{"autoCreateSubnetworks": false, "routingMode": "REGIONAL"})
		if name := extName(r, "network-app"); !strings.HasPrefix(name, "gateway-tutorial-app-") || !strings.HasSuffix(name, "-vpc") {
			t.Errorf("VPC name %q", name)
		}
		for _, key := range []string{"component-envoy-gateway", "component-alloy", "component-k6"} {
			if r.GetRequirements().GetResources()[key].GetKind() != v1alpha1.ComponentKind {
				t.Errorf("no requirement %s", key)
			}
		}
		r.Want("expiry", "spec.forProvider.expiresAt", "2026-11-22T08:00:00Z")
		r.Want("expiry", "spec.forProvider.target", map[string]any{"apiVersion": "experiments.fleetplane.io/v1alpha1", "kind": "Experiment", "name": "gateway-tutorial", "uid": "0c0c0c0c-1111-2222-3333-444444444444"})
		// Nothing exists yet: Pending until the cluster is created.
		wantPhase(r, v1alpha1.PhasePending, "waiting for targets app, loadgen (after app)")
		wantTarget(r, 0, targetProvisioning, "network of cluster gateway-tutorial-app-")
		r.WantNotReady()
	})

	t.Run("VPC ready: its subnet, in the zone's region", func(t *testing.T) {
		net := networkReady()
		delete(net, "subnet-app")
		r := run(t, call(net))
		r.WantNames("network-app", "subnet-app", "argocd-access", "expiry")
		vpc := extName(r, "network-app")
		r.Want("subnet-app", "spec.forProvider", map[string]any{
			"network": vpc, "region": "us-central1", "ipCidrRange": "10.0.0.0/20", "privateIpGoogleAccess": true,
			"secondaryIpRange": []any{
				map[string]any{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
				map[string]any{"rangeName": "services", "ipCidrRange": "10.8.0.0/20"},
			},
		})
		wantTarget(r, 0, targetProvisioning, "network of cluster")
	})

	t.Run("subnet ready: the cluster, VPC-native in it", func(t *testing.T) {
		r := run(t, call(networkReady()))
		r.WantNames("network-app", "subnet-app", "cluster-app", "argocd-access", "expiry", "usage-network-app-by-subnet-app")
		r.Want("cluster-app", "spec.forProvider.network", extName(r, "network-app"))
		r.Want("cluster-app", "spec.forProvider.subnetwork", extName(r, "subnet-app"))
		r.Want("cluster-app", "spec.forProvider.networkingMode", "VPC_NATIVE")
		r.Want("cluster-app", "spec.forProvider.ipAllocationPolicy", map[string]any{"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"})
		if r.Value("cluster-app", "spec.forProvider.masterAuth") != nil {
			t.Error("no client certificate: GKE gives it no RBAC")
		}
		r.Want("cluster-app", "spec.forProvider.location", "us-central1-a")
		r.Want("cluster-app", "spec.forProvider.removeDefaultNodePool", true)
		r.Want("cluster-app", "spec.writeConnectionSecretToRef.name", extName(r, "cluster-app")+"-kubeconfig")
		if name := extName(r, "cluster-app"); len(name) > 40 || !strings.HasPrefix(name, "gateway-tutorial-app-") {
			t.Errorf("GKE cluster name %q", name)
		}
		r.Want("cluster-app", "spec.forProvider.workloadIdentityConfig", map[string]any{"workloadPool": "lab-project.svc.id.goog"})
		wantTarget(r, 0, targetProvisioning, "cluster gateway-tutorial-app-")
		r.WantNotReady()
	})

	t.Run("cluster ready: the node pool", func(t *testing.T) {
		r := run(t, call(withNetwork(map[string]*ct.Resource{"cluster-app": runningGKE()})))
		r.WantNames("network-app", "subnet-app", "cluster-app", "nodepool-app", "argocd-access", "expiry", "usage-network-app-by-subnet-app", "usage-subnet-app-by-cluster-app")
		wantPhase(r, v1alpha1.PhaseProvisioning, "waiting for targets app")
		wantTarget(r, 0, targetProvisioning, "node pool")
		r.Want("nodepool-app", "spec.forProvider.nodeConfig.machineType", "e2-standard-4")
		r.Want("nodepool-app", "spec.forProvider.nodeCount", 2)
	})

	observed := withNetwork(map[string]*ct.Resource{"cluster-app": runningGKE(), "nodepool-app": nodePool().Ready(), "argocd-access": argocdAccess().Ready()})
	net := []string{"network-app", "subnet-app", "usage-network-app-by-subnet-app", "usage-subnet-app-by-cluster-app"}
	t.Run("node pool ready: the registration", func(t *testing.T) {
		r := run(t, call(observed))
		r.WantNames(append([]string{"cluster-app", "nodepool-app", "registration-app", "argocd-access", "expiry", "usage-cluster-app-by-nodepool-app"}, net...)...)
		r.Want("registration-app", "spec.forProvider.execCredential", map[string]any{"command": "argocd-k8s-auth", "args": []string{"gcp"}, "apiVersion": "client.authentication.k8s.io/v1beta1"})
		r.Want("registration-app", "spec.forProvider.kubeconfigSecretRef.name", extName(r, "cluster-app")+"-kubeconfig")
		r.Want("registration-app", "spec.forProvider.kubeconfigSecretRef.key", "kubeconfig")
		wantPhase(r, v1alpha1.PhaseProvisioning)
		wantTarget(r, 0, targetRegistering, "registering")
	})

	observed["registration-app"] = registration().Ready()
	t.Run("registered: the app's application, loadgen waits for it", func(t *testing.T) {
		r := run(t, call(observed))
		r.WantNames(append([]string{"cluster-app", "nodepool-app", "registration-app", "application-app", "argocd-access", "expiry",
			"usage-cluster-app-by-nodepool-app", "usage-cluster-app-by-registration-app"}, net...)...)
		r.Want("application-app", "spec.forProvider.manifest.metadata.name", "lab-gateway-tutorial-app")
		r.Want("application-app", "spec.forProvider.manifest.spec.destination", map[string]any{"server": "https://34.1.2.3", "namespace": "gateway-tutorial"})
		r.Want("application-app", "spec.forProvider.manifest.spec.sources", []any{
			map[string]any{"repoURL": "https://charts.example.org/envoy", "chart": "gateway-helm", "targetRevision": "v1.2.0",
				"helm": map[string]any{"releaseName": "eg", "parameters": []any{
					map[string]any{"name": "logLevel", "value": "debug"},
					map[string]any{"name": "replicas", "value": "2"},
					map[string]any{"name": "zone", "value": "a"},
				}}},
			map[string]any{"repoURL": "https://github.com/example/lab.git", "targetRevision": "HEAD", "ref": "values"},
			map[string]any{"repoURL": "https://github.com/example/lab.git", "targetRevision": "HEAD", "path": "components/config/alloy"},
		})
		r.Want("application-app", "spec.readiness.policy", "DeriveFromCelQuery")
		r.Want("application-app", "spec.forProvider.manifest.metadata.finalizers", []string{"resources-finalizer.argocd.argoproj.io"})
		wantTarget(r, 0, targetDeploying, "not Healthy and Synced yet")
		wantTarget(r, 1, targetWaiting, "waiting for app")
	})

	observed["application-app"] = application("a").Ready()
	t.Run("app healthy: loadgen's application on the hub", func(t *testing.T) {
		r := run(t, call(observed))
		r.Want("application-loadgen", "spec.forProvider.manifest.spec.destination.server", "https://kubernetes.default.svc")
		if r.Has("workflow") {
			t.Error("the workflow waits for every application")
		}
		if !r.Has("usage-registration-app-by-application-app") {
			t.Error("a Usage must keep the registration until the application is gone")
		}
	})

	observed["application-loadgen"] = application("b").Ready()
	t.Run("all healthy: the workflow, with ordered parameters", func(t *testing.T) {
		r := run(t, call(observed))
		wantPhase(r, v1alpha1.PhaseReady)
		runName := r.Value("workflow", "spec.forProvider.runName").(string)
		if !strings.HasPrefix(runName, "lab-gateway-tutorial-validation-") || len(runName) != len("lab-gateway-tutorial-validation-")+8 {
			t.Errorf("runName %q: want the experiment and a digest of what it validates", runName)
		}

		// Crossplane bumps the generation whenever it records composed
		// resources in the XR; that must not make a new run. A change to
		// what is validated must.
		again := call(observed)
		xr := gatewayTutorial()
		xr.Generation = 7
		again.XR = xr
		if got := run(t, again).Value("workflow", "spec.forProvider.runName"); got != runName {
			t.Errorf("a new generation renamed the run: %v, was %s", got, runName)
		}
		xr = gatewayTutorial()
		xr.Spec.Workflow.Params["rps"] = "200"
		again.XR = xr
		if got := run(t, again).Value("workflow", "spec.forProvider.runName"); got == runName {
			t.Error("changed workflow parameters kept the run name: the finished run would not be redone")
		}
		targets, _ := r.Value("", "status.targets").([]any)
		got, _ := json.Marshal(targets[0].(map[string]any)["observability"])
		if want := `[{"component":"envoy-gateway","metricsPath":"/stats/prometheus","metricsPort":19001,"podLabels":{"app.kubernetes.io/component":"proxy","app.kubernetes.io/name":"envoy"},"serviceMonitor":true}]`; string(got) != want {
			t.Errorf("status.targets[0].observability = %s, want %s", got, want)
		}
		r.Want("workflow", "spec.forProvider.workflowTemplateRef", "gateway-tutorial-validation")
		r.Want("workflow", "spec.forProvider.onMissingTemplate", workflowsv1alpha1.MissingTemplateFail)
		r.Want("workflow", "spec.forProvider.parameters", []any{
			map[string]any{"name": "experiment-name", "value": "gateway-tutorial"},
			map[string]any{"name": "app-endpoint", "value": "https://34.1.2.3"},
			map[string]any{"name": "app-name", "value": extName(r, "cluster-app")},
			// The Component's observability, keys sorted: the same
			// status renders the same bytes.
			map[string]any{"name": "app-observability", "value": `[{"component":"envoy-gateway","serviceMonitor":true,"podLabels":{"app.kubernetes.io/component":"proxy","app.kubernetes.io/name":"envoy"},"metricsPath":"/stats/prometheus","metricsPort":19001}]`},
			map[string]any{"name": "loadgen-endpoint", "value": "https://kubernetes.default.svc"},
			map[string]any{"name": "loadgen-name", "value": "hub"},
			map[string]any{"name": "loadgen-observability", "value": "[]"},
			map[string]any{"name": "duration", "value": "5m"},
			map[string]any{"name": "rps", "value": "100"},
		})
	})

	for phase, want := range map[string]v1alpha1.Phase{"Running": v1alpha1.PhaseRunning, "Succeeded": v1alpha1.PhaseComplete, "Failed": v1alpha1.PhaseFailed, "Error": v1alpha1.PhaseFailed} {
		t.Run("workflow "+phase, func(t *testing.T) {
			obs := map[string]*ct.Resource{"workflow": ct.Observed(workflowsv1alpha1.SchemeGroupVersion.String(), "WorkflowRun", "w").Ready().
				AtProvider("workflowName", "lab-gateway-tutorial-validation-g2").
				AtProvider("phase", phase).
				AtProvider("finishedAt", "2026-11-20T09:00:00Z")}
			maps.Copy(obs, observed)
			r := run(t, call(obs))
			wantPhase(r, want)
			r.Want("", "status.workflowStatus.phase", phase)
			if want == v1alpha1.PhaseComplete {
				r.Want("", "status.completedAt", "2026-11-20T09:00:00Z")
				r.WantDerivedReadiness()
			}
			for _, u := range []string{"usage-application-app-by-workflow", "usage-application-app-by-application-loadgen", "usage-cluster-app-by-nodepool-app", "usage-cluster-app-by-registration-app", "usage-network-app-by-subnet-app", "usage-subnet-app-by-cluster-app"} {
				if !r.Has(u) || r.ReadyOf(u) != fnv1.Ready_READY_TRUE {
					t.Errorf("usage %s missing or not ready", u)
				}
			}
		})
	}
}

// TestEditsReachWhatExists is the gating rule of compose.Set for
// Experiments: an edit reaches every composed resource that exists, even
// when the resources before it are not Ready.
func TestEditsReachWhatExists(t *testing.T) {
	xr := gatewayTutorial()
	xr.Spec.Targets[0].Cluster.NodeCount = 5
	xr.Spec.Targets[0].Components[0].Params["replicas"] = "4"
	// The cluster is being repaired: nothing after it is Ready any more.
	observed := withNetwork(map[string]*ct.Resource{
		"cluster-app": gkeCluster().AtProvider("endpoint", "34.1.2.3"), "nodepool-app": nodePool(),
		"registration-app": registration(), "application-app": application("a"),
	})
	r := run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.Want("nodepool-app", "spec.forProvider.nodeCount", 5)
	params := r.Value("application-app", "spec.forProvider.manifest.spec.sources").([]any)[0].(map[string]any)["helm"].(map[string]any)["parameters"]
	if !strings.Contains(strings.ReplaceAll(jsonOf(params), " ", ""), `{"name":"replicas","value":"4"}`) {
		t.Errorf("the edited parameter did not reach the application: %s", jsonOf(params))
	}
	wantTarget(r, 0, targetProvisioning, "cluster")

	// Without an endpoint the registration and application cannot be
	// rendered: they are kept as they are, never dropped.
	observed["cluster-app"] = gkeCluster()
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: observed})
	r.WantNames("network-app", "subnet-app", "cluster-app", "nodepool-app", "registration-app", "application-app", "argocd-access", "expiry",
		"usage-network-app-by-subnet-app", "usage-subnet-app-by-cluster-app",
		"usage-cluster-app-by-nodepool-app", "usage-cluster-app-by-registration-app", "usage-registration-app-by-application-app")
	if r.Value("application-app", "spec") != nil {
		t.Error("a kept application is re-emitted from what was observed, which here has no spec")
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestFailures(t *testing.T) {
	hubOnly := func(targets ...v1alpha1.Target) *v1alpha1.Experiment {
		return &v1alpha1.Experiment{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ExperimentKind},
			ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "lab", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))},
			Spec:       v1alpha1.ExperimentSpec{Targets: targets, Workflow: v1alpha1.WorkflowSpec{Template: "t"}},
		}
	}
	hubTarget := func(name string, refs ...v1alpha1.ComponentRef) v1alpha1.Target {
		return v1alpha1.Target{Name: name, Cluster: v1alpha1.ClusterSpec{Type: v1alpha1.ClusterHub}, Components: refs}
	}
	requiredLogLevel := envoyComponent()
	requiredLogLevel.Spec.Parameters[1].Required = true
	badLabels := envoyComponent()
	badLabels.Spec.Observability.PodLabels["-bad"] = "x"
	cycleA, cycleB := hubTarget("a", v1alpha1.ComponentRef{App: "x"}), hubTarget("b", v1alpha1.ComponentRef{App: "x"})
	cycleA.Depends, cycleB.Depends = []string{"b"}, []string{"a"}
	waiting := hubTarget("late", v1alpha1.ComponentRef{App: "nope"})
	waiting.Depends = []string{"first"}

	cases := map[string]struct {
		xr       *v1alpha1.Experiment
		input    *v1beta1.Input
		required map[string][]runtime.Object
		want     string
	}{
		"unresolved component without a convention repository": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "nope"})),
			required: map[string][]runtime.Object{"component-nope": nil},
			want:     "no Component nope exists and no convention repository",
		},
		"a bad component fails at once, not after what its target waits for": {
			xr:       hubOnly(hubTarget("first", v1alpha1.ComponentRef{Workflow: "k6"}), waiting),
			required: map[string][]runtime.Object{"component-nope": nil, "component-k6": {k6Component()}},
			want:     "target late: component nope",
		},
		"required parameter missing": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "envoy-gateway", Params: map[string]string{"replicas": "3"}})),
			required: map[string][]runtime.Object{"component-envoy-gateway": {requiredLogLevel}},
			want:     "required parameters logLevel are not set",
		},
		"undeclared parameter": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "envoy-gateway", Params: map[string]string{"colour": "blue"}})),
			required: map[string][]runtime.Object{"component-envoy-gateway": {envoyComponent()}},
			want:     "parameters colour are not declared",
		},
		"a parameter of the wrong type, named": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "envoy-gateway", Params: map[string]string{"replicas": "three"}})),
			required: map[string][]runtime.Object{"component-envoy-gateway": {typedEnvoy()}},
			want:     `component envoy-gateway: parameter replicas is declared int, and "three" is not a whole number`,
		},
		"a bool that is not one": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "envoy-gateway", Params: map[string]string{"replicas": "2", "debug": "yes"}})),
			required: map[string][]runtime.Object{"component-envoy-gateway": {typedEnvoy()}},
			want:     `parameter debug is declared bool, and "yes" is neither true nor false`,
		},
		"observability with a pod label key Kubernetes refuses, named": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "envoy-gateway", Params: map[string]string{"logLevel": "info"}})),
			required: map[string][]runtime.Object{"component-envoy-gateway": {badLabels}},
			want:     `component envoy-gateway: observability: pod label key "-bad"`,
		},
		"component of another type": {
			xr:       hubOnly(hubTarget("a", v1alpha1.ComponentRef{App: "k6"})),
			required: map[string][]runtime.Object{"component-k6": {k6Component()}},
			want:     "Component k6 is of type workflow, referenced as app",
		},
		"dependency cycle": {
			xr:       hubOnly(cycleA, cycleB),
			input:    conventionInput,
			required: map[string][]runtime.Object{"component-x": nil},
			want:     "cycle: a -> b -> a",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, ct.Call{XR: tc.xr, Input: tc.input, Required: tc.required})
			wantPhase(r, v1alpha1.PhaseFailed, tc.want)
			r.WantEvent(fnv1.Severity_SEVERITY_WARNING, string(v1alpha1.PhaseFailed))
			r.WantNotReady()
			// Nothing is deployed in a failed target's place.
			for _, n := range r.Names() {
				if strings.HasPrefix(n, "application-") && !strings.HasPrefix(name, "a bad component") {
					t.Errorf("%s composed for a failed experiment", n)
				}
			}
			if r.Has("workflow") {
				t.Error("a failed experiment is not validated")
			}
		})
	}
}

// typedEnvoy is envoyComponent with typed parameters: replicas an int,
// debug a bool.
func typedEnvoy() *v1alpha1.Component {
	c := envoyComponent()
	c.Spec.Parameters[0].Type = v1alpha1.ParameterInt
	c.Spec.Parameters = append(c.Spec.Parameters, v1alpha1.Parameter{Name: "debug", Type: v1alpha1.ParameterBool, Default: "false"})
	return c
}

func TestTypedParametersBind(t *testing.T) {
	c := typedEnvoy()
	got, err := Resolve(v1alpha1.ComponentRef{App: "envoy-gateway", Params: map[string]string{"replicas": "-3", "debug": "true", "logLevel": "1"}}, c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := jsonOf(got.Sources[0].Helm.Parameters); !strings.Contains(s, `{"name":"debug","value":"true"}`) || !strings.Contains(s, `{"name":"replicas","value":"-3"}`) {
		t.Errorf("parameters %s", s)
	}
}

func TestManualCompletionSuspends(t *testing.T) {
	xr := gatewayTutorial()
	xr.Spec.Workflow.Completion = &v1alpha1.Completion{Mode: v1alpha1.CompletionManual}
	observed := withNetwork(map[string]*ct.Resource{
		"cluster-app": runningGKE(), "nodepool-app": nodePool().Ready(), "registration-app": registration().Ready(),
		"application-app": application("a").Ready(), "application-loadgen": application("b").Ready(), "argocd-access": argocdAccess().Ready(),
	})
	r := run(t, ct.Call{XR: xr, Input: conventionInput, Observed: observed, Required: components()})
	r.Want("workflow", "spec.forProvider.onMissingTemplate", workflowsv1alpha1.MissingTemplateSuspend)

	observed["workflow"] = ct.Observed(workflowsv1alpha1.SchemeGroupVersion.String(), "WorkflowRun", "w").Ready().
		AtProvider("workflowName", "lab-gateway-tutorial-validation-1").AtProvider("phase", "Running").AtProvider("inline", true)
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Observed: observed, Required: components()})
	wantPhase(r, v1alpha1.PhaseRunning, "argo resume -n argo lab-gateway-tutorial-validation-1")
}

// Watching is the default: provider-kubernetes ignores spec.watch without
// its alpha --enable-watches, and with it an Application's health reaches
// the Object at once instead of at a 30 s poll. An input can turn it off.
func TestWatchApplicationsByDefault(t *testing.T) {
	observed := map[string]*ct.Resource{"cluster-app": runningGKE(), "nodepool-app": nodePool().Ready(), "registration-app": registration().Ready(), "argocd-access": argocdAccess().Ready()}
	c := ct.Call{XR: gatewayTutorial(), Input: conventionInput, Observed: observed, Required: components()}
	run(t, c).Want("application-app", "spec.watch", true)
	in := conventionInput.DeepCopy()
	in.Experiments.WatchApplications = new(false)
	c.Input = in
	if w := run(t, c).Value("application-app", "spec.watch"); w != nil {
		t.Errorf("spec.watch = %v with watchApplications: false", w)
	}
}

// TestNamesWithDots: Kubernetes names may hold dots; the GKE cluster, the
// Argo CD Application and the validation run get DNS labels, still
// distinct for names that differ only by a dot.
func TestNamesWithDots(t *testing.T) {
	label := regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	names := map[string]bool{}
	for _, name := range []string{"gateway.v2", "gateway-v2"} {
		xr := gatewayTutorial()
		xr.Name = name
		r := renderer{xr: xr, cfg: ConfigFrom(conventionInput)}
		for what, got := range map[string]string{"GKE cluster": r.gkeName("app"), "application": r.appName("app"), "run": r.runName()} {
			if !label.MatchString(got) || len(got) > 63 || (what == "GKE cluster" && len(got) > 40) {
				t.Errorf("%s name %q of experiment %s is no valid name", what, got, name)
			}
			if names[got] {
				t.Errorf("%s name %q is not unique", what, got)
			}
			names[got] = true
		}
	}
}

// TestNetwork: a GKE target's own VPC and subnet by default, its ranges
// as written, the project's default network on request, and ranges that
// overlap refused before anything is made.
func TestNetwork(t *testing.T) {
	withNet := func(n *v1alpha1.GKENetwork, zone string) *v1alpha1.Experiment {
		xr := gatewayTutorial()
		xr.Spec.Targets[0].Cluster.Network = n
		if zone != "" {
			xr.Spec.Targets[0].Cluster.Zone = zone
		}
		return xr
	}
	call := func(xr *v1alpha1.Experiment) ct.Response {
		return run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: networkReady()})
	}

	t.Run("the ranges as written, a regional cluster's region", func(t *testing.T) {
		r := call(withNet(&v1alpha1.GKENetwork{SubnetCIDR: "172.16.0.0/22", PodsCIDR: "172.20.0.0/16", ServicesCIDR: "172.16.8.0/24"}, "europe-west4"))
		r.Want("subnet-app", "spec.forProvider.region", "europe-west4")
		r.Want("subnet-app", "spec.forProvider.ipCidrRange", "172.16.0.0/22")
		r.Want("subnet-app", "spec.forProvider.secondaryIpRange", []any{
			map[string]any{"rangeName": "pods", "ipCidrRange": "172.20.0.0/16"},
			map[string]any{"rangeName": "services", "ipCidrRange": "172.16.8.0/24"},
		})
	})

	t.Run("dedicated: false is the project's default network", func(t *testing.T) {
		r := run(t, ct.Call{XR: withNet(&v1alpha1.GKENetwork{Dedicated: new(false)}, ""), Input: conventionInput, Required: components()})
		r.WantNames("cluster-app", "argocd-access", "expiry")
		for _, f := range []string{"network", "subnetwork", "networkingMode", "ipAllocationPolicy"} {
			if v := r.Value("cluster-app", "spec.forProvider."+f); v != nil {
				t.Errorf("cluster %s = %v on the default network", f, v)
			}
		}
		wantTarget(r, 0, targetProvisioning, "cluster gateway-tutorial-app-")
	})

	t.Run("overlapping ranges make nothing", func(t *testing.T) {
		r := run(t, ct.Call{XR: withNet(&v1alpha1.GKENetwork{SubnetCIDR: "10.4.0.0/20"}, ""), Input: conventionInput, Required: components()})
		for _, n := range r.Names() {
			if strings.HasSuffix(n, "-app") && n != "argocd-access" {
				t.Errorf("%s composed for a target whose ranges overlap", n)
			}
		}
		wantTarget(r, 0, targetFailed, "cluster.network.subnetCidr 10.4.0.0/20 overlaps cluster.network.podsCidr 10.4.0.0/14")
	})

	t.Run("a cluster made on the default network stays there", func(t *testing.T) {
		r := run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Required: components(), Observed: map[string]*ct.Resource{"cluster-app": runningGKE()}})
		if r.Has("network-app") || r.Has("subnet-app") || r.Value("cluster-app", "spec.forProvider.network") != nil {
			t.Errorf("an existing cluster was moved to a new network: %v", r.Names())
		}
		wantTarget(r, 0, targetProvisioning, "node pool")
	})

	t.Run("a cluster made in its own VPC keeps it, with the ranges it was made with", func(t *testing.T) {
		observed := networkReady()
		observed["subnet-app"] = observed["subnet-app"].
			Set("spec.forProvider.ipCidrRange", "172.16.0.0/22").
			Set("spec.forProvider.secondaryIpRange", []any{
				map[string]any{"rangeName": "pods", "ipCidrRange": "172.20.0.0/16"},
				map[string]any{"rangeName": "services", "ipCidrRange": "172.16.8.0/24"},
			})
		observed["cluster-app"] = runningGKE()
		for name, n := range map[string]*v1alpha1.GKENetwork{
			"dedicated: false": {Dedicated: new(false)},
			"other ranges":     {SubnetCIDR: "10.1.0.0/20"},
		} {
			r := run(t, ct.Call{XR: withNet(n, ""), Input: conventionInput, Required: components(), Observed: observed})
			r.Want("subnet-app", "spec.forProvider.ipCidrRange", "172.16.0.0/22")
			r.Want("subnet-app", "spec.forProvider.secondaryIpRange", []any{
				map[string]any{"rangeName": "pods", "ipCidrRange": "172.20.0.0/16"},
				map[string]any{"rangeName": "services", "ipCidrRange": "172.16.8.0/24"},
			})
			if got := r.Value("cluster-app", "spec.forProvider.subnetwork"); got != extName(r, "subnet-app") {
				t.Errorf("%s: the cluster's subnetwork is %v", name, got)
			}
		}
	})

	t.Run("region of a zone", func(t *testing.T) {
		for in, want := range map[string]string{"us-central1-a": "us-central1", "europe-west4": "europe-west4", "asia-northeast1-c": "asia-northeast1"} {
			if got := region(in); got != want {
				t.Errorf("region(%q) = %q, want %q", in, got, want)
			}
		}
	})
}
