package adxmon

import (
	"testing"

	"github.com/crossplane/function-sdk-go/response"

	ct "github.com/fleetplane/fleetplane/internal/compose/composetest"
)

// BenchmarkComposeCompleteInstalled is one RunFunction of the seed's
// complete example once everything is installed, the state an ADXMon
// spends its life in: every composed resource observed, each one composed
// again (adx-mon's four CRDs decoded once per process, not per call).
func BenchmarkComposeCompleteInstalled(b *testing.B) {
	req := ct.Call{XR: complete(), Observed: through("alerter")}.Request(b)
	rsp := response.To(req, response.DefaultTTL)
	if err := Composer.Compose(req, rsp, nil); err != nil {
		b.Fatal(err)
	}
	// Namespace, ADXCluster, 3 components × (account, role, binding),
	// Service, StatefulSet, ConfigMap, DaemonSet, Deployment, 4 CRDs.
	if got := len(rsp.GetDesired().GetResources()); got != 20 {
		b.Fatalf("composed %d resources, want 20", got)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := Composer.Compose(req, response.To(req, response.DefaultTTL), nil); err != nil {
			b.Fatal(err)
		}
	}
}
