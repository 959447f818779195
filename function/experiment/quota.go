package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// withinQuota checks the Experiment alone against the quotas: targets,
// nodes per target and in all, GKE machine types, and TTL. An Experiment
// over one is refused whole, before anything is composed.
func withinQuota(xr *v1alpha1.Experiment, e tenancy.Experiments) error {
	l := e.Limits
	spec := xr.Spec
	if n := len(spec.Targets); n > int(l.Targets) {
		return tenancy.Exceeded("spec.experiments.quota.maxTargets", "the Experiment has %d targets, more than the %d an Experiment may have", n, l.Targets)
	}
	if ttl := max(spec.TTLDays, 1); ttl > l.TTLDays {
		return tenancy.Exceeded("spec.experiments.quota.maxTTLDays", "spec.ttlDays %d is longer than the %d days an Experiment may live", ttl, l.TTLDays)
	}
	total := int32(0)
	for _, t := range spec.Targets {
		c := t.Cluster
		if c.Type != v1alpha1.ClusterGKE && c.Type != v1alpha1.ClusterTalos {
			continue // a hub or vcluster target runs on the hub's nodes
		}
		nodes := max(c.NodeCount, 1)
		if nodes > l.NodesPerTarget {
			return tenancy.Exceeded("spec.experiments.quota.maxNodesPerTarget", "target %s asks for %d nodes, more than the %d a target may have", t.Name, nodes, l.NodesPerTarget)
		}
		total += nodes
		if c.Type == v1alpha1.ClusterGKE && e.GCP != nil {
			if m := machineType(c); !tenancy.MatchAny(e.GCP.MachineTypes, m) {
				return tenancy.Exceeded("spec.experiments.gcp.machineTypes", "target %s asks for machine type %s, which the policy does not allow (it allows %s)", t.Name, m, strings.Join(e.GCP.MachineTypes, ", "))
			}
		}
	}
	if total > l.Nodes {
		return tenancy.Exceeded("spec.experiments.quota.maxNodes", "the Experiment's targets ask for %d nodes in all, more than the %d an Experiment may have", total, l.Nodes)
	}
	return nil
}

// machineType of a GKE target's nodes, with its default.
func machineType(c v1alpha1.ClusterSpec) string {
	if c.MachineType == "" {
		return defaultMachineType
	}
	return c.MachineType
}

// defaultMachineType of GKE targets that name none.
const defaultMachineType = "e2-medium"

// place decides whether the Experiment holds one of the namespace's
// maxExperiments places: the places go to the oldest Experiments (by
// creation, then name), whatever they compose, so the order is set by
// what no one can change after creation. A newer Experiment never takes
// an older one's place; deleting one frees it for the next in line.
// resolved is false until Crossplane has listed the namespace's
// Experiments; holders names, when the Experiment must wait, those that
// hold the places.
func place(r *compose.Request[v1alpha1.Experiment], limit int32) (ok, resolved bool, holders []string) {
	xr := r.XR
	items, resolved := r.Siblings()
	if !resolved {
		return false, false, nil
	}
	older := olderThan(xr, items)
	if len(older) < int(limit) {
		return true, true, nil
	}
	return false, true, older
}

// olderThan are the names of the Experiments among items created before
// xr (or with it, and named before it), in that order.
func olderThan(xr *v1alpha1.Experiment, items []resource.Required) []string {
	type entry struct {
		name string
		at   int64
	}
	var older []entry
	mine := xr.CreationTimestamp.Unix()
	for _, it := range items {
		o := it.Resource
		name, at := o.GetName(), o.GetCreationTimestamp().Unix()
		if name == xr.Name {
			continue
		}
		if at < mine || (at == mine && name < xr.Name) {
			older = append(older, entry{name, at})
		}
	}
	slices.SortFunc(older, func(a, b entry) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(older))
	for i, e := range older {
		names[i] = e.name
	}
	return names
}

// waitForPlace is the outcome of an Experiment that waits for a place:
// nothing new is composed, nothing is removed, and it is composed again
// at Crossplane's TTL (a minute) to see whether a place is free.
func waitForPlace(r *compose.Request[v1alpha1.Experiment], limit int32, holders []string) compose.Outcome {
	r.Resources.Freeze()
	shown := holders
	if len(shown) > 8 {
		shown = shown[:8]
	}
	more := ""
	if len(holders) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(holders)-len(shown))
	}
	err := tenancy.Exceeded("spec.experiments.quota.maxExperiments", "waiting for a place: the namespace may have %d Experiments at once, and the %d older ones hold them (%s%s); this one is composed when one of them is deleted", limit, len(holders), strings.Join(shown, ", "), more)
	if limit == 0 {
		err = tenancy.Exceeded("spec.experiments.quota.maxExperiments", "the namespace may have no Experiments")
	}
	st := r.XR.Status
	st.Phase = v1alpha1.PhasePending
	return compose.Outcome{Status: &st, Pending: true, Settled: true, Conditions: []compose.Condition{{
		Type: v1alpha1.ConditionExperiment, Status: corev1.ConditionFalse, Reason: compose.ReasonQuotaExceeded, Warning: true, Message: observe.Bound(err.Error()),
	}}}
}
