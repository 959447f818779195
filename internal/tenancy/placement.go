package tenancy

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Placement is what a grant lets Placements do, ready to apply.
type Placement struct {
	// Config names the grant's config in messages.
	Config string
	// Clusters selects the inventory clusters granted.
	Clusters labels.Selector
	// ClusterSelector is the selector as written, for messages.
	ClusterSelector metav1.LabelSelector
	kinds           []string
	reported        []string
	// PodSecurity enforced on namespaces created on workload clusters.
	PodSecurity v1alpha1.PodSecurityLevel
	properties  []string
	// ObjectNamespace is where a ClusterPlacement's Objects live; empty
	// for a Placement, whose Objects live in its own namespace.
	ObjectNamespace string
	// Limits are the quotas, with their defaults.
	Limits PlacementLimits
}

// PlacementPolicy is what the grant lets Placements do, or an error
// naming what is missing.
func (g *Grant) PlacementPolicy() (Placement, error) {
	if g.Placement == nil {
		return Placement{}, fmt.Errorf("%s grants no Placement: the cluster admin adds spec.placement (the inventory clusters and kinds the namespace may deliver)", g)
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.Placement.ClusterSelector)
	if err != nil {
		return Placement{}, fmt.Errorf("%s has an invalid spec.placement.clusterSelector: %w", g, err)
	}
	p := Placement{
		Config: g.String(), Clusters: sel, ClusterSelector: g.Placement.ClusterSelector,
		kinds: g.Placement.Kinds, reported: g.Placement.ReportedStateKinds, PodSecurity: g.Placement.PodSecurity, properties: g.Placement.Properties,
		Limits: placementLimits(g.Placement.Quota),
	}
	if p.PodSecurity == "" {
		p.PodSecurity = v1alpha1.PodSecurityRestricted
	}
	return p, nil
}

// ClusterPlacementPolicy is what the grant lets the admin's
// ClusterPlacements do: the clusters and properties of spec.placement, the
// cluster-scoped kinds of spec.placement.clusterPlacements, and never
// reported state.
func (g *Grant) ClusterPlacementPolicy() (Placement, error) {
	if g.Placement == nil || g.Placement.ClusterPlacements == nil {
		return Placement{}, fmt.Errorf("%s grants no ClusterPlacement: the cluster admin adds spec.placement.clusterPlacements (the cluster-scoped kinds they may deliver) to it, or names another config with the ClusterPlacement's label fleetplane.io/policy", g)
	}
	p, err := g.PlacementPolicy()
	if err != nil {
		return Placement{}, err
	}
	cp := g.Placement.ClusterPlacements
	p.kinds, p.reported, p.ObjectNamespace = cp.Kinds, nil, cp.Namespace
	if p.ObjectNamespace == "" {
		p.ObjectNamespace = "crossplane-system"
	}
	return p, nil
}

// Kind reports whether objects of group and kind may be delivered.
func (p Placement) Kind(group, kind string) bool { return kindIn(p.kinds, group, kind) }

// ReportedState reports whether the status of objects of group and kind
// may be written back from their cluster: they must be deliverable, and
// listed for it.
func (p Placement) ReportedState(group, kind string) bool {
	return p.Kind(group, kind) && kindIn(p.reported, group, kind)
}

// kindIn reports whether group/kind is among kinds (group/Kind, group/*,
// or Kind alone for the core group).
func kindIn(kinds []string, group, kind string) bool {
	return slices.ContainsFunc(kinds, func(k string) bool {
		g, kd, found := strings.Cut(k, "/")
		if !found {
			g, kd = "", k
		}
		return g == group && (kd == "*" || kd == kind)
	})
}

// Property reports whether templates may read the property key.
func (p Placement) Property(key string) bool {
	return slices.Contains(p.properties, "*") || slices.Contains(p.properties, key)
}
