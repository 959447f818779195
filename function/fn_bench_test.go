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
