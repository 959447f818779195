package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// gatewayTutorial is the seed's experiment: an app on GKE and a load
// generator on the hub that depends on it.
const gatewayTutorial = `
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: gateway-tutorial, namespace: lab, generation: 2, uid: 0c0c0c0c-1111-2222-3333-444444444444, creationTimestamp: "2026-11-20T08:00:00Z"}
spec:
  ttlDays: 2
  targets:
  - name: app
    cluster: {type: gke, zone: us-central1-a, machineType: e2-standard-4, nodeCount: 2}
    components:
    - app: envoy-gateway
      params: {replicas: "2", logLevel: debug}
    - config: alloy
  - name: loadgen
    cluster: {type: hub}
    depends: [app]
    components:
    - workflow: k6
  workflow:
    template: gateway-tutorial-validation
    params: {duration: 5m, rps: "100"}
`

const (
	envoyComponent = `
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Component
metadata: {name: envoy-gateway}
spec:
  type: app
  sources:
  - repoURL: https://charts.example.org/envoy
    chart: gateway-helm
    targetRevision: v1.2.0
    helm:
      releaseName: eg
      parameters:
      - {name: logLevel, value: info}
      - {name: zone, value: a}
  - repoURL: https://github.com/example/lab.git
    ref: values
  parameters:
  - {name: replicas, default: "1"}
  - {name: logLevel}
`
	k6Component = `
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Component
metadata: {name: k6}
spec:
  type: workflow
  sources:
  - {repoURL: https://github.com/example/lab.git, path: components/workflows/k6}
`
	experimentInput = `
apiVersion: fn.fleetplane.io/v1beta1
kind: Input
experiments:
  componentRepoURL: https://github.com/example/lab.git
`
)

func componentsFound(objs ...string) map[string][]string {
	req := map[string][]string{"component-envoy-gateway": {}, "component-alloy": {}, "component-k6": {}}
	for _, o := range objs {
		switch {
		case strings.Contains(o, "name: envoy-gateway"):
			req["component-envoy-gateway"] = []string{o}
		case strings.Contains(o, "name: k6"):
			req["component-k6"] = []string{o}
		}
	}
	return req
}

func gkeCluster(ready bool) string {
	extra := ""
	if ready {
		extra = "  atProvider:\n    endpoint: 34.1.2.3\n"
	}
	return observedMR("container.gcp.m.upbound.io/v1beta1", "Cluster", "gateway-tutorial-app-x", ready, extra)
}

func extName(g got, name string) string {
	ann, _ := g.value(name, "metadata.annotations").(map[string]any)
	s, _ := ann["crossplane.io/external-name"].(string)
	return s
}

func expCondition(g got) *fnv1.Condition {
	for _, c := range g.rsp.GetConditions() {
		if c.GetType() == "experiment.fleetplane.io" {
			return c
		}
	}
	return nil
}

func wantPhase(t *testing.T, g got, phase string, msgParts ...string) {
	t.Helper()
	if p := g.value("", "status.phase"); p != phase {
		t.Errorf("status.phase = %v, want %s", p, phase)
	}
	c := expCondition(g)
	if c == nil || c.GetReason() != phase {
		t.Fatalf("condition = %v, want reason %s", c, phase)
	}
	for _, m := range msgParts {
		if !strings.Contains(c.GetMessage(), m) {
			t.Errorf("condition message %q lacks %q", c.GetMessage(), m)
		}
	}
}

// wantTarget checks what status says the i-th target waits for.
func wantTarget(t *testing.T, g got, i int, msgPart string) {
	t.Helper()
	targets, _ := g.value("", "status.targets").([]any)
	if i >= len(targets) {
		t.Fatalf("status.targets has %d targets", len(targets))
	}
	if msg, _ := targets[i].(map[string]any)["message"].(string); !strings.Contains(msg, msgPart) {
		t.Errorf("target %d message %q lacks %q", i, msg, msgPart)
	}
}

func TestExperimentWalksItsTargetsInOrder(t *testing.T) {
	required := componentsFound(envoyComponent, k6Component)
	base := call{xr: gatewayTutorial, input: experimentInput, required: required}

	t.Run("first: the cluster and the expiry", func(t *testing.T) {
		g := got{t, run(t, call{xr: gatewayTutorial, input: experimentInput})}
		g.wantNames("cluster-app", "expiry")
		for _, key := range []string{"component-envoy-gateway", "component-alloy", "component-k6"} {
			if g.rsp.GetRequirements().GetResources()[key].GetKind() != "Component" {
				t.Errorf("no requirement %s", key)
			}
		}
		g.want("cluster-app", "spec.forProvider.location", "us-central1-a")
		g.want("cluster-app", "spec.forProvider.removeDefaultNodePool", true)
		g.want("cluster-app", "spec.writeConnectionSecretToRef.name", extName(g, "cluster-app")+"-kubeconfig")
		if name := extName(g, "cluster-app"); len(name) > 40 || !strings.HasPrefix(name, "gateway-tutorial-app-") {
			t.Errorf("GKE cluster name %q", name)
		}
		if g.value("cluster-app", "spec.forProvider.workloadIdentityConfig") != nil {
			t.Error("no workload identity pool without a configured project: never a literal placeholder")
		}
		g.want("expiry", "spec.forProvider.expiresAt", "2026-11-22T08:00:00Z")
		g.want("expiry", "spec.forProvider.target", map[string]any{"apiVersion": "experiments.fleetplane.io/v1alpha1", "kind": "Experiment", "name": "gateway-tutorial", "uid": "0c0c0c0c-1111-2222-3333-444444444444"})
		// Nothing exists yet: Pending until the cluster is created.
		wantPhase(t, g, "Pending", "waiting for targets app, loadgen (after app)")
		wantTarget(t, g, 0, "cluster gateway-tutorial-app-")
		g.wantNotReady()
	})

	t.Run("cluster ready: the node pool", func(t *testing.T) {
		c := base
		c.observed = map[string]string{"cluster-app": gkeCluster(true)}
		g := got{t, run(t, c)}
		g.wantNames("cluster-app", "nodepool-app", "expiry")
		wantPhase(t, g, "Provisioning", "waiting for targets app")
		wantTarget(t, g, 0, "node pool")
		g.want("nodepool-app", "spec.forProvider.nodeConfig.machineType", "e2-standard-4")
		g.want("nodepool-app", "spec.forProvider.nodeCount", 2)
	})

	observed := map[string]string{
		"cluster-app":  gkeCluster(true),
		"nodepool-app": observedMR("container.gcp.m.upbound.io/v1beta1", "NodePool", "np", true, ""),
	}
	t.Run("node pool ready: the registration", func(t *testing.T) {
		c := base
		c.observed = observed
		g := got{t, run(t, c)}
		g.wantNames("cluster-app", "nodepool-app", "registration-app", "expiry", "usage-cluster-app-by-nodepool-app")
		g.want("registration-app", "spec.forProvider.server", "https://34.1.2.3")
		g.want("registration-app", "spec.forProvider.kubeconfigSecretRef.key", "kubeconfig")
		wantPhase(t, g, "Provisioning")
		wantTarget(t, g, 0, "registering")
	})

	observed["registration-app"] = observedMR("argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration", "r", true, "")
	t.Run("registered: the app's application, loadgen waits for it", func(t *testing.T) {
		c := base
		c.observed = observed
		g := got{t, run(t, c)}
		g.wantNames("cluster-app", "nodepool-app", "registration-app", "application-app", "expiry",
			"usage-cluster-app-by-nodepool-app", "usage-cluster-app-by-registration-app")
		g.want("application-app", "spec.forProvider.manifest.metadata.name", "lab-gateway-tutorial-app")
		g.want("application-app", "spec.forProvider.manifest.spec.destination", map[string]any{"server": "https://34.1.2.3", "namespace": "gateway-tutorial"})
		g.want("application-app", "spec.forProvider.manifest.spec.sources", []any{
			map[string]any{"repoURL": "https://charts.example.org/envoy", "chart": "gateway-helm", "targetRevision": "v1.2.0",
				"helm": map[string]any{"releaseName": "eg", "parameters": []any{
					map[string]any{"name": "logLevel", "value": "debug"},
					map[string]any{"name": "replicas", "value": "2"},
					map[string]any{"name": "zone", "value": "a"},
				}}},
			map[string]any{"repoURL": "https://github.com/example/lab.git", "targetRevision": "HEAD", "ref": "values"},
			map[string]any{"repoURL": "https://github.com/example/lab.git", "targetRevision": "HEAD", "path": "components/config/alloy"},
		})
		g.want("application-app", "spec.readiness.policy", "DeriveFromCelQuery")
		g.want("application-app", "spec.forProvider.manifest.metadata.finalizers", []string{"resources-finalizer.argocd.argoproj.io"})
		targets := g.value("", "status.targets").([]any)
		loadgen := targets[1].(map[string]any)
		if loadgen["phase"] != "Waiting" || !strings.Contains(loadgen["message"].(string), "app") {
			t.Errorf("loadgen = %v, want Waiting for app", loadgen)
		}
	})

	observed["application-app"] = observedMR("kubernetes.m.crossplane.io/v1alpha1", "Object", "a", true, "")
	t.Run("app healthy: loadgen's application on the hub", func(t *testing.T) {
		c := base
		c.observed = observed
		g := got{t, run(t, c)}
		g.want("application-loadgen", "spec.forProvider.manifest.spec.destination.server", "https://kubernetes.default.svc")
		if _, ok := g.rsp.GetDesired().GetResources()["workflow"]; ok {
			t.Error("the workflow waits for every application")
		}
		if _, ok := g.rsp.GetDesired().GetResources()["usage-registration-app-by-application-app"]; !ok {
			t.Error("a Usage must keep the registration until the application is gone")
		}
	})

	observed["application-loadgen"] = observedMR("kubernetes.m.crossplane.io/v1alpha1", "Object", "b", true, "")
	t.Run("all healthy: the workflow, with ordered parameters", func(t *testing.T) {
		c := base
		c.observed = observed
		g := got{t, run(t, c)}
		wantPhase(t, g, "Ready")
		runName := g.value("workflow", "spec.forProvider.runName").(string)
		if !strings.HasPrefix(runName, "lab-gateway-tutorial-validation-") || len(runName) != len("lab-gateway-tutorial-validation-")+8 {
			t.Errorf("runName %q: want the experiment and a digest of what it validates", runName)
		}

		// Crossplane bumps the generation whenever it records composed
		// resources in the XR; that must not make a new run. A change to
		// what is validated must.
		again := c
		again.xr = strings.Replace(gatewayTutorial, "generation: 2", "generation: 7", 1)
		if got := (got{t, run(t, again)}).value("workflow", "spec.forProvider.runName"); got != runName {
			t.Errorf("a new generation renamed the run: %v, was %s", got, runName)
		}
		again.xr = strings.Replace(gatewayTutorial, "rps: \"100\"", "rps: \"200\"", 1)
		if got := (got{t, run(t, again)}).value("workflow", "spec.forProvider.runName"); got == runName {
			t.Error("changed workflow parameters kept the run name: the finished run would not be redone")
		}
		g.want("workflow", "spec.forProvider.workflowTemplateRef", "gateway-tutorial-validation")
		g.want("workflow", "spec.forProvider.onMissingTemplate", "Fail")
		g.want("workflow", "spec.forProvider.parameters", []any{
			map[string]any{"name": "experiment-name", "value": "gateway-tutorial"},
			map[string]any{"name": "app-endpoint", "value": "https://34.1.2.3"},
			map[string]any{"name": "app-name", "value": extName(g, "cluster-app")},
			map[string]any{"name": "loadgen-endpoint", "value": "https://kubernetes.default.svc"},
			map[string]any{"name": "loadgen-name", "value": "hub"},
			map[string]any{"name": "duration", "value": "5m"},
			map[string]any{"name": "rps", "value": "100"},
		})
	})

	for phase, want := range map[string]string{"Running": "Running", "Succeeded": "Complete", "Failed": "Failed", "Error": "Failed"} {
		t.Run("workflow "+phase, func(t *testing.T) {
			obs := map[string]string{}
			for k, v := range observed {
				obs[k] = v
			}
			obs["workflow"] = observedMR("workflows.m.fleetplane.io/v1alpha1", "WorkflowRun", "w", true,
				"  atProvider:\n    workflowName: lab-gateway-tutorial-validation-g2\n    phase: "+phase+"\n    finishedAt: \"2026-11-20T09:00:00Z\"\n")
			c := base
			c.observed = obs
			g := got{t, run(t, c)}
			wantPhase(t, g, want)
			g.want("", "status.workflowStatus.phase", phase)
			if want == "Complete" {
				g.want("", "status.completedAt", "2026-11-20T09:00:00Z")
				g.wantDerivedReadiness()
			}
			for _, u := range []string{"usage-application-app-by-workflow", "usage-application-app-by-application-loadgen", "usage-cluster-app-by-nodepool-app", "usage-cluster-app-by-registration-app"} {
				if r, ok := g.rsp.GetDesired().GetResources()[u]; !ok || r.GetReady() != fnv1.Ready_READY_TRUE {
					t.Errorf("usage %s missing or not ready", u)
				}
			}
		})
	}
}

func TestExperimentFailures(t *testing.T) {
	hubOnly := func(spec string) string {
		return "apiVersion: experiments.fleetplane.io/v1alpha1\nkind: Experiment\nmetadata: {name: e, namespace: lab, creationTimestamp: \"2026-11-20T08:00:00Z\"}\nspec:\n" + spec
	}
	cases := map[string]struct {
		xr, input string
		required  map[string][]string
		want      string
		wantNames []string
	}{
		"unresolved component without a convention repository": {
			xr:        hubOnly("  targets:\n  - {name: a, cluster: {type: hub}, components: [{app: nope}]}\n  workflow: {template: t}\n"),
			required:  map[string][]string{"component-nope": {}},
			want:      "no Component nope exists and no convention repository",
			wantNames: []string{"expiry"},
		},
		"required parameter missing": {
			xr:        hubOnly("  targets:\n  - {name: a, cluster: {type: hub}, components: [{app: envoy-gateway, params: {replicas: '3'}}]}\n  workflow: {template: t}\n"),
			required:  map[string][]string{"component-envoy-gateway": {strings.Replace(envoyComponent, "  - {name: logLevel}", "  - {name: logLevel, required: true}", 1)}},
			want:      "required parameters logLevel are not set",
			wantNames: []string{"expiry"},
		},
		"undeclared parameter": {
			xr:        hubOnly("  targets:\n  - {name: a, cluster: {type: hub}, components: [{app: envoy-gateway, params: {colour: blue}}]}\n  workflow: {template: t}\n"),
			required:  map[string][]string{"component-envoy-gateway": {envoyComponent}},
			want:      "parameters colour are not declared",
			wantNames: []string{"expiry"},
		},
		"component of another type": {
			xr:        hubOnly("  targets:\n  - {name: a, cluster: {type: hub}, components: [{app: k6}]}\n  workflow: {template: t}\n"),
			required:  map[string][]string{"component-k6": {k6Component}},
			want:      "Component k6 is of type workflow, referenced as app",
			wantNames: []string{"expiry"},
		},
		"vcluster is refused whole": {
			xr:        hubOnly("  targets:\n  - {name: v, cluster: {type: vcluster}, components: [{app: x}]}\n  workflow: {template: t}\n"),
			input:     experimentInput,
			required:  map[string][]string{"component-x": {}},
			want:      "cluster type vcluster is not supported yet",
			wantNames: []string{"expiry"},
		},
		"dependency cycle": {
			xr:        hubOnly("  targets:\n  - {name: a, cluster: {type: hub}, depends: [b], components: [{app: x}]}\n  - {name: b, cluster: {type: hub}, depends: [a], components: [{app: x}]}\n  workflow: {template: t}\n"),
			input:     experimentInput,
			required:  map[string][]string{"component-x": {}},
			want:      "cycle: a -> b -> a",
			wantNames: []string{"expiry"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := got{t, run(t, call{xr: tc.xr, input: tc.input, required: tc.required})}
			wantPhase(t, g, "Failed", tc.want)
			g.wantNames(tc.wantNames...)
			g.wantEvent(fnv1.Severity_SEVERITY_WARNING, "Failed")
			g.wantNotReady()
		})
	}
}

func TestManualCompletionSuspends(t *testing.T) {
	xr := strings.Replace(gatewayTutorial, "    template: gateway-tutorial-validation\n", "    template: gateway-tutorial-validation\n    completion: {mode: manual}\n", 1)
	observed := map[string]string{
		"cluster-app":         gkeCluster(true),
		"nodepool-app":        observedMR("container.gcp.m.upbound.io/v1beta1", "NodePool", "np", true, ""),
		"registration-app":    observedMR("argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration", "r", true, ""),
		"application-app":     observedMR("kubernetes.m.crossplane.io/v1alpha1", "Object", "a", true, ""),
		"application-loadgen": observedMR("kubernetes.m.crossplane.io/v1alpha1", "Object", "b", true, ""),
	}
	g := got{t, run(t, call{xr: xr, input: experimentInput, observed: observed, required: componentsFound(envoyComponent, k6Component)})}
	g.want("workflow", "spec.forProvider.onMissingTemplate", "Suspend")
}

func TestComponentIsChecked(t *testing.T) {
	g := got{t, run(t, call{xr: envoyComponent})}
	var c *fnv1.Condition
	for _, x := range g.rsp.GetConditions() {
		if x.GetType() == "component.fleetplane.io" {
			c = x
		}
	}
	if c == nil || c.GetReason() != "Valid" || !strings.Contains(c.GetMessage(), "2 sources and 2 declared parameters") {
		t.Errorf("condition = %v", c)
	}
	g.wantNames()
}

func TestWatchApplicationsIsOptIn(t *testing.T) {
	observed := map[string]string{
		"cluster-app":      gkeCluster(true),
		"nodepool-app":     observedMR("container.gcp.m.upbound.io/v1beta1", "NodePool", "np", true, ""),
		"registration-app": observedMR("argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration", "r", true, ""),
	}
	c := call{xr: gatewayTutorial, input: experimentInput, observed: observed, required: componentsFound(envoyComponent, k6Component)}
	if w := (got{t, run(t, c)}).value("application-app", "spec.watch"); w != nil {
		t.Errorf("spec.watch = %v without the input asking for it: provider-kubernetes' watches are alpha", w)
	}
	c.input = experimentInput + "  watchApplications: true\n"
	(got{t, run(t, c)}).want("application-app", "spec.watch", true)
}
