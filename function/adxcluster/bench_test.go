package adxcluster

import (
	"fmt"
	"testing"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// hubWithDatabases is a provisioned hub whose resource group, cluster, n
// databases and heartbeat table are all observed ready: the largest steady
// state an ADXCluster reaches.
func hubWithDatabases(n int) ct.Call {
	xr := provisionedHub()
	observed := map[string]*ct.Resource{"resource-group": resourceGroup().Ready(), "cluster": runningCluster()}
	for i := range n {
		name := fmt.Sprintf("Db%03d", i)
		xr.Spec.Databases = append(xr.Spec.Databases, v1alpha1.DatabaseSpec{DatabaseName: name, TelemetryType: v1alpha1.TelemetryMetrics})
		observed["database-"+name] = database(name).Ready()
	}
	observed["database-FleetDiscovery"] = database("FleetDiscovery").Ready()
	observed["heartbeat-table"] = fleetplaneMR("Table").Ready()
	return ct.Call{XR: xr, Observed: observed}
}

func partitionWithTargets(n int) ct.Call {
	xr := partition()
	for i := range n {
		xr.Spec.Federation.FederatedTargets = append(xr.Spec.Federation.FederatedTargets, v1alpha1.FederatedTarget{
			Endpoint: fmt.Sprintf("https://hub%02d.westeurope.kusto.windows.net", i), HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats",
		})
	}
	return ct.Call{XR: xr, Observed: map[string]*ct.Resource{"heartbeat": fleetplaneMR("Heartbeat").Ready()}}
}

func benchmarkCompose(b *testing.B, c ct.Call, wantResources int) {
	b.Helper()
	ct.BenchmarkCompose(b, Composer, c, wantResources)
}

// 1 resource group + 1 cluster + 50 databases + heartbeat database + table + federation.
func BenchmarkComposeHub50Databases(b *testing.B) { benchmarkCompose(b, hubWithDatabases(50), 55) }

func BenchmarkComposePartition10Targets(b *testing.B) {
	benchmarkCompose(b, partitionWithTargets(10), 1)
}

// BenchmarkRunFunctionHub50Databases is BenchmarkComposeHub50Databases
// behind the function's gRPC service.
func BenchmarkRunFunctionHub50Databases(b *testing.B) {
	ct.BenchmarkRunFunction(b, v1alpha1.ADXClusterGroupVersionKind.GroupKind(), Composer, hubWithDatabases(50).Request(b))
}
