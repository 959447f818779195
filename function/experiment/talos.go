package experiment

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"k8s.io/apimachinery/pkg/runtime"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// A talos target is a Talos Linux cluster that Cluster API provisions in
// the Experiment's namespace: a Cluster whose control plane is Sidero's
// TalosControlPlane and whose workers are a MachineDeployment
// bootstrapped by a TalosConfigTemplate, on the infrastructure provider
// (its cluster object and machine template) the ClusterProviderConfig
// names. Cluster API, its Talos providers and the infrastructure
// provider, which the cluster admin runs, make machines of them. Once the
// control plane is initialized Cluster API has written the cluster's
// kubeconfig to <cluster>-kubeconfig, which the target's
// ClusterRegistration registers with Argo CD; the application waits for
// the workers as well.
//
// Cluster API makes its Cluster the controller of the infrastructure's
// cluster object and of the control plane, and refuses an object another
// controller owns: composed directly, they would be the Experiment's.
// So those two go through provider-kubernetes Objects, which own nothing
// they deliver, and which (as an Application's) may only create until
// they have: an object of that name that exists is never taken over.
// The Cluster, the MachineDeployment and the templates, which Cluster
// API only adds owners to, are composed directly.

// Cluster API's groups and the versions fleetplane composes: the core's
// current API (v1beta2, Cluster API v1.11 and later) and the Talos
// providers' (v1alpha3).
const (
	capiGroup           = "cluster.x-k8s.io"
	capiAPIVersion      = capiGroup + "/v1beta2"
	talosCPGroup        = "controlplane.cluster.x-k8s.io"
	talosCPAPIVersion   = talosCPGroup + "/v1alpha3"
	talosBootGroup      = "bootstrap.cluster.x-k8s.io"
	talosBootAPIVersion = talosBootGroup + "/v1alpha3"
)

// When the infrastructure's cluster object and the control plane are
// ready, in the words of Cluster API's contracts (v1beta2's and
// v1beta1's for the infrastructure).
const (
	infrastructureProvisioned = `has(object.status) && ((has(object.status.initialization) && has(object.status.initialization.provisioned) && object.status.initialization.provisioned) || (has(object.status.ready) && object.status.ready))`
	controlPlaneReady         = `has(object.status) && has(object.status.ready) && object.status.ready`
)

// capiKubeconfigKey is the key of the Secret <cluster>-kubeconfig that
// holds the kubeconfig Cluster API writes for a cluster.
const capiKubeconfigKey = "value"

// Composition resource names of a talos target's objects besides its
// Cluster (clusterName), its workers (nodePoolName) and registration.
func talosInfraName(t string) resource.Name        { return resource.Name("talos-infrastructure-" + t) }
func talosMachinesName(t string) resource.Name     { return resource.Name("talos-machines-" + t) }
func talosControlPlaneName(t string) resource.Name { return resource.Name("talos-controlplane-" + t) }
func talosWorkerConfigName(t string) resource.Name { return resource.Name("talos-workerconfig-" + t) }

// talosName is a target's Cluster API cluster: it names every object of
// the target (Cluster API derives Machine and Secret names from it). GKE's
// rule (40 characters at most, a letter first, unique per experiment and
// target) keeps the derived names within Kubernetes' 63.
func (r renderer) talosName(target string) string { return r.gkeName(target) }

// talosTarget composes a talos target's cluster, workers and, once the
// control plane is initialized, its registration. It returns the server
// Argo CD reaches the cluster at, empty until the infrastructure provider
// has set the control plane's endpoint; failed when the target failed
// (its status says why) and nothing more is to be composed for it.
func (p *planner) talosTarget(t v1alpha1.Target, st *v1alpha1.TargetStatus) (server string, failed bool, err error) {
	name := p.r.talosName(t.Name)
	st.ClusterName = name
	infra, machines, err := p.r.talosInfrastructure(t.Name)
	if err != nil {
		return "", false, err
	}
	// The cluster's objects come together, as Cluster API expects: the
	// infrastructure and control plane providers act on their objects only
	// once the Cluster that references them owns them. The workers wait
	// for the control plane (the Cluster's readiness), so that a failed
	// control plane costs no worker machines.
	for _, o := range []struct {
		name     resource.Name
		manifest *composed.Unstructured
		ready    string
	}{
		{talosInfraName(t.Name), infra, infrastructureProvisioned},
		{talosControlPlaneName(t.Name), p.r.talosControlPlane(t.Name), controlPlaneReady},
	} {
		if observe.FoundObject(p.observed(o.name)) {
			p.failTarget(t.Name, st, existedBefore(o.manifest.GetKind(), o.manifest.GetNamespace(), o.manifest.GetName()))
			p.set.Keep(targetResources(t.Name)...)
			return "", true, nil
		}
		p.set.Add(o.name, p.r.kubernetesObject(o.manifest.Object, o.ready, false, observe.CreatedHere(p.observed(o.name))))
	}
	p.set.Add(talosMachinesName(t.Name), machines)
	p.set.Add(clusterName(t.Name), p.r.capiCluster(t.Name))
	p.set.Add(talosWorkerConfigName(t.Name), p.r.talosWorkerConfig(t.Name))
	p.set.Add(nodePoolName(t.Name), p.r.talosWorkers(t), clusterName(t.Name), talosWorkerConfigName(t.Name))

	server = capiEndpoint(p.observed(clusterName(t.Name)))
	if server == "" {
		p.set.Keep(registrationName(t.Name))
		return "", false, nil
	}
	st.Endpoint = server
	reg, err := p.r.registration(t, name, argocdv1alpha1.SecretKeyRef{Name: name + "-kubeconfig", Key: capiKubeconfigKey}, nil)
	if err != nil {
		return "", false, err
	}
	p.set.Add(registrationName(t.Name), reg, clusterName(t.Name))
	return server, false, nil
}

// capiEndpoint is the API server of a Cluster API cluster, as its
// kubeconfig names it: https://<spec.controlPlaneEndpoint>. Empty until
// the infrastructure provider has set the endpoint.
func capiEndpoint(o *composed.Unstructured) string {
	if o == nil {
		return ""
	}
	host, _ := observe.String(o, "spec", "controlPlaneEndpoint", "host")
	port, _ := observe.Int(o, "spec", "controlPlaneEndpoint", "port")
	// The endpoint is copied into status and the Application: a host
	// name is at most 253 characters, and anything longer is no endpoint.
	if host == "" || len(host) > 253 || port <= 0 || port > 65535 || strings.ContainsAny(host, "/?#@ ") {
		return ""
	}
	return "https://" + net.JoinHostPort(host, strconv.FormatInt(port, 10))
}

// talosObject is one of a target's Cluster API objects, labelled with
// its cluster as Cluster API labels what belongs to one.
func (r renderer) talosObject(target, apiVersion, kind, name string, spec map[string]any) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetName(name)
	o.SetNamespace(r.xr.Namespace)
	l := map[string]string{"cluster.x-k8s.io/cluster-name": r.talosName(target)}
	maps.Copy(l, r.labels(""))
	o.SetLabels(l)
	o.Object["spec"] = spec
	return o
}

// talosInfrastructure renders the infrastructure provider's cluster
// object and machine template from the policy's specs.
func (r renderer) talosInfrastructure(target string) (cluster, machines *composed.Unstructured, err error) {
	in := r.cfg.Talos.Infrastructure
	clusterSpec, err := object(in.ClusterSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.experiments.talos.infrastructure.clusterSpec of the ClusterProviderConfig: %w", err)
	}
	machineSpec, err := object(in.MachineSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.experiments.talos.infrastructure.machineSpec of the ClusterProviderConfig: %w", err)
	}
	name := r.talosName(target)
	cluster = r.talosObject(target, in.APIVersion, in.ClusterKind, name, clusterSpec)
	machines = r.talosObject(target, in.APIVersion, in.MachineTemplateKind, name+"-machines",
		map[string]any{"template": map[string]any{"spec": machineSpec}})
	return cluster, machines, nil
}

// object decodes a policy's free-form spec: an object, empty when unset.
func object(raw *runtime.RawExtension) (map[string]any, error) {
	out := map[string]any{}
	if raw == nil || len(raw.Raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw.Raw, &out); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	return out, nil
}

// talosControlPlane is the cluster's control plane: ControlPlaneReplicas
// machines from the infrastructure's machine template, each with a
// generated Talos control plane configuration.
func (r renderer) talosControlPlane(target string) *composed.Unstructured {
	pol := r.cfg.Talos
	name := r.talosName(target)
	replicas := pol.ControlPlaneReplicas
	if replicas == 0 {
		replicas = 1
	}
	return r.talosObject(target, talosCPAPIVersion, "TalosControlPlane", name+"-cp", map[string]any{
		"version":  pol.KubernetesVersion,
		"replicas": int64(replicas),
		"infrastructureTemplate": map[string]any{
			"apiVersion": pol.Infrastructure.APIVersion, "kind": pol.Infrastructure.MachineTemplateKind,
			"name": name + "-machines", "namespace": r.xr.Namespace,
		},
		"controlPlaneConfig": map[string]any{
			"controlplane": map[string]any{"generateType": "controlplane", "talosVersion": pol.TalosVersion},
		},
	})
}

// capiCluster ties the infrastructure's cluster and the control plane
// into a Cluster API Cluster.
func (r renderer) capiCluster(target string) *composed.Unstructured {
	in := r.cfg.Talos.Infrastructure
	name := r.talosName(target)
	return r.talosObject(target, capiAPIVersion, "Cluster", name, map[string]any{
		"controlPlaneRef":   map[string]any{"apiGroup": talosCPGroup, "kind": "TalosControlPlane", "name": name + "-cp"},
		"infrastructureRef": map[string]any{"apiGroup": groupOf(in.APIVersion), "kind": in.ClusterKind, "name": name},
	})
}

func groupOf(apiVersion string) string {
	g, _, _ := strings.Cut(apiVersion, "/")
	return g
}

// talosWorkerConfig is the bootstrap template every worker's Talos
// configuration is generated from.
func (r renderer) talosWorkerConfig(target string) *composed.Unstructured {
	return r.talosObject(target, talosBootAPIVersion, "TalosConfigTemplate", r.talosName(target)+"-workers", map[string]any{
		"template": map[string]any{"spec": map[string]any{"generateType": "worker", "talosVersion": r.cfg.Talos.TalosVersion}},
	})
}

// talosWorkers is the cluster's workers: nodeCount machines (1 when
// unset) from the infrastructure's machine template.
func (r renderer) talosWorkers(t v1alpha1.Target) *composed.Unstructured {
	in := r.cfg.Talos.Infrastructure
	name := r.talosName(t.Name)
	replicas := int64(t.Cluster.NodeCount)
	if replicas == 0 {
		replicas = 1
	}
	selector := map[string]any{"cluster.x-k8s.io/cluster-name": name, "cluster.x-k8s.io/deployment-name": name + "-workers"}
	return r.talosObject(t.Name, capiAPIVersion, "MachineDeployment", name+"-workers", map[string]any{
		"clusterName": name,
		"replicas":    replicas,
		"selector":    map[string]any{"matchLabels": selector},
		"template": map[string]any{
			"metadata": map[string]any{"labels": selector},
			"spec": map[string]any{
				"clusterName": name,
				"version":     r.cfg.Talos.KubernetesVersion,
				"bootstrap": map[string]any{"configRef": map[string]any{
					"apiGroup": talosBootGroup, "kind": "TalosConfigTemplate", "name": name + "-workers",
				}},
				"infrastructureRef": map[string]any{
					"apiGroup": groupOf(in.APIVersion), "kind": in.MachineTemplateKind, "name": name + "-machines",
				},
			},
		},
	})
}
