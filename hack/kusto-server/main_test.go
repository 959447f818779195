package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

func TestSeed(t *testing.T) {
	f := filepath.Join(t.TempDir(), "seed.yaml")
	if err := os.WriteFile(f, []byte("databases:\n  Metrics:\n  - .create table ['cpu'] (['v']:real)\n  Logs: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := kustoserver.New()
	if err := load(s, f); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Tables("Metrics")["cpu"]; !ok {
		t.Error("seed table missing")
	}
	if err := os.WriteFile(f, []byte("databases:\n  Metrics:\n  - .frobnicate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := load(kustoserver.New(), f); err == nil || !strings.Contains(err.Error(), ".frobnicate") {
		t.Errorf("a bad seed command must be reported: %v", err)
	}
}
