package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetplane/fleetplane/test/harness/environment"
)

// TestZeroConfig: an ADXCluster with provision.auto and nothing else is
// provisioned where provider-fleetplane runs. The stand-in IMDS says the
// provider runs on a node of AKS cluster "platform" in westeurope; the
// stand-in Resource Manager does not offer Standard_L8as_v3 there, so the
// next preference is chosen. The XR's spec is never written; status says
// what was discovered. Then IMDS goes away and a second ADXCluster says why
// it cannot be provisioned, composing nothing else.
func TestZeroConfig(t *testing.T) {
	const sub = "44444444-4444-4444-4444-444444444444"
	api := env.AzureAPI
	api.SetInstance(sub, "MC_platform-rg_platform_westeurope", "westeurope", "aks-system-12345678-vmss000000",
		map[string]string{"aks-managed-cluster-name": "platform", "aks-managed-cluster-rg": "platform-rg"})
	api.OfferSKU(sub, "Standard_L8as_v3", "Standard", "eastus")
	api.OfferSKU(sub, "Standard_L16as_v3", "Standard", "westeurope")
	api.OfferSKU(sub, "Standard_E8ads_v5", "Standard", "westeurope")

	ns := namespace(t)
	apply(t, xr(t, fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: zero, namespace: %s}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: zeroconfig01
  provision: {auto: true}
`, ns, environment.LocalComposition)))

	eventually(t, 3*time.Minute, "the discovered cluster running with its databases", func() (bool, string) {
		c := composed(t, ns, "zero")
		_, r, msg := condition(getXR(t, ns, "zero"), "adxcluster.fleetplane.io")
		return r == "ClusterReady" && c["Database/Metrics"] == "True", fmt.Sprintf("%v, %s: %s", c, r, msg)
	})
	x := getXR(t, ns, "zero")
	if p, _, _ := unstructured.NestedMap(x.Object, "spec", "provision"); p["subscriptionId"] != nil || p["skuName"] != nil || p["location"] != nil {
		t.Errorf("spec.provision = %v: discovery must not write the spec", p)
	}
	applied, _, _ := unstructured.NestedMap(x.Object, "status", "appliedProvisionState")
	if applied["subscriptionId"] != sub || applied["resourceGroup"] != "platform-rg" || applied["location"] != "westeurope" || applied["skuName"] != "Standard_L16as_v3" || applied["resourceGroupOrigin"] != "Created" {
		t.Errorf("appliedProvisionState = %v", applied)
	}
	discovered, _, _ := unstructured.NestedStringSlice(x.Object, "status", "appliedProvisionState", "discovered")
	if !slices.ContainsFunc(discovered, func(s string) bool { return strings.HasPrefix(s, "skuName:") }) {
		t.Errorf("status.appliedProvisionState.discovered = %v, want where each value came from", discovered)
	}
	if env.Azure.State("ResourceGroup", "platform-rg") != "exists" || env.Azure.State("Cluster", "zeroconfig01") != "exists" {
		t.Errorf("Azure: resource group %q, cluster %q", env.Azure.State("ResourceGroup", "platform-rg"), env.Azure.State("Cluster", "zeroconfig01"))
	}

	// Without IMDS (the provider does not run in Azure), the reason is
	// shown and nothing but the discovery is composed.
	api.SetInstance("", "", "", "", nil)
	apply(t, xr(t, fmt.Sprintf(`
apiVersion: adx.fleetplane.io/v1alpha1
kind: ADXCluster
metadata: {name: nowhere, namespace: %s}
spec:
  crossplane: {compositionRef: {name: %s}}
  clusterName: nowhere01
  provision: {auto: true, skuName: Standard_E8ads_v5}
`, ns, environment.LocalComposition)))
	eventually(t, 2*time.Minute, "DiscoveryFailed naming IMDS", func() (bool, string) {
		s, r, msg := condition(getXR(t, ns, "nowhere"), "adxcluster.fleetplane.io")
		return s == "False" && r == "DiscoveryFailed" && strings.Contains(msg, "IMDS"), r + ": " + msg
	})
	if c := composed(t, ns, "nowhere"); len(c) != 1 {
		t.Errorf("composed %v, want only the ProvisioningDefaults", c)
	}
}
