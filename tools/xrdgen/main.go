// Command xrdgen converts every composite-resource CRD in a directory into
// an XRD file in another. `make generate` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	in := flag.String("in", "", "directory of generated CRDs")
	out := flag.String("out", "", "directory to write XRDs to (replaced)")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "xrdgen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	files, err := filepath.Glob(filepath.Join(in, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs in %q", in)
	}
	sort.Strings(files)
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &extv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		xrd, err := FromCRD(crd)
		if err != nil {
			return err
		}
		b, err := Marshal(xrd)
		if err != nil {
			return err
		}
		name := filepath.Join(out, crd.Name+".yaml")
		if err := os.WriteFile(name, append([]byte("# Generated from apis/ by `make generate`. DO NOT EDIT.\n"), b...), 0o644); err != nil {
			return err
		}
	}
	return nil
}
