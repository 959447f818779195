// Command vcluster plays vcluster's control plane in the e2e's vcluster
// journey, as a real pod of the StatefulSet an Experiment composes: the
// images of loft-sh/vcluster cannot be pulled here. It does what the
// Experiment relies on vcluster doing, through the same files, rights and
// objects:
//
//   - called as cp (the Kubernetes image's init container runs
//     `cp -r /kubernetes/. /binaries/`), it copies a tree;
//   - otherwise it reads the config the chart's Secret mounts at
//     /var/lib/vcluster/config.yaml, requires the k8s distribution and the
//     binaries the init container copied, makes a CA, a serving
//     certificate for its Service and an admin client certificate, writes
//     the kubeconfig Secret vc-<name> (keys config, certificate-authority,
//     client-certificate, client-key, token) in its namespace with its
//     service account, owned by its StatefulSet, as vcluster does, and
//     serves HTTPS on 8443: /healthz and /readyz to the kubelet's probes,
//     /version to a client presenting the admin certificate.
//
// It serves no Kubernetes API beyond /version: what Argo CD deploys into a
// virtual cluster is the Argo CD stand-in's to play.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

const (
	configFile   = "/var/lib/vcluster/config.yaml"
	binariesDir  = "/binaries"
	namespaceSA  = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	servingPort  = ":8443"
	clientCN     = "kube-admin"
	secretPrefix = "vc-"
)

func main() {
	var err error
	if filepath.Base(os.Args[0]) == "cp" {
		err = copyCommand(os.Args[1:])
	} else {
		err = run(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vcluster:", err)
		os.Exit(1)
	}
}

// copyCommand is `cp -r FROM/. TO/`: FROM's contents into TO.
func copyCommand(args []string) error {
	if len(args) != 3 || args[0] != "-r" {
		return fmt.Errorf("cp: want -r FROM TO, got %q", args)
	}
	from, to := filepath.Clean(strings.TrimSuffix(args[1], "/.")), filepath.Clean(args[2])
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// values is the part of vcluster.yaml this stand-in reads.
type values struct {
	ControlPlane struct {
		Distro struct {
			K8s struct {
				Enabled bool `json:"enabled"`
			} `json:"k8s"`
		} `json:"distro"`
	} `json:"controlPlane"`
	ExportKubeConfig struct {
		Server string `json:"server"`
	} `json:"exportKubeConfig"`
}

func run(ctx context.Context) error {
	name := os.Getenv("VCLUSTER_NAME")
	if name == "" {
		return errors.New("VCLUSTER_NAME is not set")
	}
	ns, err := os.ReadFile(namespaceSA)
	if err != nil {
		return fmt.Errorf("no service account namespace: %w", err)
	}
	namespace := strings.TrimSpace(string(ns))
	b, err := os.ReadFile(configFile)
	if err != nil {
		return err
	}
	var v values
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		return fmt.Errorf("%s: %w", configFile, err)
	}
	if !v.ControlPlane.Distro.K8s.Enabled {
		return fmt.Errorf("%s: controlPlane.distro.k8s.enabled is not true", configFile)
	}
	if v.ExportKubeConfig.Server == "" {
		return fmt.Errorf("%s: exportKubeConfig.server is not set", configFile)
	}
	copied, err := os.ReadDir(binariesDir)
	if err != nil {
		return fmt.Errorf("the Kubernetes binaries the init container copies: %w", err)
	}
	if len(copied) == 0 {
		return fmt.Errorf("%s holds no Kubernetes binaries (the init container copies them)", binariesDir)
	}

	hosts := []string{name, name + "." + namespace, name + "." + namespace + ".svc", name + "." + namespace + ".svc.cluster.local", "localhost"}
	if ip := os.Getenv("POD_IP"); ip != "" {
		hosts = append(hosts, ip)
	}
	pki, err := newPKI(hosts)
	if err != nil {
		return err
	}

	var ready atomic.Bool
	srv := &http.Server{
		Addr:              servingPort,
		Handler:           handler(&ready),
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{pki.serving},
			ClientCAs:    pki.pool,
			ClientAuth:   tls.VerifyClientCertIfGiven,
			MinVersion:   tls.VersionTLS12,
		},
	}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServeTLS("", "") }()

	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(ctx, kube, namespace, name, v.ExportKubeConfig.Server, pki); err != nil {
		return err
	}
	fmt.Printf("wrote kubeconfig Secret %s/%s%s for %s\n", namespace, secretPrefix, name, v.ExportKubeConfig.Server)
	ready.Store(true)
	return <-served
}

func handler(ready *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "kubeconfig not exported yet", http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != clientCN {
			http.Error(w, `{"kind":"Status","status":"Failure","reason":"Unauthorized","code":401}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"34","gitVersion":"v1.34.2","platform":"linux/amd64"}`)
	})
	return mux
}

type pki struct {
	caPEM, certPEM, keyPEM []byte
	serving                tls.Certificate
	pool                   *x509.CertPool
}

// newPKI makes a CA, a serving certificate for hosts and an admin client
// certificate, as vcluster makes its own at start.
func newPKI(hosts []string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vcluster-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, hosts []string) ([]byte, []byte, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn, Organization: []string{"system:masters"}},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		kb, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
	}
	servingCert, servingKey, err := issue(2, "vcluster", x509.ExtKeyUsageServerAuth, hosts)
	if err != nil {
		return nil, err
	}
	serving, err := tls.X509KeyPair(servingCert, servingKey)
	if err != nil {
		return nil, err
	}
	clientCert, clientKey, err := issue(3, clientCN, x509.ExtKeyUsageClientAuth, nil)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &pki{
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), certPEM: clientCert, keyPEM: clientKey,
		serving: serving, pool: pool,
	}, nil
}

// writeKubeconfig writes vc-<name> as vcluster does: created, or
// overwritten when it exists, owned by the StatefulSet so that it goes
// with it.
func writeKubeconfig(ctx context.Context, kube kubernetes.Interface, namespace, name, server string, p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["my-vcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos["my-vcluster"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.certPEM, ClientKeyData: p.keyPEM}
	cfg.Contexts["my-vcluster"] = &clientcmdapi.Context{Cluster: "my-vcluster", AuthInfo: "my-vcluster"}
	cfg.CurrentContext = "my-vcluster"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	sts, err := kube.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("its StatefulSet %s/%s: %w", namespace, name, err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: secretPrefix + name, Namespace: namespace,
			Labels:          map[string]string{"app": "vcluster", "vcluster-name": name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"config": out, "certificate-authority": p.caPEM, "client-certificate": p.certPEM, "client-key": p.keyPEM, "token": {},
		},
	}
	_, err = kube.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{})
	if kerrors.IsAlreadyExists(err) {
		_, err = kube.CoreV1().Secrets(namespace).Update(ctx, s, metav1.UpdateOptions{})
	}
	return err
}
