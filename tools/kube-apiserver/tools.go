//go:build tools

// Package tools pins kube-apiserver for fleetplane's controller and
// end-to-end tests, which run a real API server on loopback.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
