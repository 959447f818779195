package adxcluster

import (
	"fmt"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/azurename"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// Where is where and as what a provisioned cluster is created: the spec's
// provision block, with what provision.auto discovered filled in.
type Where struct {
	SubscriptionID string
	ResourceGroup  string
	Location       string
	SkuName        string
	Tier           v1alpha1.Tier
	// Discovered names the fields discovery filled in, with their source.
	Discovered []string
}

func whereFromSpec(p *v1alpha1.ProvisionSpec) Where {
	return Where{SubscriptionID: p.SubscriptionID, ResourceGroup: p.ResourceGroup, Location: p.Location, SkuName: p.SkuName, Tier: p.Tier}
}

// missing names the fields still empty, in the spec's order.
func (w Where) missing() []string {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"subscriptionId", w.SubscriptionID},
		{"resourceGroup", w.ResourceGroup},
		{"location", w.Location},
		{"skuName", w.SkuName},
		{"tier", string(w.Tier)},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	return missing
}

// NameProvisioningDefaults is the composition resource name of the
// ProvisioningDefaults that discovers what provision.auto leaves out.
const NameProvisioningDefaults resource.Name = "provisioning-defaults"

// annotationSubscription records on the composed Cluster which
// subscription it was created in, which its providerConfigRef does not
// say: a discovered cluster keeps where it was created.
const annotationSubscription = "adx.fleetplane.io/subscription-id"

// Reasons of provision.auto.
const (
	ReasonDiscovering     = "DiscoveringDefaults"
	ReasonDiscoveryFailed = "DiscoveryFailed"
)

// discover fills in what provision.auto leaves out. Values the composed
// resources were created with win over anything discovered later, so a
// change in what discovery sees (the provider moved, a SKU was withdrawn)
// never moves or resizes a cluster; then the ProvisioningDefaults'
// findings. It reports whether every value is known.
func (p *planner) discover() (Where, bool) {
	spec := p.xr.Spec.Provision
	w := whereFromSpec(spec)
	pin := func(field string, v *string, got string) {
		if *v == "" && got != "" {
			*v = got
			w.Discovered = append(w.Discovered, field+": as created")
		}
	}
	if c := p.set.Observed(NameCluster); c != nil {
		pin("subscriptionId", &w.SubscriptionID, observe.Annotation(c, annotationSubscription))
		pin("resourceGroup", &w.ResourceGroup, p.observedString(NameCluster, "spec.forProvider.resourceGroupName"))
		pin("location", &w.Location, p.observedString(NameCluster, "spec.forProvider.location"))
		pin("skuName", &w.SkuName, p.observedString(NameCluster, "spec.forProvider.sku.name"))
	}
	if g := p.set.Observed(NameResourceGroup); g != nil {
		pin("resourceGroup", &w.ResourceGroup, observe.Annotation(g, externalName))
		pin("location", &w.Location, p.observedString(NameResourceGroup, "spec.forProvider.location"))
	}

	pd, err := p.render.provisioningDefaults()
	if err != nil {
		p.cond = condition(corev1.ConditionFalse, ReasonDiscoveryFailed, err.Error())
		return w, false
	}
	p.set.Add(NameProvisioningDefaults, pd)
	o := p.set.Observed(NameProvisioningDefaults)
	var found kustov1alpha1.ProvisioningDefaultsObservation
	if o != nil && observe.Ready(o) {
		if err := o.GetValueInto("status.atProvider", &found); err != nil {
			found = kustov1alpha1.ProvisioningDefaultsObservation{}
		}
	}
	take := func(field string, v *string, got string) {
		if *v == "" && got != "" {
			*v = got
			for _, s := range found.Sources {
				if strings.HasPrefix(s, field+":") {
					w.Discovered = append(w.Discovered, observe.Bound(s))
				}
			}
		}
	}
	take("subscriptionId", &w.SubscriptionID, found.SubscriptionID)
	take("resourceGroup", &w.ResourceGroup, found.ResourceGroup)
	take("location", &w.Location, found.Location)
	take("skuName", &w.SkuName, found.SkuName)
	if w.Tier == "" && w.SkuName != "" {
		w.Tier = tierOf(w.SkuName)
	}
	missing := w.missing()
	if len(missing) == 0 && len(w.validate()) == 0 {
		return w, true
	}
	switch c := observe.ConditionOf(o, string(xpv2.TypeReady)); {
	case len(missing) == 0:
		p.cond = condition(corev1.ConditionFalse, ReasonDiscoveryFailed,
			fmt.Sprintf("Discovery found values Azure would refuse: %s. Give them in spec.provision.", strings.Join(w.validate(), "; ")))
		p.cond.Warning = true
	case o != nil && c.Status == corev1.ConditionFalse && c.Message != "":
		p.cond = condition(corev1.ConditionFalse, ReasonDiscoveryFailed,
			fmt.Sprintf("Cannot discover %s: %s Nothing is provisioned until discovery succeeds or spec.provision gives %s.",
				strings.Join(missing, ", "), strings.TrimSuffix(c.Message, ".")+".", plural(len(missing), "it", "them")))
		p.cond.Warning = true
	default:
		p.cond = condition(corev1.ConditionUnknown, ReasonDiscovering,
			fmt.Sprintf("Discovering %s (ProvisioningDefaults); nothing is provisioned until %s known.",
				strings.Join(missing, ", "), plural(len(missing), "it is", "they are")))
	}
	return w, false
}

// validate checks discovered values against the XRD's own rules, which
// they never passed: they come from outside.
func (w Where) validate() []string {
	var bad []string
	for _, c := range []struct {
		name, value string
		ok          func(string) bool
	}{
		{"subscriptionId", w.SubscriptionID, azurename.SubscriptionID},
		{"resourceGroup", w.ResourceGroup, azurename.ResourceGroup},
		{"location", w.Location, azurename.Location},
		{"skuName", w.SkuName, azurename.SKU},
	} {
		if !c.ok(c.value) {
			bad = append(bad, fmt.Sprintf("%s %q", c.name, c.value))
		}
	}
	return bad
}
