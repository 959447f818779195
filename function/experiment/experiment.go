// Package experiment composes an Experiment: per target a cluster (GKE) or
// the hub, its Argo CD registration, one multi-source Argo CD Application,
// then one validation WorkflowRun, an Expiry, and Usages that make teardown
// run in reverse dependency order.
//
// Every step waits, readiness-gated, for the one before it; a target waits
// for the targets it depends on to have Healthy and Synced applications.
// Nothing that exists is dropped because a predecessor turned unready.
package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/decode"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// Target phases.
const (
	targetPending      = "Pending"
	targetProvisioning = "Provisioning"
	targetRegistering  = "Registering"
	targetWaiting      = "Waiting"
	targetDeploying    = "Deploying"
	targetReady        = "Ready"
	targetFailed       = "Failed"
)

// Composer composes Experiments.
var Composer = compose.Run(plan)

// plan decides an Experiment's composed resources, status and condition.
func plan(r *compose.Request[v1alpha1.Experiment]) (compose.Outcome, error) {
	xr := r.XR
	g, resolved, err := r.Policy()
	switch {
	case !resolved:
		out := r.ReadingPolicy(v1alpha1.ConditionExperiment)
		out.Status = &xr.Status
		return out, nil
	case err != nil:
		return refused(r, err), nil
	}
	e, err := g.ExperimentsPolicy()
	if err == nil {
		err = granted(xr, e)
	}
	if err == nil {
		err = withinQuota(xr, e)
	}
	if err != nil {
		return refused(r, err), nil
	}
	// The Components are asked for in the same round as the namespace's
	// Experiments, so that Crossplane answers both at once.
	components, componentsResolved, err := requiredComponents(r, xr)
	if err != nil {
		return compose.Outcome{}, err
	}
	switch ok, resolved, holders := place(r, e.Limits.Experiments); {
	case !resolved:
		out := r.ReadingPolicy(v1alpha1.ConditionExperiment)
		out.Conditions[0].Message = "listing the namespace's Experiments, which spec.experiments.quota.maxExperiments counts"
		out.Status = &xr.Status
		return out, nil
	case !ok:
		return waitForPlace(r, e.Limits.Experiments, holders), nil
	}
	cfg := ConfigFrom(r.Input).withPolicy(g.Name, e)
	p := &planner{xr: xr, set: r.Resources, r: renderer{xr: xr, cfg: cfg}, cfg: cfg, components: components, componentsResolved: componentsResolved}
	if err := p.plan(); err != nil {
		return compose.Outcome{}, err
	}
	return compose.Outcome{
		Status:     &p.status,
		Conditions: []compose.Condition{p.cond},
		// Until the workflow succeeds the experiment is not done, even
		// when every resource composed so far is ready.
		Pending: p.status.Phase != v1alpha1.PhaseComplete,
		// A failed experiment stays as it is until it expires or is
		// edited.
		Settled: p.status.Phase == v1alpha1.PhaseFailed,
	}, nil
}

// refused reports what the policy does not grant: nothing new is
// composed, nothing is removed (an Expiry composed before still expires
// the Experiment), and the Experiment has failed until the spec or the
// policy changes.
func refused(r *compose.Request[v1alpha1.Experiment], err error) compose.Outcome {
	out := r.Refused(v1alpha1.ConditionExperiment, err)
	st := r.XR.Status
	st.Phase = v1alpha1.PhaseFailed
	out.Status = &st
	return out
}

// granted checks, before anything is composed, that the policy lets the
// Experiment do all it asks: every target's cluster type, the exec plugin
// Argo CD reaches GKE with, and the validation workflow. Refusing the
// whole Experiment up front means a refused one never leaves half its
// resources behind.
func granted(xr *v1alpha1.Experiment, e tenancy.Experiments) error {
	for _, t := range xr.Spec.Targets {
		switch t.Cluster.Type {
		case v1alpha1.ClusterHub:
			if !e.AllowHubTargets {
				return fmt.Errorf("target %s deploys to the hub, which the policy does not allow (spec.experiments.allowHubTargets)", t.Name)
			}
		case v1alpha1.ClusterGKE:
			if e.GCP == nil {
				return fmt.Errorf("target %s is a GKE cluster, which the policy does not grant: the cluster admin adds spec.experiments.gcp (the project, and the Google service account Argo CD reaches GKE as)", t.Name)
			}
			if !slices.Contains(e.ArgoCD.AllowedExecCommands, gkeExecCommand) {
				return fmt.Errorf("target %s is a GKE cluster, which Argo CD reaches with %s, an exec plugin the policy does not allow (spec.argocd.allowedExecCommands)", t.Name, gkeExecCommand)
			}
		case v1alpha1.ClusterVCluster:
			if e.VCluster == nil {
				return fmt.Errorf("target %s is a vcluster, which the policy does not grant: the cluster admin adds spec.experiments.vcluster (the images a virtual cluster runs) and applies package/rbac/vcluster-roles.yaml", t.Name)
			}
		case v1alpha1.ClusterTalos:
			if e.Talos == nil {
				return fmt.Errorf("target %s is a talos cluster, which the policy does not grant: the cluster admin adds spec.experiments.talos (the versions, and the Cluster API infrastructure the machines run on) and applies package/rbac/crossplane-talos.yaml", t.Name)
			}
		}
	}
	if tmpl := xr.Spec.Workflow.Template; !tenancy.TemplateAllowed(e.Workflows, tmpl) {
		return fmt.Errorf("the validation WorkflowTemplate %s is not one the policy lets this namespace run (spec.workflows.allowedTemplates)", tmpl)
	}
	return nil
}

// componentsRequirement is the key under which Components are required.
func componentsRequirement(name string) string { return "component-" + name }

// requiredComponents asks Crossplane for every Component the experiment
// names and returns those it found. resolved is false until Crossplane has
// answered for all of them.
func requiredComponents(r *compose.Request[v1alpha1.Experiment], xr *v1alpha1.Experiment) (map[string]*v1alpha1.Component, bool, error) {
	out := map[string]*v1alpha1.Component{}
	resolved := true
	for _, t := range xr.Spec.Targets {
		for _, ref := range t.Components {
			name, _ := refName(ref)
			key := componentsRequirement(name)
			items, ok := r.Require(key, compose.Selector{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ComponentKind, Name: name})
			if !ok {
				resolved = false
				continue
			}
			if len(items) > 0 {
				c := &v1alpha1.Component{}
				if err := decode.Into(items[0].Resource.Object, c); err != nil {
					return nil, false, fmt.Errorf("cannot decode Component %s: %w", name, err)
				}
				out[name] = c
			}
		}
	}
	return out, resolved, nil
}

// planner plans one Experiment.
type planner struct {
	xr                 *v1alpha1.Experiment
	set                *compose.Set
	r                  renderer
	cfg                Config
	components         map[string]*v1alpha1.Component
	componentsResolved bool

	status v1alpha1.ExperimentStatus
	cond   compose.Condition
	// waiting explains what the experiment waits for, first reason first.
	waiting []string
	failed  []string
	// inlineRun is true when the validation is the inline suspend
	// workflow, which only a person resumes.
	inlineRun bool
}

// waitOnf records what a target waits for in its status, and the target
// in the condition. The condition names targets only, not their steps:
// it changes when a target is done, not at every step, because each
// change of an XR condition costs Crossplane (v2.4) a round of status
// writes that can race its own cache (crossplane/crossplane#7062).
func (p *planner) waitOnf(st *v1alpha1.TargetStatus, format string, a ...any) {
	st.Message = fmt.Sprintf(format, a...)
	p.waiting = append(p.waiting, st.Name)
}
func (p *planner) failf(format string, a ...any) {
	p.failed = append(p.failed, fmt.Sprintf(format, a...))
}
func (p *planner) ready(n resource.Name) bool                      { return p.set.Ready(n) }
func (p *planner) observed(n resource.Name) *composed.Unstructured { return p.set.Observed(n) }

func (p *planner) plan() error {
	xr := p.xr
	exp, err := p.r.expiry()
	if err != nil {
		return err
	}
	p.set.Add(expiryName, exp)
	p.status.ExpiresAt = &metav1.Time{Time: p.r.expiresAt()}
	p.status.ObservedGeneration = xr.Generation

	order, cycle := topoOrder(xr.Spec.Targets)
	if cycle != "" {
		p.failf("targets depend on each other in a cycle: %s", cycle)
	}
	appsReady := map[string]bool{}
	byName := map[string]v1alpha1.Target{}
	for _, t := range xr.Spec.Targets {
		byName[t.Name] = t
	}
	statuses := map[string]*v1alpha1.TargetStatus{}
	for _, name := range order {
		t := byName[name]
		st := &v1alpha1.TargetStatus{Name: t.Name, Phase: targetPending}
		statuses[t.Name] = st
		if cycle != "" {
			st.Phase, st.Message = targetFailed, "dependency cycle"
			p.set.Keep(targetResources(t.Name)...)
			continue
		}
		if err := p.target(t, st, appsReady); err != nil {
			return err
		}
	}
	for _, t := range xr.Spec.Targets {
		p.status.Targets = append(p.status.Targets, *statuses[t.Name])
	}

	allApps := len(xr.Spec.Targets) > 0
	for _, t := range xr.Spec.Targets {
		allApps = allApps && appsReady[t.Name]
	}
	if err := p.workflow(allApps); err != nil {
		return err
	}
	p.usages()
	p.phase(allApps)
	return nil
}

// targetResources are a target's composed resources in creation order.
func targetResources(t string) []resource.Name {
	return []resource.Name{networkName(t), subnetName(t),
		vclusterAccountName(t), vclusterBindingName(t), vclusterConfigName(t), vclusterServiceName(t), vclusterHeadlessName(t),
		talosInfraName(t), talosMachinesName(t), talosControlPlaneName(t), talosWorkerConfigName(t),
		clusterName(t), nodePoolName(t), registrationName(t), applicationName(t)}
}

// target composes one target's resources and records its state. Targets
// are planned in dependency order, so those it depends on are in the set.
func (p *planner) target(t v1alpha1.Target, st *v1alpha1.TargetStatus, appsReady map[string]bool) error {
	// after is what the target's application is created after: its
	// cluster's registration with Argo CD, and the applications of the
	// targets it depends on.
	var after []resource.Name
	var server string
	switch t.Cluster.Type {
	case v1alpha1.ClusterHub:
		server = p.cfg.HubServer
		st.ClusterName, st.Endpoint = "hub", server
	case v1alpha1.ClusterGKE:
		var failed bool
		var err error
		if server, failed, err = p.gkeTarget(t, st); err != nil || failed {
			return err
		}
		after = append(after, registrationName(t.Name), argocdAccessName)
	case v1alpha1.ClusterVCluster:
		var err error
		if server, err = p.vclusterTarget(t, st); err != nil {
			return err
		}
		after = append(after, registrationName(t.Name))
	case v1alpha1.ClusterTalos:
		var failed bool
		var err error
		if server, failed, err = p.talosTarget(t, st); err != nil || failed {
			return err
		}
		// Argo CD deploys once the workers are up, too.
		after = append(after, registrationName(t.Name), nodePoolName(t.Name))
	default:
		p.failTarget(t.Name, st, fmt.Sprintf("cluster type %s is not one fleetplane composes (gke, hub, vcluster, talos)", t.Cluster.Type))
		p.set.Keep(targetResources(t.Name)...)
		return nil
	}
	for _, d := range t.Depends {
		after = append(after, applicationName(d))
	}

	comps, err := p.resolve(t, st)
	switch {
	case err != nil:
		p.failTarget(t.Name, st, err.Error())
		p.set.Keep(applicationName(t.Name))
		return nil
	case comps == nil || server == "":
		p.set.Keep(applicationName(t.Name))
	default:
		app := applicationName(t.Name)
		p.set.Add(app, p.r.application(t, server, comps, observe.CreatedHere(p.observed(app))), after...)
		if observe.FoundObject(p.observed(app)) {
			p.failTarget(t.Name, st, existedBefore("Argo CD Application", p.cfg.ArgoCDNamespace, p.r.appName(t.Name)))
			return nil
		}
	}
	p.targetPhase(t, st, server)
	appsReady[t.Name] = st.Phase == targetReady
	return nil
}

// networkOf is t's network, as networkOf, except that the network of a
// cluster that exists never changes under it: moving a GKE cluster to
// another network replaces it. A cluster made on the project's default
// network (before dedicated networks were the default) stays there; one
// made in its own VPC keeps that VPC and subnet, with the ranges they
// were made with, whatever cluster.network says now.
func (p *planner) networkOf(t v1alpha1.Target) (network, string) {
	n, problem := networkOf(t)
	if p.observed(clusterName(t.Name)) == nil {
		return n, problem
	}
	sub := p.observed(subnetName(t.Name))
	switch {
	case p.observed(networkName(t.Name)) == nil:
		return network{}, ""
	case sub == nil:
		return n, problem
	}
	made := network{dedicated: true, subnet: defaultSubnetCIDR, pods: defaultPodsCIDR, services: defaultServicesCIDR}
	if v, err := sub.GetString("spec.forProvider.ipCidrRange"); err == nil && v != "" {
		made.subnet = v
	}
	ranges, _, _ := unstructured.NestedSlice(sub.Object, "spec", "forProvider", "secondaryIpRange")
	for _, r := range ranges {
		m, _ := r.(map[string]any)
		cidr, _ := m["ipCidrRange"].(string)
		switch m["rangeName"] {
		case podsRange:
			made.pods = or(cidr, made.pods)
		case servicesRange:
			made.services = or(cidr, made.services)
		}
	}
	return made, ""
}

// failTarget fails a target with msg, in its status and the Experiment's.
func (p *planner) failTarget(target string, st *v1alpha1.TargetStatus, msg string) {
	st.Phase, st.Message = targetFailed, msg
	p.failf("target %s: %s", target, msg)
}

// existedBefore says why a target fails on an object of its name that it
// did not create.
func existedBefore(kind, ns, name string) string {
	return fmt.Sprintf("%s %s/%s existed before this Experiment, which never takes over what it did not create; it is left as it is", kind, ns, name)
}

// gkeTarget composes a GKE target's network, cluster, node pool, Argo
// CD's access and, once the cluster has an endpoint, its registration.
// It returns the server Argo CD reaches the cluster at, empty until GKE
// reports the endpoint; failed when the target failed (its status says
// why) and nothing more is to be composed for it.
func (p *planner) gkeTarget(t v1alpha1.Target, st *v1alpha1.TargetStatus) (server string, failed bool, err error) {
	st.ClusterName = p.r.gkeName(t.Name)
	n, problem := p.networkOf(t)
	if problem != "" {
		p.failTarget(t.Name, st, problem)
		p.set.Keep(targetResources(t.Name)...)
		return "", true, nil
	}
	p.set.Add(argocdAccessName, p.r.argocdAccess())
	if !n.dedicated {
		p.set.Add(clusterName(t.Name), p.r.cluster(t, n))
	} else {
		// The VPC, then its subnet, then the cluster in it.
		p.set.Add(networkName(t.Name), p.r.vpc(t))
		p.set.Add(subnetName(t.Name), p.r.vpcSubnet(t, n), networkName(t.Name))
		p.set.Add(clusterName(t.Name), p.r.cluster(t, n), subnetName(t.Name))
	}
	p.set.Add(nodePoolName(t.Name), p.r.nodePool(t, p.observed(nodePoolName(t.Name))), clusterName(t.Name))
	if ep := p.clusterEndpoint(t.Name); ep != "" {
		server = "https://" + strings.TrimPrefix(ep, "https://")
		st.Endpoint = server
	}
	if server == "" {
		// Argo CD cannot be told where the cluster is yet.
		p.set.Keep(registrationName(t.Name))
	} else {
		reg, err := p.r.gkeRegistration(t)
		if err != nil {
			return "", false, err
		}
		p.set.Add(registrationName(t.Name), reg, nodePoolName(t.Name))
	}
	return server, false, nil
}

// clusterEndpoint is the endpoint GKE reports for a target's cluster.
func (p *planner) clusterEndpoint(t string) string {
	o := p.observed(clusterName(t))
	if o == nil {
		return ""
	}
	ep, _ := o.GetString("status.atProvider.endpoint")
	return ep
}

// resolve resolves a target's components; nil without an error while
// Crossplane has not supplied the Components yet.
func (p *planner) resolve(t v1alpha1.Target, st *v1alpha1.TargetStatus) ([]Resolved, error) {
	if !p.componentsResolved {
		return nil, nil
	}
	var comps []Resolved
	for _, ref := range t.Components {
		name, _ := refName(ref)
		c, err := Resolve(ref, p.components[name], p.cfg)
		if err != nil {
			return nil, err
		}
		comps = append(comps, c)
		st.Components = append(st.Components, c.Name+" ("+c.Origin+")")
		if c.Observability != nil {
			st.Observability = append(st.Observability, v1alpha1.ComponentObservability{Component: c.Name, Observability: *c.Observability})
		}
	}
	if len(comps) == 0 {
		return nil, errors.New("no components to deploy")
	}
	return comps, nil
}

// targetPhase says what a target waits for: the first step, in creation
// order, that is not Ready.
func (p *planner) targetPhase(t v1alpha1.Target, st *v1alpha1.TargetStatus, server string) {
	for _, s := range p.clusterSteps(t, st.ClusterName, server) {
		if !s.done {
			st.Phase = s.phase
			p.waitOnf(st, "%s", s.waits())
			return
		}
	}
	var pending []string
	for _, d := range t.Depends {
		if !p.ready(applicationName(d)) {
			pending = append(pending, d)
		}
	}
	switch {
	case len(pending) > 0:
		sort.Strings(pending)
		st.Phase = targetWaiting
		p.waitOnf(st, "waiting for %s to be Healthy and Synced", strings.Join(pending, ", "))
		p.waiting[len(p.waiting)-1] += " (after " + strings.Join(pending, ", ") + ")"
	case !p.componentsResolved:
		st.Phase = targetDeploying
		p.waitOnf(st, "resolving components")
	case !p.ready(applicationName(t.Name)):
		st.Phase = targetDeploying
		p.waitOnf(st, "Argo CD application %s is not Healthy and Synced yet", p.r.appName(t.Name))
	default:
		st.Phase = targetReady
	}
}

// clusterStep is a step of a target's cluster before its application:
// done, or the phase of a target waiting on it and what it waits for.
type clusterStep struct {
	done  bool
	phase string
	waits func() string
}

// clusterSteps are the steps of a target's cluster, in creation order.
func (p *planner) clusterSteps(t v1alpha1.Target, cluster, server string) []clusterStep {
	ns, ready := p.xr.Namespace, func(n resource.Name) bool { return p.ready(n) }
	say := func(format string, a ...any) func() string { return func() string { return fmt.Sprintf(format, a...) } }
	switch t.Cluster.Type {
	case v1alpha1.ClusterGKE:
		n, _ := p.networkOf(t)
		return []clusterStep{
			{!n.dedicated || ready(networkName(t.Name)) && ready(subnetName(t.Name)), targetProvisioning,
				say("network of cluster %s is provisioning (VPC %s, subnet %s)", cluster, p.r.vpcName(t.Name), p.r.subnetName(t.Name))},
			{ready(clusterName(t.Name)), targetProvisioning, say("cluster %s is provisioning", cluster)},
			{ready(nodePoolName(t.Name)) && server != "", targetProvisioning, say("node pool of cluster %s is provisioning", cluster)},
			{ready(registrationName(t.Name)), targetRegistering, say("registering cluster %s with Argo CD", cluster)},
			{ready(argocdAccessName), targetRegistering,
				say("granting Argo CD's service account %s %s on project %s", p.cfg.ArgoCDServiceAccount, p.cfg.ArgoCDRole, p.cfg.GCPProject)},
		}
	case v1alpha1.ClusterVCluster:
		return []clusterStep{
			{ready(clusterName(t.Name)), targetProvisioning, say("virtual cluster %s is starting (StatefulSet %s/%s)", cluster, ns, cluster)},
			{ready(registrationName(t.Name)), targetRegistering, say("registering virtual cluster %s with Argo CD (kubeconfig Secret %s/vc-%s)", cluster, ns, cluster)},
		}
	case v1alpha1.ClusterTalos:
		return []clusterStep{
			{ready(clusterName(t.Name)), targetProvisioning, say("Cluster API is provisioning talos cluster %s's control plane (Cluster %s/%s)", cluster, ns, cluster)},
			{ready(nodePoolName(t.Name)), targetProvisioning, say("the workers of talos cluster %s are starting (MachineDeployment %s/%s-workers)", cluster, ns, cluster)},
			{ready(registrationName(t.Name)), targetRegistering, say("registering talos cluster %s with Argo CD (kubeconfig Secret %s/%s-kubeconfig)", cluster, ns, cluster)},
		}
	case v1alpha1.ClusterHub:
		// Argo CD's own cluster: nothing to wait for.
	}
	return nil
}

// workflow composes the validation run once every application is ready,
// and reads its phase.
func (p *planner) workflow(allApps bool) error {
	var params []workflowsv1alpha1.Parameter
	params = append(params, workflowsv1alpha1.Parameter{Name: "experiment-name", Value: p.xr.Name})
	for i, t := range p.xr.Spec.Targets {
		ts := p.status.Targets[i]
		// What the target's components declare of their metrics, as
		// JSON (the same status, the same bytes): "[]" when none does.
		obs := ts.Observability
		if obs == nil {
			obs = []v1alpha1.ComponentObservability{}
		}
		js, err := json.Marshal(obs)
		if err != nil {
			return err
		}
		params = append(params,
			workflowsv1alpha1.Parameter{Name: t.Name + "-endpoint", Value: ts.Endpoint},
			workflowsv1alpha1.Parameter{Name: t.Name + "-name", Value: ts.ClusterName},
			workflowsv1alpha1.Parameter{Name: t.Name + "-observability", Value: string(js)})
	}
	seen := map[string]bool{}
	for _, q := range params {
		seen[q.Name] = true
	}
	keys := make([]string, 0, len(p.xr.Spec.Workflow.Params))
	for k := range p.xr.Spec.Workflow.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if seen[k] {
			p.failf("workflow parameter %s clashes with one fleetplane sets", k)
			continue
		}
		params = append(params, workflowsv1alpha1.Parameter{Name: k, Value: p.xr.Spec.Workflow.Params[k]})
	}
	wf, err := p.r.workflowRun(params)
	if err != nil {
		return err
	}
	if len(p.failed) > 0 && !p.set.Exists(workflowName) {
		return nil
	}
	p.set.AddWhen(allApps, workflowName, wf)
	o := p.observed(workflowName)
	if o == nil {
		return nil
	}
	ws := &v1alpha1.WorkflowStatus{}
	ws.Name, _ = o.GetString("status.atProvider.workflowName")
	ws.Phase, _ = o.GetString("status.atProvider.phase")
	ws.Message, _ = o.GetString("status.atProvider.message")
	ws.Message = observe.Bound(ws.Message)
	ws.StartedAt = timeAt(o, "status.atProvider.startedAt")
	ws.FinishedAt = timeAt(o, "status.atProvider.finishedAt")
	p.inlineRun, _ = o.GetBool("status.atProvider.inline")
	if f, ok := observe.Failed(o); ok && ws.Phase == "" {
		ws.Message = f.Message
	}
	p.status.WorkflowStatus = ws
	return nil
}

func timeAt(o *composed.Unstructured, path string) *metav1.Time {
	s, err := o.GetString(path)
	if err != nil || s == "" {
		return nil
	}
	t := &metav1.Time{}
	if err := t.UnmarshalQueryParameter(s); err != nil {
		return nil
	}
	return t
}

// usages make deletion run in reverse order: the workflow, then
// applications (dependents before their dependencies), registrations, node
// pools, clusters, subnets, VPCs. A Usage needs both resources to exist, so it is composed
// once they do.
func (p *planner) usages() {
	add := func(of, by resource.Name, reason string) {
		o, b := p.observed(of), p.observed(by)
		if o == nil || b == nil {
			return
		}
		name := resource.Name("usage-" + string(of) + "-by-" + string(by))
		p.set.Add(name, usage(o, b, reason))
		p.set.MarkReady(name)
	}
	for _, t := range p.xr.Spec.Targets {
		add(networkName(t.Name), subnetName(t.Name), "the subnet goes before its VPC")
		add(subnetName(t.Name), clusterName(t.Name), "the cluster goes before its subnet")
		add(clusterName(t.Name), nodePoolName(t.Name), "the node pool goes before its cluster")
		add(clusterName(t.Name), registrationName(t.Name), "Argo CD forgets the cluster before it goes")
		add(talosInfraName(t.Name), clusterName(t.Name), "Cluster API takes the cluster down through its infrastructure")
		add(talosControlPlaneName(t.Name), clusterName(t.Name), "Cluster API takes the cluster down through its control plane")
		add(registrationName(t.Name), applicationName(t.Name), "the application is removed while Argo CD can still reach the cluster")
		for _, d := range t.Depends {
			add(applicationName(d), applicationName(t.Name), t.Name+" depends on "+d)
		}
		add(applicationName(t.Name), workflowName, "the validation workflow goes first")
	}
}

// phase sums the experiment up in status and in its condition.
func (p *planner) phase(allApps bool) {
	ws := p.status.WorkflowStatus
	wfPhase := ""
	if ws != nil {
		wfPhase = ws.Phase
	}
	set := func(ph v1alpha1.Phase, status corev1.ConditionStatus, msg string) {
		p.status.Phase = ph
		p.cond = compose.Condition{Type: v1alpha1.ConditionExperiment, Status: status, Reason: string(ph), Message: observe.Bound(msg)}
	}
	switch {
	case len(p.failed) > 0:
		set(v1alpha1.PhaseFailed, corev1.ConditionFalse, strings.Join(p.failed, "; "))
		p.cond.Warning = true
	case wfPhase == "Failed" || wfPhase == "Error":
		msg := "validation workflow " + ws.Name + " " + strings.ToLower(wfPhase)
		if ws.Message != "" {
			msg += ": " + ws.Message
		}
		set(v1alpha1.PhaseFailed, corev1.ConditionFalse, msg)
		p.cond.Warning = true
		p.status.CompletedAt = ws.FinishedAt
	case wfPhase == "Succeeded":
		set(v1alpha1.PhaseComplete, corev1.ConditionTrue, "validation workflow "+ws.Name+" succeeded")
		p.status.CompletedAt = ws.FinishedAt
	case wfPhase == "Running" && p.inlineRun:
		set(v1alpha1.PhaseRunning, corev1.ConditionUnknown, fmt.Sprintf("WorkflowTemplate %s does not exist, so validation is manual: workflow %s waits for `argo resume -n %s %s`", p.xr.Spec.Workflow.Template, ws.Name, p.cfg.WorkflowNamespace, ws.Name))
	case wfPhase != "":
		set(v1alpha1.PhaseRunning, corev1.ConditionUnknown, "validation workflow "+ws.Name+" is "+strings.ToLower(wfPhase))
	case allApps:
		set(v1alpha1.PhaseReady, corev1.ConditionUnknown, "every application is Healthy and Synced; submitting the validation workflow")
	case p.anyComposedBeyondExpiry():
		set(v1alpha1.PhaseProvisioning, corev1.ConditionUnknown, p.waitingMessage())
	default:
		set(v1alpha1.PhasePending, corev1.ConditionUnknown, p.waitingMessage())
	}
}

func (p *planner) waitingMessage() string {
	return "waiting for targets " + strings.Join(p.waiting, ", ") + "; status.targets says what each waits for"
}

func (p *planner) anyComposedBeyondExpiry() bool {
	for _, t := range p.xr.Spec.Targets {
		if slices.ContainsFunc([]resource.Name{clusterName(t.Name), applicationName(t.Name)}, p.set.Exists) {
			return true
		}
		if t.Cluster.Type == v1alpha1.ClusterHub && p.componentsResolved {
			return true
		}
	}
	return false
}

// topoOrder orders targets so that every target comes after those it
// depends on, keeping spec order otherwise; a cycle is reported.
func topoOrder(targets []v1alpha1.Target) ([]string, string) {
	deps := map[string][]string{}
	for _, t := range targets {
		deps[t.Name] = t.Depends
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, path []string) string
	visit = func(n string, path []string) string {
		switch state[n] {
		case 1:
			return strings.Join(append(path, n), " -> ")
		case 2:
			return ""
		}
		state[n] = 1
		for _, d := range deps[n] {
			if _, known := deps[d]; !known {
				continue
			}
			if c := visit(d, append(path, n)); c != "" {
				return c
			}
		}
		state[n] = 2
		order = append(order, n)
		return ""
	}
	for _, t := range targets {
		if c := visit(t.Name, nil); c != "" {
			names := make([]string, len(targets))
			for i, t := range targets {
				names[i] = t.Name
			}
			return names, c
		}
	}
	return order, ""
}
