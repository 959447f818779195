// Package devfunction serves function-fleetplane as a local process, the
// way `crossplane render` reaches a Function of the Development runtime:
// plain gRPC on a loopback address.
package devfunction

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Start builds function-fleetplane from the tree at root and serves it
// with args (the docs' `--insecure --debug`, say) on a free loopback port,
// with metrics off; it returns the address. The process stops when the
// test ends, and its logs are shown when the test failed.
//
// The port is free rather than the function's default 9443, so that tests
// run beside each other and beside a developer's own function.
func Start(t testing.TB, root string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "function-fleetplane")
	build := exec.Command("go", "build", "-o", bin, "./function")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./function: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	fn := exec.CommandContext(ctx, bin, append(append([]string{}, args...), "--address", addr, "--metrics-address=")...)
	var logs bytes.Buffer
	fn.Stdout, fn.Stderr = &logs, &logs
	if err := fn.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = fn.Wait()
		if t.Failed() {
			t.Logf("function logs:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("function did not listen on %s: %v\n%s", addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Target is the flag that points `crossplane render` at addr.
func Target(addr string) []string {
	return []string{"-a", "render.crossplane.io/runtime-development-target=dns:///" + addr}
}
