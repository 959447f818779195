package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
)

// hubWithDatabases is a provisioned hub whose resource group, cluster, n
// databases and heartbeat table are all observed ready: the largest steady
// state an ADXCluster reaches.
func hubWithDatabases(n int) call {
	var dbs strings.Builder
	observed := map[string]string{"resource-group": readyRG(), "cluster": cluster(true)}
	for i := range n {
		name := fmt.Sprintf("Db%03d", i)
		fmt.Fprintf(&dbs, "  - {databaseName: %s, telemetryType: Metrics}\n", name)
		observed["database-"+name] = observedMR("kusto.azure.m.upbound.io/v1beta1", "Database", name, true, "")
	}
	observed["database-FleetDiscovery"] = observedMR("kusto.azure.m.upbound.io/v1beta1", "Database", "FleetDiscovery", true, "")
	observed["heartbeat-table"] = observedMR("kusto.m.fleetplane.io/v1alpha1", "Table", "t", true, "")
	xr := strings.Replace(provisionXR, "  provision:\n",
		"  role: Federated\n  federation: {heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}\n  databases:\n"+dbs.String()+"  provision:\n", 1)
	return call{xr: xr, observed: observed}
}

func partitionWithTargets(n int) call {
	var targets strings.Builder
	for i := range n {
		fmt.Fprintf(&targets, "    - {endpoint: 'https://hub%02d.westeurope.kusto.windows.net', heartbeatDatabase: FleetDiscovery, heartbeatTable: Heartbeats}\n", i)
	}
	xr := strings.Replace(partitionXR, "    federatedTargets:\n", "    federatedTargets:\n"+targets.String(), 1)
	return call{xr: xr, observed: map[string]string{"heartbeat": observedMR("kusto.m.fleetplane.io/v1alpha1", "Heartbeat", "hb", true, "")}}
}

func benchmarkRun(b *testing.B, c call, wantResources int) {
	f := NewFunction(logging.NewNopLogger())
	req := c.request(b)
	rsp, _ := f.RunFunction(context.Background(), req)
	if got := len(rsp.GetDesired().GetResources()); got != wantResources {
		b.Fatalf("composed %d resources, want %d", got, wantResources)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.RunFunction(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// 1 resource group + 1 cluster + 50 databases + heartbeat database + table + federation.
func BenchmarkRunFunctionHub50Databases(b *testing.B) { benchmarkRun(b, hubWithDatabases(50), 55) }

func BenchmarkRunFunctionPartition10Targets(b *testing.B) {
	benchmarkRun(b, partitionWithTargets(10), 1)
}

// experimentChain is an experiment of n GKE targets, each depending on the
// one before, with every cluster, node pool, registration and application
// observed ready and the validation running: the largest steady state an
// Experiment reaches (16 targets is the schema's maximum).
func experimentChain(n int) call {
	var xr strings.Builder
	xr.WriteString(`apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: chain, namespace: lab, uid: 0c0c0c0c-1111-2222-3333-444444444444, creationTimestamp: "2026-11-20T08:00:00Z"}
spec:
  workflow: {template: chain-validation, params: {rps: "100"}}
  targets:
`)
	observed := map[string]string{
		"expiry":   observedMR("lifecycle.m.fleetplane.io/v1alpha1", "Expiry", "e", true, ""),
		"workflow": observedMR("workflows.m.fleetplane.io/v1alpha1", "WorkflowRun", "w", true, "  atProvider:\n    workflowName: w\n    phase: Running\n"),
	}
	required := map[string][]string{}
	for i := range n {
		t := fmt.Sprintf("t%02d", i)
		fmt.Fprintf(&xr, "  - name: %s\n    cluster: {type: gke, zone: us-central1-a}\n    components:\n    - app: app%02d\n", t, i)
		if i > 0 {
			fmt.Fprintf(&xr, "    depends: [t%02d]\n", i-1)
		}
		required[fmt.Sprintf("component-app%02d", i)] = []string{}
		observed["cluster-"+t] = observedMR("container.gcp.m.upbound.io/v1beta1", "Cluster", "chain-"+t, true, fmt.Sprintf("  atProvider:\n    endpoint: 10.0.0.%d\n", i+1))
		observed["nodepool-"+t] = observedMR("container.gcp.m.upbound.io/v1beta1", "NodePool", "chain-"+t+"-nodes", true, "")
		observed["registration-"+t] = observedMR("argocd.m.fleetplane.io/v1alpha1", "ClusterRegistration", "r-"+t, true, "")
		observed["application-"+t] = observedMR("kubernetes.m.crossplane.io/v1alpha1", "Object", "a-"+t, true, "")
	}
	return call{xr: xr.String(), input: experimentInput, observed: observed, required: required}
}

// Per target: cluster, node pool, registration, application and four
// Usages (of the cluster by node pool and registration, of the
// registration by the application, of the application by the workflow),
// one Usage per dependency, then the expiry and the workflow: 9n+1.
func BenchmarkRunFunctionExperiment16Targets(b *testing.B) {
	benchmarkRun(b, experimentChain(16), 9*16+1)
}

func BenchmarkRunFunctionExperiment2Targets(b *testing.B) {
	benchmarkRun(b, experimentChain(2), 9*2+1)
}
