// Package artifact stores one file in an OCI registry as an artifact, the
// layout `oras push` writes and `oras pull` reads: an image manifest whose
// config names the artifact's type and whose one layer is the file, its
// name in the org.opencontainers.image.title annotation. fleetplane's
// release pushes its RBAC this way beside its packages, so that a mirror
// of the packages carries it too.
package artifact

import (
	"bytes"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Media types of fleetplane's RBAC artifact.
const (
	// RBACType is the artifact's type, in its config's media type.
	RBACType types.MediaType = "application/vnd.fleetplane.rbac.v1+json"
	// YAML is the layer's.
	YAML types.MediaType = "application/yaml"
	// Title is the annotation that names the file.
	Title = "org.opencontainers.image.title"
	// MaxBytes is the largest file Pull reads: the RBAC is tens of KiB,
	// and a registry's answer is read whole.
	MaxBytes = 4 << 20
)

// Image is file (named title) as an artifact of type typ.
func Image(title string, file []byte, typ, mediaType types.MediaType) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), typ)
	return mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(file, mediaType),
		Annotations: map[string]string{Title: title},
		MediaType:   mediaType,
	})
}

// Push writes file to ref as an artifact.
func Push(ref, title string, file []byte, typ, mediaType types.MediaType, opts ...remote.Option) (v1.Hash, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := Image(title, file, typ, mediaType)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(r, img, opts...); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// Pull reads the artifact at ref, of type typ, and returns its file's
// name and content, at most MaxBytes of it.
func Pull(ref string, typ types.MediaType, opts ...remote.Option) (string, []byte, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return "", nil, err
	}
	img, err := remote.Image(r, opts...)
	if err != nil {
		return "", nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return "", nil, err
	}
	if m.Config.MediaType != typ || len(m.Layers) != 1 {
		return "", nil, fmt.Errorf("%s is not a %s artifact of one file (config %s, %d layers)", ref, typ, m.Config.MediaType, len(m.Layers))
	}
	d := m.Layers[0]
	if d.Size > MaxBytes {
		return "", nil, fmt.Errorf("%s holds %d bytes, more than the %d an artifact may", ref, d.Size, MaxBytes)
	}
	l, err := img.LayerByDigest(d.Digest)
	if err != nil {
		return "", nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = rc.Close() }()
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(rc, MaxBytes+1)); err != nil {
		return "", nil, err
	}
	if b.Len() > MaxBytes {
		return "", nil, fmt.Errorf("%s holds more than %d bytes", ref, MaxBytes)
	}
	return d.Annotations[Title], b.Bytes(), nil
}
