//go:build tools

// Package tools pins adx-mon's ingestor, collector and alerter, which the test
// harness builds into images so that what an ADXMon composes runs
// adx-mon's own binaries on a real node.
//
// Two of adx-mon v0.3.0's dependencies are not served by the Go module
// proxy: its fork of azkustoingest (replaced here by the upstream module
// at the version adx-mon requires, v1.2.0, which builds), and the
// buf.build modules of OTLP's generated code, which the collector
// imports (replaced by otlp/: the same messages generated the same way
// by otlpgen, and the connect-go handler the collector serves them
// with).
package tools

import (
	_ "github.com/Azure/adx-mon/cmd/alerter"
	_ "github.com/Azure/adx-mon/cmd/collector"
	_ "github.com/Azure/adx-mon/cmd/ingestor"
)
