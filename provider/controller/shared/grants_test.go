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
	kustoGrant := &v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{{Endpoint: "https://team-a.kusto.windows.net"}}}
	policy := func(name string) map[string]string { return map[string]string{"fleetplane.io/policy": name} }
	k := kube(t,
		namespace("team-a", nil),
		namespace("ops", map[string]string{"fleetplane.io/tenant": "platform", "fleetplane.io/policy": "platform-only"}),
		namespace("team-c", policy("platform-only")),
		namespace("team-d", policy("missing")),
		namespace("team-e", policy("broken-selector")),
		cluster("default", everyone, v1alpha1.ClusterProviderConfigSpec{Kusto: kustoGrant}),
		cluster("platform-only", platform, v1alpha1.ClusterProviderConfigSpec{ArgoCD: &v1alpha1.ArgoCDPolicy{Project: "platform"}}),
		cluster("broken-selector", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}, v1alpha1.ClusterProviderConfigSpec{}),
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "own"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-d", Name: "own"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone}}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "borrow"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.Credentials{Source: xpv2.CredentialsSourceInjectedIdentity}}},
	)
	cases := map[string]struct {
		mg        *kustov1alpha1.Heartbeat
		want      string
		wantArgo  bool
		wantKusto bool
	}{
		"a namespace's own ProviderConfig, with the governing config's endpoints": {mg: mr("team-a", "ProviderConfig", "own"), wantKusto: true},
		"a namespace's own ProviderConfig where nothing governs: no endpoints":    {mg: mr("team-d", "ProviderConfig", "own")},
		"the default config, governing a namespace without a label":               {mg: mr("team-a", "ClusterProviderConfig", "default"), wantKusto: true},
		"the config the namespace's label names":                                  {mg: mr("ops", "ClusterProviderConfig", "platform-only"), wantArgo: true},
		"another config, even one whose selector selects the namespace": {
			mg: mr("ops", "ClusterProviderConfig", "default"), want: "namespace ops is governed by ClusterProviderConfig platform-only, not by default",
		},
		"a config the namespace is not governed by": {
			mg: mr("team-a", "ClusterProviderConfig", "platform-only"), want: "namespace team-a is governed by ClusterProviderConfig default, not by platform-only",
		},
		"the governing config, whose selector does not select it": {
			mg: mr("team-c", "ClusterProviderConfig", "platform-only"), want: "ClusterProviderConfig platform-only does not grant namespace team-c",
		},
		"a governing config that does not exist": {
			mg: mr("team-d", "ClusterProviderConfig", "missing"), want: "governed by ClusterProviderConfig missing (the namespace's label fleetplane.io/policy), which does not exist",
		},
		"a namespaced config borrowing the provider's identity": {
			mg: mr("team-a", "ProviderConfig", "borrow"), want: "only a ClusterProviderConfig grants",
		},
		"another namespace's ProviderConfig is not found": {
			mg: mr("ops", "ProviderConfig", "own"), want: "cannot get ProviderConfig ops/own",
		},
		"an invalid selector grants nothing": {mg: mr("team-e", "ClusterProviderConfig", "broken-selector"), want: "invalid namespaceSelector"},
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
			if err := g.KustoDatabase("spec", "https://team-a.kusto.windows.net", "db"); (err == nil) != tc.wantKusto {
				t.Errorf("Kusto endpoint granted = %v (%v), want %v", err == nil, err, tc.wantKusto)
			}
		})
	}
}
