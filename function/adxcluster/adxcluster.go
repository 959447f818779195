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
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/function/adxcluster/criteria"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

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
	// ReasonNotGranted: the namespace's policy does not grant what the
	// spec asks for; nothing new is composed.
	ReasonNotGranted = compose.ReasonNotGranted
	// ReasonAlreadyExists: Azure has a cluster or database of that name
	// that this ADXCluster did not create; it is not taken over.
	ReasonAlreadyExists = "AlreadyExists"
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

// Composer composes ADXClusters.
var Composer = compose.Run(plan)

// plan decides an ADXCluster's composed resources, status and condition.
func plan(r *compose.Request[v1alpha1.ADXCluster]) (compose.Outcome, error) {
	cfg, err := ConfigFrom(r.Input)
	if err != nil {
		return compose.Outcome{}, err
	}
	xr := r.XR
	g, resolved, err := r.Policy()
	switch {
	case !resolved:
		out := r.ReadingPolicy(v1alpha1.ConditionADXCluster)
		out.Status = &xr.Status
		return out, nil
	case err != nil:
		out := r.Refused(v1alpha1.ConditionADXCluster, err)
		out.Status = &xr.Status
		return out, nil
	}
	// Kusto resources name the config that governs the namespace; the
	// provider checks it selects the namespace, and what it grants.
	cfg.Kusto = xpv2.ProviderConfigReference{Kind: fpv1alpha1.ClusterProviderConfigKind, Name: g.Name}
	p := &planner{xr: xr, set: r.Resources, render: renderer{xr: xr, cfg: cfg}, status: xr.Status, grant: g}
	if err := p.plan(); err != nil {
		return compose.Outcome{}, err
	}
	if xr.Spec.CriteriaExpression != "" {
		p.gate(r, cfg)
		// Crossplane watches composed resources, not the EnvironmentConfig
		// the labels live in: come back sooner than the default to notice
		// a label change.
		r.ComposeAgainWithin(criteriaTTL)
	}
	p.status.ObservedGeneration = xr.GetGeneration()
	return compose.Outcome{
		Status:     &p.status,
		Conditions: []compose.Condition{p.cond},
		// While discovering, nothing but the ProvisioningDefaults is
		// composed, and the XR is not ready however ready that is.
		Pending: p.frozen || p.cond.Status == corev1.ConditionFalse || p.cond.Reason == ReasonDiscovering,
	}, nil
}

// planner plans one ADXCluster.
type planner struct {
	xr     *v1alpha1.ADXCluster
	set    *compose.Set
	render renderer
	// status starts as observed so that states which cannot recompute it
	// (waiting, frozen) keep what the XR showed.
	status v1alpha1.ADXClusterStatus
	cond   compose.Condition
	frozen bool
	// grant is what the namespace's policy grants.
	grant *tenancy.Grant
	// limits are the quotas where the cluster is provisioned.
	limits tenancy.ADXLimits
	// heldBack are databases partitions report that the quota leaves
	// uncreated.
	heldBack []string
}

func (p *planner) plan() error {
	spec := p.xr.Spec
	if spec.Federation != nil {
		// The provider refuses an identity its config does not allow too;
		// refusing here says so on the XR before anything is composed.
		for _, t := range spec.Federation.FederatedTargets {
			if err := p.grant.ManagedIdentity(t.ManagedIdentityClientID); err != nil {
				p.refuse(fmt.Errorf("heartbeat target %s: %w", t.Endpoint, err))
				return nil
			}
			// Heartbeats are written with the platform's identity: only
			// into hubs the namespace is granted.
			if err := p.grant.KustoDatabase("spec.federation.federatedTargets[].heartbeatDatabase", t.Endpoint, t.HeartbeatDatabase); err != nil {
				p.refuse(fmt.Errorf("heartbeat target %s: %w", t.Endpoint, err))
				return nil
			}
		}
	}
	if spec.Provision == nil {
		p.status = v1alpha1.ADXClusterStatus{Endpoint: spec.Endpoint}
		p.cond = condition(corev1.ConditionTrue, ReasonProvisioningSkipped,
			fmt.Sprintf("Bring-your-own cluster at %s; nothing is provisioned.", spec.Endpoint))
		return p.federation(spec.Endpoint, spec.Endpoint != "")
	}
	var endpoint string
	federate := false
	w := whereFromSpec(spec.Provision)
	missing := w.missing()
	switch {
	case len(missing) > 0 && !spec.Provision.Auto:
		p.cond = condition(corev1.ConditionFalse, ReasonProvisioningInvalid,
			fmt.Sprintf("spec.provision lacks %s; nothing is provisioned until %s set, or provision.auto is true.",
				strings.Join(missing, ", "), plural(len(missing), "it is", "they are")))
		p.cond.Warning = true
		p.freeze()
	case len(missing) > 0:
		if found, ok := p.discover(); ok && p.granted(found) {
			endpoint, federate = p.provision()
		}
	default:
		if p.granted(w) {
			endpoint, federate = p.provision()
		}
	}
	return p.federation(endpoint, federate)
}

// granted checks that the policy lets the namespace provision where w
// says, with the identities and principals the spec asks for, and picks
// the upjet config that acts there. Otherwise nothing new is composed.
func (p *planner) granted(w Where) bool {
	spec := p.xr.Spec.Provision
	g := p.grant
	prov, err := g.Provisioning(w.SubscriptionID, w.ResourceGroup)
	if err == nil {
		err = g.UserAssignedIdentities(prov, spec.UserAssignedIdentities)
	}
	if err == nil {
		ids := make([]string, len(spec.DatabasePrincipals))
		for i, pr := range spec.DatabasePrincipals {
			ids[i] = pr.ClientID
		}
		err = g.DatabasePrincipals(prov, ids)
	}
	if err == nil {
		err = p.principalTenants(prov)
	}
	if err == nil {
		p.limits = g.ADXLimits(prov)
		err = p.withinQuota(w)
	}
	if err != nil {
		p.refuse(err)
		return false
	}
	p.render.where = w
	p.render.azureConfig = xpv2.ProviderConfigReference{Kind: prov.ProviderConfigRef.Kind, Name: prov.ProviderConfigRef.Name}
	return true
}

// principalTenants gives each database principal that names no tenant
// the one the policy names for the subscription, as Azure names a
// principal by client and tenant; without one the principal cannot be
// given its role (adx-mon's ingestor could not create its tables), and
// is refused rather than left out.
func (p *planner) principalTenants(prov fpv1alpha1.AzureProvisioning) error {
	prs := p.xr.Spec.Provision.DatabasePrincipals
	cloned := false
	for i := range prs {
		if prs[i].TenantID != "" {
			continue
		}
		if prov.TenantID == "" {
			return fmt.Errorf("database principal %s names no tenant, and %s names none for subscription %s (spec.azure.provisioning[subscriptionId=%s].tenantId): set spec.provision.databasePrincipals[%d].tenantId (an ADXMon's spec.adx.clusters[].provision.tenantId), or the cluster admin sets the subscription's tenant",
				prs[i].ClientID, p.grant, prov.SubscriptionID, prov.SubscriptionID, i)
		}
		if !cloned {
			// A copy: the list is the request's XR's.
			prs, cloned = slices.Clone(prs), true
			p.xr.Spec.Provision.DatabasePrincipals = prs
		}
		prs[i].TenantID = prov.TenantID
	}
	return nil
}

// withinQuota checks the cluster's SKU, instance count and databases
// against the quota where it is provisioned.
func (p *planner) withinQuota(w Where) error {
	spec, l := p.xr.Spec.Provision, p.limits
	if err := l.SKU(w.SkuName); err != nil {
		return err
	}
	if spec.Capacity != nil {
		if err := l.CapacityOf("spec.provision.capacity", *spec.Capacity); err != nil {
			return err
		}
	}
	if spec.AutoScale {
		if err := l.CapacityOf("spec.provision.autoScaleMax", spec.AutoScaleMax); err != nil {
			return err
		}
	}
	return l.DatabaseCount(len(p.render.databases()))
}

// refuse reports what the policy does not grant, or the quota it
// exceeds, and composes nothing new.
func (p *planner) refuse(err error) {
	p.cond = condition(corev1.ConditionFalse, compose.RefusalReason(err), observe.Bound(err.Error()+"; nothing new is composed and nothing is removed."))
	p.cond.Fatal = true
	p.freeze()
}

// provision composes the Azure resources in order and says which endpoint,
// if any, federation may use.
func (p *planner) provision() (string, bool) {
	spec := p.xr.Spec
	r := p.render
	p.set.Add(NameResourceGroup, r.resourceGroup(p.createdHere(NameResourceGroup)))
	p.set.Add(NameCluster, r.cluster(p.createdHere(NameCluster), p.pressAzure()), NameResourceGroup)

	// Databases need the cluster running, which upjet reports Ready only
	// together with its URI; both are checked, as a URI-less cluster
	// cannot serve the databases' clients either.
	uri := p.observedString(NameCluster, "status.atProvider.uri")
	clusterReady := p.set.Ready(NameCluster) && uri != ""
	azure := append([]resource.Name{NameResourceGroup, NameCluster}, p.databases(uri)...)

	forbidden, failed := p.azureFailures(azure)
	existing := p.existing(azure)
	switch {
	case existing != "":
		p.cond = condition(corev1.ConditionFalse, ReasonAlreadyExists, existing)
		p.cond.Warning = true
		p.freeze()
		return "", false
	case forbidden != "":
		ep := uri
		if ep == "" {
			ep = spec.Endpoint
		}
		p.status.Endpoint = ep
		msg := forbidden + " "
		if ep != "" {
			msg += "Federation continues on " + ep + "."
		} else {
			msg += "No endpoint is known: set spec.endpoint to federate meanwhile."
		}
		p.cond = condition(corev1.ConditionTrue, ReasonPermissionRestricted, msg)
		p.cond.Warning = true
		return ep, ep != ""
	case clusterReady:
		p.status.Endpoint = uri
		p.status.AppliedProvisionState = p.appliedState()
		if p.reached() {
			p.status.AppliedProvisionState.Spec = p.intent()
		}
		msg := fmt.Sprintf("Cluster %s is running at %s.", spec.ClusterName, uri)
		if p.resourceGroupOrigin() == v1alpha1.ResourceGroupExisting {
			msg += fmt.Sprintf(" Resource group %s existed before this ADXCluster: it is used as it is, never changed or deleted.", r.where.ResourceGroup)
		}
		p.cond = condition(corev1.ConditionTrue, ReasonClusterReady, msg)
		if n := len(p.heldBack); n > 0 {
			p.cond.Message = observe.Bound(msg + fmt.Sprintf(" %d databases its partitions report are not created (%s): the cluster has the %d databases the policy allows (%s).",
				n, strings.Join(p.heldBack[:min(n, 8)], ", "), p.limits.Databases, p.limits.DatabasesField()))
			p.cond.Warning = true
		}
		return uri, true
	case failed != "":
		p.cond = condition(corev1.ConditionFalse, ReasonFailed, failed)
		p.cond.Warning = true
	case p.set.Exists(NameCluster):
		p.cond = condition(corev1.ConditionUnknown, ReasonWaiting,
			fmt.Sprintf("Waiting for Azure to finish cluster %s.", spec.ClusterName))
	case p.set.Exists(NameResourceGroup):
		p.cond = condition(corev1.ConditionUnknown, ReasonCreating,
			fmt.Sprintf("Creating resource group %s; cluster %s follows once it is ready.", r.where.ResourceGroup, spec.ClusterName))
	default:
		p.cond = condition(corev1.ConditionUnknown, ReasonCreating,
			fmt.Sprintf("Creating resource group %s for cluster %s.", r.where.ResourceGroup, spec.ClusterName))
	}
	return "", false
}

// databases composes the cluster's databases, declared and discovered,
// and their principals' roles once the cluster has a URI, lets go of
// those removed from the spec, and returns the names it composed.
func (p *planner) databases(uri string) []resource.Name {
	r := p.render
	var azure []resource.Name
	for _, db := range r.databases() {
		dbName := DatabaseName(db.DatabaseName)
		p.set.AddWhen(uri != "", dbName, r.database(db, p.createdHere(dbName)), NameCluster)
		azure = append(azure, dbName)
		for _, pr := range p.xr.Spec.Provision.DatabasePrincipals {
			n := PrincipalName(db.DatabaseName, pr)
			p.set.Add(n, r.databasePrincipal(db.DatabaseName, pr, p.createdHere(n)), dbName)
			azure = append(azure, n)
		}
	}
	for _, name := range p.discoveredDatabases(r.databases(), uri) {
		p.set.AddWhen(uri != "", DatabaseName(name), r.discoveredDatabase(name, p.createdHere(DatabaseName(name))), NameCluster)
		azure = append(azure, DatabaseName(name))
	}
	p.orphanRemovedDatabases()
	return azure
}

// orphanRemovedDatabases lets go of the databases removed from the spec
// without deleting them in Azure, unless spec.removedDatabases is Delete.
// Dropping a database's MR deletes the database when the MR may delete
// (deletionPolicy Delete), so first the MR is composed once more, as it
// is but without Delete in its managementPolicies; once it is observed
// so, it is dropped, and its deletion leaves the database, and its data,
// in Azure. A database MR that never could delete is dropped at once.
func (p *planner) orphanRemovedDatabases() {
	if p.xr.Spec.RemovedDatabases == v1alpha1.DeletionDelete {
		return
	}
	for _, n := range p.set.ObservedNames() {
		if !strings.HasPrefix(string(n), databasePrefix) || p.set.Desired(n) {
			continue
		}
		o := p.set.Observed(n)
		var policies []string
		if err := o.GetValueInto("spec.managementPolicies", &policies); err != nil || !slices.ContainsFunc(policies, mayDelete) {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(policies), mayDelete)
		if slices.Contains(policies, string(xpv2.ManagementActionAll)) {
			// Everything but Delete; an empty list would mean all.
			kept = []string{string(xpv2.ManagementActionObserve), string(xpv2.ManagementActionCreate), string(xpv2.ManagementActionUpdate), string(xpv2.ManagementActionLateInitialize)}
		}
		keep := compose.Retain(o)
		if err := keep.SetValue("spec.managementPolicies", kept); err != nil {
			p.set.Fail(fmt.Errorf("cannot keep removed database %s: %w", strings.TrimPrefix(string(n), databasePrefix), err))
			return
		}
		p.set.Add(n, keep)
	}
}

// mayDelete is a management policy that lets an MR delete what it manages.
func mayDelete(policy string) bool {
	return policy == string(xpv2.ManagementActionDelete) || policy == string(xpv2.ManagementActionAll)
}

var databaseName = regexp.MustCompile(`^[a-zA-Z0-9_]{1,260}$`)

// discoveredDatabases are databases a provisioned hub creates because its
// partitions report them: those its Federation finds missing, and those
// created so before, which stay (a database that exists is no longer
// missing, and dropping its resource would delete it under
// deletionPolicy Delete). Names come from heartbeats, so they are checked
// and their number is bounded by the quota's maxDatabases, counting the
// declared ones: those created before are kept whatever the quota says
// now, and new ones are added in name order while there is room (the
// rest are heldBack). New ones are added only where the policy lets the
// hub at endpoint create them.
func (p *planner) discoveredDatabases(declared []v1alpha1.DatabaseSpec, endpoint string) []string {
	if p.xr.Spec.Role != v1alpha1.RoleFederated {
		return nil
	}
	have := map[string]bool{}
	for _, d := range declared {
		have[strings.ToLower(d.DatabaseName)] = true
	}
	var out []string
	for _, name := range p.set.ObservedNames() {
		if strings.HasPrefix(string(name), databasePrefix) && observe.Annotation(p.set.Observed(name), discoveredAnnotation) == "true" {
			db := strings.TrimPrefix(string(name), databasePrefix)
			have[strings.ToLower(db)] = true
			out = append(out, db)
		}
	}
	var missing, added []string
	if f := p.set.Observed(NameFederation); f != nil && p.databasesFromPartitions(endpoint) {
		_ = f.GetValueInto("status.atProvider.missingDatabases", &missing)
	}
	sort.Strings(missing)
	room := int(p.limits.Databases) - len(declared) - len(out)
	for _, m := range missing {
		switch {
		case !databaseName.MatchString(m) || have[strings.ToLower(m)]:
		case len(added) < room:
			added = append(added, m)
		default:
			p.heldBack = append(p.heldBack, m)
		}
		have[strings.ToLower(m)] = true
	}
	out = append(out, added...)
	sort.Strings(out)
	return out
}

// existing describes the first composed Azure resource, resource groups
// aside, that Azure already had: its MR observes it (Ready) but never
// created it (no proof of a create). Such a resource is only ever
// observed, never changed or deleted: it belongs to someone else, and
// the ADXCluster says so instead of taking it over.
func (p *planner) existing(names []resource.Name) string {
	for _, n := range names {
		o := p.set.Observed(n)
		if n == NameResourceGroup || o == nil || !observe.Ready(o) || p.createdHere(n) {
			continue
		}
		return fmt.Sprintf("Azure already has %s %s, which this ADXCluster did not create; fleetplane never takes over what it did not create, so it is left as it is and nothing new is composed. Choose another name, or use that cluster as your own (spec.endpoint without spec.provision).",
			o.GetKind(), observe.Annotation(o, externalName))
	}
	return ""
}

// azureFailures describes the first authorization refusal and the first
// other failure among the composed Azure resources.
func (p *planner) azureFailures(names []resource.Name) (forbidden, failed string) {
	for _, n := range names {
		o := p.set.Observed(n)
		f, ok := observe.Failed(o)
		if !ok {
			continue
		}
		what := fmt.Sprintf("%s %s", o.GetKind(), observe.Annotation(o, externalName))
		w := p.render.where
		switch {
		case f.Forbidden && forbidden == "":
			forbidden = fmt.Sprintf("Azure refused access to %s: %s. Grant the identity of the Azure ProviderConfig %s the Contributor role on resource group %s in subscription %s (it needs Microsoft.Resources/subscriptions/resourceGroups/* and Microsoft.Kusto/clusters/*), or User Access Administrator too for databasePrincipals.",
				what, strings.TrimSuffix(f.Message, "."), p.render.azureConfig.Name, w.ResourceGroup, w.SubscriptionID)
		case !f.Forbidden && failed == "":
			failed = fmt.Sprintf("Azure reported an error for %s: %s", what, f.Message)
			if strings.Contains(f.Message, "MissingSubscriptionRegistration") {
				failed += " Register Azure Data Explorer in the subscription once: az provider register --namespace Microsoft.Kusto --subscription " + w.SubscriptionID
			}
		}
	}
	return forbidden, failed
}

// intent is what the spec asks of the cluster that Azure could change
// too: the SKU (as discovered, when auto), the capacity when the spec sets
// one, and the identities, sorted.
func (p *planner) intent() *v1alpha1.ProvisionIntent {
	prov := p.xr.Spec.Provision
	ids := slices.Sorted(slices.Values(prov.UserAssignedIdentities))
	return &v1alpha1.ProvisionIntent{SkuName: p.render.where.SkuName, Capacity: prov.Capacity, UserAssignedIdentities: ids}
}

// reached reports whether Azure has reached what the spec asks: the spec
// is the one last recorded as reached, or the cluster reports it now.
func (p *planner) reached() bool {
	want := p.intent()
	if st := p.xr.Status.AppliedProvisionState; st != nil && st.Spec != nil && equality.Semantic.DeepEqual(st.Spec, want) {
		return true
	}
	// The observed cluster's own readiness: this is asked before the
	// cluster is composed.
	if !observe.Ready(p.set.Observed(NameCluster)) || p.observedString(NameCluster, "status.atProvider.sku.name") != want.SkuName {
		return false
	}
	if want.Capacity != nil {
		var n int64
		if o := p.set.Observed(NameCluster); o == nil || o.GetValueInto("status.atProvider.sku.capacity", &n) != nil || n != int64(*want.Capacity) {
			return false
		}
	}
	var ids []string
	if o := p.set.Observed(NameCluster); o != nil {
		if err := o.GetValueInto("status.atProvider.identity.identityIds", &ids); err != nil {
			ids = nil
		}
	}
	return slices.Equal(slices.Sorted(slices.Values(ids)), want.UserAssignedIdentities)
}

// pressAzure reports whether the cluster's SKU, capacity and identities
// go in forProvider, where upjet keeps them on Azure, rather than in
// initProvider, which it applies at creation only: always with
// azureChanges Revert; with Keep, until Azure has reached what the spec
// asks, at creation and after each edit of the spec, and then no more, so
// that a change made in Azure stays.
func (p *planner) pressAzure() bool {
	return p.xr.Spec.Provision.AzureChanges == v1alpha1.AzureChangesRevert || !p.reached()
}

// appliedState is what the running cluster has, read from its MR.
func (p *planner) appliedState() *v1alpha1.AppliedProvisionState {
	sku := p.observedString(NameCluster, "status.atProvider.sku.name")
	if sku == "" {
		sku = p.observedString(NameCluster, "spec.forProvider.sku.name")
	}
	var ids []string
	if o := p.set.Observed(NameCluster); o != nil {
		if err := o.GetValueInto("status.atProvider.identity.identityIds", &ids); err != nil {
			ids = nil
		}
	}
	sort.Strings(ids)
	w := p.render.where
	return &v1alpha1.AppliedProvisionState{
		SkuName: sku, Tier: tierOf(sku), UserAssignedIdentities: ids,
		SubscriptionID: w.SubscriptionID, ResourceGroup: w.ResourceGroup, Location: w.Location,
		Discovered: w.Discovered, ResourceGroupOrigin: p.resourceGroupOrigin(),
	}
}

// createdHere reports whether a composed Azure resource was created by its
// MR rather than found in Azure: crossplane-runtime records a successful
// Create on the MR, and never calls Create for what Observe found. This is
// the proof of ownership deletion needs.
func (p *planner) createdHere(n resource.Name) bool {
	return observe.CreatedHere(p.set.Observed(n))
}

// resourceGroupOrigin is known once the resource group's MR is Ready: by
// then a group it created carries the proof, and one it found never will.
func (p *planner) resourceGroupOrigin() v1alpha1.ResourceGroupOrigin {
	switch {
	case p.createdHere(NameResourceGroup):
		return v1alpha1.ResourceGroupCreated
	case p.set.Ready(NameResourceGroup):
		return v1alpha1.ResourceGroupExisting
	}
	return ""
}

// federation composes the role's Kusto resources on endpoint. When the
// endpoint is not usable yet, resources that exist are still rendered, on
// the endpoint the XR last reported, or kept as they are without one.
func (p *planner) federation(endpoint string, usable bool) error {
	spec := p.xr.Spec
	if spec.Role == "" || spec.Federation == nil || p.frozen {
		return nil
	}
	if !usable {
		endpoint = p.xr.Status.Endpoint
	}
	if endpoint == "" {
		p.set.Keep(NameHeartbeat, NameHeartbeatTable, NameFederation)
		return nil
	}
	if err := p.kustoGranted(endpoint); err != nil {
		p.refuse(err)
		return nil
	}
	switch spec.Role {
	case v1alpha1.RolePartition:
		hb, err := p.render.heartbeat(endpoint)
		if err != nil {
			return fmt.Errorf("cannot render the heartbeat: %w", err)
		}
		p.set.AddWhen(usable, NameHeartbeat, hb)
	case v1alpha1.RoleFederated:
		var after []resource.Name
		if spec.Provision != nil && p.cond.Reason != ReasonPermissionRestricted {
			// A provisioned hub's heartbeat table lives in a database it
			// composes; with Azure access refused that database is out
			// of reach, and the table goes on the known endpoint.
			after = append(after, p.render.databaseResource(spec.Federation.HeartbeatDatabase))
		}
		t, err := p.render.heartbeatTable(endpoint)
		if err != nil {
			return fmt.Errorf("cannot render the heartbeat table: %w", err)
		}
		p.set.AddWhen(usable, NameHeartbeatTable, t, after...)
		f, err := p.render.federation(endpoint)
		if err != nil {
			return fmt.Errorf("cannot render the federation: %w", err)
		}
		p.set.Add(NameFederation, f, NameHeartbeatTable)
	}
	return nil
}

// kustoGranted checks that the policy lets the role's Kusto resources act
// on endpoint with the platform's identity: a partition's Heartbeat reads
// it, a hub's Table and Federation write its heartbeat database and
// federate it.
func (p *planner) kustoGranted(endpoint string) error {
	field := "spec.endpoint"
	if p.xr.Spec.Provision != nil {
		field = "the provisioned cluster's endpoint"
	}
	if p.xr.Spec.Role != v1alpha1.RoleFederated {
		return p.grant.KustoDatabase(field, endpoint, "")
	}
	if _, err := p.grant.KustoHub(field, endpoint); err != nil {
		return err
	}
	return p.grant.KustoDatabase("spec.federation.heartbeatDatabase", endpoint, p.xr.Spec.Federation.HeartbeatDatabase)
}

// databasesFromPartitions reports whether the policy lets this hub, at
// endpoint, create the databases its partitions report: names anyone who
// may ingest into its heartbeat table chooses.
func (p *planner) databasesFromPartitions(endpoint string) bool {
	hub, err := p.grant.KustoHub("", endpoint)
	return err == nil && hub.CreateDatabasesFromPartitions
}

// gate applies criteriaExpression: unless it holds, the plan is frozen and
// the condition says why.
func (p *planner) gate(r *compose.Request[v1alpha1.ADXCluster], cfg Config) {
	name := cfg.EnvironmentConfigName
	envs, resolved := r.Require(labelsRequirement, compose.Selector{APIVersion: environmentConfigAPIVersion, Kind: environmentConfigKind, Name: name})
	switch {
	case !resolved:
		// Crossplane calls again with the EnvironmentConfig; only that
		// answer counts.
		p.cond = condition(corev1.ConditionUnknown, ReasonCriteriaPending,
			fmt.Sprintf("Waiting for EnvironmentConfig %s to evaluate criteriaExpression.", name))
		p.freeze()
		return
	case len(envs) == 0:
		p.criteriaError(fmt.Sprintf("EnvironmentConfig %s, which holds the cluster labels criteriaExpression reads, does not exist.", name))
		return
	}
	labels, err := labelsOf(envs[0].Resource.Object)
	if err != nil {
		p.criteriaError(fmt.Sprintf("EnvironmentConfig %s: %v", name, err))
		return
	}
	ok, err := criteria.Evaluate(p.xr.Spec.CriteriaExpression, labels)
	switch {
	case err != nil:
		p.criteriaError(fmt.Sprintf("criteriaExpression: %v", err))
	case !ok:
		p.cond = condition(corev1.ConditionFalse, ReasonCriteriaExpressionFalse,
			fmt.Sprintf("criteriaExpression is false for the labels in EnvironmentConfig %s; nothing new is composed and nothing is removed.", name))
		p.freeze()
	}
}

func (p *planner) criteriaError(msg string) {
	p.cond = condition(corev1.ConditionFalse, ReasonCriteriaExpressionError, observe.Bound(msg+" Nothing new is composed and nothing is removed."))
	p.cond.Warning = true
	p.freeze()
}

// freeze keeps what exists and composes nothing new; the status stays as
// the XR last showed it.
func (p *planner) freeze() {
	p.frozen = true
	p.status = p.xr.Status
	p.set.Freeze()
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
		return nil, errors.New("data.labels must be a map of strings")
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

// observedString reads a string of an observed resource; "" when it or
// the field is missing.
func (p *planner) observedString(n resource.Name, path string) string {
	o := p.set.Observed(n)
	if o == nil {
		return ""
	}
	s, _ := o.GetString(path)
	return s
}

func condition(s corev1.ConditionStatus, reason, msg string) compose.Condition {
	return compose.Condition{Type: v1alpha1.ConditionADXCluster, Status: s, Reason: reason, Message: msg}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
