package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/standin"
)

const experimentAPI = "experiments.fleetplane.io/v1alpha1"

// example reads an example manifest and moves it into namespace ns.
func example(t *testing.T, path, ns string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, "examples", path))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

// applyComponents applies the example Components, once for all tests.
var componentsOnce sync.Once

func applyComponents(t *testing.T) {
	t.Helper()
	componentsOnce.Do(func() {
		files, _ := filepath.Glob(filepath.Join(env.Root, "examples", "experiment", "components", "*.yaml"))
		for _, f := range files {
			c := example(t, filepath.Join("experiment", "components", filepath.Base(f)), "")
			if err := env.Kube.Create(context.Background(), c); err != nil && !kerrors.IsAlreadyExists(err) {
				t.Fatalf("apply Component %s: %v", c.GetName(), err)
			}
		}
	})
}

func workflowTemplate(t *testing.T, name, outcome string) {
	t.Helper()
	if err := env.WorkflowTemplate(context.Background(), name, outcome); err != nil {
		t.Fatal(err)
	}
}

// watcher records what a watch sees, with when it saw it.
type watcher struct {
	mu     sync.Mutex
	phases []string
	at     []time.Time
	gone   map[string]time.Time
}

func newWatcher() *watcher { return &watcher{gone: map[string]time.Time{}} }

// watchKind records, for every object of a kind in ns, when it was
// deleted; for Experiments, every phase in the order they came.
func (w *watcher) watchKind(t *testing.T, ctx context.Context, apiVersion, kind, ns string) {
	t.Helper()
	wc, err := client.NewWithWatch(env.CP.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	wi, err := wc.Watch(ctx, l, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer wi.Stop()
		for ev := range wi.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			w.mu.Lock()
			switch {
			case ev.Type == watch.Deleted:
				w.gone[kind+"/"+u.GetName()] = time.Now()
			case kind == "Experiment":
				p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
				if n := len(w.phases); p != "" && (n == 0 || w.phases[n-1] != p) {
					w.phases = append(w.phases, p)
					w.at = append(w.at, time.Now())
				}
			}
			w.mu.Unlock()
		}
	}()
}

// watchKinds watches each kind (apiVersion, kind) in ns until ctx is done.
func watchKinds(t *testing.T, ctx context.Context, ns string, kinds ...[2]string) *watcher {
	t.Helper()
	w := newWatcher()
	for _, k := range kinds {
		w.watchKind(t, ctx, k[0], k[1], ns)
	}
	return w
}

// grantNamespace creates policy, a ClusterProviderConfig of its own, for
// ns alone (a label selects it), as an admin grants one team more than
// the default policy does; it goes when the test ends.
func grantNamespace(t *testing.T, ns string, policy *v1alpha1.ClusterProviderConfig) {
	t.Helper()
	ctx := t.Context()
	policy.Spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"fleetplane.io/policy": policy.Name}}
	if err := env.Kube.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Kube.Delete(context.Background(), policy) })
	n := &corev1.Namespace{}
	if err := env.Kube.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{"fleetplane.io/policy": policy.Name}
	if err := env.Kube.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// untilComplete waits until the one-target Experiment ns/name is
// Complete, failing at once when a package pod restarted, and returns
// its target's status; describe says where things are on a timeout.
func untilComplete(t *testing.T, ns, name string, describe func() string) map[string]any {
	t.Helper()
	var target map[string]any
	eventually(t, 4*time.Minute, "experiment "+name+" Complete", func() (bool, string) {
		if err := env.Alive(); err != nil {
			t.Fatal(err)
		}
		x := get(t, experimentAPI, "Experiment", ns, name)
		if x == nil {
			return false, "no experiment"
		}
		targets, _, _ := unstructured.NestedSlice(x.Object, "status", "targets")
		if len(targets) == 1 {
			target, _ = targets[0].(map[string]any)
		}
		p, msg := phaseOf(x)
		return p == "Complete", p + ": " + msg + " " + describe()
	})
	return target
}

// wantRegistered checks that Argo CD has a cluster Secret for server.
func wantRegistered(t *testing.T, server string) {
	t.Helper()
	secrets := &corev1.SecretList{}
	if err := env.Kube.List(t.Context(), secrets, client.InNamespace(environment.ArgoCDNamespace), client.MatchingLabels{"argocd.argoproj.io/secret-type": "cluster"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if string(s.Data["server"]) == server {
			return
		}
	}
	t.Errorf("no Argo CD cluster Secret for %s", server)
}

func (w *watcher) seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.phases)
}

// timeline shows each phase with when it began, relative to start.
func (w *watcher) timeline(start time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for i, p := range w.phases {
		fmt.Fprintf(&b, "%s@%s ", p, w.at[i].Sub(start).Round(100*time.Millisecond))
	}
	return b.String()
}

// goneKind is when the last object of a kind went, zero if none did.
func (w *watcher) goneKind(kind string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for k, at := range w.gone {
		if strings.HasPrefix(k, kind+"/") && at.After(last) {
			last = at
		}
	}
	return last
}

func (w *watcher) goneAt(key string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.gone[key]
	return at, ok
}

// composedByResourceName maps composition resource names to the composed
// objects of an experiment.
func composedByResourceName(t *testing.T, ns, xrName string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, k := range []struct{ api, kind string }{
		{"compute.gcp.m.upbound.io/v1beta1", "Network"}, {"compute.gcp.m.upbound.io/v1beta1", "Subnetwork"},
		{"container.gcp.m.upbound.io/v1beta1", "Cluster"}, {"container.gcp.m.upbound.io/v1beta1", "NodePool"}, {"cloudplatform.gcp.m.upbound.io/v1beta1", "ProjectIAMMember"},
		{"argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration"}, {"kubernetes.m.crossplane.io/v1alpha1", "Object"},
		{"workflows.m.fleetplane.io/v1alpha1", "WorkflowRun"}, {"lifecycle.m.fleetplane.io/v1alpha1", "Expiry"},
		{"protection.crossplane.io/v1beta1", "Usage"},
		{"cluster.x-k8s.io/v1beta2", "Cluster"}, {"cluster.x-k8s.io/v1beta2", "MachineDeployment"},
		{"controlplane.cluster.x-k8s.io/v1alpha3", "TalosControlPlane"}, {"bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate"},
		{"infrastructure.cluster.x-k8s.io/v1beta2", "DockerCluster"}, {"infrastructure.cluster.x-k8s.io/v1beta2", "DockerMachineTemplate"},
	} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(k.api)
		l.SetKind(k.kind + "List")
		if err := env.Kube.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{"crossplane.io/composite": xrName}); err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			out[l.Items[i].GetAnnotations()["crossplane.io/composition-resource-name"]] = &l.Items[i]
		}
	}
	return out
}

func phaseOf(u *unstructured.Unstructured) (string, string) {
	p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	_, _, msg := condition(u, "experiment.fleetplane.io")
	return p, msg
}

// TestExperimentGatewayTutorial walks the seed's gateway tutorial, a GKE
// app target and a hub load generator that depends on it, from apply to
// Complete, then deletes it and checks the teardown order.
func TestExperimentGatewayTutorial(t *testing.T) {
	ns := namespace(t)
	applyComponents(t)
	workflowTemplate(t, "gateway-validation", "Succeeded")
	ctx := t.Context()
	w := newWatcher()
	w.watchKind(t, ctx, experimentAPI, "Experiment", ns)
	for _, k := range []struct{ api, kind string }{
		{"compute.gcp.m.upbound.io/v1beta1", "Network"}, {"compute.gcp.m.upbound.io/v1beta1", "Subnetwork"},
		{"container.gcp.m.upbound.io/v1beta1", "Cluster"}, {"container.gcp.m.upbound.io/v1beta1", "NodePool"}, {"cloudplatform.gcp.m.upbound.io/v1beta1", "ProjectIAMMember"},
		{"argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration"}, {"kubernetes.m.crossplane.io/v1alpha1", "Object"},
		{"workflows.m.fleetplane.io/v1alpha1", "WorkflowRun"},
	} {
		w.watchKind(t, ctx, k.api, k.kind, ns)
	}

	start := time.Now()
	apply(t, example(t, "experiment/gateway-tutorial.yaml", ns))
	xrOf := func() *unstructured.Unstructured { return get(t, experimentAPI, "Experiment", ns, "gateway-tutorial") }
	eventually(t, 4*time.Minute, "the experiment Complete", func() (bool, string) {
		x := xrOf()
		if x == nil {
			return false, "no experiment"
		}
		p, msg := phaseOf(x)
		if p == "Failed" {
			t.Fatalf("experiment failed: %s", msg)
		}
		return p == "Complete", p + ": " + msg
	})
	t.Logf("apply → Complete in %s: %s", time.Since(start).Round(100*time.Millisecond), w.timeline(start))

	t.Run("a complete experiment is Ready", func(t *testing.T) {
		// Crossplane may briefly write back conditions from a stale cache
		// (crossplane/crossplane#7062); what matters is where it settles.
		eventually(t, time.Minute, "Ready=True", func() (bool, string) {
			s, r, m := condition(xrOf(), "Ready")
			return s == "True", r + ": " + m
		})
	})

	t.Run("phases come in order", func(t *testing.T) {
		order := []string{"Pending", "Provisioning", "Ready", "Running", "Complete"}
		seen := w.seen()
		last := -1
		for _, p := range seen {
			i := slices.Index(order, p)
			if i < last {
				t.Fatalf("phase %s after %s: %v", p, order[last], seen)
			}
			last = i
		}
		// Running is not required: the stand-in's workflow may run and
		// succeed between two observations of a loaded provider, and an
		// experiment then goes from Ready to Complete, which is right.
		for _, must := range []string{"Provisioning", "Ready", "Complete"} {
			if !slices.Contains(seen, must) {
				t.Errorf("phase %s never seen: %v", must, seen)
			}
		}
	})

	c := composedByResourceName(t, ns, "gateway-tutorial")
	t.Run("the load generator deploys only after the app is Healthy and Synced", func(t *testing.T) {
		appName := ns + "-gateway-tutorial-app"
		healthy, ok := env.Experiments.ArgoCD.HealthyAt(appName)
		if !ok {
			t.Fatalf("Argo CD never saw %s Healthy", appName)
		}
		lg := get(t, "argoproj.io/v1alpha1", "Application", environment.ArgoCDNamespace, ns+"-gateway-tutorial-loadgen")
		if lg == nil {
			t.Fatal("no loadgen Application")
		}
		if created := lg.GetCreationTimestamp().Time; created.Before(healthy.Truncate(time.Second)) {
			t.Errorf("loadgen Application created at %s, before the app was Healthy at %s", created, healthy)
		}
		server, _, _ := unstructured.NestedString(lg.Object, "spec", "destination", "server")
		if server != standin.InClusterServer {
			t.Errorf("hub target deploys to %q", server)
		}
	})

	t.Run("the GKE cluster runs in a VPC and subnet of its own", func(t *testing.T) {
		sub := c["subnet-app"]
		if sub == nil || c["network-app"] == nil {
			t.Fatal("no Network or Subnetwork composed")
		}
		subnet := sub.GetAnnotations()["crossplane.io/external-name"]
		vpc := c["network-app"].GetAnnotations()["crossplane.io/external-name"]
		if got, _, _ := unstructured.NestedString(c["cluster-app"].Object, "spec", "forProvider", "subnetwork"); got != subnet {
			t.Errorf("the cluster's subnetwork is %q, want %q", got, subnet)
		}
		if got, _, _ := unstructured.NestedString(sub.Object, "spec", "forProvider", "network"); got != vpc {
			t.Errorf("the subnet's network is %q, want %q", got, vpc)
		}
	})

	t.Run("the GKE cluster is registered with Argo CD, through workload identity", func(t *testing.T) {
		reg := c["registration-app"]
		if reg == nil {
			t.Fatal("no ClusterRegistration")
		}
		secretName, _, _ := unstructured.NestedString(reg.Object, "status", "atProvider", "secretName")
		s := &corev1.Secret{}
		if err := env.Kube.Get(context.Background(), client.ObjectKey{Namespace: environment.ArgoCDNamespace, Name: secretName}, s); err != nil {
			t.Fatalf("Argo CD cluster Secret %q: %v", secretName, err)
		}
		app := get(t, "argoproj.io/v1alpha1", "Application", environment.ArgoCDNamespace, ns+"-gateway-tutorial-app")
		server, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "server")
		if string(s.Data["server"]) != server {
			t.Errorf("cluster Secret server %q; application deploys to %q", s.Data["server"], server)
		}
		// Argo CD's own helper for GKE, the cluster's CA, and no client
		// certificate (the kubeconfig has one; Argo CD does not use it).
		cfg := string(s.Data["config"])
		if !strings.Contains(cfg, `"execProviderConfig":{"command":"argocd-k8s-auth","args":["gcp"]`) || strings.Contains(cfg, "certData") || !strings.Contains(cfg, `"caData"`) {
			t.Errorf("cluster Secret config %s", cfg)
		}
		iam := c["argocd-access"]
		if iam == nil {
			t.Fatal("no IAM grant for Argo CD's service account")
		}
		if m, _, _ := unstructured.NestedString(iam.Object, "spec", "forProvider", "member"); m != "serviceAccount:argocd@fleetplane-lab.iam.gserviceaccount.com" {
			t.Errorf("IAM member %q", m)
		}
	})

	t.Run("the validation workflow got ordered parameters", func(t *testing.T) {
		run := c["workflow"]
		name, _, _ := unstructured.NestedString(run.Object, "status", "atProvider", "workflowName")
		wf := get(t, "argoproj.io/v1alpha1", "Workflow", environment.WorkflowsNamespace, name)
		if wf == nil {
			t.Fatalf("no Workflow %q", name)
		}
		params, _, _ := unstructured.NestedSlice(wf.Object, "spec", "arguments", "parameters")
		var names []string
		values := map[string]string{}
		for _, p := range params {
			m := p.(map[string]any)
			names = append(names, m["name"].(string))
			values[m["name"].(string)], _ = m["value"].(string)
		}
		want := []string{"experiment-name", "app-endpoint", "app-name", "app-observability", "loadgen-endpoint", "loadgen-name", "loadgen-observability", "p99-budget-ms"}
		if !slices.Equal(names, want) {
			t.Errorf("parameters %v, want %v", names, want)
		}
		// Where the app's metrics are, as its Component declares.
		if got, want := values["app-observability"], `[{"component":"envoy-gateway","podMonitor":true,"podLabels":{"control-plane":"envoy-gateway"},"metricsPath":"/metrics","metricsPort":19001}]`; got != want {
			t.Errorf("app-observability = %s, want %s", got, want)
		}
	})

	t.Run("the experiment expires a day after it was created", func(t *testing.T) {
		x := xrOf()
		want := x.GetCreationTimestamp().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		e := c["expiry"]
		if e == nil {
			t.Fatal("no Expiry")
		}
		at, _, _ := unstructured.NestedString(e.Object, "spec", "forProvider", "expiresAt")
		uid, _, _ := unstructured.NestedString(e.Object, "spec", "forProvider", "target", "uid")
		status, _, _ := unstructured.NestedString(x.Object, "status", "expiresAt")
		if at != want || status != want || uid != string(x.GetUID()) {
			t.Errorf("Expiry at %s for UID %s, status.expiresAt %s; want %s for %s", at, uid, status, want, x.GetUID())
		}
		if owner := metav1.GetControllerOf(e); owner == nil || owner.UID != x.GetUID() {
			t.Errorf("the Expiry's controller is %v, not the experiment", owner)
		}
	})

	t.Run("crossplane beta trace shows the tree", func(t *testing.T) {
		out, err := env.Trace("experiment", "gateway-tutorial", ns)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		t.Logf("crossplane beta trace experiment gateway-tutorial:\n%s", out)
		for _, k := range []string{"Network/", "Subnetwork/", "Cluster/", "NodePool/", "ClusterRegistration/", "Object/", "WorkflowRun/", "Expiry/", "Usage/"} {
			if !strings.Contains(out, k) {
				t.Errorf("trace lacks %s", k)
			}
		}
	})

	t.Run("deletion runs in reverse dependency order", func(t *testing.T) {
		x := xrOf()
		if err := env.Kube.Delete(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		keys := map[string]string{}
		for rn, o := range c {
			keys[rn] = o.GetKind() + "/" + o.GetName()
		}
		eventually(t, 3*time.Minute, "every composed resource gone", func() (bool, string) {
			var left []string
			for _, rn := range []string{"workflow", "application-loadgen", "application-app", "registration-app", "nodepool-app", "cluster-app", "subnet-app", "network-app"} {
				if _, ok := w.goneAt(keys[rn]); !ok {
					left = append(left, rn)
				}
			}
			return len(left) == 0, fmt.Sprintf("left: %v", left)
		})
		before := func(first, then string) {
			a, _ := w.goneAt(keys[first])
			b, _ := w.goneAt(keys[then])
			if !a.Before(b) {
				t.Errorf("%s went at %s, not before %s at %s", first, a.Format(time.StampMilli), then, b.Format(time.StampMilli))
			}
		}
		before("workflow", "application-loadgen")
		before("application-loadgen", "application-app")
		before("application-app", "registration-app")
		before("registration-app", "cluster-app")
		before("nodepool-app", "cluster-app")
		before("cluster-app", "subnet-app")
		before("subnet-app", "network-app")

		// And the external side went with them.
		gkeName := c["cluster-app"].GetAnnotations()["crossplane.io/external-name"]
		if got := env.Experiments.GKE.State("Cluster", gkeName); got != "deleted" {
			t.Errorf("GKE cluster %s is %q", gkeName, got)
		}
		for _, r := range []struct{ rn, kind string }{{"subnet-app", "Subnetwork"}, {"network-app", "Network"}} {
			name := c[r.rn].GetAnnotations()["crossplane.io/external-name"]
			if got := env.Experiments.GKE.State(r.kind, name); got != "deleted" {
				t.Errorf("GCP %s %s is %q", r.kind, name, got)
			}
		}
		if pruned := env.Experiments.ArgoCD.Pruned(); !slices.Contains(pruned, ns+"-gateway-tutorial-app") {
			t.Errorf("Argo CD did not prune the app's resources: %v", pruned)
		}
		secrets := &corev1.SecretList{}
		_ = env.Kube.List(context.Background(), secrets, client.InNamespace(environment.ArgoCDNamespace), client.MatchingLabels{"experiments.fleetplane.io/namespace": ns})
		if len(secrets.Items) != 0 {
			t.Errorf("Argo CD cluster Secrets left: %d", len(secrets.Items))
		}
	})
}

// TestExperimentOutcomes covers the endings other than success: a failing
// validation workflow fails the experiment; a missing template in manual
// mode runs a workflow that waits for `argo resume`; a cluster type the
// namespace's policy does not grant (talos) is refused without composing
// anything.
func TestExperimentOutcomes(t *testing.T) {
	ns := namespace(t)
	applyComponents(t)
	workflowTemplate(t, "always-fails", "Failed")

	failing := example(t, "experiment/hub-smoke.yaml", ns)
	failing.SetName("failing")
	_ = unstructured.SetNestedField(failing.Object, "always-fails", "spec", "workflow", "template")
	_ = unstructured.SetNestedField(failing.Object, "workflow", "spec", "workflow", "completion", "mode")
	apply(t, failing, example(t, "experiment/hub-smoke.yaml", ns), example(t, "experiment/talos-edge.yaml", ns))

	until := func(name, phase, want string) {
		eventually(t, 3*time.Minute, name+" "+phase, func() (bool, string) {
			x := get(t, experimentAPI, "Experiment", ns, name)
			if x == nil {
				return false, "no experiment"
			}
			p, msg := phaseOf(x)
			return p == phase && strings.Contains(msg, want), p + ": " + msg
		})
	}
	until("failing", "Failed", "failed: child 'validate' failed")
	until("hub-smoke", "Running", "waits for `argo resume -n argo "+ns+"-hub-smoke-validation-")
	refused(t, experimentAPI, "Experiment", ns, "talos-edge", "experiment.fleetplane.io", "is a talos cluster, which the policy does not grant", "spec.experiments.talos")
	if c := composedByResourceName(t, ns, "talos-edge"); len(c) != 0 {
		t.Errorf("a target the policy does not grant composed %d resources: %v", len(c), keysOf(c))
	}
	x := get(t, experimentAPI, "Experiment", ns, "failing")
	if ready, _, _ := condition(x, "Ready"); ready == "True" {
		t.Error("a failed experiment is Ready")
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
