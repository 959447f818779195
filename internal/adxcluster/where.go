package adxcluster

import (
	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
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
