package reportedstate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetplane/fleetplane/apis"
	"github.com/fleetplane/fleetplane/apis/placement/m/v1alpha1"
	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

const reportedJSON = `{"replicas":2,"readyReplicas":2,"availableReplicas":2,"observedGeneration":3}`

// placement is the Placement web as Crossplane keeps it: selecting the
// Deployment web by name, wanting singleton reported state and composing
// the ReportedState web-status.
func placement(mutate ...func(map[string]any)) *unstructured.Unstructured {
	spec := map[string]any{
		"objects":                    []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "names": []any{"web"}}},
		"clusters":                   map[string]any{},
		"wantSingletonReportedState": true,
		"crossplane": map[string]any{"resourceRefs": []any{
			map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.ReportedStateKind, "name": "web-status"},
		}},
	}
	for _, m := range mutate {
		m(spec)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": placementv1alpha1.SchemeGroupVersion.String(), "kind": placementv1alpha1.PlacementKind,
		"metadata": map[string]any{"namespace": "team", "name": "web", "uid": "placement-uid"},
		"spec":     spec,
	}}
}

func deployment(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "team", "name": "web", "uid": "web-uid", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}},
		},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func reportedState(mutate ...func(*v1alpha1.ReportedState)) *v1alpha1.ReportedState {
	mg := &v1alpha1.ReportedState{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web-status", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: placementv1alpha1.SchemeGroupVersion.String(), Kind: placementv1alpha1.PlacementKind, Name: "web",
			UID: "placement-uid", Controller: new(true),
		}}},
		Spec: v1alpha1.ReportedStateSpec{ForProvider: v1alpha1.ReportedStateParameters{
			Placement: "web",
			Object:    v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "web-uid"},
			Cluster:   "wec1",
			Status:    extv1.JSON{Raw: []byte(reportedJSON)},
		}},
	}
	for _, m := range mutate {
		m(mg)
	}
	return mg
}

func mapper() apimeta.RESTMapper {
	m := apimeta.NewDefaultRESTMapper(nil)
	m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), apimeta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), apimeta.RESTScopeRoot)
	return m
}

func newExternal(t *testing.T, objs ...client.Object) (*external, client.Client) {
	t.Helper()
	s := runtime.NewScheme()
	// Placements stay unknown to the scheme, so that the fake keeps them
	// whole as unstructured objects, spec.crossplane included.
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.Managed.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	kube := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&appsv1.Deployment{}, &v1alpha1.ReportedState{}).Build()
	return &external{connector: &connector{read: kube, write: kube, mapper: mapper(), now: func() time.Time { return now }}, policy: deploymentsBack()}, kube
}

// deploymentsBack is a policy that lets Deployments' status come back.
func deploymentsBack() *tenancy.Placement {
	g := &tenancy.Grant{Kind: "ClusterProviderConfig", Name: "default", Placement: &fpv1alpha1.PlacementPolicy{
		Kinds: []string{"apps/*", "/*", "example.com/*"}, ReportedStateKinds: []string{"apps/Deployment", "/*", "example.com/*"},
	}}
	p, err := g.PlacementPolicy()
	if err != nil {
		panic(err)
	}
	return &p
}

func TestObserve(t *testing.T) {
	reported := map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2), "observedGeneration": int64(3)}
	written := func(mg *v1alpha1.ReportedState) {
		mg.Status.AtProvider = v1alpha1.ReportedStateObservation{UID: "web-uid", Reported: digestOf(reported), Digest: digestOf(reported)}
	}
	cases := map[string]struct {
		objects []client.Object
		mg      *v1alpha1.ReportedState
		policy  *tenancy.Placement
		want    managed.ExternalObservation
		message string
		err     string
	}{
		"a kind the policy does not let come back": {
			objects: []client.Object{placement(), deployment(nil)}, mg: reportedState(),
			policy: func() *tenancy.Placement {
				g := &tenancy.Grant{Kind: "ClusterProviderConfig", Name: "default", Placement: &fpv1alpha1.PlacementPolicy{Kinds: []string{"apps/*"}, ReportedStateKinds: []string{"batch/Job"}}}
				p, _ := g.PlacementPolicy()
				return &p
			}(),
			err: "the policy does not let namespace team have the status of Deployment.apps written back (spec.placement.reportedStateKinds",
		},
		"a status that differs is written": {
			objects: []client.Object{placement(), deployment(map[string]any{"replicas": int64(2)})}, mg: reportedState(),
			want: managed.ExternalObservation{ResourceExists: true, Diff: "status differs from what cluster wec1 reports"},
		},
		"the reported status is there": {
			objects: []client.Object{placement(), deployment(reported)}, mg: reportedState(),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "holds the status cluster wec1 reports",
		},
		"someone rewrote what it wrote: reported, not fought": {
			objects: []client.Object{placement(), deployment(map[string]any{"replicas": int64(5)})}, mg: reportedState(written),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "was rewritten after fleetplane wrote it",
		},
		"a new report is written over another writer's status": {
			objects: []client.Object{placement(), deployment(map[string]any{"replicas": int64(5)})},
			mg: reportedState(written, func(mg *v1alpha1.ReportedState) {
				mg.Spec.ForProvider.Status.Raw = []byte(`{"replicas":3}`)
			}),
			want: managed.ExternalObservation{ResourceExists: true, Diff: "status differs from what cluster wec1 reports"},
		},
		"the object is gone: nothing to write": {
			objects: []client.Object{placement()}, mg: reportedState(),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "does not exist",
		},
		"a newer object of the same name is left alone": {
			objects: []client.Object{placement(), deployment(nil)},
			mg:      reportedState(func(mg *v1alpha1.ReportedState) { mg.Spec.ForProvider.Object.UID = "old-uid" }),
			want:    managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "newer object",
		},
		"not its Placement's": {
			objects: []client.Object{placement(), deployment(nil)},
			mg:      reportedState(func(mg *v1alpha1.ReportedState) { mg.Spec.ForProvider.Placement = "other" }),
			err:     "Placement other is not its controller",
		},
		"a Placement that does not compose it": {
			objects: []client.Object{placement(func(s map[string]any) { delete(s, "crossplane") }), deployment(nil)}, mg: reportedState(),
			err: "does not compose this ReportedState",
		},
		"a newer Placement of the same name": {
			objects: []client.Object{placement(), deployment(nil)},
			mg:      reportedState(func(mg *v1alpha1.ReportedState) { mg.OwnerReferences[0].UID = "old-uid" }),
			err:     "newer object than the one that composed",
		},
		"a Placement that does not want singleton reported state": {
			objects: []client.Object{placement(func(s map[string]any) { s["wantSingletonReportedState"] = false }), deployment(nil)}, mg: reportedState(),
			err: "does not set spec.wantSingletonReportedState",
		},
		"an aggregate for a Placement that does not want one": {
			objects: []client.Object{placement(), deployment(nil)},
			mg: reportedState(func(mg *v1alpha1.ReportedState) {
				mg.Spec.ForProvider.Cluster, mg.Spec.ForProvider.Clusters = "", []string{"wec1", "wec2"}
			}),
			err: "does not set spec.wantMultiClusterReportedState",
		},
		"one cluster's status for a Placement that wants only aggregates": {
			objects: []client.Object{placement(func(s map[string]any) {
				s["wantSingletonReportedState"], s["wantMultiClusterReportedState"] = false, true
			}), deployment(nil)},
			mg:  reportedState(),
			err: "does not set spec.wantSingletonReportedState",
		},
		"an aggregate, written": {
			objects: []client.Object{placement(func(s map[string]any) { s["wantMultiClusterReportedState"] = true }), deployment(reported)},
			mg: reportedState(func(mg *v1alpha1.ReportedState) {
				mg.Spec.ForProvider.Cluster, mg.Spec.ForProvider.Clusters = "", []string{"wec1", "wec2"}
			}),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "holds the status its 2 clusters report, aggregated",
		},
		"an object the Placement does not select": {
			objects: []client.Object{placement(func(s map[string]any) {
				s["objects"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "matchLabels": map[string]any{"app": "api"}}}
			}), deployment(nil)},
			mg:  reportedState(),
			err: "Placement web does not select Deployment web",
		},
		"an object selected by label": {
			objects: []client.Object{placement(func(s map[string]any) {
				s["objects"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "matchLabels": map[string]any{"app": "web"}}}
			}), deployment(reported)},
			mg:   reportedState(),
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, message: "holds the status",
		},
		"a cluster-scoped kind": {
			objects: []client.Object{placement()},
			mg: reportedState(func(mg *v1alpha1.ReportedState) {
				mg.Spec.ForProvider.Object = v1alpha1.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "team"}
			}),
			err: "Namespace is cluster-scoped",
		},
		"a kind not served": {
			objects: []client.Object{placement()},
			mg: reportedState(func(mg *v1alpha1.ReportedState) {
				mg.Spec.ForProvider.Object = v1alpha1.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}
			}),
			err: "kind Widget of example.com/v1 is not served",
		},
		"a status too large": {
			objects: []client.Object{placement(), deployment(nil)},
			mg: reportedState(func(mg *v1alpha1.ReportedState) {
				mg.Spec.ForProvider.Status.Raw = []byte(`{"x":"` + strings.Repeat("a", v1alpha1.MaxStatusBytes) + `"}`)
			}),
			err: "more than the 65536 a ReportedState writes",
		},
		"a status that is not an object": {
			objects: []client.Object{placement(), deployment(nil)},
			mg:      reportedState(func(mg *v1alpha1.ReportedState) { mg.Spec.ForProvider.Status.Raw = []byte(`[1]`) }),
			err:     "not a JSON object",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := newExternal(t, tc.objects...)
			if tc.policy != nil {
				e.policy = tc.policy
			}
			got, err := e.Observe(context.Background(), tc.mg)
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

// TestWriteThenClear is the life of one ReportedState: it writes the
// reported status, finds it written, and on removal clears it; a status
// someone else wrote in between is not cleared.
func TestWriteThenClear(t *testing.T) {
	ctx := context.Background()
	e, kube := newExternal(t, placement(), deployment(map[string]any{"replicas": int64(1)}))
	mg := reportedState()
	if _, err := e.Observe(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	live := &appsv1.Deployment{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, live); err != nil {
		t.Fatal(err)
	}
	want := appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, ObservedGeneration: 3}
	if diff := cmp.Diff(want, live.Status); diff != "" {
		t.Errorf("status written (-want +got):\n%s", diff)
	}
	if at := mg.Status.AtProvider; at.UID != "web-uid" || at.Digest == "" || at.Reported == "" || !at.WrittenAt.Equal(&metav1.Time{Time: now}) {
		t.Errorf("atProvider = %+v", at)
	}
	if got, err := e.Observe(ctx, mg); err != nil || !got.ResourceUpToDate {
		t.Errorf("after the write: %+v, %v", got, err)
	}

	// Removal clears what it wrote.
	mg.SetDeletionTimestamp(&metav1.Time{Time: now})
	got, err := e.Observe(ctx, mg)
	if err != nil || !got.ResourceExists {
		t.Fatalf("being deleted with its status in place: %+v, %v", got, err)
	}
	if _, err := e.Delete(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, live); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(appsv1.DeploymentStatus{}, live.Status); diff != "" {
		t.Errorf("status after removal (-want +got):\n%s", diff)
	}
	if got, err := e.Observe(ctx, mg); err != nil || got.ResourceExists {
		t.Errorf("after clearing: %+v, %v", got, err)
	}
}

func TestDeleteLeavesAnotherWritersStatus(t *testing.T) {
	ctx := context.Background()
	e, _ := newExternal(t, placement(), deployment(map[string]any{"replicas": int64(7)}))
	mg := reportedState(func(mg *v1alpha1.ReportedState) {
		mg.Status.AtProvider = v1alpha1.ReportedStateObservation{UID: "web-uid", Reported: "r", Digest: "d"}
		mg.SetDeletionTimestamp(&metav1.Time{Time: now})
	})
	got, err := e.Observe(ctx, mg)
	if err != nil || got.ResourceExists {
		t.Errorf("a status it did not write is not its to clear: %+v, %v", got, err)
	}
}

func TestStatusWriters(t *testing.T) {
	u := deployment(nil)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: FieldOwner, Subresource: "status"},
		{Manager: "kube-controller-manager", Subresource: "status"},
	})
	if got := statusWriters(u); got != "kube-controller-manager" {
		t.Errorf("statusWriters = %q", got)
	}
	if got := statusWriters(deployment(nil)); got != "an unknown writer" {
		t.Errorf("statusWriters = %q", got)
	}
}

func TestKeptNamesWhatTheAPIServerKeeps(t *testing.T) {
	err := kerrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "migrate", field.ErrorList{
		field.Required(field.NewPath("status", "startTime"), "startTime cannot be removed for unsuspended job"),
		field.Invalid(field.NewPath("status", "conditions").Index(0).Child("type"), "x", "bad"),
		field.Invalid(field.NewPath("spec", "suspend"), true, "not status"),
	})
	status := map[string]any{"startTime": "2026-11-23T10:00:00Z", "active": int64(1), "conditions": []any{}}
	got := kept(err, status)
	want := map[string]any{"startTime": "2026-11-23T10:00:00Z", "conditions": []any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if got := kept(kerrors.NewConflict(schema.GroupResource{}, "x", nil), status); len(got) != 0 {
		t.Errorf("kept of a conflict = %v", got)
	}
}

func TestExecutingCount(t *testing.T) {
	ctx := context.Background()
	count := func(n int32) func(*v1alpha1.ReportedState) {
		return func(mg *v1alpha1.ReportedState) { mg.Spec.ForProvider.ExecutingCount = &n }
	}
	label := func(kube client.Client) (string, bool) {
		t.Helper()
		live := &appsv1.Deployment{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, live); err != nil {
			t.Fatal(err)
		}
		if _, ok := live.Annotations[placementv1alpha1.ExecutingCountLabel]; ok {
			t.Errorf("the count is an annotation too: %v", live.Annotations)
		}
		v, ok := live.Labels[placementv1alpha1.ExecutingCountLabel]
		return v, ok
	}
	reconcile := func(e *external, mg *v1alpha1.ReportedState) managed.ExternalObservation {
		t.Helper()
		if mg.ResourceVersion == "" {
			// Stored, as the reconciler's is: Update records the count
			// in its status before it writes the label.
			st := mg.Status
			if err := e.write.Create(ctx, mg); err != nil {
				t.Fatal(err)
			}
			mg.Status = st
		}
		got, err := e.Observe(ctx, mg)
		if err != nil {
			t.Fatal(err)
		}
		if got.ResourceExists && !got.ResourceUpToDate {
			if _, err := e.Update(ctx, mg); err != nil {
				t.Fatal(err)
			}
		}
		return got
	}

	t.Run("written beside the status, then changed alone", func(t *testing.T) {
		e, kube := newExternal(t, placement(), deployment(map[string]any{"replicas": int64(1)}))
		mg := reportedState(count(1))
		if got := reconcile(e, mg); !strings.Contains(got.Diff, "status") || !strings.Contains(got.Diff, "executing-count") {
			t.Errorf("first observation's diff %q names neither", got.Diff)
		}
		if v, _ := label(kube); v != "1" || mg.Status.AtProvider.ExecutingCount != "1" || mg.Status.AtProvider.Digest == "" {
			t.Fatalf("label %q, atProvider %+v", v, mg.Status.AtProvider)
		}
		if got := reconcile(e, mg); !got.ResourceUpToDate {
			t.Errorf("written, yet: %+v", got)
		}
		// The copy stops executing: only the label changes.
		mg.Spec.ForProvider.ExecutingCount = new(int32(0))
		written := mg.Status.AtProvider.WrittenAt
		if got := reconcile(e, mg); got.ResourceUpToDate || strings.Contains(got.Diff, "status") {
			t.Errorf("a new count alone: %+v", got)
		}
		if v, _ := label(kube); v != "0" || !mg.Status.AtProvider.WrittenAt.Equal(written) {
			t.Errorf("label %q, status rewritten at %v", v, mg.Status.AtProvider.WrittenAt)
		}

		// Removal takes it away with the status.
		mg.SetDeletionTimestamp(&metav1.Time{Time: now})
		if got, err := e.Observe(ctx, mg); err != nil || !got.ResourceExists {
			t.Fatalf("being deleted: %+v, %v", got, err)
		}
		if _, err := e.Delete(ctx, mg); err != nil {
			t.Fatal(err)
		}
		if v, ok := label(kube); ok {
			t.Errorf("label %q left after removal", v)
		}
	})

	t.Run("recorded before it is written", func(t *testing.T) {
		// crossplane-runtime stores the status once Update returns; the
		// ReportedState may be deleted before it does (its Placement
		// spread to a second cluster), and the label it wrote must still
		// go with it: the count is in its stored status before the label
		// is written.
		e, kube := newExternal(t, placement(), deployment(map[string]any{"replicas": int64(1)}))
		mg := reportedState(count(1))
		reconcile(e, mg)
		stored := &v1alpha1.ReportedState{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(mg), stored); err != nil {
			t.Fatal(err)
		}
		if v, _ := label(kube); v != "1" || stored.Status.AtProvider.ExecutingCount != "1" || stored.Status.AtProvider.UID != "web-uid" {
			t.Fatalf("label %q written, stored atProvider %+v", v, stored.Status.AtProvider)
		}
		// Deleted with what was stored, the in-memory status lost.
		stored.SetDeletionTimestamp(&metav1.Time{Time: now})
		if got, err := e.Observe(ctx, stored); err != nil || !got.ResourceExists {
			t.Fatalf("being deleted: %+v, %v", got, err)
		}
		if _, err := e.Delete(ctx, stored); err != nil {
			t.Fatal(err)
		}
		if v, ok := label(kube); ok {
			t.Errorf("label %q left behind", v)
		}
	})

	t.Run("no count asked, none written", func(t *testing.T) {
		e, kube := newExternal(t, placement(), deployment(nil))
		reconcile(e, reportedState())
		if v, ok := label(kube); ok {
			t.Errorf("label %q written though the spec has no count", v)
		}
	})

	t.Run("a value someone else wrote since is left", func(t *testing.T) {
		d := deployment(map[string]any{"replicas": int64(1)})
		d.SetLabels(map[string]string{placementv1alpha1.ExecutingCountLabel: "7", "team": "keeps this"})
		e, kube := newExternal(t, placement(), d)
		mg := reportedState(func(mg *v1alpha1.ReportedState) {
			mg.Status.AtProvider = v1alpha1.ReportedStateObservation{UID: "web-uid", ExecutingCount: "1"}
			mg.SetDeletionTimestamp(&metav1.Time{Time: now})
		})
		if got, err := e.Observe(ctx, mg); err != nil || got.ResourceExists {
			t.Errorf("a count it did not write is not its to clear: %+v, %v", got, err)
		}
		if v, _ := label(kube); v != "7" {
			t.Errorf("label %q", v)
		}
	})

	t.Run("the patch touches that one label", func(t *testing.T) {
		d := deployment(nil)
		d.SetLabels(map[string]string{"team": "keeps this"})
		d.SetAnnotations(map[string]string{"team": "keeps this too"})
		e, kube := newExternal(t, placement(), d)
		reconcile(e, reportedState(count(2)))
		live := &appsv1.Deployment{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, live); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"team": "keeps this", placementv1alpha1.ExecutingCountLabel: "2"}
		if diff := cmp.Diff(want, live.Labels); diff != "" || live.Spec.Template.Spec.Containers[0].Image != "nginx" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"team": "keeps this too"}, live.Annotations); diff != "" {
			t.Errorf("annotations (-want +got):\n%s", diff)
		}
	})

	// An object a provider before the label annotated: the annotation it
	// wrote (still holding the value its status records) moves to the
	// label; one holding another value is someone else's and stays.
	for _, tc := range []struct {
		name, annotated string
		wantAnnotation  bool
	}{{"its own annotation moves to the label", "1", false}, {"another writer's annotation stays", "5", true}} {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment(map[string]any{"replicas": int64(1)})
			d.SetAnnotations(map[string]string{placementv1alpha1.ExecutingCountLabel: tc.annotated})
			e, kube := newExternal(t, placement(), d)
			mg := reportedState(count(1), func(mg *v1alpha1.ReportedState) {
				mg.Status.AtProvider = v1alpha1.ReportedStateObservation{UID: "web-uid", ExecutingCount: "1"}
			})
			reconcile(e, mg)
			live := &appsv1.Deployment{}
			if err := kube.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, live); err != nil {
				t.Fatal(err)
			}
			_, annotated := live.Annotations[placementv1alpha1.ExecutingCountLabel]
			if live.Labels[placementv1alpha1.ExecutingCountLabel] != "1" || annotated != tc.wantAnnotation {
				t.Errorf("labels %v, annotations %v", live.Labels, live.Annotations)
			}
		})
	}
}
