// Command docgen writes the API reference under docs/reference from the
// XRDs and CRDs that `make generate` writes: one page per API group, a
// table per kind with every field's type, default, validation and
// description. `make generate` runs it, so the reference cannot fall
// behind the schemas.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "", "directory to write the reference to (replaced)")
	help := flag.String("help", "", "directory of <binary>.txt files, each a binary's --help, for flags.md")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: docgen -out DIR [-help DIR] SCHEMA-DIR...")
		os.Exit(2)
	}
	if err := run(*out, flag.Args(), *help); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
