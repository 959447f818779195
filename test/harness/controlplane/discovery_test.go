package controlplane

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestDiscoveryRoundMissing: a provider may start only once discovery
// lists every served version of its kinds, not merely once their CRDs
// are established; a version that is not served is not waited for.
func TestDiscoveryRoundMissing(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"group": "kubernetes.crossplane.io",
		"names": map[string]any{"plural": "objects"},
		"versions": []any{
			map[string]any{"name": "v1alpha1", "served": false},
			map[string]any{"name": "v1alpha2", "served": true},
		},
	}}}
	list := func(gv string, plurals ...string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: gv}
		for _, p := range plurals {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: p})
		}
		return l
	}
	for name, tc := range map[string]struct {
		lists []*metav1.APIResourceList
		want  string
	}{
		"served":                        {lists: []*metav1.APIResourceList{list("kubernetes.crossplane.io/v1alpha2", "objects", "providerconfigs")}},
		"group version not listed yet":  {lists: []*metav1.APIResourceList{list("kubernetes.crossplane.io/v1alpha1", "objects")}, want: "lists no kubernetes.crossplane.io/v1alpha2 yet"},
		"the version lists other kinds": {lists: []*metav1.APIResourceList{list("kubernetes.crossplane.io/v1alpha2", "providerconfigs")}, want: "lists no objects yet"},
	} {
		t.Run(name, func(t *testing.T) {
			round := &discoveryRound{dc: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.lists}}}
			got := round.missing(crd)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("missing() = %q, want %q", got, tc.want)
			}
		})
	}
}
