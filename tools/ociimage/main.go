// Command ociimage writes the runtime image tarball of one binary, without
// a container engine: the binary as the only layer on an empty base
// (package image), which `crossplane xpkg build
// --embed-runtime-image-tarball` embeds. `make package` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

func main() {
	var spec image.Image
	flag.StringVar(&spec.Binary, "binary", "", "static executable to put in the image")
	flag.StringVar(&spec.Path, "path", "", "its path in the image, e.g. /function-fleetplane")
	flag.StringVar(&spec.Tag, "tag", "", "image name in the tarball")
	ports := flag.String("ports", "", "comma-separated ports, e.g. 9443/tcp")
	out := flag.String("o", "", "tarball to write")
	flag.Parse()
	if *ports != "" {
		spec.Ports = strings.Split(*ports, ",")
	}
	if spec.Binary == "" || spec.Path == "" || spec.Tag == "" || *out == "" || !strings.HasPrefix(spec.Path, "/") {
		fmt.Fprintln(os.Stderr, "ociimage: -binary, -path (absolute), -tag and -o are required")
		os.Exit(2)
	}
	d, err := image.Write(spec, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", *out, d)
}
