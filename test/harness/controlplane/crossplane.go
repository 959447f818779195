package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// CrossplaneNamespace is where Crossplane runs and keeps its secrets.
const CrossplaneNamespace = "crossplane-system"

// Crossplane is Crossplane core running against a ControlPlane: either
// as a local process with the External package runtime, where this
// harness plays the runtime, running functions and providers as local
// processes (StartCrossplane), or as the pods of its Helm chart on a real
// node with the Deployment runtime (InstallCrossplaneChart).
type Crossplane struct {
	cp       *ControlPlane
	bin      string
	cacheDir string
	kube     client.Client
}

// Kube is a client with Crossplane's package types registered.
func (x *Crossplane) Kube() client.Client { return x.kube }

// CrossplaneOptions tune Crossplane core.
type CrossplaneOptions struct {
	// CABundle is a PEM file of further CAs Crossplane trusts when it
	// pulls packages (its --ca-bundle-path).
	CABundle string
	// Args are further flags of `crossplane core start`.
	Args []string
}

// newCrossplane is a client of Crossplane core's package types on cp and
// Crossplane's namespace.
func newCrossplane(ctx context.Context, cp *ControlPlane, bin string) (*Crossplane, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := pkgv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	kube, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CrossplaneNamespace}}); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, err
	}
	return &Crossplane{cp: cp, bin: bin, cacheDir: filepath.Join(cp.Dir, "xpkg-cache"), kube: kube}, nil
}

// StartCrossplane initialises Crossplane's CRDs and secrets and starts its
// controllers.
func StartCrossplane(ctx context.Context, cp *ControlPlane, root string) (*Crossplane, error) {
	return StartCrossplaneWith(ctx, cp, root, CrossplaneOptions{})
}

// StartCrossplaneWith is StartCrossplane with options.
func StartCrossplaneWith(ctx context.Context, cp *ControlPlane, root string, o CrossplaneOptions) (*Crossplane, error) {
	bin, err := Tool(root, "crossplane-core")
	if err != nil {
		return nil, err
	}
	crds, err := Tool(root, "crossplane-core-crds")
	if err != nil {
		return nil, err
	}
	x, err := newCrossplane(ctx, cp, bin)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(x.cacheDir, 0o755); err != nil {
		return nil, err
	}
	env := []string{"KUBECONFIG=" + cp.Kubeconfig, "POD_NAMESPACE=" + CrossplaneNamespace}

	// init installs the CRDs and the TLS secrets. Its first run can fail
	// while the CRDs it just created are not served yet; run it again.
	var initErr error
	for attempt := range 5 {
		cmd := exec.CommandContext(ctx, bin, "core", "init", "--cr-ds-path", crds, "--enable-webhooks=false",
			"--tlsca-secret-name", "crossplane-root-ca", "--tls-server-secret-name", "crossplane-tls-server",
			"--tls-client-secret-name", "crossplane-tls-client")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		_ = os.WriteFile(filepath.Join(cp.Dir, fmt.Sprintf("crossplane-init-%d.log", attempt)), out, 0o644)
		if initErr = err; err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if initErr != nil {
		return nil, fmt.Errorf("crossplane core init: %w (logs in %s)", initErr, cp.Dir)
	}

	clientCerts := filepath.Join(cp.Dir, "crossplane-tls-client")
	if err := x.writeSecretFiles(ctx, "crossplane-tls-client", clientCerts); err != nil {
		return nil, err
	}
	metrics, err := FreePort()
	if err != nil {
		return nil, err
	}
	health, err := FreePort()
	if err != nil {
		return nil, err
	}
	webhookPort, webhookCerts, err := x.usageWebhook(ctx, filepath.Join(crds, "..", "webhookconfigurations", "usage.yaml"))
	if err != nil {
		return nil, err
	}
	args := []string{
		"core", "start", "--debug", "--package-runtime=External",
		// Webhooks serve Usages: without them Crossplane neither tracks nor
		// enforces deletion order.
		"--webhook-port", strconv.Itoa(webhookPort), "--tls-server-certs-dir", webhookCerts,
		"--xpkg-cache-dir", x.cacheDir, "--xfn-cache-dir", filepath.Join(cp.Dir, "xfn-cache"),
		"--tls-client-certs-dir", clientCerts,
		"--metrics-port", strconv.Itoa(metrics), "--health-probe-port", strconv.Itoa(health),
		"--poll-interval", "10s",
	}
	if o.CABundle != "" {
		args = append(args, "--ca-bundle-path", o.CABundle)
	}
	p, err := Run(cp.Dir, "crossplane", bin, append(args, o.Args...), env)
	if err != nil {
		return nil, err
	}
	cp.Track(p)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("crossplane exited:\n%s", p.Tail(4000))
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return nil, fmt.Errorf("crossplane not ready: %w", err)
	}
	return x, nil
}

// usageWebhook prepares Crossplane's Usage admission webhook, which
// Crossplane's Helm chart would route through a Service: a server
// certificate for 127.0.0.1 signed by Crossplane's CA, and the
// ValidatingWebhookConfiguration of the Crossplane release, pointed at a
// free loopback port by URL (the API server has no service network here).
func (x *Crossplane) usageWebhook(ctx context.Context, configFile string) (int, string, error) {
	port, err := FreePort()
	if err != nil {
		return 0, "", err
	}
	data, err := x.IssueCertificate(ctx, "crossplane-webhook-tls-server", "crossplane-webhooks")
	if err != nil {
		return 0, "", err
	}
	dir := filepath.Join(x.cp.Dir, "crossplane-webhook-tls-server")
	if err := writeCerts(dir, data); err != nil {
		return 0, "", err
	}
	b, err := os.ReadFile(configFile)
	if err != nil {
		return 0, "", err
	}
	cfg := &admissionv1.ValidatingWebhookConfiguration{}
	if err := yaml.Unmarshal(b, cfg); err != nil {
		return 0, "", fmt.Errorf("%s: %w", configFile, err)
	}
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		path := "/"
		if w.ClientConfig.Service != nil && w.ClientConfig.Service.Path != nil {
			path = *w.ClientConfig.Service.Path
		}
		w.ClientConfig = admissionv1.WebhookClientConfig{
			URL:      new(fmt.Sprintf("https://127.0.0.1:%d%s", port, path)),
			CABundle: data["ca.crt"],
		}
	}
	if err := x.kube.Create(ctx, cfg); err != nil && !kerrors.IsAlreadyExists(err) {
		return 0, "", fmt.Errorf("cannot create webhook configuration %s: %w", cfg.Name, err)
	}
	return port, dir, nil
}

func (x *Crossplane) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := x.kube.Get(ctx, types.NamespacedName{Namespace: CrossplaneNamespace, Name: name}, s)
	return s, err
}

func (x *Crossplane) writeSecretFiles(ctx context.Context, secret, dir string) error {
	var s *corev1.Secret
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		s, err = x.secret(ctx, secret)
		return err == nil && len(s.Data["tls.crt"]) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("secret %s has no certificate: %w", secret, err)
	}
	return writeCerts(dir, s.Data)
}

func writeCerts(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if err := os.WriteFile(filepath.Join(dir, k), data[k], 0o600); err != nil {
			return err
		}
	}
	return nil
}

// RevisionOf waits for the active revision of a package and returns it.
func (x *Crossplane) RevisionOf(ctx context.Context, list client.ObjectList, pkg string, timeout time.Duration) (client.Object, error) {
	var found client.Object
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := x.kube.List(ctx, list, client.MatchingLabels{"pkg.crossplane.io/package": pkg}); err != nil {
			return false, nil //nolint:nilerr // keep polling
		}
		switch l := list.(type) {
		case *pkgv1.FunctionRevisionList:
			for i := range l.Items {
				if l.Items[i].Spec.DesiredState == pkgv1.PackageRevisionActive {
					found = &l.Items[i]
				}
			}
		case *pkgv1.ProviderRevisionList:
			for i := range l.Items {
				if l.Items[i].Spec.DesiredState == pkgv1.PackageRevisionActive {
					found = &l.Items[i]
				}
			}
		}
		return found != nil, nil
	})
	return found, err
}

// IssueCertificate signs a server or client certificate with Crossplane's
// root CA and stores it as a Secret, as Crossplane's runtime would.
func (x *Crossplane) IssueCertificate(ctx context.Context, secretName, commonName string) (map[string][]byte, error) {
	ca, err := x.secret(ctx, "crossplane-root-ca")
	if err != nil {
		return nil, fmt.Errorf("cannot read crossplane-root-ca: %w", err)
	}
	caCert, caKey, err := parseCA(ca.Data["tls.crt"], ca.Data["tls.key"])
	if err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"Crossplane"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost", commonName},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"ca.crt":  ca.Data["tls.crt"],
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNamespace, Name: secretName}, Data: data}
	if err := x.kube.Create(ctx, s); err != nil {
		if !kerrors.IsAlreadyExists(err) {
			return nil, err
		}
		existing, err := x.secret(ctx, secretName)
		if err != nil {
			return nil, err
		}
		existing.Data = data
		if err := x.kube.Update(ctx, existing); err != nil {
			return nil, err
		}
	}
	return data, nil
}

func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, any, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("crossplane-root-ca holds no PEM certificate and key")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if k, err := x509.ParsePKCS1PrivateKey(kb.Bytes); err == nil {
		return cert, k, nil
	}
	if k, err := x509.ParsePKCS8PrivateKey(kb.Bytes); err == nil {
		return cert, k, nil
	}
	k, err := x509.ParseECPrivateKey(kb.Bytes)
	return cert, k, err
}

// ServeFunction plays the runtime for a Function installed as pkg: it waits
// for the active revision, issues its server certificate, starts bin with
// mTLS on a free port, and tells Crossplane where it listens.
func (x *Crossplane) ServeFunction(ctx context.Context, pkg, bin string, args ...string) (*Process, error) {
	obj, err := x.RevisionOf(ctx, &pkgv1.FunctionRevisionList{}, pkg, 3*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("no active revision of function %s: %w", pkg, err)
	}
	rev := obj.(*pkgv1.FunctionRevision)
	secret := pkg + "-tls-server"
	data, err := x.IssueCertificate(ctx, secret, pkg)
	if err != nil {
		return nil, err
	}
	certs := filepath.Join(x.cp.Dir, secret)
	if err := writeCerts(certs, data); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := Run(x.cp.Dir, pkg, bin, append([]string{"--tls-certs-dir", certs, "--address", fmt.Sprintf("127.0.0.1:%d", port)}, args...), nil)
	if err != nil {
		return nil, err
	}
	x.cp.Track(p)
	endpoint := fmt.Sprintf("dns:///127.0.0.1:%d", port)
	return p, x.pointRevision(ctx, rev, func(r client.Object) {
		fr := r.(*pkgv1.FunctionRevision)
		fr.Spec.TLSServerSecretName = new(secret)
	}, func(r client.Object) {
		fr := r.(*pkgv1.FunctionRevision)
		fr.Status.TLSServerSecretName = new(secret)
		fr.Status.Endpoint = endpoint
		fr.SetConditions(pkgv1.RuntimeHealthy())
	})
}

// RunProvider plays the runtime for a Provider installed as pkg: it waits
// for the active revision, gives it TLS secrets, and starts bin as the
// ServiceAccount Crossplane's Deployment runtime would give its pod, with
// only the RBAC bound to that account.
func (x *Crossplane) RunProvider(ctx context.Context, pkg, bin string, args ...string) (*Process, error) {
	rev, certs, err := x.establishProvider(ctx, pkg)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := x.providerIdentity(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", pkg, err)
	}
	// As in a provider's pod: the kubeconfig in KUBECONFIG (client-go and
	// controller-runtime read it), server certificates in
	// TLS_SERVER_CERTS_DIR.
	p, err := Run(x.cp.Dir, pkg, bin, args, []string{"KUBECONFIG=" + kubeconfig, "TLS_SERVER_CERTS_DIR=" + certs})
	if err != nil {
		return nil, err
	}
	x.cp.Track(p)
	return p, x.pointRevision(ctx, rev, nil, func(r client.Object) {
		r.(*pkgv1.ProviderRevision).SetConditions(pkgv1.RuntimeHealthy())
	})
}

// StandInProvider plays the runtime for a Provider installed as pkg whose
// controllers are test stand-ins running in this process: its revision
// gets TLS secrets and its kinds are established, and it is reported
// healthy as a running pod would be.
func (x *Crossplane) StandInProvider(ctx context.Context, pkg string) error {
	rev, _, err := x.establishProvider(ctx, pkg)
	if err != nil {
		return err
	}
	return x.pointRevision(ctx, rev, nil, func(r client.Object) {
		r.(*pkgv1.ProviderRevision).SetConditions(pkgv1.RuntimeHealthy())
	})
}

// establishProvider waits for the active revision of the Provider pkg,
// issues its TLS secrets and names them in the revision, and waits until
// the kinds it installs are established. It returns the revision and the
// directory of its server certificates.
func (x *Crossplane) establishProvider(ctx context.Context, pkg string) (*pkgv1.ProviderRevision, string, error) {
	obj, err := x.RevisionOf(ctx, &pkgv1.ProviderRevisionList{}, pkg, 3*time.Minute)
	if err != nil {
		return nil, "", fmt.Errorf("no active revision of provider %s: %w", pkg, err)
	}
	rev := obj.(*pkgv1.ProviderRevision)
	provider := &pkgv1.Provider{}
	if err := x.kube.Get(ctx, types.NamespacedName{Name: pkg}, provider); err != nil {
		return nil, "", err
	}
	server, clientName := pkg+"-tls-server", pkg+"-tls-client"
	serverCert, err := x.IssueCertificate(ctx, server, pkg)
	if err != nil {
		return nil, "", err
	}
	if _, err := x.IssueCertificate(ctx, clientName, pkg); err != nil {
		return nil, "", err
	}
	certs := filepath.Join(x.cp.Dir, server)
	if err := writeCerts(certs, serverCert); err != nil {
		return nil, "", err
	}
	// Crossplane establishes a provider's CRDs (conversion webhooks
	// included) once the runtime has named the revision's TLS Secrets. The
	// binary starts after that, as a pod would once it stopped
	// crash-looping on kinds not yet served.
	if err := x.pointRevision(ctx, rev, func(r client.Object) {
		pr := r.(*pkgv1.ProviderRevision)
		pr.Spec.TLSServerSecretName, pr.Spec.TLSClientSecretName = new(server), new(clientName)
		// The package manager leaves a revision's runtime fields to the
		// runtime when that is External.
		pr.Spec.RuntimeConfigReference = provider.Spec.RuntimeConfigReference
	}, func(r client.Object) {
		pr := r.(*pkgv1.ProviderRevision)
		pr.Status.TLSServerSecretName, pr.Status.TLSClientSecretName = new(server), new(clientName)
	}); err != nil {
		return nil, "", err
	}
	if err := x.waitEstablished(ctx, rev, 2*time.Minute); err != nil {
		return nil, "", fmt.Errorf("provider %s: %w", pkg, err)
	}
	return rev, certs, nil
}

// providerIdentity gives a provider revision the identity its pod would
// have. Crossplane's Deployment runtime names the ServiceAccount after the
// DeploymentRuntimeConfig's serviceAccountTemplate, else after the
// revision, and Crossplane's RBAC manager binds the revision's system
// ClusterRole to the ServiceAccount of every Deployment the revision
// owns. So: create that ServiceAccount and a Deployment owned by the
// revision, with no replicas (the process runs here, not in a pod), wait
// for the RBAC manager's binding, and return a kubeconfig with a token of
// the ServiceAccount.
//
// The RBAC manager runs only for that: Crossplane's Helm chart runs it
// beside the core for good, but it serves metrics on :8080, as does
// provider-kubernetes, and neither has a flag to move.
func (x *Crossplane) providerIdentity(ctx context.Context, rev *pkgv1.ProviderRevision) (string, error) {
	sa := rev.GetName()
	if ref := rev.GetRuntimeConfigRef(); ref != nil {
		rc := &unstructured.Unstructured{}
		rc.SetAPIVersion("pkg.crossplane.io/v1beta1")
		rc.SetKind("DeploymentRuntimeConfig")
		if err := x.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, rc); err != nil && !kerrors.IsNotFound(err) {
			return "", err
		}
		if n, _, _ := unstructured.NestedString(rc.Object, "spec", "serviceAccountTemplate", "metadata", "name"); n != "" {
			sa = n
		}
	}
	kubeconfig, err := x.cp.ServiceAccountKubeconfig(ctx, CrossplaneNamespace, sa)
	if err != nil {
		return "", err
	}
	labels := map[string]string{"pkg.crossplane.io/revision": rev.GetName()}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNamespace, Name: rev.GetName(), OwnerReferences: []metav1.OwnerReference{
			{APIVersion: pkgv1.ProviderRevisionGroupVersionKind.GroupVersion().String(), Kind: pkgv1.ProviderRevisionKind, Name: rev.GetName(), UID: rev.GetUID(), Controller: new(true), BlockOwnerDeletion: new(true)},
		}},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "package-runtime", Image: rev.GetSource()}}},
			},
		},
	}
	if err := x.kube.Create(ctx, d); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	rbac, err := Run(x.cp.Dir, "crossplane-rbac-manager-"+rev.GetName(), x.bin, []string{"rbac", "start", "--debug"}, []string{"KUBECONFIG=" + x.cp.Kubeconfig, "POD_NAMESPACE=" + CrossplaneNamespace})
	if err != nil {
		return "", err
	}
	defer rbac.Stop()
	binding := "crossplane:provider:" + rev.GetName() + ":system"
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if rbac.Exited() {
			return false, fmt.Errorf("crossplane's RBAC manager exited:\n%s", rbac.Tail(2000))
		}
		role := &rbacv1.ClusterRole{}
		if err := x.kube.Get(ctx, types.NamespacedName{Name: binding}, role); err != nil || len(role.Rules) == 0 {
			last = fmt.Sprintf("ClusterRole %s not there yet", binding)
			return false, nil //nolint:nilerr // not there yet
		}
		b := &rbacv1.ClusterRoleBinding{}
		if err := x.kube.Get(ctx, types.NamespacedName{Name: binding}, b); err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // not bound yet
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == CrossplaneNamespace && s.Name == sa {
				return true, nil
			}
		}
		last = fmt.Sprintf("ClusterRoleBinding %s does not name ServiceAccount %s", binding, sa)
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("crossplane's RBAC manager did not bind the system role (%s): %w", last, err)
	}
	return kubeconfig, nil
}

// waitEstablished waits until the revision lists the objects it installed
// and the API server serves the CRD of every one, discovery included. A
// safe-start provider's managed kinds are ManagedResourceDefinitions,
// whose CRDs exist only once a policy activates them: an inactive one is
// not waited for, but an active one is, as its CRD appears a moment after
// the MRD (a provider that is not safe-start, like provider-kubernetes
// v1.0, exits when a kind it serves is not there yet).
func (x *Crossplane) waitEstablished(ctx context.Context, rev *pkgv1.ProviderRevision, timeout time.Duration) error {
	dc, err := discovery.NewDiscoveryClientForConfig(x.cp.Config)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := x.kube.Get(ctx, client.ObjectKeyFromObject(rev), rev); err != nil {
			return false, nil //nolint:nilerr // retry
		}
		round := &discoveryRound{dc: dc}
		// Crossplane v2.4 records each object by name and UID alone, no
		// kind: a provider's objects are CRDs and MRDs, each named
		// <plural>.<group> like the CRD it is or makes.
		for _, ref := range rev.Status.ObjectRefs {
			mrd := &unstructured.Unstructured{}
			mrd.SetAPIVersion("apiextensions.crossplane.io/v1alpha1")
			mrd.SetKind("ManagedResourceDefinition")
			err := x.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, mrd)
			switch {
			case err == nil:
				if state, _, _ := unstructured.NestedString(mrd.Object, "spec", "state"); state != "Active" {
					continue
				}
			case !kerrors.IsNotFound(err):
				last = "MRD " + ref.Name + ": " + err.Error()
				return false, nil
			}
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := x.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, crd); err != nil {
				last = "CRD " + ref.Name + ": " + err.Error()
				return false, nil //nolint:nilerr // not there yet: keep polling
			}
			if !established(crd) {
				last = "CRD " + ref.Name + " not established"
				return false, nil
			}
			// Established is not yet served: the API server's discovery
			// lists a new kind a moment later, and a provider's REST
			// mapper that asks before then finds no match and exits.
			if msg := round.missing(crd); msg != "" {
				last = msg
				return false, nil
			}
		}
		last = "the revision lists no objects yet"
		return len(rev.Status.ObjectRefs) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", last, err)
	}
	return nil
}

// WaitXRDsEstablished waits until every XRD is established: a healthy
// Configuration has created its XRDs, but Crossplane makes their CRDs a
// moment later, and an XR applied before then is refused.
func (x *Crossplane) WaitXRDsEstablished(ctx context.Context, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("apiextensions.crossplane.io/v2")
		l.SetKind("CompositeResourceDefinitionList")
		if err := x.kube.List(ctx, l); err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retry
		}
		var waiting []string
		for i := range l.Items {
			if !established(&l.Items[i]) {
				waiting = append(waiting, l.Items[i].GetName())
			}
		}
		last = fmt.Sprintf("%d XRDs, not established: %v", len(l.Items), waiting)
		return len(l.Items) > 0 && len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("XRDs: %s: %w", last, err)
	}
	return nil
}

// discoveryRound is what the API server's discovery lists, read lazily
// and at most once per group version in one round of a wait: a provider's
// CRDs mostly share a few group versions. The list of groups (aggregated
// discovery, which REST mappers read first) and each version's resources
// are updated separately, so both are checked.
type discoveryRound struct {
	dc        discovery.DiscoveryInterface
	groups    map[string]bool
	resources map[string][]metav1.APIResource
}

// missing returns what discovery does not list yet of a CRD's served
// versions, or "" when it lists them all.
func (d *discoveryRound) missing(crd *unstructured.Unstructured) string {
	if d.groups == nil {
		groups, err := d.dc.ServerGroups()
		if err != nil {
			return "discovery: " + err.Error()
		}
		d.groups, d.resources = map[string]bool{}, map[string][]metav1.APIResource{}
		for _, g := range groups.Groups {
			for _, v := range g.Versions {
				d.groups[v.GroupVersion] = true
			}
		}
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		gv := group + "/" + fmt.Sprint(m["name"])
		if !d.groups[gv] {
			return "discovery lists no " + gv + " yet"
		}
		rs, ok := d.resources[gv]
		if !ok {
			l, err := d.dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				return "discovery of " + gv + ": " + err.Error()
			}
			rs = l.APIResources
			d.resources[gv] = rs
		}
		if !slices.ContainsFunc(rs, func(r metav1.APIResource) bool { return r.Name == plural }) {
			return "discovery of " + gv + " lists no " + plural + " yet"
		}
	}
	return ""
}

// established reports an object's Established condition True: a CRD's,
// or an XRD's.
func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// pointRevision sets a revision's runtime fields in spec and status, and
// reports the runtime healthy as Crossplane's Deployment runtime would once
// its pods run, retrying on conflicts with Crossplane's own writes.
func (x *Crossplane) pointRevision(ctx context.Context, rev client.Object, spec, status func(client.Object)) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := x.kube.Get(ctx, client.ObjectKeyFromObject(rev), rev); err != nil {
			return false, nil //nolint:nilerr // retry
		}
		if spec != nil {
			spec(rev)
			if err := x.kube.Update(ctx, rev); err != nil {
				return false, nil //nolint:nilerr // conflict: retry
			}
		}
		if status != nil {
			status(rev)
			if err := x.kube.Status().Update(ctx, rev); err != nil {
				return false, nil //nolint:nilerr // conflict: retry
			}
		}
		return true, nil
	})
}

// WaitHealthy waits until a package object reports Installed and Healthy.
func (x *Crossplane) WaitHealthy(ctx context.Context, obj client.Object, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := x.kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil //nolint:nilerr // retry
		}
		pkg, ok := obj.(pkgv1.Package)
		if !ok {
			return false, fmt.Errorf("%T is not a package", obj)
		}
		installed := pkg.GetCondition(pkgv1.TypeInstalled)
		healthy := pkg.GetCondition(pkgv1.TypeHealthy)
		last = fmt.Sprintf("installed=%s (%s) healthy=%s (%s)", installed.Status, installed.Message, healthy.Status, healthy.Message)
		return installed.Status == corev1.ConditionTrue && healthy.Status == corev1.ConditionTrue, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s: %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), strings.TrimSpace(last), err)
	}
	return nil
}
