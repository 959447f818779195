// Command ociartifact pushes fleetplane's RBAC file to a registry as an
// OCI artifact, and pulls it back (package artifact), without Docker or
// oras. `make push` (tools/push.sh) runs it; `oras pull` reads what it
// pushes too.
//
//	ociartifact push -f _output/fleetplane-rbac.yaml ghcr.io/fleetplane/fleetplane-rbac:v0.1.0
//	ociartifact pull ghcr.io/fleetplane/fleetplane-rbac:v0.1.0 > fleetplane-rbac.yaml
//
// Credentials are the Docker config's (DOCKER_CONFIG, as `crossplane xpkg
// login` writes them), and SSL_CERT_FILE trusts a private CA.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetplane/fleetplane/tools/ociartifact/artifact"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociartifact:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: ociartifact push -f FILE REF | ociartifact pull REF")
	}
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	switch args[0] {
	case "push":
		fs := flag.NewFlagSet("push", flag.ContinueOnError)
		file := fs.String("f", "", "the file to push")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *file == "" || fs.NArg() != 1 {
			return errors.New("usage: ociartifact push -f FILE REF")
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		d, err := artifact.Push(fs.Arg(0), filepath.Base(*file), b, artifact.RBACType, artifact.YAML, auth)
		if err != nil {
			return err
		}
		fmt.Printf("%s@%s\n", fs.Arg(0), d)
		return nil
	case "pull":
		if len(args) != 2 {
			return errors.New("usage: ociartifact pull REF")
		}
		_, b, err := artifact.Pull(args[1], artifact.RBACType, auth)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(b)
		return err
	}
	return fmt.Errorf("unknown command %q: push or pull", args[0])
}
