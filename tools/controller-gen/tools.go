//go:build tools

// Package tools pins controller-gen. It is a separate module so that
// controller-tools' Kubernetes libraries never enter fleetplane's go.mod.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
