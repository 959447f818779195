// Package azurename checks values that name things in Azure against the
// rules the XRDs and CRDs apply at apply time. Values that never passed
// the API server (what IMDS or Azure Resource Manager return, what
// discovery found) go through these before anything composes them.
package azurename

import "regexp"

var (
	subscriptionID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	resourceGroup  = regexp.MustCompile(`^[-\w._()]*[-\w_()]$`)
	location       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ]*$`)
	sku            = regexp.MustCompile(`^[A-Za-z0-9_()+ ]+$`)
	aksCluster     = regexp.MustCompile(`^[a-zA-Z0-9][-_a-zA-Z0-9]{0,62}$`)
)

// SubscriptionID is a GUID.
func SubscriptionID(s string) bool { return subscriptionID.MatchString(s) }

// ResourceGroup is Azure's resource group name rule, at most 90 characters.
func ResourceGroup(s string) bool { return len(s) <= 90 && resourceGroup.MatchString(s) }

// Location is a region, as eastus2 or "West Europe", at most 64 characters.
func Location(s string) bool { return len(s) <= 64 && location.MatchString(s) }

// SKU is a Kusto cluster SKU name, at most 64 characters.
func SKU(s string) bool { return len(s) <= 64 && sku.MatchString(s) }

// AKSCluster is an AKS managed cluster name.
func AKSCluster(s string) bool { return aksCluster.MatchString(s) }
