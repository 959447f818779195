package observe

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

func obj(apiVersion, kind string, fields map[string]any) *composed.Unstructured {
	u := composed.New()
	u.Object = fields
	u.Object["apiVersion"], u.Object["kind"] = apiVersion, kind
	if _, ok := u.Object["metadata"]; !ok {
		u.Object["metadata"] = map[string]any{"name": "x"}
	}
	return u
}

func TestKubernetesReady(t *testing.T) {
	gen := func(g float64) map[string]any { return map[string]any{"name": "x", "generation": g} }
	cases := map[string]struct {
		o    *composed.Unstructured
		want bool
	}{
		"StatefulSet with every replica ready":                 {obj("apps/v1", "StatefulSet", map[string]any{"metadata": gen(2), "spec": map[string]any{"replicas": 3.0}, "status": map[string]any{"observedGeneration": 2.0, "readyReplicas": 3.0}}), true},
		"StatefulSet whose controller has not seen its spec":   {obj("apps/v1", "StatefulSet", map[string]any{"metadata": gen(2), "spec": map[string]any{"replicas": 3.0}, "status": map[string]any{"observedGeneration": 1.0, "readyReplicas": 3.0}}), false},
		"StatefulSet short of replicas":                        {obj("apps/v1", "StatefulSet", map[string]any{"metadata": gen(1), "spec": map[string]any{"replicas": 3.0}, "status": map[string]any{"observedGeneration": 1.0, "readyReplicas": 2.0}}), false},
		"StatefulSet without replicas asks for one":            {obj("apps/v1", "StatefulSet", map[string]any{"metadata": gen(1), "status": map[string]any{"observedGeneration": 1.0, "readyReplicas": 1.0}}), true},
		"StatefulSet without status":                           {obj("apps/v1", "StatefulSet", map[string]any{"metadata": gen(1)}), false},
		"DaemonSet on every node":                              {obj("apps/v1", "DaemonSet", map[string]any{"metadata": gen(1), "status": map[string]any{"observedGeneration": 1.0, "desiredNumberScheduled": 2.0, "numberReady": 2.0, "updatedNumberScheduled": 2.0}}), true},
		"DaemonSet rolling":                                    {obj("apps/v1", "DaemonSet", map[string]any{"metadata": gen(1), "status": map[string]any{"observedGeneration": 1.0, "desiredNumberScheduled": 2.0, "numberReady": 2.0, "updatedNumberScheduled": 1.0}}), false},
		"DaemonSet on no node":                                 {obj("apps/v1", "DaemonSet", map[string]any{"metadata": gen(1), "status": map[string]any{"observedGeneration": 1.0}}), true},
		"Deployment available":                                 {obj("apps/v1", "Deployment", map[string]any{"metadata": gen(1), "spec": map[string]any{"replicas": 1.0}, "status": map[string]any{"observedGeneration": 1.0, "availableReplicas": 1.0, "updatedReplicas": 1.0}}), true},
		"Deployment not yet available":                         {obj("apps/v1", "Deployment", map[string]any{"metadata": gen(1), "spec": map[string]any{"replicas": 1.0}, "status": map[string]any{"observedGeneration": 1.0, "updatedReplicas": 1.0}}), false},
		"active Namespace":                                     {obj("v1", "Namespace", map[string]any{"status": map[string]any{"phase": "Active"}}), true},
		"terminating Namespace":                                {obj("v1", "Namespace", map[string]any{"status": map[string]any{"phase": "Terminating"}}), false},
		"ServiceAccount that exists":                           {obj("v1", "ServiceAccount", map[string]any{}), true},
		"ClusterRole that exists":                              {obj("rbac.authorization.k8s.io/v1", "ClusterRole", map[string]any{}), true},
		"a managed resource still goes by its Ready condition": {obj("kubernetes.m.crossplane.io/v1alpha1", "Object", map[string]any{}), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Ready(tc.o); got != tc.want {
				t.Errorf("Ready = %v, want %v", got, tc.want)
			}
		})
	}
}
