package azurename

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(string) bool
		good  []string
		bad   []string
	}{
		{"SubscriptionID", SubscriptionID, []string{"44444444-4444-4444-4444-44444444444A"}, []string{"", "not-a-guid", "44444444-4444-4444-4444-4444444444444"}},
		{"ResourceGroup", ResourceGroup, []string{"rg", "MC_a_b_westeurope", "team.(prod)-1", strings.Repeat("r", 90)}, []string{"", "a/b", "ends.", strings.Repeat("r", 91), "drop'"}},
		{"Location", Location, []string{"westeurope", "West Europe"}, []string{"", " west", "west'; drop", strings.Repeat("l", 65)}},
		{"SKU", SKU, []string{"Standard_L8as_v3", "Dev(No SLA)_Standard_E2a_v4"}, []string{"", "a/b", strings.Repeat("s", 65)}},
		{"AKSCluster", AKSCluster, []string{"platform", "a_b-1"}, []string{"", "bad name", "-x"}},
	} {
		for _, s := range c.good {
			if !c.check(s) {
				t.Errorf("%s(%q) = false", c.name, s)
			}
		}
		for _, s := range c.bad {
			if c.check(s) {
				t.Errorf("%s(%q) = true", c.name, s)
			}
		}
	}
}
