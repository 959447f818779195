package standin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GKE kinds the stand-in serves, with the stand-in CRDs of
// test/harness/standin/crds.
var (
	GKECluster          = schema.GroupVersionKind{Group: "container.gcp.m.upbound.io", Version: "v1beta1", Kind: "Cluster"}
	GKENodePool         = schema.GroupVersionKind{Group: "container.gcp.m.upbound.io", Version: "v1beta1", Kind: "NodePool"}
	GCPProjectIAMMember = schema.GroupVersionKind{Group: "cloudplatform.gcp.m.upbound.io", Version: "v1beta1", Kind: "ProjectIAMMember"}
	GCPNetwork          = schema.GroupVersionKind{Group: "compute.gcp.m.upbound.io", Version: "v1beta1", Kind: "Network"}
	GCPSubnetwork       = schema.GroupVersionKind{Group: "compute.gcp.m.upbound.io", Version: "v1beta1", Kind: "Subnetwork"}
)

// GKE plays provider-upjet-gcp for Networks, Subnetworks, Clusters,
// NodePools and ProjectIAMMembers: after a delay a Cluster is Ready with an
// endpoint, and its connection Secret holds the kubeconfig the real
// provider writes (server, CA, client certificate); a Subnetwork is Ready
// once its network exists, a Cluster naming a subnetwork once that
// exists, a NodePool once its cluster exists (GCP's 404 until then); a
// Network and an IAM member are Ready. A network or subnetwork in use by
// one that exists is not deleted (GCP's resourceInUseByAnotherResource). It keeps an inventory of "GCP"
// resources and the order they were deleted in.
type GKE struct {
	kube client.Client
	// ProvisionDelay is how long a cluster takes to come up.
	ProvisionDelay time.Duration

	mu       sync.Mutex
	first    map[string]time.Time
	external map[string]string // kind/name -> exists | deleted
	// uses maps kind/name to the kind/name it was made in (a subnetwork
	// its network, a cluster its subnetwork).
	uses    map[string]string
	deleted []string // kind/name in deletion order
	next    int
}

// NewGKE returns a GKE stand-in using kube.
func NewGKE(kube client.Client) *GKE {
	return &GKE{kube: kube, ProvisionDelay: time.Second, first: map[string]time.Time{}, external: map[string]string{}, uses: map[string]string{}}
}

// State is "exists", "deleted" or "" for a kind's resource.
func (g *GKE) State(kind, name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.external[kind+"/"+name]
}

// Deleted lists kind/name of deleted resources, first deleted first.
func (g *GKE) Deleted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.deleted)
}

// userOf is a resource that exists and was made in key, "" when none;
// g.mu is held.
func (g *GKE) userOf(key string) string {
	for user, used := range g.uses {
		if used == key && g.external[user] == "exists" {
			return user
		}
	}
	return ""
}

// Run reconciles until ctx is done.
func (g *GKE) Run(ctx context.Context) {
	every(ctx, func() {
		for _, gvk := range []schema.GroupVersionKind{GCPNetwork, GCPSubnetwork, GKECluster, GKENodePool, GCPProjectIAMMember} {
			items := list(ctx, g.kube, gvk, "")
			for i := range items {
				g.reconcile(ctx, &items[i])
			}
		}
	})
}

func externalName(mr *unstructured.Unstructured) string {
	if n := mr.GetAnnotations()["crossplane.io/external-name"]; n != "" {
		return n
	}
	return mr.GetName()
}

func (g *GKE) reconcile(ctx context.Context, mr *unstructured.Unstructured) {
	kind, name := mr.GetKind(), externalName(mr)
	key := kind + "/" + name
	if mr.GetDeletionTimestamp() != nil {
		g.mu.Lock()
		if user := g.userOf(key); user != "" {
			// GCP refuses to delete a network or subnetwork in use.
			g.mu.Unlock()
			setStatus(ctx, g.kube, mr, nil, false, fmt.Sprintf("delete failed: googleapi: Error 400: The %s resource '%s' is already being used by '%s', resourceInUseByAnotherResource", strings.ToLower(kind), name, user))
			return
		}
		if g.external[key] == "exists" {
			g.external[key] = "deleted"
			g.deleted = append(g.deleted, key)
		}
		g.mu.Unlock()
		removeFinalizer(ctx, g.kube, mr, finalizer)
		return
	}
	if !ensureFinalizer(ctx, g.kube, mr, finalizer) {
		return
	}
	g.mu.Lock()
	if _, ok := g.first[key]; !ok {
		g.first[key] = time.Now()
	}
	up := time.Since(g.first[key]) >= g.ProvisionDelay
	g.mu.Unlock()
	if !up {
		setStatus(ctx, g.kube, mr, nil, false, "")
		return
	}

	atProvider := map[string]any{"id": "projects/standin/locations/" + location(mr) + "/" + name}
	switch kind {
	case GCPNetwork.Kind:
		atProvider = map[string]any{"id": "projects/standin/global/networks/" + name, "selfLink": "https://www.googleapis.com/compute/v1/projects/standin/global/networks/" + name}
	case GCPSubnetwork.Kind:
		fp, _, _ := unstructured.NestedMap(mr.Object, "spec", "forProvider")
		network, _ := fp["network"].(string)
		if g.State(GCPNetwork.Kind, network) != "exists" {
			setStatus(ctx, g.kube, mr, nil, false, fmt.Sprintf("create failed: googleapi: Error 404: The resource 'projects/standin/global/networks/%s' was not found", network))
			return
		}
		region, _ := fp["region"].(string)
		atProvider = map[string]any{"id": "projects/standin/regions/" + region + "/subnetworks/" + name, "network": network, "region": region, "ipCidrRange": fp["ipCidrRange"]}
		g.use(key, GCPNetwork.Kind+"/"+network)
	case GKECluster.Kind:
		if sub, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "subnetwork"); sub != "" {
			if g.State(GCPSubnetwork.Kind, sub) != "exists" {
				setStatus(ctx, g.kube, mr, nil, false, fmt.Sprintf("create failed: googleapi: Error 404: subnetwork %q not found", sub))
				return
			}
			g.use(key, GCPSubnetwork.Kind+"/"+sub)
		}
		endpoint, err := g.publishKubeconfig(ctx, mr, name)
		if err != nil {
			setStatus(ctx, g.kube, mr, nil, false, err.Error())
			return
		}
		atProvider["endpoint"] = endpoint
	case GKENodePool.Kind:
		cluster, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "cluster")
		if g.State(GKECluster.Kind, cluster) != "exists" {
			setStatus(ctx, g.kube, mr, nil, false, fmt.Sprintf("create failed: googleapi: Error 404: cluster %q not found", cluster))
			return
		}
		n, _, _ := unstructured.NestedFieldNoCopy(mr.Object, "spec", "forProvider", "nodeCount")
		atProvider["nodeCount"] = n
	case GCPProjectIAMMember.Kind:
		fp, _, _ := unstructured.NestedStringMap(mr.Object, "spec", "forProvider")
		atProvider = map[string]any{"id": fp["project"] + "/" + fp["role"] + "/" + fp["member"], "project": fp["project"], "role": fp["role"], "member": fp["member"]}
	}
	g.mu.Lock()
	g.external[key] = "exists"
	g.mu.Unlock()
	setStatus(ctx, g.kube, mr, atProvider, true, "")
}

// use records that key was made in what it uses.
func (g *GKE) use(key, used string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.uses[key] = used
}

func location(mr *unstructured.Unstructured) string {
	l, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "location")
	return l
}

// publishKubeconfig writes the cluster's connection Secret once, as the
// upjet provider does: a kubeconfig with the cluster's CA and a client
// certificate. It returns the endpoint (an address, no scheme, as GKE
// reports it).
func (g *GKE) publishKubeconfig(ctx context.Context, mr *unstructured.Unstructured, name string) (string, error) {
	ref, _, _ := unstructured.NestedString(mr.Object, "spec", "writeConnectionSecretToRef", "name")
	existing, _, _ := unstructured.NestedString(mr.Object, "status", "atProvider", "endpoint")
	if existing != "" {
		return existing, nil
	}
	g.mu.Lock()
	g.next++
	endpoint := fmt.Sprintf("10.77.%d.%d", g.next/250, g.next%250+1)
	g.mu.Unlock()
	if ref == "" {
		return endpoint, nil
	}
	kc, err := kubeconfigFor(name, "https://"+endpoint)
	if err != nil {
		return "", err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: mr.GetNamespace(), Name: ref, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: mr.GetAPIVersion(), Kind: mr.GetKind(), Name: mr.GetName(), UID: mr.GetUID(),
		}}},
		Type: "connection.crossplane.io/v1alpha1",
		Data: map[string][]byte{"kubeconfig": kc},
	}
	if err := g.kube.Create(ctx, s); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	return endpoint, nil
}

// kubeconfigFor makes a CA and a client certificate it signed, and the
// kubeconfig that uses them.
func kubeconfigFor(name, server string) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + "-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	clientKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	clientTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	clientDER, err := x509.CreateCertificate(rand.Reader, clientTmpl, caCert, &clientKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		return nil, err
	}
	return clientcmd.Write(clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{name: {
			Server: server, CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{name: {
			ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clientDER}),
			ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		}},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: name}},
		CurrentContext: name,
	})
}
