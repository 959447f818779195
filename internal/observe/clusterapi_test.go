package observe

import "testing"

func TestClusterAPIReady(t *testing.T) {
	gen := map[string]any{"name": "x", "generation": 1.0}
	initialization := func(infra, cp bool) map[string]any {
		return map[string]any{"status": map[string]any{"initialization": map[string]any{"infrastructureProvisioned": infra, "controlPlaneInitialized": cp}}}
	}
	cases := map[string]struct {
		ready, ok        bool
		apiVersion, kind string
		fields           map[string]any
	}{
		"Cluster initialized":                                {true, true, "cluster.x-k8s.io/v1beta2", "Cluster", initialization(true, true)},
		"Cluster whose control plane is not ready":           {false, true, "cluster.x-k8s.io/v1beta2", "Cluster", initialization(true, false)},
		"Cluster without infrastructure":                     {false, true, "cluster.x-k8s.io/v1beta2", "Cluster", initialization(false, true)},
		"Cluster without status":                             {false, true, "cluster.x-k8s.io/v1beta2", "Cluster", map[string]any{}},
		"MachineDeployment with its machines":                {true, true, "cluster.x-k8s.io/v1beta2", "MachineDeployment", map[string]any{"metadata": gen, "spec": map[string]any{"replicas": 2.0}, "status": map[string]any{"observedGeneration": 1.0, "readyReplicas": 2.0}}},
		"MachineDeployment short of machines":                {false, true, "cluster.x-k8s.io/v1beta2", "MachineDeployment", map[string]any{"metadata": gen, "spec": map[string]any{"replicas": 2.0}, "status": map[string]any{"observedGeneration": 1.0, "readyReplicas": 1.0}}},
		"MachineDeployment not seen":                         {false, true, "cluster.x-k8s.io/v1beta2", "MachineDeployment", map[string]any{"metadata": gen, "spec": map[string]any{"replicas": 2.0}, "status": map[string]any{"readyReplicas": 2.0}}},
		"TalosConfigTemplate that exists":                    {true, true, "bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", map[string]any{}},
		"machine template that exists":                       {true, true, "infrastructure.cluster.x-k8s.io/v1beta1", "DockerMachineTemplate", map[string]any{}},
		"an infrastructure cluster is its Object's to judge": {false, false, "infrastructure.cluster.x-k8s.io/v1beta2", "DockerCluster", map[string]any{"status": map[string]any{"ready": true}}},
		"a kind of another group":                            {false, false, "kusto.azure.upbound.io/v1beta1", "Cluster", map[string]any{}},
		"a group that only ends alike":                       {false, false, "evilcluster.x-k8s.io/v1", "Cluster", map[string]any{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ready, ok := clusterAPIReady(obj(tc.apiVersion, tc.kind, tc.fields))
			if ready != tc.ready || ok != tc.ok {
				t.Errorf("clusterAPIReady = %v, %v; want %v, %v", ready, ok, tc.ready, tc.ok)
			}
		})
	}
	if _, ok := clusterAPIReady(nil); ok {
		t.Error("nil is judged")
	}
}
