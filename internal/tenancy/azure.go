package tenancy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// Provisioning is the grant to provision in subscription and resource
// group, or an error naming what is missing. Only a ClusterProviderConfig
// grants provisioning: the function composes upjet resources with
// identities the tenant does not hold.
func (g *Grant) Provisioning(subscription, resourceGroup string) (v1alpha1.AzureProvisioning, error) {
	i := slices.IndexFunc(g.Azure.Provisioning, func(p v1alpha1.AzureProvisioning) bool {
		return strings.EqualFold(p.SubscriptionID, subscription)
	})
	if i < 0 {
		return v1alpha1.AzureProvisioning{}, fmt.Errorf("%s grants no provisioning in Azure subscription %s: the cluster admin adds it to spec.azure.provisioning", g, subscription)
	}
	p := g.Azure.Provisioning[i]
	if !MatchAny(p.ResourceGroups, resourceGroup) {
		return v1alpha1.AzureProvisioning{}, fmt.Errorf("%s grants no provisioning in resource group %s of subscription %s (spec.azure.provisioning[subscriptionId=%s].resourceGroups allows %s)",
			g, resourceGroup, subscription, p.SubscriptionID, strings.Join(p.ResourceGroups, ", "))
	}
	return p, nil
}

// UserAssignedIdentities checks every identity a cluster asks for
// against the grant p, and names those p does not allow.
func (g *Grant) UserAssignedIdentities(p v1alpha1.AzureProvisioning, ids []string) error {
	var refused []string
	for _, id := range ids {
		if !MatchAny(p.UserAssignedIdentities, id) {
			refused = append(refused, id)
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("%s does not let clusters in subscription %s carry the user-assigned identities %s (spec.azure.provisioning[subscriptionId=%s].userAssignedIdentities)",
			g, p.SubscriptionID, strings.Join(refused, ", "), p.SubscriptionID)
	}
	return nil
}

// DatabasePrincipals checks every principal a cluster would give a
// database role against the grant p.
func (g *Grant) DatabasePrincipals(p v1alpha1.AzureProvisioning, clientIDs []string) error {
	var refused []string
	for _, id := range clientIDs {
		if !slices.ContainsFunc(p.DatabasePrincipals, func(a string) bool { return a == "*" || strings.EqualFold(a, id) }) {
			refused = append(refused, id)
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("%s does not let databases in subscription %s grant roles to %s (spec.azure.provisioning[subscriptionId=%s].databasePrincipals)",
			g, p.SubscriptionID, strings.Join(refused, ", "), p.SubscriptionID)
	}
	return nil
}

// Monitoring checks that a ClusterProviderConfig lends its credentials to
// read an ADX cluster in subscription and resource group: it must allow
// monitoring, and only where it grants provisioning.
func (g *Grant) Monitoring(subscription, resourceGroup, what string) error {
	if g.Kind != v1alpha1.ClusterProviderConfigKind {
		return nil // a namespace's own credentials read what they can
	}
	if !g.Azure.AllowMonitoring {
		return fmt.Errorf("%s does not allow monitoring (spec.azure.allowMonitoring), so %s is not read with its credentials; ask the cluster admin to allow it, or use a ProviderConfig with your own credentials", g, what)
	}
	if _, err := g.Provisioning(subscription, resourceGroup); err != nil {
		return fmt.Errorf("%s is not read with the credentials of %s: monitoring covers only where it grants provisioning, and %w", what, g, err)
	}
	return nil
}

// MatchAny reports whether s matches any of the patterns, ignoring case:
// * in a pattern matches any run of characters, everything else itself.
func MatchAny(patterns []string, s string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return Match(p, s) })
}

// Match reports whether s matches pattern, ignoring case; * matches any
// run of characters. It runs in time proportional to the product of the
// lengths at worst, with no backtracking blow-up.
func Match(pattern, s string) bool {
	p, t := strings.ToLower(pattern), strings.ToLower(s)
	// The classic greedy wildcard match: remember the last star and
	// where it started matching, and widen that on a mismatch.
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case pi < len(p) && p[pi] == t[ti]:
			pi++
			ti++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
