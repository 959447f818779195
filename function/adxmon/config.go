package adxmon

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
)

// DefaultSku is the first of adx-mon's SKU preferences.
const DefaultSku = "Standard_L8as_v3"

// Config is the function input as it applies to ADXMon, with defaults.
type Config struct {
	DefaultSku string
	// Kubernetes is provider-kubernetes' config for the CRD Objects.
	Kubernetes xpv2.ProviderConfigReference
	// Images by component (ingestor, collector, alerter), when the
	// input pins them.
	Images map[string]string
	// Fleetplane is provider-fleetplane's config for the Autoscalers: the
	// input's adxmon.providerConfigRef. A stack is the cluster admin's
	// (ADXMon is cluster-scoped), so the admin's Composition says it.
	Fleetplane xpv2.ProviderConfigReference
}

// ConfigFrom applies defaults to the function input.
func ConfigFrom(in *v1beta1.Input) Config {
	cfg := Config{
		DefaultSku: DefaultSku,
		Kubernetes: xpv2.ProviderConfigReference{Kind: v1beta1.DefaultProviderConfigKind, Name: v1beta1.DefaultProviderConfigName},
		Fleetplane: xpv2.ProviderConfigReference{Kind: v1beta1.DefaultProviderConfigKind, Name: v1beta1.DefaultProviderConfigName},
	}
	if in == nil || in.ADXMon == nil {
		return cfg
	}
	if in.ADXMon.DefaultSku != "" {
		cfg.DefaultSku = in.ADXMon.DefaultSku
	}
	if r := in.ADXMon.KubernetesProviderConfigRef; r != nil {
		cfg.Kubernetes = xpv2.ProviderConfigReference{Kind: r.Kind, Name: r.Name}
	}
	if r := in.ADXMon.ProviderConfigRef; r != nil {
		cfg.Fleetplane = xpv2.ProviderConfigReference{Kind: r.Kind, Name: r.Name}
	}
	if i := in.ADXMon.Images; i != nil {
		cfg.Images = map[string]string{"ingestor": i.Ingestor, "collector": i.Collector, "alerter": i.Alerter}
	}
	return cfg
}
