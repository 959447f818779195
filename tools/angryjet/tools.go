//go:build tools

// Package tools pins crossplane-tools' angryjet, which generates the
// crossplane-runtime method sets of managed resources and ProviderConfigs.
package tools

import _ "github.com/crossplane/crossplane-tools/cmd/angryjet"
