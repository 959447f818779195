package observe

import (
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// kubernetesReady judges the Kubernetes kinds fleetplane composes directly,
// which carry no Ready condition. ok is false for every other kind.
//
// A workload is ready once its controller has seen its current generation
// and as many pods are ready as it asks for; a DaemonSet on no node asks
// for none. Kinds without status are ready once they exist.
func kubernetesReady(o *composed.Unstructured) (ready, ok bool) {
	if o == nil {
		return false, false
	}
	// Compared as a pair, not joined into one string: this runs for
	// every composed resource of every call.
	apiVersion, _ := o.Object["apiVersion"].(string)
	kind, _ := o.Object["kind"].(string)
	const apps, rbac = "apps/v1", "rbac.authorization.k8s.io/v1"
	switch (typeOf{apiVersion, kind}) {
	case typeOf{apps, "StatefulSet"}:
		return seen(o) && num(o, "status", "readyReplicas") >= replicas(o), true
	case typeOf{apps, "Deployment"}:
		return seen(o) && num(o, "status", "availableReplicas") >= replicas(o) && num(o, "status", "updatedReplicas") >= replicas(o), true
	case typeOf{apps, "DaemonSet"}:
		want := num(o, "status", "desiredNumberScheduled")
		return seen(o) && num(o, "status", "numberReady") >= want && num(o, "status", "updatedNumberScheduled") >= want, true
	case typeOf{"v1", "Namespace"}:
		phase, _ := String(o, "status", "phase")
		return phase == "Active", true
	case typeOf{"v1", "ServiceAccount"}, typeOf{"v1", "ConfigMap"}, typeOf{"v1", "Service"}, typeOf{"v1", "Secret"},
		typeOf{rbac, "ClusterRole"}, typeOf{rbac, "ClusterRoleBinding"}, typeOf{rbac, "Role"}, typeOf{rbac, "RoleBinding"}:
		// Observed means it exists; there is nothing further to wait for.
		return o.GetName() != "", true
	}
	return false, false
}

type typeOf struct{ apiVersion, kind string }

// seen reports whether the workload's controller has observed its current
// spec: until then its status describes an older one.
func seen(o *composed.Unstructured) bool {
	// metadata.generation arrives as a float64 in a function request,
	// which GetGeneration does not read.
	g := num(o, "metadata", "generation")
	return g > 0 && num(o, "status", "observedGeneration") >= g
}

// replicas is spec.replicas, 1 when unset as the API server defaults it.
func replicas(o *composed.Unstructured) int64 {
	if _, ok := field(o, "spec", "replicas"); !ok {
		return 1
	}
	return num(o, "spec", "replicas")
}

// Int reads an integer at path, 0 when absent. Numbers arrive as float64
// from a function request and as int64 from the API server.
func Int(o *composed.Unstructured, path ...string) (int64, bool) {
	v, ok := field(o, path...)
	if !ok {
		return 0, false
	}
	return number(v)
}

// number reads an integer as the decoders hand it over: float64 from
// structpb and fnwire, int64 or int from a typed fixture.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func num(o *composed.Unstructured, path ...string) int64 {
	n, _ := Int(o, path...)
	return n
}

// String reads a string at path; ok is false when it is absent or not a
// string.
func String(o *composed.Unstructured, path ...string) (string, bool) {
	v, _ := field(o, path...)
	s, ok := v.(string)
	return s, ok
}

// Annotation reads one annotation, "" when absent. GetAnnotations copies
// every annotation into a new map to read one.
func Annotation(o *composed.Unstructured, key string) string {
	v, _ := String(o, "metadata", "annotations", key)
	return v
}

func field(o *composed.Unstructured, path ...string) (any, bool) {
	if o == nil {
		return nil, false
	}
	var cur any = o.Object
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}
