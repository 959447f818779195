package adxmon

import (
	"testing"

	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// BenchmarkComposeCompleteInstalled is one RunFunction of the seed's
// complete example once everything is installed, the state an ADXMon
// spends its life in: every composed resource observed, each one composed
// again (adx-mon's four CRDs decoded once per process, not per call).
func BenchmarkComposeCompleteInstalled(b *testing.B) {
	// Namespace, ADXCluster, 3 components × (account, role, binding),
	// Service, StatefulSet, ConfigMap, DaemonSet, Deployment, 4 CRDs.
	ct.BenchmarkCompose(b, Composer, ct.Call{XR: complete(), Observed: through("alerter")}, 20)
}
