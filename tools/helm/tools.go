//go:build tools

// Package tools pins helm, which renders Crossplane's own Helm chart for
// the test harness's real node (Crossplane core and its RBAC manager run
// as the chart's pods there).
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
