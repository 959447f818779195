//go:build tools

// Package tools pins provider-kubernetes for fleetplane's Experiment
// end-to-end tests: it applies the Argo CD Applications an Experiment
// composes.
package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
