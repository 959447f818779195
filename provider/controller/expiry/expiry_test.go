package expiry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetplane/fleetplane/apis"
	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// experiment is the Experiment exp as Crossplane keeps it: composing the
// Expiry exp-expiry. Unstructured, since its Go type has no field for
// Crossplane's spec.crossplane.
func experiment() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": expv1alpha1.SchemeGroupVersion.String(), "kind": expv1alpha1.ExperimentKind,
		"metadata": map[string]any{"namespace": "lab", "name": "exp", "uid": "exp-uid"},
		"spec": map[string]any{"crossplane": map[string]any{"resourceRefs": []any{
			map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.ExpiryKind, "name": "exp-expiry"},
		}}},
	}}
	return u
}

// expiry of the Experiment exp, composed by the object with ownerUID, due
// at now+in.
func expiry(ownerUID string, in time.Duration) *v1alpha1.Expiry {
	return &v1alpha1.Expiry{
		ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "exp-expiry", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: expv1alpha1.SchemeGroupVersion.String(), Kind: expv1alpha1.ExperimentKind, Name: "exp",
			UID: "exp-uid", Controller: new(true),
		}}},
		Spec: v1alpha1.ExpirySpec{ForProvider: v1alpha1.ExpiryParameters{
			Target:    v1alpha1.ObjectRef{APIVersion: expv1alpha1.SchemeGroupVersion.String(), Kind: expv1alpha1.ExperimentKind, Name: "exp", UID: ownerUID},
			ExpiresAt: metav1.Time{Time: now.Add(in)},
		}},
	}
}

func newKube(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	// The composite kinds stay unknown to the scheme, so that the fake
	// keeps them whole as unstructured objects, spec.crossplane included.
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.Managed.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func TestObserve(t *testing.T) {
	newer := experiment()
	newer.SetUID("newer-uid")
	notController := expiry("exp-uid", -time.Hour)
	notController.OwnerReferences[0].Name = "another"
	notComposing := experiment()
	_ = unstructured.SetNestedSlice(notComposing.Object, nil, "spec", "crossplane", "resourceRefs")
	configMapTarget := expiry("exp-uid", -time.Hour)
	configMapTarget.Spec.ForProvider.Target = v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Name: "exp"}
	configMapTarget.OwnerReferences[0] = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "exp", UID: "exp-uid", Controller: new(true)}

	cases := map[string]struct {
		objects []client.Object
		mg      *v1alpha1.Expiry
		want    managed.ExternalObservation
		message string
		err     string
	}{
		"not due": {
			objects: []client.Object{experiment()}, mg: expiry("exp-uid", time.Hour),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "expires at 2026-11-22T13:00:00Z",
		},
		"due: delete it": {
			objects: []client.Object{experiment()}, mg: expiry("exp-uid", -time.Second),
			want: managed.ExternalObservation{ResourceExists: true, Diff: "expired"},
		},
		"already gone": {
			mg:   expiry("exp-uid", -time.Hour),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "no longer exists",
		},
		"a newer object of the same name is left alone": {
			objects: []client.Object{newer}, mg: expiry("exp-uid", -time.Hour),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "is a newer object",
		},
		"a target that is not its controller is refused": {
			objects: []client.Object{experiment()}, mg: notController,
			err: "deletes only the composite resource that composed it",
		},
		"an Experiment that does not compose it is refused": {
			objects: []client.Object{notComposing}, mg: expiry("exp-uid", -time.Hour),
			err: "does not compose this Expiry",
		},
		"a ConfigMap, even one that claims to own it, is refused": {
			objects: []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "exp", UID: "exp-uid"}}}, mg: configMapTarget,
			err: "deletes only fleetplane's composite resources that compose it (Experiment.experiments.fleetplane.io); ConfigMap is not one",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := newKube(t, tc.objects...)
			got, err := (&external{read: kube, write: kube, now: clock}).Observe(context.Background(), tc.mg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
			if c := tc.mg.GetCondition(xpv2.TypeReady); !strings.Contains(c.Message, tc.message) {
				t.Errorf("Ready message %q, want it to mention %q", c.Message, tc.message)
			}
		})
	}
}

func TestUpdateDeletesTheTarget(t *testing.T) {
	kube := newKube(t, experiment())
	mg := expiry("exp-uid", -time.Second)
	e := &external{read: kube, write: kube, now: clock}
	if _, err := e.Observe(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	err := kube.Get(context.Background(), client.ObjectKey{Namespace: "lab", Name: "exp"}, experiment())
	if !kerrors.IsNotFound(err) {
		t.Errorf("the expired experiment still exists: %v", err)
	}
	if at := mg.Status.AtProvider; !at.Deleted || !at.DeletedAt.Equal(&metav1.Time{Time: now}) {
		t.Errorf("atProvider = %+v", at)
	}
	if _, err := e.Delete(context.Background(), mg); err != nil {
		t.Errorf("deleting an Expiry deletes nothing and cannot fail: %v", err)
	}
}
