// Package image builds fleetplane's single-binary OCI images without a
// container engine: one static binary as the only layer on an empty base,
// reproducibly (the same binary gives the same digest). tools/ociimage
// writes the function's and provider's runtime images with it; the test
// harness builds the images a real node runs (pause, and the runtimes
// pushed to the loopback registry).
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
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
	// User is the image's user, uid:gid; 65532:65532 (non-root) when
	// empty. An image built to match an upstream one takes its user.
	User string
	// Dirs are further directories of regular files, read-only to the
	// image's user: image path (absolute) to the directory on this
	// machine whose files it holds, subdirectories included. Crossplane
	// core's image carries its CRDs so.
	Dirs map[string]string
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
	if err := addDirs(tw, spec.Dirs); err != nil {
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
	cfg.Config.User = spec.User
	if cfg.Config.User == "" {
		cfg.Config.User = "65532:65532"
	}
	cfg.Config.ExposedPorts = map[string]struct{}{}
	for _, p := range spec.Ports {
		cfg.Config.ExposedPorts[p] = struct{}{}
	}
	return mutate.ConfigFile(img, cfg)
}

// addDirs writes dirs into the layer in path order, so that the same
// files give the same digest.
func addDirs(tw *tar.Writer, dirs map[string]string) error {
	for _, to := range slices.Sorted(maps.Keys(dirs)) {
		if !strings.HasPrefix(to, "/") {
			return fmt.Errorf("image directory %q is not absolute", to)
		}
		from := dirs[to]
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(from, p)
			if err != nil {
				return err
			}
			name := path.Join(to[1:], filepath.ToSlash(rel))
			switch {
			case d.IsDir():
				return tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir})
			case d.Type().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
					return err
				}
				_, err = tw.Write(b)
				return err
			default:
				return fmt.Errorf("%s is neither a file nor a directory", p)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Write builds the image and writes it to out as a tarball named tag,
// which `crossplane xpkg build --embed-runtime-image-tarball` embeds.
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
