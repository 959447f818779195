package support

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

// KustoProcess is the in-memory Kusto server run as a process of its own
// (hack/kusto-server), so that what a benchmark measures of its own
// process (ClientCPU) is the client's work alone.
type KustoProcess struct {
	URL string
}

// StartKustoProcess builds and starts hack/kusto-server with the
// databases on a loopback port, stopped when the test ends.
func StartKustoProcess(t testing.TB, dbs ...string) *KustoProcess {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kusto-server")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/fleetplane/fleetplane/hack/kusto-server").CombinedOutput(); err != nil {
		t.Fatalf("building kusto-server: %v\n%s", err, out)
	}
	args := []string{"--listen", "127.0.0.1:0"}
	for _, db := range dbs {
		args = append(args, "--database", db)
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "kusto-server listening on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return &KustoProcess{URL: u}
	case <-time.After(30 * time.Second):
		t.Fatal("kusto-server did not start within 30s")
	}
	return nil
}

// Exec runs a management command through the control API.
func (p *KustoProcess) Exec(t testing.TB, db, command string) {
	t.Helper()
	resp, err := http.Post(p.URL+"/fleetplane/exec?db="+db, "text/plain", bytes.NewBufferString(command))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("%s: %s", command[:min(len(command), 80)], resp.Status)
	}
}

// Stats reports the server's traffic so far.
func (p *KustoProcess) Stats(t testing.TB) kustoserver.Stats {
	t.Helper()
	resp, err := http.Get(p.URL + "/fleetplane/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var s kustoserver.Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// ClientCPU is the processor time this process has used, user and
// system.
func ClientCPU(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(fmt.Errorf("getrusage: %w", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
