// Package adxcluster composes an ADXCluster: upjet Azure resources when it
// provisions, provider-fleetplane Kusto resources when it federates, and a
// status and condition that say where it stands.
//
// Order is readiness-gated: resource group, then cluster, then databases;
// federation once an endpoint is known; a hub's Federation once its
// heartbeat table exists. Nothing already composed is ever dropped because a
// predecessor turned unready.
package adxcluster

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/compose"
	"github.com/fleetplane/fleetplane/internal/criteria"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// ConditionType is the one custom condition an ADXCluster carries.
const ConditionType = "adxcluster.fleetplane.io"

// Reasons of the ADXCluster condition.
const (
	ReasonProvisioningSkipped     = "ProvisioningSkipped"
	ReasonProvisioningInvalid     = "ProvisioningInvalid"
	ReasonCreating                = "Creating"
	ReasonWaiting                 = "Waiting"
	ReasonClusterReady            = "ClusterReady"
	ReasonFailed                  = "Failed"
	ReasonPermissionRestricted    = "PermissionRestricted"
	ReasonCriteriaExpressionFalse = "CriteriaExpressionFalse"
	ReasonCriteriaExpressionError = "CriteriaExpressionError"
	ReasonCriteriaPending         = "CriteriaPending"
)

// criteriaTTL is how soon an XR with a criteriaExpression is composed
// again, so that a change of cluster labels takes effect.
const criteriaTTL = 20 * time.Second

// The EnvironmentConfig criteriaExpression reads labels from.
const (
	environmentConfigAPIVersion = "apiextensions.crossplane.io/v1beta1"
	environmentConfigKind       = "EnvironmentConfig"
	labelsRequirement           = "fleetplane-cluster-labels"
)

// Compose adds the ADXCluster's composed resources, status and condition to
// rsp. Errors are for requests it cannot make sense of; everything a user
// can fix is reported through the condition instead.
func Compose(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, cfg Config) error {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot read the observed ADXCluster: %w", err)
	}
	xr := &v1alpha1.ADXCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(oxr.Resource.Object, xr); err != nil {
		return fmt.Errorf("cannot decode the observed ADXCluster: %w", err)
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		return fmt.Errorf("cannot read observed composed resources: %w", err)
	}

	c := &composer{xr: xr, set: compose.NewSet(observed), render: renderer{xr: xr, cfg: cfg}, status: xr.Status}
	if err := c.plan(); err != nil {
		return err
	}
	if xr.Spec.CriteriaExpression != "" {
		c.gate(req, rsp, cfg)
		// Crossplane watches composed resources, not the EnvironmentConfig
		// the labels live in: come back sooner than the default to notice
		// a label change.
		rsp.Meta.Ttl = durationpb.New(criteriaTTL)
	}

	if err := c.set.Write(rsp); err != nil {
		return fmt.Errorf("cannot write desired composed resources: %w", err)
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot read the desired ADXCluster: %w", err)
	}
	c.status.ObservedGeneration = xr.GetGeneration()
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c.status)
	if err != nil {
		return fmt.Errorf("cannot encode status: %w", err)
	}
	if len(st) > 0 {
		dxr.Resource.Object["status"] = st
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return fmt.Errorf("cannot write the desired ADXCluster: %w", err)
	}
	if c.frozen || len(c.set.Held()) > 0 || c.cond.Status == corev1.ConditionFalse {
		compose.MarkCompositeNotReady(rsp)
	}
	compose.Report(rsp, oxr.Resource, c.cond)
	return nil
}

// composer plans one ADXCluster.
type composer struct {
	xr     *v1alpha1.ADXCluster
	set    *compose.Set
	render renderer
	// status starts as observed so that states which cannot recompute it
	// (waiting, frozen) keep what the XR showed.
	status v1alpha1.ADXClusterStatus
	cond   compose.Condition
	frozen bool
}

func (c *composer) plan() error {
	spec := c.xr.Spec
	var endpoint string
	federate := false
	switch {
	case spec.Provision == nil:
		endpoint, federate = spec.Endpoint, spec.Endpoint != ""
		c.status = v1alpha1.ADXClusterStatus{Endpoint: spec.Endpoint}
		c.cond = condition(corev1.ConditionTrue, ReasonProvisioningSkipped,
			fmt.Sprintf("Bring-your-own cluster at %s; nothing is provisioned.", spec.Endpoint))
	case len(missingProvisionFields(spec.Provision)) > 0:
		c.cond = condition(corev1.ConditionFalse, ReasonProvisioningInvalid,
			fmt.Sprintf("spec.provision lacks %s; nothing is provisioned until %s set.",
				strings.Join(missingProvisionFields(spec.Provision), ", "),
				plural(len(missingProvisionFields(spec.Provision)), "it is", "they are")))
		c.cond.Warning = true
		c.freeze()
	default:
		endpoint, federate = c.provision()
	}
	return c.federation(endpoint, federate)
}

// provision composes the Azure resources in order and says which endpoint,
// if any, federation may use.
func (c *composer) provision() (string, bool) {
	spec := c.xr.Spec
	r := c.render
	c.set.Add(NameResourceGroup, r.resourceGroup(), true)
	c.set.Add(NameCluster, r.cluster(), c.set.Ready(NameResourceGroup))

	uri, _ := c.observedString(NameCluster, "status.atProvider.uri")
	clusterReady := c.set.Ready(NameCluster) && uri != ""
	azure := []resource.Name{NameResourceGroup, NameCluster}
	for _, db := range r.databases() {
		c.set.Add(DatabaseName(db.DatabaseName), r.database(db), clusterReady)
		azure = append(azure, DatabaseName(db.DatabaseName))
	}
	for _, name := range c.discoveredDatabases(r.databases()) {
		c.set.Add(DatabaseName(name), r.discoveredDatabase(name), clusterReady)
		azure = append(azure, DatabaseName(name))
	}

	forbidden, failed := c.azureFailures(azure)
	switch {
	case forbidden != "":
		ep := uri
		if ep == "" {
			ep = spec.Endpoint
		}
		c.status.Endpoint = ep
		msg := forbidden + " "
		if ep != "" {
			msg += "Federation continues on " + ep + "."
		} else {
			msg += "No endpoint is known: set spec.endpoint to federate meanwhile."
		}
		c.cond = condition(corev1.ConditionTrue, ReasonPermissionRestricted, msg)
		c.cond.Warning = true
		return ep, ep != ""
	case clusterReady:
		c.status.Endpoint = uri
		c.status.AppliedProvisionState = c.appliedState()
		c.cond = condition(corev1.ConditionTrue, ReasonClusterReady,
			fmt.Sprintf("Cluster %s is running at %s.", spec.ClusterName, uri))
		return uri, true
	case failed != "":
		c.cond = condition(corev1.ConditionFalse, ReasonFailed, failed)
		c.cond.Warning = true
	case c.set.Exists(NameCluster):
		c.cond = condition(corev1.ConditionUnknown, ReasonWaiting,
			fmt.Sprintf("Waiting for Azure to finish cluster %s.", spec.ClusterName))
	case c.set.Exists(NameResourceGroup):
		c.cond = condition(corev1.ConditionUnknown, ReasonCreating,
			fmt.Sprintf("Creating resource group %s; cluster %s follows once it is ready.", spec.Provision.ResourceGroup, spec.ClusterName))
	default:
		c.cond = condition(corev1.ConditionUnknown, ReasonCreating,
			fmt.Sprintf("Creating resource group %s for cluster %s.", spec.Provision.ResourceGroup, spec.ClusterName))
	}
	return "", false
}

// maxDiscoveredDatabases bounds how many databases partitions can make a
// provisioned hub create.
const maxDiscoveredDatabases = 100

var databaseName = regexp.MustCompile(`^[a-zA-Z0-9_]{1,260}$`)

// discoveredDatabases are databases a provisioned hub creates because its
// partitions report them: those its Federation finds missing, and those
// created so before, which stay (a database that exists is no longer
// missing, and dropping its resource would delete it under
// deletionPolicy Delete). Names come from heartbeats, so they are checked
// and their number capped.
func (c *composer) discoveredDatabases(declared []v1alpha1.DatabaseSpec) []string {
	if c.xr.Spec.Role != v1alpha1.RoleFederated {
		return nil
	}
	have := map[string]bool{}
	for _, d := range declared {
		have[strings.ToLower(d.DatabaseName)] = true
	}
	found := map[string]bool{}
	for name, o := range c.set.ObservedAll() {
		if strings.HasPrefix(string(name), databasePrefix) && o.GetAnnotations()[discoveredAnnotation] == "true" {
			found[strings.TrimPrefix(string(name), databasePrefix)] = true
		}
	}
	if f := c.set.Observed(NameFederation); f != nil {
		var missing []string
		if err := f.GetValueInto("status.atProvider.missingDatabases", &missing); err == nil {
			for _, m := range missing {
				if databaseName.MatchString(m) {
					found[m] = true
				}
			}
		}
	}
	var out []string
	for name := range found {
		if !have[strings.ToLower(name)] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	if len(out) > maxDiscoveredDatabases {
		out = out[:maxDiscoveredDatabases]
	}
	return out
}

// azureFailures describes the first authorization refusal and the first
// other failure among the composed Azure resources.
func (c *composer) azureFailures(names []resource.Name) (forbidden, failed string) {
	for _, n := range names {
		o := c.set.Observed(n)
		f, ok := observe.Failed(o)
		if !ok {
			continue
		}
		what := fmt.Sprintf("%s %s", o.GetKind(), o.GetAnnotations()[externalName])
		switch {
		case f.Forbidden && forbidden == "":
			forbidden = fmt.Sprintf("Azure refused access to %s: %s.", what, f.Message)
		case !f.Forbidden && failed == "":
			failed = fmt.Sprintf("Azure reported an error for %s: %s", what, f.Message)
		}
	}
	return forbidden, failed
}

// appliedState is what the running cluster has, read from its MR.
func (c *composer) appliedState() *v1alpha1.AppliedProvisionState {
	sku, _ := c.observedString(NameCluster, "status.atProvider.sku.name")
	if sku == "" {
		sku, _ = c.observedString(NameCluster, "spec.forProvider.sku.name")
	}
	var ids []string
	if o := c.set.Observed(NameCluster); o != nil {
		if err := o.GetValueInto("status.atProvider.identity.identityIds", &ids); err != nil {
			ids = nil
		}
	}
	sort.Strings(ids)
	return &v1alpha1.AppliedProvisionState{SkuName: sku, Tier: tierOf(sku), UserAssignedIdentities: ids}
}

// federation composes the role's Kusto resources on endpoint. When the
// endpoint is not usable yet, resources that exist are kept, rendered on
// the endpoint the XR last reported.
func (c *composer) federation(endpoint string, ready bool) error {
	spec := c.xr.Spec
	if spec.Role == "" || spec.Federation == nil || c.frozen {
		return nil
	}
	if !ready {
		endpoint = c.xr.Status.Endpoint
	}
	if endpoint == "" {
		for _, n := range []resource.Name{NameHeartbeat, NameHeartbeatTable, NameFederation} {
			c.keep(n)
		}
		return nil
	}
	switch spec.Role {
	case v1alpha1.RolePartition:
		hb, err := c.render.heartbeat(endpoint)
		if err != nil {
			return fmt.Errorf("cannot render the heartbeat: %w", err)
		}
		c.set.Add(NameHeartbeat, hb, ready)
	case v1alpha1.RoleFederated:
		gate := ready
		if spec.Provision != nil && c.cond.Reason != ReasonPermissionRestricted {
			gate = gate && c.set.Ready(DatabaseName(spec.Federation.HeartbeatDatabase))
		}
		t, err := c.render.heartbeatTable(endpoint)
		if err != nil {
			return fmt.Errorf("cannot render the heartbeat table: %w", err)
		}
		c.set.Add(NameHeartbeatTable, t, gate)
		f, err := c.render.federation(endpoint)
		if err != nil {
			return fmt.Errorf("cannot render the federation: %w", err)
		}
		c.set.Add(NameFederation, f, c.set.Ready(NameHeartbeatTable))
	}
	return nil
}

// keep retains an existing resource the composer cannot render right now.
func (c *composer) keep(n resource.Name) {
	if o := c.set.Observed(n); o != nil {
		c.set.Add(n, compose.Retain(o), false)
	}
}

// gate applies criteriaExpression: unless it holds, the plan is frozen and
// the condition says why.
func (c *composer) gate(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, cfg Config) {
	name := cfg.EnvironmentConfigName
	compose.RequireByName(rsp, labelsRequirement, environmentConfigAPIVersion, environmentConfigKind, name)
	envs, resolved, err := request.GetRequiredResource(req, labelsRequirement)
	switch {
	case err != nil:
		c.criteriaError(fmt.Sprintf("cannot read EnvironmentConfig %s: %v", name, err))
		return
	case !resolved:
		// Crossplane calls again with the EnvironmentConfig; only that
		// answer counts.
		c.cond = condition(corev1.ConditionUnknown, ReasonCriteriaPending,
			fmt.Sprintf("Waiting for EnvironmentConfig %s to evaluate criteriaExpression.", name))
		c.freeze()
		return
	case len(envs) == 0:
		c.criteriaError(fmt.Sprintf("EnvironmentConfig %s, which holds the cluster labels criteriaExpression reads, does not exist.", name))
		return
	}
	labels, err := labelsOf(envs[0].Resource.Object)
	if err != nil {
		c.criteriaError(fmt.Sprintf("EnvironmentConfig %s: %v", name, err))
		return
	}
	ok, err := criteria.Evaluate(c.xr.Spec.CriteriaExpression, labels)
	switch {
	case err != nil:
		c.criteriaError(fmt.Sprintf("criteriaExpression: %v", err))
	case !ok:
		c.cond = condition(corev1.ConditionFalse, ReasonCriteriaExpressionFalse,
			fmt.Sprintf("criteriaExpression is false for the labels in EnvironmentConfig %s; nothing new is composed and nothing is removed.", name))
		c.freeze()
	}
}

func (c *composer) criteriaError(msg string) {
	c.cond = condition(corev1.ConditionFalse, ReasonCriteriaExpressionError, observe.Bound(msg+" Nothing new is composed and nothing is removed."))
	c.cond.Warning = true
	c.freeze()
}

// freeze keeps what exists and composes nothing new; the status stays as
// the XR last showed it.
func (c *composer) freeze() {
	c.frozen = true
	c.status = c.xr.Status
	c.set.Freeze()
}

// labelsOf reads the string map at data.labels of an EnvironmentConfig.
func labelsOf(env map[string]any) (map[string]string, error) {
	data, _ := env["data"].(map[string]any)
	raw, ok := data["labels"]
	if !ok {
		return map[string]string{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("data.labels must be a map of strings")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("data.labels.%s must be a string, not %T", k, v)
		}
		out[k] = s
	}
	return out, nil
}

func (c *composer) observedString(n resource.Name, path string) (string, bool) {
	o := c.set.Observed(n)
	if o == nil {
		return "", false
	}
	s, err := o.GetString(path)
	return s, err == nil && s != ""
}

// missingProvisionFields names the required provision fields left empty.
func missingProvisionFields(p *v1alpha1.ProvisionSpec) []string {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"subscriptionId", p.SubscriptionID},
		{"resourceGroup", p.ResourceGroup},
		{"location", p.Location},
		{"skuName", p.SkuName},
		{"tier", string(p.Tier)},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	return missing
}

func condition(s corev1.ConditionStatus, reason, msg string) compose.Condition {
	return compose.Condition{Type: ConditionType, Status: s, Reason: reason, Message: msg}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
