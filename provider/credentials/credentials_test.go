// An external test package: it resolves grants through controller/shared,
// which itself imports credentials.
package credentials_test

import (
	"context"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/credentials"
)

func mr(kind, name string) *kustov1alpha1.Table {
	return &kustov1alpha1.Table{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "t"},
		Spec:       kustov1alpha1.TableSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: kind, Name: name}}},
	}
}

func secretPC(ns, name, secretNS, key string) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.Credentials{
			Source: xpv2.CredentialsSourceSecret,
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: "sp"}, Key: key,
			}},
		}},
	}
}

func TestResolve(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	sp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "sp"}, Data: map[string][]byte{
		"good": []byte(`{"tenantId":"t","clientId":"c","clientSecret":"s3cr3t"}`),
		"bad":  []byte(`{"clientId":"c","clientSecret":"s3cr3t"}`),
	}}
	other := sp.DeepCopy()
	other.Namespace = "team-b"
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sp, other,
		secretPC("team-a", "sp", "team-a", "good"),
		secretPC("team-a", "bad", "team-a", "bad"),
		secretPC("team-a", "elsewhere", "team-b", "good"),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"fleetplane.io/policy": "local"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-z", Labels: map[string]string{"fleetplane.io/policy": "azure"}}},
		&v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Spec: v1alpha1.ClusterProviderConfigSpec{Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}}},
		&v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "azure"}, Spec: v1alpha1.ClusterProviderConfigSpec{
			Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity},
			Azure:       &v1alpha1.AzurePolicy{AllowedManagedIdentityClientIDs: []string{"11111111-1111-1111-1111-111111111111"}},
		}},
	).Build()
	r := &credentials.Resolver{Kube: kube}
	ctx := context.Background()
	resolve := func(mg *kustov1alpha1.Table) (*credentials.Source, error) {
		g, err := shared.Resolve(ctx, kube, mg)
		if err != nil {
			return nil, err
		}
		return r.Resolve(ctx, mg, g)
	}

	s, err := resolve(mr("ProviderConfig", "sp"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Credential(""); err != nil || c == nil {
		t.Errorf("service principal credential = %v, %v", c, err)
	}
	if _, err := s.Credential("11111111-1111-1111-1111-111111111111"); err == nil {
		t.Error("a namespace's service principal cannot ask for one of the provider's identities")
	}

	for name, tc := range map[string]struct {
		kind, name, want string
	}{
		"secret lacking tenantId":     {"ProviderConfig", "bad", "must hold JSON with tenantId"},
		"secret of another namespace": {"ProviderConfig", "elsewhere", "may not read a Secret in namespace team-b"},
		"a config not governing it":   {"ClusterProviderConfig", "nope", "is governed by ClusterProviderConfig local, not by nope"},
		"unknown kind":                {"Other", "x", "neither ProviderConfig nor ClusterProviderConfig"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := resolve(mr(tc.kind, tc.name))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Error("an error must never carry the secret")
			}
		})
	}

	s, err = resolve(mr("ClusterProviderConfig", "local"))
	if err != nil || !s.Anonymous() {
		t.Fatalf("None: %v", err)
	}
	if c, err := s.Credential(""); err != nil || c != nil {
		t.Errorf("None must give no credential: %v, %v", c, err)
	}
	inZ := mr("ClusterProviderConfig", "azure")
	inZ.Namespace = "team-z"
	s, err = resolve(inZ)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Credential("11111111-1111-1111-1111-111111111111")
	b, _ := s.Credential("11111111-1111-1111-1111-111111111111")
	if a == nil || a != b {
		t.Error("injected credentials are built once per identity and reused")
	}
	if _, err := s.Credential("33333333-3333-3333-3333-333333333333"); err == nil || !strings.Contains(err.Error(), "is not among the identities") {
		t.Errorf("an identity the admin did not list: %v", err)
	}
}
