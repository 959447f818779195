// Package registry runs a real OCI registry (go-containerregistry's
// registry package) in process on a loopback port, serving TLS with a
// certificate from a CA it makes. Crossplane core trusts that CA through
// its --ca-bundle-path flag and the crossplane CLI through SSL_CERT_FILE,
// so packages travel the way they do for a user: `crossplane xpkg push`,
// then the package manager pulls and resolves them. No Docker.
package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetplane/fleetplane/test/harness/support"
	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

// Registry is a running registry.
type Registry struct {
	// Host is host:port, the registry part of every reference into it.
	Host string
	// CAFile holds the PEM certificate of the CA that signed the server's
	// certificate.
	CAFile string

	srv  *http.Server
	pool *x509.CertPool
	dir  string
}

// StartOn serves a registry on a free port of the address ip, which its
// certificate names beside 127.0.0.1: a real node's Network.HostIP, where
// the machine, the node's containerd and its pods (Crossplane's package
// manager pulls packages itself) all reach it by the same reference.
// Blobs live under dir (packages are tens of megabytes), manifests in
// memory; requests are logged to dir/registry.log.
func StartOn(dir, ip string) (*Registry, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return nil, err
	}
	caPEM, cert, err := issue(ip)
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler: registry.New(
			registry.Logger(log.New(logFile, "", log.LstdFlags)),
			registry.WithBlobHandler(registry.NewDiskBlobHandler(filepath.Join(dir, "blobs"))),
		),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(logFile, "http: ", log.LstdFlags),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return &Registry{Host: ln.Addr().String(), CAFile: caFile, srv: srv, pool: pool, dir: dir}, nil
}

// CA is CAFile, for test/harness/controlplane.Registry.
func (r *Registry) CA() string { return r.CAFile }

// Close stops serving.
func (r *Registry) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// Ref is the reference of repository repo (e.g. "fleetplane/function")
// at tag in this registry.
func (r *Registry) Ref(repo, tag string) string {
	return r.Host + "/" + repo + ":" + tag
}

// Push pushes the package file to repo:tag with `crossplane xpkg push`,
// the command a user runs; cli is the crossplane CLI. The CLI trusts the
// registry's CA through SSL_CERT_FILE (Go's TLS roots on Linux), not by
// skipping verification.
func (r *Registry) Push(ctx context.Context, cli, file, repo, tag string) error {
	cmd := exec.CommandContext(ctx, cli, "xpkg", "push", "-f", file, r.Ref(repo, tag))
	cmd.Env = r.ClientEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("crossplane xpkg push %s: %w\n%s", r.Ref(repo, tag), err, out)
	}
	return nil
}

// PushImage pushes an image built as fleetplane's runtime images are
// (tools/ociimage: a static binary on an empty base, its entrypoint, a
// non-root user) to repo:tag, and returns its reference and digest.
func (r *Registry) PushImage(ctx context.Context, spec image.Image, repo, tag string) (string, v1.Hash, error) {
	img, err := image.Build(spec)
	if err != nil {
		return "", v1.Hash{}, err
	}
	ref, err := name.ParseReference(r.Ref(repo, tag), name.StrictValidation)
	if err != nil {
		return "", v1.Hash{}, err
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(r.Transport())); err != nil {
		return "", v1.Hash{}, err
	}
	d, err := img.Digest()
	return ref.String(), d, err
}

// ClientEnv is the environment of a registry client process (the
// crossplane CLI, tools/push.sh): this process's, trusting the registry's
// CA, with a credentials directory of its own.
func (r *Registry) ClientEnv() []string {
	return append(os.Environ(), "SSL_CERT_FILE="+r.CAFile, "DOCKER_CONFIG="+filepath.Join(r.dir, "docker"))
}

// Tags lists the tags of repo, sorted, as a package manager sees them.
func (r *Registry) Tags(ctx context.Context, repo string) ([]string, error) {
	repository, err := name.NewRepository(r.Host+"/"+repo, name.StrictValidation)
	if err != nil {
		return nil, err
	}
	tags, err := remote.List(repository, remote.WithContext(ctx), remote.WithTransport(r.Transport()))
	if err != nil {
		return nil, err
	}
	sort.Strings(tags)
	return tags, nil
}

// Mirror is where this registry mirrors an upstream package source or
// prefix: ghcr.io/fleetplane/x is mirrored at Host/ghcr.io/fleetplane/x,
// the layout of a typical air-gapped mirror.
func (r *Registry) Mirror(upstream string) string {
	return r.Host + "/" + upstream
}

// Transport is an HTTP transport that trusts the registry's CA.
func (r *Registry) Transport() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: r.pool, MinVersion: tls.VersionTLS12}
	return tr
}

// issue makes a CA and a server certificate for 127.0.0.1, localhost and
// ip, signed by it, valid for a day.
func issue(ip string) ([]byte, tls.Certificate, error) {
	addr := net.ParseIP(ip)
	if addr == nil {
		return nil, tls.Certificate{}, fmt.Errorf("registry: %q is not an IP address", ip)
	}
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	if !addr.IsLoopback() {
		ips = append(ips, addr)
	}
	caPEM, certPEM, keyPEM, err := support.ServingCertificate("fleetplane test registry CA", ips, []string{"localhost"})
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, tls.Certificate{}, errors.Join(errors.New("cannot pair the registry's certificate and key"), err)
	}
	return caPEM, cert, nil
}
