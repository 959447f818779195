// Package aggregate folds the statuses several clusters report for one
// workload object into the one status the object on the control plane
// shows, for the kinds whose status says how far a rollout is:
// Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs. KubeStellar
// does this for the first three (wantMultiWECReportedState); StatefulSets
// and Jobs are what its users ask for besides.
//
// The rule is the one a reader of the status expects: it reads as done
// only when it is done everywhere. Replica counters of a kind whose spec
// says how many replicas each cluster runs (Deployment, ReplicaSet,
// StatefulSet) are the least any cluster has and unavailable ones the
// most, so that comparing them with spec.replicas, as Argo CD's health
// checks do, answers for the slowest cluster. A DaemonSet's and a Job's
// counters are sums, since each cluster has its own nodes and pods.
// observedGeneration is the control plane object's generation only when
// every cluster has reported on the copy as it is now, and conditions say
// the worst of the clusters, naming it.
package aggregate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/internal/observe"
)

// A Report is what one cluster reports for the object.
type Report struct {
	Cluster string
	// Status is the object's status on that cluster; nil before it
	// reports.
	Status map[string]any
	// Current says the copy on the cluster is the object as it is now
	// (its Object is synced), so the status is about this generation.
	Current bool
}

type kind struct {
	// least are counters aggregated as their minimum, most as their
	// maximum, sum as their sum.
	least, most, sum []string
	job              bool
}

var kinds = map[schema.GroupKind]kind{
	{Group: "apps", Kind: "Deployment"}:  {least: []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"}, most: []string{"unavailableReplicas"}},
	{Group: "apps", Kind: "ReplicaSet"}:  {least: []string{"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"}},
	{Group: "apps", Kind: "StatefulSet"}: {least: []string{"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"}},
	{Group: "apps", Kind: "DaemonSet"}: {sum: []string{
		"currentNumberScheduled", "desiredNumberScheduled", "numberReady", "updatedNumberScheduled",
		"numberAvailable", "numberUnavailable", "numberMisscheduled",
	}},
	{Group: "batch", Kind: "Job"}: {sum: []string{"active", "ready", "succeeded", "failed", "terminating"}, job: true},
}

// Aggregated reports whether statuses of gk are aggregated.
func Aggregated(gk schema.GroupKind) bool {
	_, ok := kinds[gk]
	return ok
}

// Status is the status of an object of kind gk at generation, from what
// its clusters report, in cluster order. ok is false for a kind that is
// not aggregated.
func Status(gk schema.GroupKind, generation int64, reports []Report) (status map[string]any, ok bool) {
	k, ok := kinds[gk]
	if !ok {
		return nil, false
	}
	out := map[string]any{}
	current := len(reports) > 0
	for _, r := range reports {
		current = current && r.Current && r.Status != nil
	}
	for _, f := range k.least {
		out[f] = fold(reports, f, func(a, b int64) int64 { return min(a, b) })
	}
	for _, f := range k.most {
		out[f] = fold(reports, f, func(a, b int64) int64 { return max(a, b) })
	}
	for _, f := range k.sum {
		out[f] = fold(reports, f, func(a, b int64) int64 { return a + b })
	}
	if current {
		// A Job has no observedGeneration; every other kind does.
		if !k.job {
			out["observedGeneration"] = generation
		}
	}
	var conds []any
	if k.job {
		conds = jobConditions(reports)
		if t := first(reports, "startTime", func(a, b string) bool { return a < b }); t != "" {
			out["startTime"] = t
		}
		if len(conds) > 0 && conds[0].(map[string]any)["type"] == "Complete" { //nolint:forcetypeassert // built just above
			if t := first(reports, "completionTime", func(a, b string) bool { return a > b }); t != "" {
				out["completionTime"] = t
			}
		}
	} else {
		conds = rolloutConditions(gk, reports)
	}
	if len(conds) > 0 {
		out["conditions"] = conds
	}
	return out, true
}

// fold combines a counter over the clusters; a cluster that reports
// nothing has 0 of it.
func fold(reports []Report, field string, f func(a, b int64) int64) int64 {
	var acc int64
	for i, r := range reports {
		v := counter(r.Status, field)
		if i == 0 {
			acc = v
			continue
		}
		acc = f(acc, v)
	}
	return acc
}

func counter(status map[string]any, field string) int64 {
	switch v := status[field].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case float64:
		return int64(v)
	}
	return 0
}

// first is the first of a time field over the clusters, by before.
func first(reports []Report, field string, before func(a, b string) bool) string {
	out := ""
	for _, r := range reports {
		if t, _ := r.Status[field].(string); t != "" && (out == "" || before(t, out)) {
			out = t
		}
	}
	return out
}

// condition is one cluster's condition of a type; nil when it has none.
func condition(status map[string]any, t string) map[string]any {
	cs, _ := status["conditions"].([]any)
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m
		}
	}
	return nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// worst is, of one condition type over the clusters, the first cluster
// whose condition is not True (or is missing), and how many are True.
func worst(reports []Report, t string) (bad *Report, badCond map[string]any, trueCount int) {
	for i := range reports {
		c := condition(reports[i].Status, t)
		if str(c, "status") == "True" {
			trueCount++
			continue
		}
		if bad == nil {
			bad, badCond = &reports[i], c
		}
	}
	return bad, badCond, trueCount
}

// rolloutConditions: Available and Progressing for the kinds that have
// them (Deployment), the worst cluster's, named; the others keep none.
func rolloutConditions(gk schema.GroupKind, reports []Report) []any {
	if gk.Kind != "Deployment" {
		return nil
	}
	var out []any
	if bad, c, n := worst(reports, "Available"); bad == nil {
		out = append(out, cond("Available", "True", "MinimumReplicasAvailable", fmt.Sprintf("available on all %d clusters", n), latest(reports, "Available")))
	} else {
		out = append(out, cond("Available", "False", or(str(c, "reason"), "NotReported"), clusterMessage(bad, c, "has not reported"), latest(reports, "Available")))
	}
	// Progressing: a deadline exceeded anywhere is the answer; then a
	// rollout still going anywhere; done only when done everywhere.
	for i := range reports {
		if c := condition(reports[i].Status, "Progressing"); str(c, "reason") == "ProgressDeadlineExceeded" {
			return append(out, cond("Progressing", "False", "ProgressDeadlineExceeded", clusterMessage(&reports[i], c, ""), str(c, "lastTransitionTime")))
		}
	}
	var rolling []string
	for _, r := range reports {
		if c := condition(r.Status, "Progressing"); str(c, "reason") != "NewReplicaSetAvailable" {
			rolling = append(rolling, r.Cluster)
		}
	}
	if len(rolling) == 0 {
		return append(out, cond("Progressing", "True", "NewReplicaSetAvailable", fmt.Sprintf("rolled out on all %d clusters", len(reports)), latest(reports, "Progressing")))
	}
	return append(out, cond("Progressing", "True", "ReplicaSetUpdated", "rolling out on "+list(rolling), latest(reports, "Progressing")))
}

// jobConditions: Failed when a cluster's Job failed, Complete when every
// cluster's completed; none while they run.
func jobConditions(reports []Report) []any {
	for i := range reports {
		if c := condition(reports[i].Status, "Failed"); str(c, "status") == "True" {
			return []any{cond("Failed", "True", or(str(c, "reason"), "Failed"), clusterMessage(&reports[i], c, ""), str(c, "lastTransitionTime"))}
		}
	}
	if bad, _, n := worst(reports, "Complete"); bad == nil && n > 0 {
		return []any{cond("Complete", "True", "Completed", fmt.Sprintf("completed on all %d clusters", n), latest(reports, "Complete"))}
	}
	return nil
}

func cond(t, status, reason, message, at string) map[string]any {
	c := map[string]any{"type": t, "status": status, "reason": reason, "message": message}
	if at != "" {
		c["lastTransitionTime"] = at
		if t == "Progressing" || t == "Available" {
			c["lastUpdateTime"] = at
		}
	}
	return c
}

// latest is the latest transition of a condition type over the clusters.
func latest(reports []Report, t string) string {
	out := ""
	for _, r := range reports {
		if at := str(condition(r.Status, t), "lastTransitionTime"); at > out {
			out = at
		}
	}
	return out
}

// clusterMessage says which cluster a condition comes from; what the
// cluster wrote is bounded, as everything read from one.
func clusterMessage(r *Report, c map[string]any, missing string) string {
	if c == nil {
		return fmt.Sprintf("cluster %s %s", r.Cluster, missing)
	}
	if m := str(c, "message"); m != "" {
		return observe.Bound(fmt.Sprintf("cluster %s: %s", r.Cluster, m))
	}
	return observe.Bound(fmt.Sprintf("cluster %s: %s", r.Cluster, str(c, "reason")))
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// list names up to five clusters.
func list(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}
