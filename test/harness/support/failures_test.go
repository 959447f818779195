package support

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestFailureEchoKeepsFailureBlocks(t *testing.T) {
	orig := os.Stdout
	sink, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = sink
	defer func() { os.Stdout = orig }()

	e, err := echoFailures(200)
	if err != nil {
		t.Fatal(err)
	}
	out := "=== RUN   TestA\n--- FAIL: TestA (1.00s)\n    a_test.go:1: timed out\n        more detail\n    --- FAIL: TestA/sub (0.50s)\n        a_test.go:2: broke\nok elsewhere\n--- PASS: TestB (0.1s)\n    b_test.go:3: fine\n--- FAIL: TestC (2s)\n    " + strings.Repeat("x", 300) + "\n"
	fmt.Fprint(os.Stdout, out)
	kept := e.stop()
	if os.Stdout != sink {
		t.Fatal("os.Stdout not restored")
	}
	want := "--- FAIL: TestA (1.00s)\n    a_test.go:1: timed out\n        more detail\n    --- FAIL: TestA/sub (0.50s)\n        a_test.go:2: broke\n--- FAIL: TestC (2s)\n"
	if kept != want {
		t.Errorf("kept:\n%q\nwant:\n%q", kept, want)
	}
	b, _ := os.ReadFile(sink.Name())
	if string(b) != out {
		t.Errorf("passed through %q, want %q", b, out)
	}
}

func TestSetupFailedKeepsWhatItReports(t *testing.T) {
	orig := os.Stderr
	sink, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	os.Stderr = sink
	defer func() { os.Stderr = orig }()
	before := setupFailedText()
	SetupFailedf("cannot start: %v", "pod p restarted 1 times")
	b, _ := os.ReadFile(sink.Name())
	if string(b) != "cannot start: pod p restarted 1 times\n" {
		t.Errorf("printed %q", b)
	}
	if got := strings.TrimPrefix(setupFailedText(), before); got != "cannot start: pod p restarted 1 times\n" {
		t.Errorf("kept %q", got)
	}
}
