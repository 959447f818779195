// Package securemetrics is how fleetplane's binaries serve /metrics: over
// HTTPS, to callers the Kubernetes API server authenticates (TokenReview)
// and authorizes (SubjectAccessReview for get on the non-resource URL
// /metrics), as Kubernetes' own components serve theirs. The metrics
// name every tenant's resources, so plain HTTP to anyone who reaches a pod
// IP is opt-in, for platforms that fence scrapes with NetworkPolicy.
package securemetrics

import (
	metricsfilters "sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Flags are the metrics flags the function and the provider share; each
// binary keeps its own address flag, whose "off" it already documents.
type Flags struct {
	MetricsSecure  bool   `default:"true" negatable:"" help:"Serve /metrics over HTTPS to callers the API server authenticates and authorizes for get on the non-resource URL /metrics (ClusterRole fleetplane:metrics-reader). --no-metrics-secure serves plain HTTP to anyone who reaches the pod, for platforms that fence scrapes with NetworkPolicy instead."`
	MetricsCertDir string `help:"Directory of the metrics endpoint's tls.crt and tls.key (reloaded when they change), e.g. from cert-manager; empty, or without them, a self-signed certificate made at start."`
}

// Options are the controller-runtime metrics server options for a server
// bound to addr.
func (f Flags) Options(addr string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr}
	if f.MetricsSecure {
		o.SecureServing = true
		o.FilterProvider = metricsfilters.WithAuthenticationAndAuthorization
		o.CertDir = f.MetricsCertDir
	}
	return o
}
