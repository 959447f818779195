//go:build tools

// Package tools pins golangci-lint, which `make test` runs with the
// configuration in .golangci.yml.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
