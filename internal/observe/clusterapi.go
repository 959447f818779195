package observe

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// clusterAPIReady judges the Cluster API kinds a talos target composes
// directly, none of which carries the Ready condition Crossplane's
// managed resources do. ok is false for every other kind. (The
// infrastructure's cluster and the control plane are delivered by
// provider-kubernetes Objects, which judge them.)
//
//   - A Cluster is ready once its infrastructure is provisioned and its
//     control plane initialized: Cluster API has then written its
//     kubeconfig.
//   - A MachineDeployment, once its controller has seen its current
//     generation and as many machines are ready as it asks for.
//   - Templates (bootstrap and machine templates) are ready once they
//     exist.
func clusterAPIReady(o *composed.Unstructured) (ready, ok bool) {
	if o == nil {
		return false, false
	}
	apiVersion, _ := o.Object["apiVersion"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	if group != "cluster.x-k8s.io" && !strings.HasSuffix(group, ".cluster.x-k8s.io") {
		return false, false
	}
	kind, _ := o.Object["kind"].(string)
	switch {
	case apiVersion == "cluster.x-k8s.io/v1beta2" && kind == "Cluster":
		return isTrue(o, "status", "initialization", "infrastructureProvisioned") && isTrue(o, "status", "initialization", "controlPlaneInitialized"), true
	case apiVersion == "cluster.x-k8s.io/v1beta2" && kind == "MachineDeployment":
		return seen(o) && num(o, "status", "readyReplicas") >= replicas(o), true
	case strings.HasSuffix(kind, "Template"):
		return o.GetName() != "", true
	}
	return false, false
}

func isTrue(o *composed.Unstructured, path ...string) bool {
	v, _ := field(o, path...)
	b, _ := v.(bool)
	return b
}
