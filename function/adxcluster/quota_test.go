package adxcluster

import (
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// TestQuotas: a cluster over its subscription's quota (an SKU not
// allowed, more instances or databases than allowed) is refused with
// reason QuotaExceeded and the policy field, before anything is
// composed; teamPolicy sets no quota, so the defaults apply.
func TestQuotas(t *testing.T) {
	teamB := map[string]string{"fleetplane.io/policy": "team-b"}
	quota := fmt.Sprintf("spec.azure.provisioning[subscriptionId=%s].quota", ct.Subscription)
	edit := func(f func(*v1alpha1.ProvisionSpec, *v1alpha1.ADXClusterSpec)) *v1alpha1.ADXCluster {
		xr := provisioned()
		xr.Spec.Provision.ResourceGroup = "team-b-prod"
		f(xr.Spec.Provision, &xr.Spec)
		return xr
	}
	cases := map[string]struct {
		xr      *v1alpha1.ADXCluster
		message string
	}{
		"an SKU not allowed": {
			xr:      edit(func(p *v1alpha1.ProvisionSpec, _ *v1alpha1.ADXClusterSpec) { p.SkuName = "Standard_L32as_v3" }),
			message: "SKU Standard_L32as_v3 is not one the policy allows here (" + quota + ".skus)",
		},
		"too many instances": {
			xr:      edit(func(p *v1alpha1.ProvisionSpec, _ *v1alpha1.ADXClusterSpec) { p.Capacity = ptr.To[int32](11) }),
			message: "spec.provision.capacity 11 is more than the 10 instances a cluster may have (" + quota + ".maxCapacity)",
		},
		"autoscaling too far": {
			xr: edit(func(p *v1alpha1.ProvisionSpec, _ *v1alpha1.ADXClusterSpec) {
				p.AutoScale, p.AutoScaleMin, p.AutoScaleMax = true, 2, 1000
			}),
			message: "spec.provision.autoScaleMax 1000 is more than the 10 instances",
		},
		"too many databases": {
			xr: edit(func(_ *v1alpha1.ProvisionSpec, s *v1alpha1.ADXClusterSpec) {
				for i := range 17 {
					s.Databases = append(s.Databases, v1alpha1.DatabaseSpec{DatabaseName: fmt.Sprintf("db%d", i), TelemetryType: v1alpha1.TelemetryMetrics})
				}
			}),
			message: "17 databases are more than the 16 a cluster may have (" + quota + ".maxDatabases)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, ct.Call{XR: tc.xr, Policy: teamPolicy(), NamespaceLabels: teamB})
			r.WantNames()
			wantCondition(r, fnv1.Status_STATUS_CONDITION_FALSE, "QuotaExceeded", tc.message, "nothing new is composed and nothing is removed")
			r.WantEvent(fnv1.Severity_SEVERITY_FATAL, "QuotaExceeded")
		})
	}

	t.Run("raised by the admin", func(t *testing.T) {
		policy := teamPolicy()
		policy.Spec.Azure.Provisioning[0].Quota = &fpv1alpha1.ADXQuota{SKUs: []string{"Standard_L*"}, MaxCapacity: ptr.To[int32](20)}
		xr := edit(func(p *v1alpha1.ProvisionSpec, _ *v1alpha1.ADXClusterSpec) {
			p.SkuName, p.Capacity = "Standard_L32as_v3", ptr.To[int32](20)
		})
		r := run(t, ct.Call{XR: xr, Policy: policy, NamespaceLabels: teamB})
		r.WantNames("resource-group")
	})
}

// TestDiscoveredDatabasesWithinQuota: a hub creates the databases its
// partitions report only while the cluster has room under maxDatabases;
// the others are named as held back, and those it created before stay
// whatever the quota says now.
func TestDiscoveredDatabasesWithinQuota(t *testing.T) {
	fed := fleetplaneMR("Federation").Ready().AtProvider("missingDatabases", []any{"Zeta", "Traces", "Audit", "traces"})
	observed := map[string]*ct.Resource{
		"resource-group": resourceGroup().Ready(), "cluster": runningCluster(), "database-FleetDiscovery": database("FleetDiscovery").Ready(),
		"heartbeat-table": fleetplaneMR("Table").Ready(), "federation": fed,
	}
	policy := ct.Permissive()
	// Metrics, Logs and FleetDiscovery are declared: room for one more.
	policy.Spec.Azure.Provisioning[0].Quota.MaxDatabases = ptr.To[int32](4)
	r := run(t, ct.Call{XR: provisionedHub(), Observed: observed, Policy: policy})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "database-Audit", "heartbeat-table", "federation")
	wantCondition(r, fnv1.Status_STATUS_CONDITION_TRUE, ReasonClusterReady, "2 databases its partitions report are not created (Traces, Zeta): the cluster has the 4 databases the policy allows (spec.azure.provisioning[subscriptionId="+ct.Subscription+"].quota.maxDatabases)")

	// Lowered below what exists: nothing created is dropped.
	observed["database-Audit"] = database("Audit").Ready().Annotate(discoveredAnnotation, "true")
	observed["database-Zeta"] = database("Zeta").Ready().Annotate(discoveredAnnotation, "true")
	policy.Spec.Azure.Provisioning[0].Quota.MaxDatabases = ptr.To[int32](3)
	r = run(t, ct.Call{XR: provisionedHub(), Observed: observed, Policy: policy})
	r.WantNames("resource-group", "cluster", "database-Metrics", "database-Logs", "database-FleetDiscovery", "database-Audit", "database-Zeta", "heartbeat-table", "federation")
}
