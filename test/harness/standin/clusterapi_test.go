package standin

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestClusterAPIOwnsAsClusterAPIDoes: the stand-in, as Cluster API,
// becomes the controller of an unowned object and refuses one another
// controller owns (what a composed resource is: its XR's), so that an e2e
// composing the infrastructure cluster or control plane directly fails.
func TestClusterAPIOwnsAsClusterAPIDoes(t *testing.T) {
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(CAPICluster)
	cluster.SetNamespace("lab")
	cluster.SetName("c")
	cluster.SetUID(types.UID("cluster-uid"))
	obj := func(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(DockerCluster)
		o.SetNamespace("lab")
		o.SetName(name)
		o.SetOwnerReferences(owners)
		return o
	}
	yes := true
	free := obj("free")
	composed := obj("composed", metav1.OwnerReference{APIVersion: "experiments.fleetplane.io/v1alpha1", Kind: "Experiment", Name: "x", UID: "xr-uid", Controller: &yes})
	kube := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(free, composed).Build()
	c := NewClusterAPI(kube)

	if err := c.own(context.Background(), cluster, free); err != nil {
		t.Fatalf("an unowned object: %v", err)
	}
	if refs := free.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "cluster-uid" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("owners %v, want the Cluster as controller", refs)
	}
	if err := c.own(context.Background(), cluster, free); err != nil {
		t.Errorf("owning again: %v", err)
	}
	err := c.own(context.Background(), cluster, composed)
	if err == nil || !strings.Contains(err.Error(), "already owned by another Experiment controller x") {
		t.Errorf("an object an XR controls: %v, want Cluster API's refusal", err)
	}
}
