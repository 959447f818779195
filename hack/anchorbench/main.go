// Command anchorbench writes the heartbeat rows of the fleets federation
// is measured with (fleetgen.Anchor), one JSON-lines file per fleet, for
// the adx-mon operator's benchmark to read: see run.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetplane/fleetplane/test/harness/fleetgen"
)

func main() {
	out := flag.String("out", "", "directory to write the rows to")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "anchorbench: -out is required")
		os.Exit(2)
	}
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "anchorbench:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range fleetgen.Anchor {
		f, err := os.Create(filepath.Join(dir, strings.ReplaceAll(s.String(), "/", "-")+".jsonl"))
		if err != nil {
			return err
		}
		if err := fleetgen.WriteRows(f, fleetgen.Rows(fleetgen.Fleet(s))); err != nil {
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
