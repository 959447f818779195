package expiry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func experiment() *expv1alpha1.Experiment {
	return &expv1alpha1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "exp", UID: "exp-uid"}}
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
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func TestObserve(t *testing.T) {
	newer := experiment()
	newer.UID = "newer-uid"
	notController := expiry("exp-uid", -time.Hour)
	notController.OwnerReferences[0].Name = "another"

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
	err := kube.Get(context.Background(), client.ObjectKey{Namespace: "lab", Name: "exp"}, &expv1alpha1.Experiment{})
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
