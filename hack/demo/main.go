// Command demo runs fleetplane locally, offline: a control plane with
// Crossplane, fleetplane's packages installed through Crossplane's package
// manager, a federated fleet of one hub and three partitions on local Kusto
// servers, and the gateway-tutorial Experiment on stand-ins for GKE, Argo CD
// and Argo Workflows. `make demo` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/node"
)

func main() {
	exit := flag.Bool("exit", false, "stop once the fleet has converged instead of waiting for Ctrl-C")
	interval := flag.Duration("interval", 10*time.Second, "heartbeat and federation interval")
	check := flag.Duration("check", 2*time.Second, "how often partitions and hubs look for schema changes in between (kusto.changeCheckInterval; 0 leaves it unset)")
	audit := flag.Bool("audit", false, "have kube-apiserver log every request to .cache/demo/audit.log, to see who writes what")
	flag.Parse()
	// Ctrl-C (and make's SIGTERM to its recipe) at any point stops
	// everything started so far and exits cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *exit, *interval, *check, *audit)
	switch {
	case ctx.Err() != nil:
		sayf("stopped")
	case err != nil:
		stop()
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1) //nolint:gocritic // stop() ran; nothing else is deferred
	}
}

func sayf(format string, a ...any) { fmt.Printf("==> "+format+"\n", a...) }

func run(ctx context.Context, exit bool, interval, check time.Duration, audit bool) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	// Everything runs as pods on real nodes: Crossplane, the packages,
	// adx-mon, the placed workloads.
	if why := node.Supported(); why != nil {
		return fmt.Errorf("this machine cannot run the demo's nodes (%w); run `make demo` as root on Linux, where tools/tools.sh node-runtime installs containerd, runc and the CNI plugins", why)
	}
	dir := filepath.Join(root, ".cache", "demo")
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	sayf("starting etcd, kube-apiserver and Crossplane; building and installing fleetplane's packages")
	// Two real nodes run the control plane's pods: Crossplane's, the
	// packages', adx-mon's.
	o := environment.Options{Interval: interval, ChangeCheck: check, Logf: sayf, Nodes: 2}
	if audit {
		o.AuditLog = filepath.Join(dir, "audit.log")
	}
	env, err := environment.Start(ctx, root, dir, o)
	if err != nil {
		return fmt.Errorf("%w\nlogs are in %s", err, dir)
	}
	defer env.Stop()
	pkgs, err := env.Kubectl(ctx, "get", "pkg")
	if err != nil {
		return err
	}
	sayf("installed from the registry at %s with crossplane xpkg install; the package manager resolved the rest:\n%s", env.Registry.Host, pkgs)

	hub, err := env.KustoServer("FleetDiscovery", "Metrics", "Logs")
	if err != nil {
		return err
	}
	var parts []*kustoserver.Server
	for i, geo := range []string{"westeurope", "eastus", "japaneast"} {
		p, err := env.KustoServer("Metrics", "Logs")
		if err != nil {
			return err
		}
		for db, cmds := range map[string][]string{
			"Metrics": {".create table ['cpu'] (['Timestamp']:datetime, ['Value']:real)", ".create table ['memory'] (['Timestamp']:datetime, ['Value']:real)", fmt.Sprintf(".create table ['%s_only'] (['v']:real)", geo)},
			"Logs":    {".create table ['app'] (['Timestamp']:datetime, ['Message']:string)", ".create-or-alter function with (view=true) ['errors']() { ['app'] }"},
		} {
			for _, c := range cmds {
				if err := p.Exec(db, c); err != nil {
					return err
				}
			}
		}
		parts = append(parts, p)
		sayf("partition-%d (%s) serves Kusto at %s", i+1, geo, p.URL)
	}
	sayf("hub serves Kusto at %s", hub.URL)

	manifests := fleet(hub, parts)
	file := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(manifests, "---\n")), 0o644); err != nil {
		return err
	}
	applied := time.Now()
	for _, m := range manifests {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(m), &u.Object); err != nil {
			return err
		}
		if err := env.Kube.Create(ctx, u); err != nil {
			return fmt.Errorf("apply %s: %w", u.GetName(), err)
		}
	}
	sayf("applied a hub and three partitions (%s)", file)

	if err := until(ctx, 5*time.Minute, func() bool {
		return len(hub.Functions("Metrics")) == 2+len(parts) && len(hub.EntityGroups("Metrics")["MetricsSpoke"]) == len(parts)
	}); err != nil {
		return fmt.Errorf("the fleet did not converge: %w; logs are in %s", err, dir)
	}
	converged := time.Since(applied)
	sayf("federation converged %s after kubectl apply (interval %s); %s since start", converged.Round(100*time.Millisecond), interval, time.Since(start).Round(time.Second))

	for _, name := range []string{"hub", "partition-1"} {
		out, err := env.Trace("adxcluster", name, "fleet")
		if err != nil {
			return fmt.Errorf("crossplane beta trace: %w\n%s", err, out)
		}
		sayf("crossplane beta trace adxcluster %s -n fleet\n%s", name, out)
	}
	if err := printFunctions(ctx, hub.URL, env.PodHost()); err != nil {
		return err
	}
	// What the operator fleetplane replaces takes up to two 10-minute
	// loops for: a table created on a partition, served by the hub.
	created := time.Now()
	if err := parts[0].Exec("Metrics", ".create table ['gpu'] (['Timestamp']:datetime, ['Value']:real)"); err != nil {
		return err
	}
	if err := until(ctx, 2*interval+time.Minute, func() bool { _, ok := hub.Functions("Metrics")["gpu"]; return ok }); err != nil {
		return fmt.Errorf("the new table gpu did not reach the hub: %w; logs are in %s", err, dir)
	}
	sayf("created table gpu on partition-1: the hub's function gpu served it %s later (heartbeat every %s, changes looked for every %s)", time.Since(created).Round(100*time.Millisecond), interval, check)
	if err := experiment(ctx, env, root); err != nil {
		return fmt.Errorf("%w\nlogs are in %s", err, dir)
	}
	if err := adxmon(ctx, env, root); err != nil {
		return fmt.Errorf("%w\nlogs are in %s", err, dir)
	}
	stopClusters, err := placement(ctx, env, root)
	// The workload clusters stop before the control plane that reaches them.
	defer stopClusters()
	if err != nil {
		return fmt.Errorf("%w\nlogs are in %s", err, dir)
	}
	for name, n := range residentMemory(ctx, env) {
		sayf("%s resident memory: %.1f MiB", name, float64(n)/(1<<20))
	}

	summary, err := health(ctx, env)
	if err != nil {
		return err
	}
	sayf("fleet health, scraped from the provider's and the function's /metrics (deploy/observability has the dashboard and alerts):\n%s", summary)

	cli, err := controlplane.Tool(root, "crossplane")
	if err != nil {
		return err
	}
	kubectl, err := controlplane.Tool(root, "kubectl")
	if err != nil {
		return err
	}
	providerMetrics, err := env.ProviderMetrics(ctx)
	if err != nil {
		return err
	}
	fmt.Printf(`
The fleet runs. Try, in another terminal (kubectl and crossplane are the
pinned tools the demo built):

  export KUBECONFIG=%[1]s
  alias kubectl=%[2]s crossplane=%[3]s
  kubectl get pkg
  kubectl get adxclusters -n fleet
  kubectl get experiments -n experiments
  kubectl get adxmons; kubectl get pods -n monitoring
  crossplane beta trace adxmon complete-adx-monitor
  crossplane beta trace adxcluster hub -n fleet
  crossplane beta trace experiment gateway-tutorial -n experiments
  kubectl get placements -n team-a; kubectl get job smoke -n team-a -o yaml
  curl -s %[4]s/fleetplane/functions?db=Metrics
  curl -sk -H "Authorization: Bearer $(kubectl create token prometheus -n monitoring)" %[6]s | grep ^fleetplane_

Logs of every process are in %[5]s.
`, env.CP.Kubeconfig, kubectl, cli, hub.URL, dir, providerMetrics)
	if exit {
		return nil
	}
	fmt.Println("Press Ctrl-C to stop everything.")
	<-ctx.Done()
	sayf("stopping")
	return nil
}

// until polls cond every 250 ms until it holds, ctx ends or timeout passes.
func until(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}

// fleet is the hub and partition ADXClusters of the demo.
func fleet(hub *kustoserver.Server, parts []*kustoserver.Server) []string {
	out := []string{`apiVersion: v1
kind: Namespace
metadata: {name: fleet}
`, fmt.Sprintf(`apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: hub, namespace: fleet}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: hub
  endpoint: %s
  allowInsecureEndpoints: true
  role: Federated
  federation:
    heartbeatDatabase: FleetDiscovery
    heartbeatTable: Heartbeats
    heartbeatTTL: 1h
`, environment.LocalComposition, hub.URL)}
	geos := []string{"westeurope", "eastus", "japaneast"}
	for i, p := range parts {
		out = append(out, fmt.Sprintf(`apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: partition-%d, namespace: fleet}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: partition-%d
  endpoint: %s
  allowInsecureEndpoints: true
  role: Partition
  federation:
    partitioning: {geo: %s}
    federatedTargets:
    - endpoint: %s
      heartbeatDatabase: FleetDiscovery
      heartbeatTable: Heartbeats
`, i+1, environment.LocalComposition, i+1, p.URL, geos[i], hub.URL))
	}
	return out
}

// printFunctions shows the hub's functions as Kusto lists them. The hub
// listens on host, where the provider's pod reaches it.
func printFunctions(ctx context.Context, endpoint, host string) error {
	c, err := kusto.New(endpoint, nil, kusto.Options{PlainHTTP: &kusto.PlainHTTP{Networks: []netip.Prefix{netip.MustParsePrefix(host + "/32")}}})
	if err != nil {
		return err
	}
	defer c.Close()
	for _, db := range []string{"Metrics", "Logs"} {
		rows, err := c.Mgmt(ctx, db, kql.ShowFunctions)
		if err != nil {
			return err
		}
		var lines []string
		for _, r := range rows {
			name, _ := r.StringByName("Name")
			body, _ := r.StringByName("Body")
			lines = append(lines, fmt.Sprintf("  %-14s %s", name, body))
		}
		sort.Strings(lines)
		sayf(".show functions in hub database %s:\n%s", db, strings.Join(lines, "\n"))
	}
	return nil
}

// experiment applies the example Components and the gateway tutorial, and
// follows the Experiment's phases to Complete.
func experiment(ctx context.Context, env *environment.Env, root string) error {
	const ns = "experiments"
	if err := env.WorkflowTemplate(ctx, "gateway-validation", "Succeeded"); err != nil {
		return err
	}
	files, _ := filepath.Glob(filepath.Join(root, "examples", "experiment", "components", "*.yaml"))
	files = append(files, filepath.Join(root, "examples", "experiment", "gateway-tutorial.yaml"))
	objs := []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, u)
	}
	applied := time.Now()
	for _, u := range objs {
		if err := env.Kube.Create(ctx, u); err != nil {
			return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	sayf("applied examples/experiment/components and examples/experiment/gateway-tutorial.yaml: a GKE app target and a hub load generator that depends on it")

	xr := &unstructured.Unstructured{}
	xr.SetAPIVersion("experiments.fleetplane.io/v1alpha1")
	xr.SetKind("Experiment")
	xr.SetNamespace(ns)
	xr.SetName("gateway-tutorial")
	last, err := followPhase(ctx, env, xr, applied, "Complete", "Failed")
	if err != nil {
		return err
	}
	if err := timeline(ctx, env, xr, applied); err != nil {
		return err
	}
	out, err := env.Trace("experiment", "gateway-tutorial", ns)
	if err != nil {
		return fmt.Errorf("crossplane beta trace: %w\n%s", err, out)
	}
	sayf("crossplane beta trace experiment gateway-tutorial -n %s\n%s", ns, out)
	if last != "Complete" {
		return fmt.Errorf("the experiment ended %s", last)
	}
	return nil
}

// adxmon installs the complete adx-mon example on a local Kusto server:
// the cluster adopted rather than provisioned (its endpoint answers on
// plain http), the collectors sending to the stack's own ingestor.
func adxmon(ctx context.Context, env *environment.Env, root string) error {
	// Where adx-mon's ingestor pods reach it.
	server, err := env.KustoServer("Metrics", "Logs", "Traces")
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "adxmon", "complete.yaml"))
	if err != nil {
		return err
	}
	mon := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &mon.Object); err != nil {
		return err
	}
	spec := mon.Object["spec"].(map[string]any)
	c := spec["adx"].(map[string]any)["clusters"].([]any)[0].(map[string]any)
	delete(c, "provision")
	c["endpoint"], c["allowInsecureEndpoints"] = server.URL, true
	c["connection"] = map[string]any{"type": "MSI", "clientId": "11111111-1111-1111-1111-111111111111"}
	delete(spec["collector"].(map[string]any), "ingestorEndpoint")
	delete(spec["collector"].(map[string]any), "ingestorAuth")
	// adx-mon v0.3.0's own images, built from its module; one ingestor
	// per node, as the composed anti-affinity places them.
	images, err := env.Cluster.PushAdxMon(ctx, root)
	if err != nil {
		return err
	}
	for c, ref := range images {
		spec[c].(map[string]any)["image"] = ref
	}
	spec["ingestor"].(map[string]any)["replicas"] = int64(len(env.Cluster.Nodes))
	sayf("built adx-mon v0.3.0's ingestor, collector and alerter into images in the registry; the ADXMon runs them on %d nodes", len(env.Cluster.Nodes))
	applied := time.Now()
	if err := env.Kube.Create(ctx, mon); err != nil {
		return fmt.Errorf("apply ADXMon: %w", err)
	}
	sayf("applied examples/adxmon/complete.yaml, adopting the Kusto server at %s", server.URL)
	last, err := followPhase(ctx, env, mon, applied, "Installed", "Failed")
	if err != nil {
		return err
	}
	if err := timeline(ctx, env, mon, applied); err != nil {
		return err
	}
	out, err := env.Trace("adxmon", mon.GetName(), "")
	if err != nil {
		return fmt.Errorf("crossplane beta trace: %w\n%s", err, out)
	}
	sayf("crossplane beta trace adxmon %s\n%s", mon.GetName(), out)
	if last != "Installed" {
		return fmt.Errorf("the ADXMon ended %s", last)
	}
	return nil
}

// followPhase prints each status.phase an XR passes through until it
// reaches one of final, and returns that one.
func followPhase(ctx context.Context, env *environment.Env, xr *unstructured.Unstructured, applied time.Time, final ...string) (string, error) {
	kind := strings.ToLower(xr.GetKind())
	last := ""
	var dead error
	err := until(ctx, 5*time.Minute, func() bool {
		if dead = env.Alive(); dead != nil {
			return true
		}
		if err := env.Kube.Get(ctx, client.ObjectKeyFromObject(xr), xr); err != nil {
			return false
		}
		phase, _, _ := unstructured.NestedString(xr.Object, "status", "phase")
		if phase == "" || phase == last {
			return false
		}
		last = phase
		sayf("%s %s: %s after %s", kind, xr.GetName(), phase, time.Since(applied).Round(100*time.Millisecond))
		return slices.Contains(final, phase)
	})
	switch {
	case dead != nil:
		return last, dead
	case err != nil:
		return last, fmt.Errorf("%s %s did not reach %v: %w (phase %q)", kind, xr.GetName(), final, err, last)
	}
	return last, nil
}

// timeline prints where an XR's time went: when each composed resource
// was created and when it turned Ready, from the API server's timestamps
// (second resolution), relative to the apply.
func timeline(ctx context.Context, env *environment.Env, xr *unstructured.Unstructured, applied time.Time) error {
	if err := env.Kube.Get(ctx, client.ObjectKeyFromObject(xr), xr); err != nil {
		return err
	}
	type row struct {
		what           string
		created, ready time.Duration
		// readiness is what the Ready condition says: "" when there
		// is none (Kubernetes' own kinds, which the function judges
		// from their status), "True" or anything else.
		readiness string
	}
	var rows []row
	refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "crossplane", "resourceRefs")
	for _, r := range refs {
		m, _ := r.(map[string]any)
		o := &unstructured.Unstructured{}
		o.SetAPIVersion(fmt.Sprint(m["apiVersion"]))
		o.SetKind(fmt.Sprint(m["kind"]))
		// A cluster-scoped XR's refs name the namespace of what it
		// composed; a namespaced XR composes in its own.
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = xr.GetNamespace()
		}
		if err := env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprint(m["name"])}, o); err != nil {
			continue
		}
		rw := row{what: o.GetKind() + "/" + o.GetName(), created: o.GetCreationTimestamp().Sub(applied)}
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] != "Ready" {
				continue
			}
			rw.readiness = fmt.Sprint(cm["status"])
			if t, err := time.Parse(time.RFC3339, fmt.Sprint(cm["lastTransitionTime"])); err == nil {
				rw.ready = t.Sub(applied)
			}
		}
		rows = append(rows, rw)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].created < rows[j].created })
	var b strings.Builder
	for _, r := range rows {
		var ready string
		switch r.readiness {
		case "":
			ready = "no Ready condition"
		case "True":
			ready = fmt.Sprintf("Ready at %5s (%s after creation)", r.ready.Round(time.Second), (r.ready - r.created).Round(time.Second))
		default:
			ready = "not Ready"
		}
		fmt.Fprintf(&b, "  created at %5s, %-38s %s\n", r.created.Round(time.Second), ready, r.what)
	}
	sayf("where the %s's time went (seconds after the apply):\n%s", strings.ToLower(xr.GetKind()), strings.TrimRight(b.String(), "\n"))
	return nil
}
