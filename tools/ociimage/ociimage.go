// ociimage builds the runtime image of fleetplane's function and
// provider without a container engine: one static binary as the only layer
// on an empty base, written as an OCI image tarball that
// `crossplane xpkg build --embed-runtime-image-tarball` embeds. The same
// package could then be pushed to a registry and run by Crossplane's
// Deployment runtime.

package main

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

// Write builds the image and writes it as a tarball to out.
func Write(spec image.Image, out string) (v1.Hash, error) {
	img, err := image.Build(spec)
	if err != nil {
		return v1.Hash{}, err
	}
	tag, err := name.NewTag(spec.Tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image tag %q: %w", spec.Tag, err)
	}
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}
