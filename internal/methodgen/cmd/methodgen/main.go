// Command methodgen writes zz_generated.methods.go into every package
// directory given whose types carry +fleetplane:methods markers. `make
// generate` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetplane/fleetplane/internal/methodgen"
)

func main() {
	for _, dir := range os.Args[1:] {
		if err := run(dir); err != nil {
			fmt.Fprintf(os.Stderr, "methodgen: %s: %v\n", dir, err)
			os.Exit(1)
		}
	}
}

func run(dir string) error {
	pkg, types, err := methodgen.Marked(dir)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "zz_generated.methods.go")
	if len(types) == 0 {
		return os.RemoveAll(out)
	}
	src, err := methodgen.Generate(pkg, types)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
