package shared

import (
	"context"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetplane/fleetplane/apis"
	kustov1alpha1 "github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

func mr(ns, kind, name string) *kustov1alpha1.Heartbeat {
	return &kustov1alpha1.Heartbeat{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hb"},
		Spec:       kustov1alpha1.HeartbeatSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: kind, Name: name}}},
	}
}

func cluster(name string, sel metav1.LabelSelector, spec v1alpha1.ClusterProviderConfigSpec) *v1alpha1.ClusterProviderConfig {
	spec.NamespaceSelector = sel
	if spec.Credentials.Source == "" {
		spec.Credentials.Source = xpv2.CredentialsSourceInjectedIdentity
	}
	return &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func kube(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func TestResolve(t *testing.T) {
	everyone := metav1.LabelSelector{}
	platform := metav1.LabelSelector{MatchLabels: map[string]string{"fleetplane.io/tenant": "platform"}}
	k := kube(t,
		namespace("team-a", nil), namespace("ops", map[string]string{"fleetplane.io/tenant": "platform"}),
		cluster("shared", everyone, v1alpha1.ClusterProviderConfigSpec{}),
		cluster("platform-only", platform, v1alpha1.ClusterProviderConfigSpec{ArgoCD: &v1alpha1.ArgoCDPolicy{Project: "platform"}}),
		cluster("broken-selector", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}, v1alpha1.ClusterProviderConfigSpec{}),
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "own"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "borrow"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity}}},
	)
	cases := map[string]struct {
		mg       *kustov1alpha1.Heartbeat
		want     string
		wantArgo bool
	}{
		"a namespace's own ProviderConfig":              {mg: mr("team-a", "ProviderConfig", "own")},
		"a ClusterProviderConfig shared with everyone":  {mg: mr("team-a", "ClusterProviderConfig", "shared")},
		"a ClusterProviderConfig granted to the tenant": {mg: mr("ops", "ClusterProviderConfig", "platform-only"), wantArgo: true},
		"one not granted to it": {
			mg: mr("team-a", "ClusterProviderConfig", "platform-only"), want: "ClusterProviderConfig platform-only does not grant namespace team-a",
		},
		"a namespaced config borrowing the provider's identity": {
			mg: mr("team-a", "ProviderConfig", "borrow"), want: "only a ClusterProviderConfig grants",
		},
		"another namespace's ProviderConfig is not found": {
			mg: mr("ops", "ProviderConfig", "own"), want: "cannot get ProviderConfig ops/own",
		},
		"an invalid selector grants nothing": {mg: mr("team-a", "ClusterProviderConfig", "broken-selector"), want: "invalid namespaceSelector"},
		"no reference":                       {mg: mr("team-a", "", ""), want: "names no ProviderConfig"},
		"another kind":                       {mg: mr("team-a", "Secret", "x"), want: "neither ProviderConfig nor ClusterProviderConfig"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := Resolve(context.Background(), k, tc.mg)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.ArgoCDPolicy(); (err == nil) != tc.wantArgo {
				t.Errorf("Argo CD granted = %v, want %v", err == nil, tc.wantArgo)
			}
		})
	}
}
