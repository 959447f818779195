// Package transform removes from a workload object what must not travel
// from the workload description space to the clusters that run it, in
// KubeStellar's order: first what no copy may carry (server-set metadata,
// kubectl's last-applied annotation, status), then the built-in rules for
// Services and Jobs, then the removals of CustomTransforms. Each step is
// "remove if present"; nothing is ever added.
package transform

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/function/placement/jsonpath"
)

// Annotations and labels the rules name.
const (
	LastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	JobTracking = "batch.kubernetes.io/job-tracking"
	// PreserveNodePort keeps a Service's node ports when set to
	// "nodeport". The seed names the first key; KubeStellar's code reads
	// the second: both are honoured.
	PreserveNodePort       = "kubestellar.io/annotations/preserve"
	PreserveNodePortKS     = "control.kubestellar.io/preserve"
	preserveNodePortValue  = "nodeport"
	controllerUID          = "controller-uid"
	batchControllerUID     = "batch.kubernetes.io/controller-uid"
	headless               = "None"
	serviceGroup, jobGroup = "", "batch"
)

// serverMetadata is what the API server (or a controller) sets on an
// object and a copy elsewhere must not carry.
var serverMetadata = []string{"managedFields", "finalizers", "generation", "ownerReferences", "selfLink", "resourceVersion", "uid", "generateName"}

// Object returns a copy of obj (of that API group and kind) with
// the built-in removals and then each of removals applied. obj is not
// changed.
func Object(obj map[string]any, group, kind string, removals ...jsonpath.Path) map[string]any {
	out := runtime.DeepCopyJSON(obj)
	Everything(out)
	switch {
	case group == serviceGroup && kind == "Service":
		Service(out)
	case group == jobGroup && kind == "Job":
		Job(out)
	}
	for _, p := range removals {
		jsonpath.Remove(out, p)
	}
	return out
}

// Everything applies the rules for every object.
func Everything(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, f := range serverMetadata {
			delete(md, f)
		}
		deleteKey(md, "annotations", LastApplied)
	}
	delete(obj, "status")
}

// Service applies the rules for a core Service: addresses and policies
// the destination cluster assigns are removed, except that a headless
// Service stays headless and node ports stay when the Service asks.
func Service(obj map[string]any) {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return
	}
	for _, f := range []string{"ipFamilies", "externalTrafficPolicy", "internalTrafficPolicy", "ipFamilyPolicy", "sessionAffinity"} {
		delete(spec, f)
	}
	if !preservesNodePorts(obj) {
		if ports, ok := spec["ports"].([]any); ok {
			for _, p := range ports {
				if m, ok := p.(map[string]any); ok {
					delete(m, "nodePort")
				}
			}
		}
	}
	if ip, ok := spec["clusterIP"]; ok && ip != headless {
		delete(spec, "clusterIP")
	}
	if ips, ok := spec["clusterIPs"].([]any); ok && slices.Contains(ips, any(headless)) {
		spec["clusterIPs"] = []any{headless}
	} else {
		delete(spec, "clusterIPs")
	}
}

func preservesNodePorts(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	return ann[PreserveNodePort] == preserveNodePortValue || ann[PreserveNodePortKS] == preserveNodePortValue
}

// Job applies the rules for a batch Job: the selector and controller-uid
// labels its first cluster's controller generated, the tracking
// annotation, and suspension. The seed names `spec.suspended`, which no
// Job has; KubeStellar's code removes `spec.suspend`, the real field (a
// Job held suspended where it is described runs where it is delivered):
// both are removed.
func Job(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		deleteKey(md, "annotations", JobTracking)
		deleteKey(md, "labels", controllerUID, batchControllerUID)
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return
	}
	delete(spec, "selector")
	delete(spec, "suspend")
	delete(spec, "suspended")
	if tpl, ok := spec["template"].(map[string]any); ok {
		if md, ok := tpl["metadata"].(map[string]any); ok {
			deleteKey(md, "labels", controllerUID, batchControllerUID)
		}
	}
}

// deleteKey removes keys from the string map m[field], and the map itself
// once empty, as the API server would not keep an empty one.
func deleteKey(m map[string]any, field string, keys ...string) {
	sub, ok := m[field].(map[string]any)
	if !ok {
		return
	}
	for _, k := range keys {
		delete(sub, k)
	}
	if len(sub) == 0 {
		delete(m, field)
	}
}
