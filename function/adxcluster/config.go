package adxcluster

import (
	"fmt"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
)

// Config is the function input as it applies to ADXCluster, with
// defaults, and what the namespace's policy says.
type Config struct {
	// EnvironmentConfigName holds the cluster labels for criteriaExpression.
	EnvironmentConfigName string
	// Kusto is the ProviderConfig of provider-fleetplane's MRs: the
	// ClusterProviderConfig that governs the namespace, which the
	// provider checks again.
	Kusto xpv2.ProviderConfigReference
	// Interval between heartbeats and federation cycles.
	Interval time.Duration
	// ChangeCheck is how often partitions and hubs look for a schema
	// change between heartbeats and cycles; 0 leaves it to the MRs.
	ChangeCheck time.Duration
}

// ConfigFrom applies defaults to the function input and checks it.
func ConfigFrom(in *v1beta1.Input) (Config, error) {
	cfg := Config{
		EnvironmentConfigName: v1beta1.DefaultEnvironmentConfigName,
		Kusto:                 xpv2.ProviderConfigReference{Kind: v1beta1.DefaultProviderConfigKind, Name: v1beta1.DefaultProviderConfigName},
	}
	interval := ""
	if in == nil {
		in = &v1beta1.Input{}
	}
	if c := in.Criteria; c != nil && c.EnvironmentConfigName != "" {
		cfg.EnvironmentConfigName = c.EnvironmentConfigName
	}
	if k := in.Kusto; k != nil {
		if k.Interval != "" {
			interval = k.Interval
		}
		if k.ChangeCheckInterval != "" {
			d, err := time.ParseDuration(k.ChangeCheckInterval)
			if err != nil || d < time.Second {
				return Config{}, fmt.Errorf("input kusto.changeCheckInterval %q must be a Go duration of at least 1s", k.ChangeCheckInterval)
			}
			cfg.ChangeCheck = d
		}
	}
	cfg.Interval = kustov1alpha1.DefaultInterval
	if interval != "" {
		d, err := time.ParseDuration(interval)
		if err != nil || d < time.Second {
			return Config{}, fmt.Errorf("input kusto.interval %q must be a Go duration of at least 1s", interval)
		}
		cfg.Interval = d
	}
	return cfg, nil
}
