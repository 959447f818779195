package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/go-logr/logr/funcr"
)

// TestMetricsPortTaken: a metrics address another process holds turns
// metrics off with a line that says so and how to choose another, and
// the function goes on (its gRPC work does not depend on metrics).
func TestMetricsPortTaken(t *testing.T) {
	taken, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var lines []string
	log := logging.NewLogrLogger(funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}))
	c := &CLI{MetricsAddress: taken.Addr().String()}
	if err := c.serveMetrics(log); err != nil {
		t.Fatalf("a taken metrics port stops the function: %v", err)
	}
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "Metrics are off: their address cannot be listened on; pass another --metrics-address") || !strings.Contains(all, "address already in use") {
		t.Errorf("log says %q", all)
	}
	if strings.Contains(all, "Serving metrics") {
		t.Error("it says it serves metrics on a port it cannot have")
	}
}
