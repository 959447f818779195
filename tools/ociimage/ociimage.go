// ociimage builds the runtime image of fleetplane's function and
// provider without a container engine: one static binary as the only layer
// on an empty base, written as an OCI image tarball that
// `crossplane xpkg build --embed-runtime-image-tarball` embeds. The same
// package could then be pushed to a registry and run by Crossplane's
// Deployment runtime.

package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image describes a single-binary image.
type Image struct {
	// Binary is the path of a static executable.
	Binary string
	// Path is where it lands in the image, e.g. /function-fleetplane.
	Path string
	// Ports the runtime listens on, e.g. "9443/tcp".
	Ports []string
	// Tag names the image in the tarball.
	Tag string
}

// epoch makes builds reproducible: the same binary gives the same digest.
var epoch = time.Unix(0, 0).UTC()

// Build assembles the image.
func Build(spec Image) (v1.Image, error) {
	bin, err := os.ReadFile(spec.Binary)
	if err != nil {
		return nil, err
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: spec.Path[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: epoch, Typeflag: tar.TypeReg, Uid: 65532, Gid: 65532}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := layer.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = []string{spec.Path}
	cfg.Config.User = "65532:65532"
	cfg.Config.ExposedPorts = map[string]struct{}{}
	for _, p := range spec.Ports {
		cfg.Config.ExposedPorts[p] = struct{}{}
	}
	return mutate.ConfigFile(img, cfg)
}

// Write builds the image and writes it as a tarball to out.
func Write(spec Image, out string) (v1.Hash, error) {
	img, err := Build(spec)
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
