//go:build tools

// Package tools pins the crossplane CLI (crank) that fleetplane's tests and
// packaging run. It lives outside the product module so the CLI's large
// dependency graph never reaches fleetplane's go.mod.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
