// Package placement composes the placement kinds. A Placement delivers
// workload objects of its namespace to the clusters of an inventory in
// KubeStellar's manner: one provider-kubernetes Object per (object,
// cluster), each carrying a copy stripped of what must not travel
// (function/placement/transform, then the CustomTransforms of its resource) and,
// when the object asks, with its templates expanded for that cluster's
// properties (function/placement/expand). What the clusters report about each copy
// comes back through the Objects and is combined by the StatusCollectors
// the Placement names (function/placement/combine). A
// ClusterPlacement, the admin's, goes through the same plan with
// cluster-scoped objects, its own policy and no namespace on the
// clusters. CustomTransforms and StatusCollectors are checked by
// composers of their own.
//
// The inventory is provider-kubernetes' ClusterProviderConfigs the admin
// labelled placement.fleetplane.io/inventory: "true": their names are the
// clusters' names, their labels and annotations the clusters' properties,
// overridden by a ConfigMap of the cluster's name in namespace
// customization-properties.
package placement

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	placementmv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/m/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/placement/aggregate"
	"github.com/fleetplane/fleetplane/function/placement/expand"
	"github.com/fleetplane/fleetplane/function/placement/jsonpath"
	"github.com/fleetplane/fleetplane/function/placement/transform"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// Reasons of the ReportedState condition.
const (
	ReasonReported     = "Reported"
	ReasonReporting    = "Reporting"
	ReasonNotSingleton = "NotSingleton"
)

// Reasons of the Delivered condition.
const (
	ReasonDelivered       = "Delivered"
	ReasonDelivering      = "Delivering"
	ReasonNoClusters      = "NoClusters"
	ReasonNoObjects       = "NoObjects"
	ReasonObjectsMissing  = "ObjectsMissing"
	ReasonExpansionFailed = "ExpansionFailed"
	ReasonTooLarge        = "TooLarge"
	// ReasonNotGranted: the namespace's policy grants no placement, or
	// not every object's kind; what it grants is delivered.
	ReasonNotGranted = compose.ReasonNotGranted
	// ReasonQuotaExceeded: more clusters or copies than the namespace's
	// policy lets one Placement deliver.
	ReasonQuotaExceeded = compose.ReasonQuotaExceeded
	// ReasonNotOwned: a copy or namespace of that name was on a cluster
	// before fleetplane delivered it; it is left as it is.
	ReasonNotOwned = "NotOwned"
	// ReasonNamespaced: a ClusterPlacement selected objects of a
	// namespaced kind, which it never places.
	ReasonNamespaced = "Namespaced"
)

// Reasons of the StatusCombined condition.
const (
	ReasonCombined         = "Combined"
	ReasonCollectorMissing = "CollectorMissing"
	ReasonCollectorInvalid = "CollectorInvalid"
)

// Limits of one Placement: what one XR may ask Crossplane to compose and
// the function to hold in one response.
const (
	MaxObjects = 256
	MaxCopies  = 5000
	// MaxTemplateBudget is the most the function input may let one
	// Placement's templates spend.
	MaxTemplateBudget = 64 << 20
)

// provider-kubernetes' kinds.
const (
	kubernetesAPIVersion  = "kubernetes.m.crossplane.io/v1alpha1"
	clusterProviderConfig = "ClusterProviderConfig"
)

// Labels on every composed Object, for kubectl get objects -l.
const (
	LabelCluster = "placement.fleetplane.io/cluster"
	LabelKind    = "placement.fleetplane.io/kind"
	LabelName    = "placement.fleetplane.io/name"
)

// LabelNamespace on a namespace fleetplane created on a workload cluster
// names the control-plane namespace it was created for: the proof that
// Placements of that namespace may deliver into it.
const LabelNamespace = "placement.fleetplane.io/namespace"

// podSecurityEnforce is the Pod Security admission label.
const podSecurityEnforce = "pod-security.kubernetes.io/enforce"

// Requirement keys.
const (
	inventoryKey  = "inventory"
	propertiesKey = "customization-properties"
)

// Composer composes Placements.
var Composer = compose.Run(plan)

// workload is one selected workload object.
type workload struct {
	gvk      schema.GroupVersionKind
	resource string
	obj      map[string]any
	// collectors are the StatusCollectors of the selectors that chose it.
	collectors []string
}

func (w workload) name() string {
	md, _ := w.obj["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// ref names the object in messages and composition resource names:
// Kind.group/name, Kind/name for the core group.
func (w workload) ref() string {
	k := w.gvk.Kind
	if w.gvk.Group != "" {
		k += "." + w.gvk.Group
	}
	return k + "/" + w.name()
}

// removals are the CustomTransforms' paths for w: those of its kind's own
// plural, and those of the plural its selector declares. spec.objects[]
// is the tenant's to write; a declared plural only adds, so that it
// cannot steer a Deployment past the admin's CustomTransform for
// deployments.
func (w workload) removals(transforms map[string][]jsonpath.Path) []jsonpath.Path {
	out := transforms[groupResource(w.gvk.Group, plural(w.gvk.Kind))]
	if w.resource != plural(w.gvk.Kind) {
		out = append(slices.Clone(out), transforms[groupResource(w.gvk.Group, w.resource)]...)
	}
	return out
}

// copyName is the composition resource name of w's copy on cluster.
func copyName(cluster string, w workload) resource.Name {
	return resource.Name(cluster + "/" + w.ref())
}

// namespaceName is the composition resource name of the Placement's
// namespace on cluster.
func namespaceName(cluster string) resource.Name {
	return resource.Name(cluster + "/Namespace")
}

type planner struct {
	r  *compose.Request[v1alpha1.Placement]
	ns string
	// scope is what messages name by the XR's scope.
	scope scope
	// policy is what the namespace's policy lets Placements do; config
	// the name of the ClusterProviderConfig that grants it.
	policy tenancy.Placement
	config string
	// templateBudget is what the Placement's templates may spend.
	templateBudget int64

	clusters []cluster
	// ungranted counts the inventory clusters the Placement's selector
	// matches and the policy does not grant.
	ungranted int
	objects   []workload
	missing   []string
	// kindsRefused are the selectors whose kind the policy does not
	// grant, as Kind.group.
	kindsRefused []string
	// notOwned are copies and namespaces that were on their cluster
	// before fleetplane delivered them.
	notOwned []string
	// namespaced are kinds a ClusterPlacement selected whose objects
	// turned out namespaced, as Kind.group.
	namespaced []string

	status     v1alpha1.PlacementStatus
	conditions []compose.Condition
	// copies are what deliver placed, for the function's metrics.
	copies compose.Copies
}

func plan(r *compose.Request[v1alpha1.Placement]) (compose.Outcome, error) {
	// A ClusterPlacement decodes as a Placement (its spec is a Placement's
	// without reported state, field for field): one composer for both,
	// told apart by scope. Only the admin makes a ClusterPlacement, and
	// what it may deliver is still the policy's.
	clusterScoped := r.XR.GetNamespace() == ""
	var (
		g        *tenancy.Grant
		resolved bool
		err      error
		policy   tenancy.Placement
	)
	if clusterScoped {
		g, resolved, err = r.ClusterPolicy()
	} else {
		g, resolved, err = r.Policy()
	}
	if err == nil && resolved {
		if clusterScoped {
			policy, err = g.ClusterPlacementPolicy()
		} else {
			policy, err = g.PlacementPolicy()
		}
	}
	switch {
	case !resolved:
		out := r.ReadingPolicy(v1alpha1.ConditionDelivered)
		out.Status = &r.XR.Status
		return out, nil
	case err != nil:
		out := r.Refused(v1alpha1.ConditionDelivered, err)
		out.Status = &r.XR.Status
		return out, nil
	}
	p := &planner{r: r, ns: r.XR.GetNamespace(), scope: scopeOf(r.XR.GetNamespace()), policy: policy, config: g.Name, templateBudget: expand.DefaultBudget}
	if in := r.Input.Placement; in != nil && in.TemplateBudget != nil {
		p.templateBudget = in.TemplateBudget.Value()
		if p.templateBudget < 1 || p.templateBudget > MaxTemplateBudget {
			return compose.Outcome{}, fmt.Errorf("input placement.templateBudget %s must be between 1 and 64Mi", in.TemplateBudget)
		}
	}

	clustersOK := p.inventory()
	objectsOK := p.workloads()
	transforms, transformsOK := p.customTransforms()
	collectors, collectorsOK := p.collectors()
	propsOK := true
	if objectsOK && clustersOK && slices.ContainsFunc(p.objects, func(w workload) bool { return expand.Requested(w.obj) }) {
		propsOK = p.properties()
	}
	if !clustersOK || !objectsOK || !transformsOK || !collectorsOK || !propsOK {
		// Crossplane has not answered every requirement yet: compose
		// nothing new and keep what exists until it has.
		r.Resources.Freeze()
		return compose.Outcome{Pending: true, Conditions: []compose.Condition{{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonDelivering, Quiet: true,
			Message: "reading the inventory and the workload objects",
		}}}, nil
	}

	for _, c := range p.clusters {
		p.status.Clusters = append(p.status.Clusters, c.name)
	}
	delivered := p.deliver(transforms)
	p.combine(collectors)
	p.reportedState(delivered.Reason != ReasonTooLarge)
	out := compose.Outcome{Status: &p.status, Conditions: append([]compose.Condition{delivered}, p.conditions...), Copies: &p.copies}
	out.Pending = delivered.Status != corev1.ConditionTrue
	return out, nil
}

// workloads reads the selected objects of the Placement's namespace,
// sorted by kind and name, each once.
func (p *planner) workloads() bool {
	all := true
	seen := map[string]int{}
	for i, sel := range p.r.XR.Spec.Objects {
		gvk := schema.FromAPIVersionAndKind(sel.APIVersion, sel.Kind)
		if !p.policy.Kind(gvk.Group, gvk.Kind) {
			// Not even read: what the namespace may not deliver.
			if k := kindRef(gvk); !slices.Contains(p.kindsRefused, k) {
				p.kindsRefused = append(p.kindsRefused, k)
			}
			continue
		}
		res := sel.Resource
		if res == "" {
			res = plural(sel.Kind)
		}
		var found []resource.Required
		if len(sel.Names) > 0 {
			for _, n := range sel.Names {
				items, resolved := p.r.Require(fmt.Sprintf("object-%d-%s", i, n), compose.Selector{APIVersion: sel.APIVersion, Kind: sel.Kind, Namespace: p.ns, Name: n})
				all = all && resolved
				if resolved && len(items) == 0 {
					p.missing = append(p.missing, workload{gvk: gvk, obj: map[string]any{"metadata": map[string]any{"name": n}}}.ref())
				}
				found = append(found, items...)
			}
		} else {
			// No labels select every object of the kind.
			labels := sel.MatchLabels
			if labels == nil {
				labels = map[string]string{}
			}
			items, resolved := p.r.Require(fmt.Sprintf("objects-%d", i), compose.Selector{APIVersion: sel.APIVersion, Kind: sel.Kind, Namespace: p.ns, Labels: labels})
			all = all && resolved
			found = append(found, items...)
		}
		for _, it := range found {
			// Crossplane reads in the Placement's namespace only; check
			// anyway, since what is delivered must be the namespace's own.
			// A ClusterPlacement asks cluster-wide, so a namespaced kind
			// answers with objects of every namespace: none is placed.
			if ns := it.Resource.GetNamespace(); ns != p.ns {
				if p.ns == "" {
					p.namespaced = append(p.namespaced, kindRef(gvk))
				}
				continue
			}
			w := workload{gvk: gvk, resource: res, obj: it.Resource.Object}
			// One object, one copy per cluster, whatever version each
			// selector names it by: the first selector's version wins.
			key := w.ref()
			if j, ok := seen[key]; ok {
				p.objects[j].collectors = append(p.objects[j].collectors, sel.StatusCollectors...)
				continue
			}
			seen[key] = len(p.objects)
			w.collectors = append(w.collectors, sel.StatusCollectors...)
			p.objects = append(p.objects, w)
		}
	}
	slices.SortFunc(p.objects, func(a, b workload) int { return strings.Compare(a.ref(), b.ref()) })
	slices.Sort(p.missing)
	slices.Sort(p.kindsRefused)
	slices.Sort(p.namespaced)
	p.namespaced = slices.Compact(p.namespaced)
	return all
}

// kindRef names a kind in messages: Kind.group, Kind for the core group.
func kindRef(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

// plural is Kubernetes' own plural of a kind, which is its resource name
// for every built-in kind.
func plural(kind string) string {
	if strings.EqualFold(kind, "Endpoints") {
		return "endpoints"
	}
	r, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Kind: kind})
	return r.Resource
}

// customTransforms reads every CustomTransform and returns the removals of
// each resource (group/resource), the valid paths of all of them.
func (p *planner) customTransforms() (map[string][]jsonpath.Path, bool) {
	items, resolved := p.r.Require(customTransformsKey, compose.Selector{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.CustomTransformKind, Labels: map[string]string{}})
	if !resolved {
		return nil, false
	}
	out := map[string][]jsonpath.Path{}
	for _, it := range items {
		var spec v1alpha1.CustomTransformSpec
		if decodeSpec(it.Resource.Object, &spec) != nil {
			continue
		}
		ok, _ := removals(spec)
		gr := groupResource(spec.APIGroup, spec.Resource)
		out[gr] = append(out[gr], ok...)
	}
	return out, true
}

// quantity is n with its noun, singular for one: 1 object, 2 objects
// (nouns gives the plural when it is not the noun and an s).
func quantity(n int, noun string, nouns ...string) string {
	if n == 1 {
		return "1 " + noun
	}
	if len(nouns) > 0 {
		return fmt.Sprintf("%d %s", n, nouns[0])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// oneOr is one for 1, many otherwise.
func oneOr(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tooLarge says why the Placement delivers nothing new, when it asks for
// more than one Placement delivers or than the policy's quota allows.
func (p *planner) tooLarge() (reason, msg string) {
	objects, clusters := len(p.objects), len(p.clusters)
	if objects > MaxObjects || objects*clusters > MaxCopies {
		return ReasonTooLarge, fmt.Sprintf("%s on %s is more than one Placement delivers (at most %d objects and %d copies); split the Placement", quantity(objects, "object"), quantity(clusters, "cluster"), MaxObjects, MaxCopies)
	}
	if err := p.policy.Limits.Deliveries(objects, clusters); err != nil {
		return ReasonQuotaExceeded, err.Error() + "; narrow spec.clusters or split the Placement"
	}
	return "", ""
}

// deliver composes the copies and says how delivery goes.
func (p *planner) deliver(transforms map[string][]jsonpath.Path) compose.Condition {
	set := p.r.Resources
	if reason, msg := p.tooLarge(); reason != "" {
		set.Freeze()
		n := len(p.objects) * len(p.clusters)
		p.copies = compose.Copies{Desired: n, Failed: n}
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: reason, Fatal: true,
			Message: observe.Bound(msg + "; copies already delivered stay as they are"),
		}
	}
	manifests, failures := p.expand(transforms)
	// The seed: an expansion that fails for any object on any cluster
	// holds back the whole Placement. What was delivered before stays as
	// it was on every cluster, and nothing new is created, its clusters'
	// namespaces included, until the templates expand again.
	held := len(failures) > 0

	// A cluster whose namespace of this name fleetplane did not create
	// for this namespace gets nothing: it is someone else's.
	owned := map[string]bool{}
	for _, c := range p.clusters {
		n := namespaceName(c.name)
		if p.ns == "" {
			// Cluster-scoped copies need no namespace on the cluster.
			owned[c.name] = !held
			continue
		}
		if held {
			set.Keep(n)
			owned[c.name] = false
			continue
		}
		set.Add(n, p.namespaceObject(c.name, p.namespaceOwned(n)))
		owned[c.name] = !p.foreign(n)
		if !owned[c.name] {
			p.notOwned = append(p.notOwned, fmt.Sprintf("Namespace %s on cluster %s", p.ns, c.name))
		}
	}

	copies, delivered := 0, 0
	for k, w := range p.objects {
		po := v1alpha1.PlacedObject{APIVersion: w.gvk.GroupVersion().String(), Kind: w.gvk.Kind, Name: w.name(), Resource: w.resource, Clusters: len(p.clusters)}
		for i, c := range p.clusters {
			n := copyName(c.name, w)
			if owned[c.name] {
				set.Add(n, p.copyObject(c.name, w, manifests[k][i], p.createdHere(n)), p.dependencies(c.name)...)
				if p.foreign(n) {
					p.notOwned = append(p.notOwned, fmt.Sprintf("%s on cluster %s", w.ref(), c.name))
				}
			} else {
				set.Keep(n)
			}
			o := set.Observed(n)
			if observe.ConditionOf(o, string(xpv2.TypeSynced)).Status == corev1.ConditionTrue {
				po.Synced++
			}
			if o != nil && observe.Ready(o) {
				po.Ready++
			}
		}
		copies += len(p.clusters)
		delivered += po.Ready
		p.status.Objects = append(p.status.Objects, po)
	}
	p.status.ExpansionFailures = failures
	p.copies = compose.Copies{Desired: copies, Delivered: delivered, Held: len(p.r.Resources.Held()), Failed: len(p.notOwned)}
	if held {
		p.copies.Failed = copies
	}
	return p.delivered(failures, copies, delivered)
}

// dependencies are what a copy on cluster waits for: the namespace it
// lands in, for a Placement's; nothing for a ClusterPlacement's.
func (p *planner) dependencies(cluster string) []resource.Name {
	if p.ns == "" {
		return nil
	}
	return []resource.Name{namespaceName(cluster)}
}

// scope is what a Placement's and a ClusterPlacement's messages name
// differently: who the policy governs, where objects are read from, and
// the policy field that lists the kinds granted.
type scope struct{ who, where, kindsField string }

func scopeOf(ns string) scope {
	if ns == "" {
		return scope{who: "ClusterPlacements", where: "the control plane (cluster-scoped)", kindsField: "spec.placement.clusterPlacements.kinds"}
	}
	return scope{who: "this namespace", where: "namespace " + ns, kindsField: "spec.placement.kinds"}
}

// expand transforms every object and expands its templates for every
// cluster: manifests[object][cluster], and the first failure of each
// object that fails.
func (p *planner) expand(transforms map[string][]jsonpath.Path) ([][]map[string]any, []v1alpha1.ExpansionFailure) {
	var failures []v1alpha1.ExpansionFailure
	manifests := make([][]map[string]any, len(p.objects))
	// One budget for every template of the Placement, on every cluster:
	// what one tenant's templates may make the shared function do.
	budget := expand.NewBudget(p.templateBudget)
	for k, w := range p.objects {
		base := transform.Object(w.obj, w.gvk.Group, w.gvk.Kind, w.removals(transforms)...)
		manifests[k] = make([]map[string]any, len(p.clusters))
		var failure *v1alpha1.ExpansionFailure
		expands := expand.Requested(w.obj)
		for i, c := range p.clusters {
			manifests[k][i] = base
			if !expands {
				continue
			}
			m, errs := expand.Object(base, c.props, budget)
			if len(errs) > 0 && failure == nil {
				failure = &v1alpha1.ExpansionFailure{Object: w.ref(), Cluster: c.name, ObservedGeneration: p.r.XR.GetGeneration()}
				for _, e := range errs[:min(len(errs), maxExpansionErrors)] {
					// The template's own text can be in the error.
					failure.Errors = append(failure.Errors, observe.Bound(e.Error()))
				}
			}
			manifests[k][i] = m
		}
		if failure != nil {
			failures = append(failures, *failure)
		}
	}
	return manifests, failures
}

// delivered is the Delivered condition: the first of what is wrong, or
// how far delivery is.
func (p *planner) delivered(failures []v1alpha1.ExpansionFailure, copies, delivered int) compose.Condition {
	switch {
	case len(failures) > 0:
		f := failures[0]
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonExpansionFailed, Warning: true,
			Message: observe.Bound(fmt.Sprintf("templates of %s fail to expand, so nothing of this Placement is delivered: every copy stays as it was on every cluster until they do. %s for cluster %s: %s", quantity(len(failures), "object"), f.Object, f.Cluster, strings.Join(f.Errors, "; "))),
		}
	case len(p.clusters) == 0 && p.ungranted > 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonNotGranted, Warning: true,
			Message: fmt.Sprintf("%s spec.clusters.matchLabels %s, but %s does not let %s deliver to them (spec.placement.clusterSelector %s)",
				quantity(p.ungranted, "inventory cluster")+oneOr(p.ungranted, " matches", " match"), labelString(p.r.XR.Spec.Clusters.MatchLabels), p.policy.Config, p.scope.who, selectorString(p.policy.ClusterSelector)),
		}
	case len(p.clusters) == 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonNoClusters, Warning: true,
			Message: fmt.Sprintf("no ClusterProviderConfig labelled %s=true matches spec.clusters.matchLabels %s", v1alpha1.InventoryLabel, labelString(p.r.XR.Spec.Clusters.MatchLabels)),
		}
	case len(p.objects) == 0 && len(p.kindsRefused) > 0:
		return p.kindsNotGranted()
	case len(p.namespaced) > 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonNamespaced, Warning: true,
			Message: fmt.Sprintf("objects of kind %s are namespaced: a ClusterPlacement places cluster-scoped objects, a Placement in their namespace the others; none of them is placed, %s are", listOf(p.namespaced), quantity(len(p.objects), "cluster-scoped object")),
		}
	case len(p.objects) == 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonNoObjects, Warning: true,
			Message: fmt.Sprintf("no object in %s matches spec.objects%s", p.scope.where, missingNote(p.missing)),
		}
	case len(p.kindsRefused) > 0:
		return p.kindsNotGranted()
	case len(p.notOwned) > 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonNotOwned, Warning: true,
			Message: fmt.Sprintf("fleetplane never takes over what it did not create, and these were on their clusters before this Placement delivered them: %s; left as they are", listOf(p.notOwned)),
		}
	case len(p.missing) > 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonObjectsMissing, Warning: true,
			Message: fmt.Sprintf("%s do not exist in %s: %s; the %s placed", quantity(len(p.missing), "named object"), p.scope.where, listOf(p.missing), quantity(len(p.objects), "other", "others")+oneOr(len(p.objects), " is", " are")),
		}
	case delivered < copies || len(p.r.Resources.Held()) > 0:
		return compose.Condition{
			Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonDelivering,
			Message: fmt.Sprintf("%d of %s (%s on %s) delivered", delivered, quantity(copies, "copy", "copies"), quantity(len(p.objects), "object"), quantity(len(p.clusters), "cluster")),
		}
	}
	return compose.Condition{
		Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionTrue, Reason: ReasonDelivered,
		Message: fmt.Sprintf("%d objects delivered to %d clusters", len(p.objects), len(p.clusters)),
	}
}

// kindsNotGranted is the Delivered condition when the policy does not
// grant some selected kinds.
func (p *planner) kindsNotGranted() compose.Condition {
	return compose.Condition{
		Type: v1alpha1.ConditionDelivered, Status: corev1.ConditionFalse, Reason: ReasonNotGranted, Warning: true,
		Message: fmt.Sprintf("%s does not let %s deliver objects of kind %s (%s); %d objects of other kinds are placed",
			p.policy.Config, p.scope.who, listOf(p.kindsRefused), p.scope.kindsField, len(p.objects)),
	}
}

// createdHere reports whether the MR n created what it delivers.
func (p *planner) createdHere(n resource.Name) bool {
	return observe.CreatedHere(p.r.Resources.Observed(n))
}

// foreign reports whether the cluster had the object of MR n before
// fleetplane: its Object found it rather than created it, and, for a
// namespace, it does not carry this namespace's label either (another
// Placement of the namespace may have created it).
func (p *planner) foreign(n resource.Name) bool {
	if !observe.FoundObject(p.r.Resources.Observed(n)) {
		return false
	}
	if n == namespaceName(clusterOf(n)) {
		return !p.namespaceOwned(n)
	}
	return true
}

// namespaceOwned reports whether the namespace Object n delivers was
// created by fleetplane for this namespace: by this Object, or by
// another Placement's (it carries this namespace's label).
func (p *planner) namespaceOwned(n resource.Name) bool {
	if p.createdHere(n) {
		return true
	}
	md, _ := observedManifest(p.r.Resources.Observed(n))["metadata"].(map[string]any)
	l, _ := md["labels"].(map[string]any)
	return l[LabelNamespace] == p.ns
}

// clusterOf is the cluster in a copy's or namespace's resource name.
func clusterOf(n resource.Name) string {
	c, _, _ := strings.Cut(string(n), "/")
	return c
}

// reportedState composes, when the Placement wants singleton reported
// state and selects exactly one cluster, a provider-fleetplane
// ReportedState per object whose copy reports a status: the provider
// writes that status into the workload object. When it wants
// multi-cluster reported state instead (or selects more than one
// cluster), the status written is what every cluster reports,
// aggregated, for the kinds package aggregate folds. Otherwise none is
// composed, so those composed before are removed, and each clears the
// status it wrote (KubeStellar clears it too). A Placement too large to
// deliver composes none anew either.
func (p *planner) reportedState(canGrow bool) {
	spec := p.r.XR.Spec
	single := spec.WantSingletonReportedState && len(p.clusters) == 1
	multi := !single && spec.WantMultiClusterReportedState && len(p.clusters) > 0
	if !single && !multi {
		if spec.WantSingletonReportedState || spec.WantMultiClusterReportedState {
			p.conditions = append(p.conditions, compose.Condition{
				Type: v1alpha1.ConditionReportedState, Status: corev1.ConditionFalse, Reason: ReasonNotSingleton,
				Message: fmt.Sprintf("the objects are placed on %d clusters: a cluster's status is written back into an object only when it is placed on exactly one (or on one or more, aggregated, with spec.wantMultiClusterReportedState); nothing is written, and statuses written before are cleared", len(p.clusters)),
			})
		}
		return
	}
	set := p.r.Resources
	var clusters []string
	for _, c := range p.clusters {
		clusters = append(clusters, c.name)
	}
	var silent, tooLarge, refused, notAggregated []string
	wanted, written := 0, 0
	for _, w := range p.objects {
		n := reportedStateName(w)
		if !canGrow && !set.Exists(n) {
			continue
		}
		var status map[string]any
		if single {
			status, _, _ = unstructured.NestedMap(observedManifest(set.Observed(copyName(clusters[0], w))), "status")
		} else {
			var ok bool
			if status, ok = p.aggregated(w); !ok {
				notAggregated = append(notAggregated, w.ref())
				continue
			}
		}
		size := 0
		if len(status) > 0 {
			size = math.MaxInt // a status that cannot be encoded is not sent
			if b, err := json.Marshal(status); err == nil {
				size = len(b)
			}
		}
		switch {
		case len(status) > 0 && !p.policy.ReportedState(w.gvk.Group, w.gvk.Kind):
			// Not composed, so one composed before goes and clears what
			// it wrote.
			if k := kindRef(w.gvk); !slices.Contains(refused, k) {
				refused = append(refused, k)
			}
			continue
		case len(status) == 0:
			// Not reported yet, or a kind without status (a ConfigMap);
			// a ReportedState that exists keeps what it wrote until the
			// copy reports again, rather than clear it in between.
			if !set.Exists(n) {
				silent = append(silent, w.ref())
				continue
			}
			set.Keep(n)
		case size > placementmv1alpha1.MaxStatusBytes:
			tooLarge = append(tooLarge, fmt.Sprintf("%s (%d bytes)", w.ref(), size))
			set.Keep(n)
			if !set.Exists(n) {
				continue
			}
		default:
			set.Add(n, p.reportedStateObject(clusters, multi, w, status))
		}
		wanted++
		if set.Ready(n) {
			written++
		}
	}
	source := "cluster " + clusters[0] + " reports"
	if multi {
		source = fmt.Sprintf("its %d clusters report, aggregated,", len(clusters))
	}
	p.conditions = append(p.conditions, p.reportedStateCondition(source, reporting{
		wanted: wanted, written: written, silent: silent, tooLarge: tooLarge, refused: refused, notAggregated: notAggregated,
	}))
}

// reporting is what reportedState found, object by object.
type reporting struct {
	wanted, written                          int
	silent, tooLarge, refused, notAggregated []string
}

// reportedStateCondition says how far writing statuses back is, and what
// is not written and why.
func (p *planner) reportedStateCondition(source string, r reporting) compose.Condition {
	c := compose.Condition{
		Type: v1alpha1.ConditionReportedState, Status: corev1.ConditionTrue, Reason: ReasonReported,
		Message: fmt.Sprintf("the status %s is written into %d objects", source, r.written),
	}
	if r.written < r.wanted || len(r.tooLarge) > 0 {
		c.Status, c.Reason = corev1.ConditionFalse, ReasonReporting
		c.Message = fmt.Sprintf("the status %s is written into %d of %d objects (kubectl get reportedstates -n %s says why)", source, r.written, r.wanted, p.ns)
	}
	if len(r.tooLarge) > 0 {
		c.Message += fmt.Sprintf("; a status of more than %d bytes is not written: %s", placementmv1alpha1.MaxStatusBytes, listOf(r.tooLarge))
	}
	if len(r.silent) > 0 {
		c.Message += fmt.Sprintf("; %d report no status: %s", len(r.silent), listOf(r.silent))
	}
	if len(r.notAggregated) > 0 {
		c.Message += fmt.Sprintf("; statuses of %d objects are not aggregated across clusters (only Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs are): %s", len(r.notAggregated), listOf(r.notAggregated))
	}
	if len(r.refused) > 0 {
		c.Status, c.Reason = corev1.ConditionFalse, ReasonNotGranted
		c.Message += fmt.Sprintf("; %s does not let this namespace have the status of %s written back (spec.placement.reportedStateKinds)", p.policy.Config, listOf(r.refused))
	}
	c.Message = observe.Bound(c.Message)
	return c
}

// aggregated is w's status aggregated over what every cluster reports;
// false for a kind that is not aggregated.
func (p *planner) aggregated(w workload) (map[string]any, bool) {
	gk := w.gvk.GroupKind()
	if !aggregate.Aggregated(gk) {
		return nil, false
	}
	reports := make([]aggregate.Report, 0, len(p.clusters))
	for _, c := range p.clusters {
		o := p.r.Resources.Observed(copyName(c.name, w))
		st, _, _ := unstructured.NestedMap(observedManifest(o), "status")
		reports = append(reports, aggregate.Report{
			Cluster: c.name, Status: st,
			Current: observe.ConditionOf(o, string(xpv2.TypeSynced)).Status == corev1.ConditionTrue,
		})
	}
	md, _ := w.obj["metadata"].(map[string]any)
	generation, _ := md["generation"].(int64)
	if g, ok := md["generation"].(float64); ok {
		generation = int64(g)
	}
	return aggregate.Status(gk, generation, reports)
}

// executing counts the clusters w executes on: its copy is there and
// provider-kubernetes reports it ready.
func (p *planner) executing(w workload) int {
	n := 0
	for _, c := range p.clusters {
		if o := p.r.Resources.Observed(copyName(c.name, w)); o != nil && observe.Ready(o) {
			n++
		}
	}
	return n
}

// reportedStateName is the composition resource name of w's ReportedState.
func reportedStateName(w workload) resource.Name {
	return resource.Name("reported-state/" + w.ref())
}

// reportedStateObject has provider-fleetplane write status into w: what
// the one cluster reports, or, aggregated, what all of them do.
func (p *planner) reportedStateObject(clusters []string, aggregated bool, w workload, status map[string]any) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion(placementmv1alpha1.SchemeGroupVersion.String())
	o.SetKind(placementmv1alpha1.ReportedStateKind)
	md, _ := w.obj["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	ref := map[string]any{"apiVersion": w.gvk.GroupVersion().String(), "kind": w.gvk.Kind, "name": w.name()}
	if uid != "" {
		ref["uid"] = uid
	}
	forProvider := map[string]any{"placement": p.r.XR.GetName(), "object": ref, "status": status, "executingCount": int64(p.executing(w))}
	if aggregated {
		list := make([]any, len(clusters))
		for i, c := range clusters {
			list[i] = c
		}
		forProvider["clusters"] = list
	} else {
		forProvider["cluster"] = clusters[0]
	}
	o.Object["spec"] = map[string]any{
		"forProvider": forProvider,
		// The policy the provider checks again, before it writes.
		"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": p.config},
	}
	// The label names the one cluster, or the first of those aggregated:
	// a label value holds one name.
	o.SetLabels(labels(clusters[0], strings.ToLower(w.gvk.Kind), w.name()))
	return o
}

// maxExpansionErrors bounds the errors reported per failure.
const maxExpansionErrors = 10

// copyObject wraps one copy in a provider-kubernetes Object that delivers
// it through the cluster's ClusterProviderConfig and watches it, so that
// what the cluster reports comes back at once. Until the Object has
// created the copy it may only create it: an object of that name already
// on the cluster is observed, never overwritten nor deleted.
func (p *planner) copyObject(cluster string, w workload, manifest map[string]any, created bool) *composed.Unstructured {
	spec := map[string]any{"watch": true}
	if !created {
		spec["managementPolicies"] = []any{"Observe", "Create"}
	}
	o := p.object(cluster, manifest, spec)
	o.SetLabels(labels(cluster, strings.ToLower(w.gvk.Kind), w.name()))
	return o
}

// namespaceObject creates the Placement's namespace on a cluster, with
// the Pod Security Standard the policy enforces there and the label that
// says whose it is, and never deletes it: other Placements of the
// namespace, and objects the cluster's own users made there, may live in
// it. It is updated only once it is known to be fleetplane's (owned).
func (p *planner) namespaceObject(cluster string, owned bool) *composed.Unstructured {
	policies := []any{"Observe", "Create"}
	if owned {
		policies = append(policies, "Update", "LateInitialize")
	}
	o := p.object(cluster, map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{"name": p.ns, "labels": map[string]any{
			LabelNamespace:     p.ns,
			podSecurityEnforce: string(p.policy.PodSecurity),
		}},
	}, map[string]any{"managementPolicies": policies})
	o.SetLabels(labels(cluster, "namespace", p.ns))
	return o
}

// labels are an Object's labels. Object and cluster names may be up to 253
// characters, label values only 63: a name that is no label value is left
// out rather than make the Object invalid.
func labels(cluster, kind, name string) map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{LabelCluster: cluster, LabelKind: kind, LabelName: name} {
		if len(validation.IsValidLabelValue(v)) == 0 {
			out[k] = v
		}
	}
	return out
}

// object is a provider-kubernetes Object delivering manifest to cluster,
// with further spec fields.
func (p *planner) object(cluster string, manifest, spec map[string]any) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion(kubernetesAPIVersion)
	o.SetKind("Object")
	s := map[string]any{
		"forProvider":       map[string]any{"manifest": manifest},
		"providerConfigRef": map[string]any{"kind": clusterProviderConfig, "name": cluster},
	}
	maps.Copy(s, spec)
	o.Object["spec"] = s
	if p.ns == "" {
		// A cluster-scoped XR names the namespace of what it composes.
		o.SetNamespace(p.policy.ObjectNamespace)
	}
	return o
}

// selectorString writes a label selector for messages.
func selectorString(s metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(&s)
	if err != nil || sel.Empty() {
		return "{} (every cluster)"
	}
	return "{" + sel.String() + "}"
}

func labelString(m map[string]string) string {
	if len(m) == 0 {
		return "{} (every cluster)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func missingNote(missing []string) string {
	if len(missing) == 0 {
		return ""
	}
	return "; missing: " + listOf(missing)
}

// listOf lists the first few items, and how many more there are.
func listOf(items []string) string {
	const n = 5
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
