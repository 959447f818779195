package support

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// failureEcho passes a test binary's standard output through unchanged
// and keeps the blocks that report failures ("--- FAIL:" and the
// indented lines under it), so that they can be printed once more after
// the component logs a failing harness dumps: CI shows the end of the
// output, and the reason a test failed must be in it.
type failureEcho struct {
	out   *os.File
	w     *os.File
	done  chan struct{}
	kept  strings.Builder
	limit int
}

// echoFailures redirects os.Stdout through a failureEcho, keeping at
// most limit bytes of failure text.
func echoFailures(limit int) (*failureEcho, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	e := &failureEcho{out: os.Stdout, w: w, done: make(chan struct{}), limit: limit}
	os.Stdout = w
	go e.copy(r)
	return e, nil
}

func (e *failureEcho) copy(r io.Reader) {
	defer close(e.done)
	br := bufio.NewReader(r)
	in := false
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			_, _ = io.WriteString(e.out, line)
			switch {
			case strings.HasPrefix(strings.TrimLeft(line, " "), "--- FAIL:"):
				in = true
			case !strings.HasPrefix(line, " "):
				in = false
			}
			if in {
				e.keep(line)
			}
		}
		if err != nil {
			return
		}
	}
}

func (e *failureEcho) keep(line string) {
	const longest = 4000
	if len(line) > longest {
		line = line[:longest] + " …\n"
	}
	if e.kept.Len()+len(line) > e.limit {
		return
	}
	e.kept.WriteString(line)
}

// stop restores os.Stdout and returns the failure text kept.
func (e *failureEcho) stop() string {
	os.Stdout = e.out
	_ = e.w.Close()
	<-e.done
	return e.kept.String()
}

// setupFailures keeps what SetupFailed reported, for Harness to print once
// more at the end.
var setupFailures struct {
	sync.Mutex
	strings.Builder
}

// SetupFailedf reports why a harness could not set up (start a control
// plane, build a binary) on standard error, as it happens, and again
// after everything else the failing binary prints (the component logs):
// no test ran, so no "--- FAIL" block would say why.
func SetupFailedf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	_, _ = io.WriteString(os.Stderr, msg)
	setupFailures.Lock()
	defer setupFailures.Unlock()
	const limit = 32 << 10
	if setupFailures.Len()+len(msg) <= limit {
		setupFailures.WriteString(msg)
	}
}

func setupFailedText() string {
	setupFailures.Lock()
	defer setupFailures.Unlock()
	return setupFailures.String()
}
