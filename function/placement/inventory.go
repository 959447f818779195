package placement

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"

	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/placement/expand"
)

// cluster is one selected cluster of the inventory.
type cluster struct {
	name        string
	labels      map[string]string
	annotations map[string]string
	// props are the cluster's properties for template expansion: set by
	// properties, only when an object asks for expansion.
	props map[string]string
}

// inventory reads the selected ClusterProviderConfigs, sorted by name.
func (p *planner) inventory() bool {
	sel := map[string]string{}
	maps.Copy(sel, p.r.XR.Spec.Clusters.MatchLabels)
	// Set last: the admin's label decides, whatever the selector says.
	sel[v1alpha1.InventoryLabel] = "true"
	items, resolved := p.r.Require(inventoryKey, compose.Selector{APIVersion: kubernetesAPIVersion, Kind: clusterProviderConfig, Labels: sel})
	if !resolved {
		return false
	}
	for _, it := range items {
		// The policy's selector is the admin's; the Placement's narrows it.
		if !p.policy.Clusters.Matches(k8slabels.Set(it.Resource.GetLabels())) {
			p.ungranted++
			continue
		}
		p.clusters = append(p.clusters, cluster{name: it.Resource.GetName(), labels: it.Resource.GetLabels(), annotations: it.Resource.GetAnnotations()})
	}
	slices.SortFunc(p.clusters, func(a, b cluster) int { return strings.Compare(a.name, b.name) })
	return true
}

// properties reads the ConfigMaps of namespace customization-properties
// and merges each cluster's over its labels and annotations. One list for
// all clusters: the namespace holds nothing else, and one request beats
// one per cluster.
func (p *planner) properties() bool {
	items, resolved := p.r.Require(propertiesKey, compose.Selector{APIVersion: "v1", Kind: "ConfigMap", Namespace: expand.PropertiesNamespace, Labels: map[string]string{}})
	if !resolved {
		return false
	}
	byName := map[string]map[string]any{}
	for _, it := range items {
		if it.Resource.GetNamespace() == expand.PropertiesNamespace {
			byName[it.Resource.GetName()] = it.Resource.Object
		}
	}
	for i, c := range p.clusters {
		// A cluster without a ConfigMap has its labels and annotations.
		cm := byName[c.name]
		binary := map[string][]byte{}
		for k, v := range stringMap(cm["binaryData"]) {
			// binaryData is base64 in JSON; a value that is not cannot
			// have passed the API server and is left out.
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				binary[k] = b
			}
		}
		props := expand.Properties(c.name, c.labels, c.annotations, stringMap(cm["data"]), binary)
		// What the policy does not expose, templates cannot see: the
		// admin's properties may hold credentials.
		maps.DeleteFunc(props, func(k, _ string) bool { return k != "clusterName" && !p.policy.Property(k) })
		p.clusters[i].props = props
	}
	return true
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, e := range m {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out
}
