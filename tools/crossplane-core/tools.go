//go:build tools

// Package tools pins Crossplane core for fleetplane's end-to-end tests and
// demo, which run it against a local API server.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
