package placement

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/placement/combine"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// MaxCombinedStatus bounds the encoded rows of all combined status in one
// Placement's status: the rows hold what remote clusters report, and an
// XR's status must stay far below the API server's object size limit.
// Rows past it are counted as omitted.
const MaxCombinedStatus = 64 << 10

// namedCollector is a StatusCollector the Placement names, checked.
type namedCollector struct {
	name    string
	c       combine.Collector
	err     string
	missing bool
}

// collectors reads every StatusCollector the Placement names, by name.
func (p *planner) collectors() (map[string]namedCollector, bool) {
	all := true
	out := map[string]namedCollector{}
	names := slices.Clone(p.r.XR.Spec.StatusCollectors)
	for _, sel := range p.r.XR.Spec.Objects {
		names = append(names, sel.StatusCollectors...)
	}
	for _, name := range names {
		if _, ok := out[name]; ok {
			continue
		}
		items, resolved := p.r.Require("collector-"+name, compose.Selector{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StatusCollectorKind, Name: name})
		all = all && resolved
		nc := namedCollector{name: name}
		switch {
		case !resolved:
		case len(items) == 0:
			nc.err, nc.missing = fmt.Sprintf("StatusCollector %s does not exist", name), true
		default:
			var spec v1alpha1.StatusCollectorSpec
			if err := decodeSpec(items[0].Resource.Object, &spec); err != nil {
				nc.err = fmt.Sprintf("StatusCollector %s cannot be read: %v", name, err)
			} else if nc.c, err = collector(spec); err != nil {
				nc.err = fmt.Sprintf("StatusCollector %s is invalid: %v", name, err)
			}
		}
		out[name] = nc
	}
	return out, all
}

// collectorsOf lists the collectors of one object: the Placement's, then
// its selectors', each once.
func (p *planner) collectorsOf(w workload) []string {
	var out []string
	for _, n := range append(slices.Clone(p.r.XR.Spec.StatusCollectors), w.collectors...) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// combine evaluates every collector over each placed object's rows and
// reports the StatusCombined condition.
func (p *planner) combine(collectors map[string]namedCollector) {
	if len(collectors) == 0 {
		return
	}
	budget := MaxCombinedStatus
	for i := range p.status.Objects {
		w := p.objects[i]
		names := p.collectorsOf(w)
		if len(names) == 0 {
			continue
		}
		rows := p.rows(w)
		for _, name := range names {
			nc := collectors[name]
			cs := v1alpha1.CombinedStatus{Collector: nc.name}
			if nc.err != "" {
				cs.Errors = []string{nc.err}
				p.status.Objects[i].CombinedStatus = append(p.status.Objects[i].CombinedStatus, cs)
				continue
			}
			res := combine.Combine(nc.c, rows)
			cs.Columns, cs.Omitted, cs.Errors = res.Columns, res.Omitted, res.Errors
			for j, row := range res.Rows {
				byColumn := make(map[string]any, len(row))
				for k, v := range row {
					byColumn[res.Columns[k]] = v
				}
				b, err := json.Marshal(byColumn)
				if err != nil || len(b) > budget {
					// Rows come from decoded JSON and always encode; past
					// the budget the rest are counted, not shown.
					cs.Omitted += len(res.Rows) - j
					break
				}
				budget -= len(b)
				cs.Rows = append(cs.Rows, extv1.JSON{Raw: b})
			}
			p.status.Objects[i].CombinedStatus = append(p.status.Objects[i].CombinedStatus, cs)
		}
	}

	var missing, invalid []string
	for _, name := range slices.Sorted(maps.Keys(collectors)) {
		nc := collectors[name]
		switch {
		case nc.missing:
			missing = append(missing, nc.name)
		case nc.err != "":
			invalid = append(invalid, nc.name)
		}
	}
	c := compose.Condition{Type: v1alpha1.ConditionStatusCombined, Status: corev1.ConditionTrue, Reason: ReasonCombined,
		Message: fmt.Sprintf("%d StatusCollectors combine what %d clusters report", len(collectors), len(p.clusters))}
	switch {
	case len(missing) > 0:
		c = compose.Condition{Type: v1alpha1.ConditionStatusCombined, Status: corev1.ConditionFalse, Reason: ReasonCollectorMissing, Warning: true,
			Message: "StatusCollectors that do not exist: " + strings.Join(missing, ", ")}
	case len(invalid) > 0:
		c = compose.Condition{Type: v1alpha1.ConditionStatusCombined, Status: corev1.ConditionFalse, Reason: ReasonCollectorInvalid, Warning: true,
			Message: "StatusCollectors that are invalid (see their Valid condition): " + strings.Join(invalid, ", ")}
	}
	p.conditions = append(p.conditions, c)
}

// rows are what each cluster reports about w's copy, in cluster order:
// the object as the cluster holds it (status included), and beside it
// KubeStellar's four variables: inventory (the cluster's name and
// labels), obj (the workload object as the control plane holds it),
// returned (the status the cluster returned) and propagation (stale: the
// copy is not on the cluster as desired, or nothing has been reported
// yet; lastReturnedUpdateTimestamp: when what the cluster reports last
// changed state, as provider-kubernetes' conditions on the copy record it).
func (p *planner) rows(w workload) []map[string]any {
	rows := make([]map[string]any, 0, len(p.clusters))
	for _, c := range p.clusters {
		o := p.r.Resources.Observed(copyName(c.name, w))
		row := map[string]any{}
		reported := observedManifest(o)
		maps.Copy(row, reported)
		stale := reported == nil || observe.ConditionOf(o, string(xpv2.TypeSynced)).Status != corev1.ConditionTrue
		labels := make(map[string]any, len(c.labels))
		for k, v := range c.labels {
			labels[k] = v
		}
		row["inventory"] = map[string]any{"name": c.name, "labels": labels}
		propagation := map[string]any{"stale": stale}
		if t := lastReturned(o); t != "" {
			propagation["lastReturnedUpdateTimestamp"] = t
		}
		row["propagation"] = propagation
		row["obj"] = w.obj
		returned := map[string]any{}
		if st, ok := reported["status"]; ok {
			returned["status"] = st
		}
		row["returned"] = returned
		rows = append(rows, row)
	}
	return rows
}

// lastReturned is the latest transition of a copy's Synced and Ready
// conditions: when what its cluster reports last changed state. "" when
// the copy has neither.
func lastReturned(o *composed.Unstructured) string {
	var latest time.Time
	for _, t := range []string{string(xpv2.TypeSynced), string(xpv2.TypeReady)} {
		if at := observe.ConditionOf(o, t).LastTransitionTime.Time; at.After(latest) {
			latest = at
		}
	}
	if latest.IsZero() {
		return ""
	}
	return latest.UTC().Format(time.RFC3339)
}

// observedManifest is the object as the cluster holds it, which
// provider-kubernetes reports in an Object's status.atProvider.manifest;
// nil before it reports.
func observedManifest(o *composed.Unstructured) map[string]any {
	if o == nil {
		return nil
	}
	st, _ := o.Object["status"].(map[string]any)
	ap, _ := st["atProvider"].(map[string]any)
	m, _ := ap["manifest"].(map[string]any)
	return m
}
