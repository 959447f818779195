package discovery

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/kusto/armkusto/v2"

	"github.com/fleetplane/fleetplane/internal/azurename"
)

// PreferredSkus is the adx-mon operator's preference, best first.
var PreferredSkus = []string{"Standard_L8as_v3", "Standard_L16as_v3", "Standard_L32as_v3"}

// maxOffered caps how many offered SKUs are kept and reported.
const maxOffered = 64

// SKU is a cluster SKU Azure offers.
type SKU struct {
	Name string
	Tier string
}

// SKULister lists the Kusto SKUs of a subscription: armkusto's
// ClustersClient.
type SKULister interface {
	NewListSKUsPager(options *armkusto.ClustersClientListSKUsOptions) PagerOf
}

// PagerOf is the part of armkusto's pager discovery uses.
type PagerOf interface {
	More() bool
	NextPage(ctx context.Context) (armkusto.ClustersClientListSKUsResponse, error)
}

// Clusters adapts an armkusto ClustersClient.
type Clusters struct{ Client *armkusto.ClustersClient }

// NewListSKUsPager lists the subscription's SKUs.
func (c Clusters) NewListSKUsPager(o *armkusto.ClustersClientListSKUsOptions) PagerOf {
	return c.Client.NewListSKUsPager(o)
}

// Offered lists the cluster SKUs Azure offers in location without a
// restriction on it, sorted by name.
func Offered(ctx context.Context, l SKULister, location string) ([]SKU, error) {
	want := normalLocation(location)
	var out []SKU
	pager := l.NewListSKUsPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("cannot list the Kusto SKUs: %w", err)
		}
		for _, s := range page.Value {
			if s == nil || s.Name == nil || !strings.EqualFold(deref(s.ResourceType), "clusters") || !offeredIn(s, want) || restrictedIn(s, want) {
				continue
			}
			if !azurename.SKU(*s.Name) {
				continue
			}
			out = append(out, SKU{Name: *s.Name, Tier: deref(s.Tier)})
		}
	}
	slices.SortFunc(out, func(a, b SKU) int { return strings.Compare(a.Name, b.Name) })
	out = slices.CompactFunc(out, func(a, b SKU) bool { return a.Name == b.Name })
	if len(out) > maxOffered {
		out = out[:maxOffered]
	}
	return out, nil
}

// Choose picks the first preferred SKU offered, else the first Standard
// SKU offered, and says why.
func Choose(offered []SKU, preferred []string, location string) (SKU, string, bool) {
	if len(preferred) == 0 {
		preferred = PreferredSkus
	}
	var skipped []string
	for _, p := range preferred {
		for _, o := range offered {
			if strings.EqualFold(o.Name, p) {
				why := o.Name + " is offered in " + location
				if len(skipped) > 0 {
					why = strings.Join(skipped, ", ") + " not offered in " + location + "; " + why
				}
				return o, why, true
			}
		}
		skipped = append(skipped, p)
	}
	for _, o := range offered {
		if o.Tier == "Standard" {
			return o, "none of " + strings.Join(preferred, ", ") + " is offered in " + location + "; " + o.Name + " is the first Standard SKU that is", true
		}
	}
	return SKU{}, "Azure offers no Standard Kusto SKU in " + location, false
}

func offeredIn(s *armkusto.SKUDescription, location string) bool {
	for _, l := range s.Locations {
		if l != nil && normalLocation(*l) == location {
			return true
		}
	}
	for _, li := range s.LocationInfo {
		if li != nil && li.Location != nil && normalLocation(*li.Location) == location {
			return true
		}
	}
	return false
}

// restrictedIn reports a location-wide restriction (for example
// NotAvailableForSubscription); a restriction of some zones leaves the SKU
// usable.
func restrictedIn(s *armkusto.SKUDescription, location string) bool {
	for _, r := range s.Restrictions {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := m["type"].(string); !strings.EqualFold(t, "Location") {
			continue
		}
		values, _ := m["values"].([]any)
		if len(values) == 0 {
			return true
		}
		for _, v := range values {
			if str, ok := v.(string); ok && normalLocation(str) == location {
				return true
			}
		}
	}
	return false
}

// normalLocation compares "West Europe" and "westeurope" as one.
func normalLocation(l string) string {
	return strings.ToLower(strings.ReplaceAll(l, " ", ""))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
