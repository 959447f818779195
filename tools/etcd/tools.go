//go:build tools

// Package tools pins etcd for fleetplane's controller and end-to-end tests.
package tools

import _ "go.etcd.io/etcd/server/v3"
