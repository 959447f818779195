package workflowrun

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetplane/fleetplane/apis"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/workflow"
)

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

func run(onMissing v1alpha1.MissingTemplate) *v1alpha1.WorkflowRun {
	return &v1alpha1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "validation", UID: "run-uid"},
		Spec: v1alpha1.WorkflowRunSpec{ForProvider: v1alpha1.WorkflowRunParameters{
			WorkflowTemplateRef: "checks", RunName: "lab-exp-validation-1",
			Parameters:        []v1alpha1.Parameter{{Name: "b", Value: "2"}, {Name: "a", Value: "1"}},
			OnMissingTemplate: onMissing, Labels: map[string]string{"team": "a"},
		}},
	}
}

// policy is the ClusterProviderConfig's spec.workflows these tests run
// under.
var policy = fpv1alpha1.WorkflowsPolicy{Namespace: "argo", AllowedTemplates: []string{"checks"}, AllowInline: new(true)}

func newExternal(kube client.Client) *external {
	return &external{read: kube, write: kube, policy: policy}
}

func submitted(r *v1alpha1.WorkflowRun) *v1alpha1.WorkflowRun {
	meta.SetExternalName(r, r.Spec.ForProvider.RunName)
	return r
}

func otherTemplate(r *v1alpha1.WorkflowRun) *v1alpha1.WorkflowRun {
	r.Spec.ForProvider.WorkflowTemplateRef = "mine-steal-secrets"
	return r
}

func template() client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workflow.WorkflowTemplateGVK)
	u.SetNamespace("argo")
	u.SetName("checks")
	return u
}

func workflowObj(ownerUID, phase string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workflow.WorkflowGVK)
	u.SetNamespace("argo")
	u.SetName("lab-exp-validation-1")
	u.SetLabels(map[string]string{workflow.LabelOwnerUID: ownerUID})
	if phase != "" {
		_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
	}
	return u
}

func TestObserve(t *testing.T) {
	lostRunning := submitted(run(v1alpha1.MissingTemplateFail))
	lostRunning.Status.AtProvider.Phase = workflow.PhaseRunning
	lostDone := submitted(run(v1alpha1.MissingTemplateFail))
	lostDone.Status.AtProvider.Phase = workflow.PhaseSucceeded

	cases := map[string]struct {
		objects   []client.Object
		mg        *v1alpha1.WorkflowRun
		want      managed.ExternalObservation
		err       string
		phase     string
		available corev1.ConditionStatus
	}{
		"template exists, not submitted: submit": {
			objects: []client.Object{template()}, mg: run(v1alpha1.MissingTemplateFail),
			want: managed.ExternalObservation{ResourceExists: false},
		},
		"template missing, Fail: nothing submitted, run failed": {
			mg:    run(v1alpha1.MissingTemplateFail),
			want:  managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			phase: workflow.PhaseFailed, available: corev1.ConditionFalse,
		},
		"template missing, Suspend: submit the inline workflow": {
			mg:   run(v1alpha1.MissingTemplateSuspend),
			want: managed.ExternalObservation{ResourceExists: false},
		},
		"submitted: its phase": {
			objects: []client.Object{workflowObj("run-uid", workflow.PhaseRunning)}, mg: submitted(run(v1alpha1.MissingTemplateFail)),
			want:  managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			phase: workflow.PhaseRunning, available: corev1.ConditionTrue,
		},
		"submitted, but the provider stopped before recording it: recorded now": {
			objects: []client.Object{workflowObj("run-uid", workflow.PhaseRunning)}, mg: run(v1alpha1.MissingTemplateFail),
			want:  managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
			phase: workflow.PhaseRunning, available: corev1.ConditionTrue,
		},
		"a Workflow of that name someone else submitted": {
			objects: []client.Object{workflowObj("other-uid", "")}, mg: run(v1alpha1.MissingTemplateFail),
			err: "was not submitted by this WorkflowRun",
		},
		"a template the admin did not allow: refused, nothing submitted": {
			objects: []client.Object{template()}, mg: otherTemplate(run(v1alpha1.MissingTemplateFail)),
			want:  managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			phase: workflow.PhaseFailed, available: corev1.ConditionFalse,
		},
		"finished and garbage-collected: the outcome stands": {
			mg:   lostDone,
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, phase: workflow.PhaseSucceeded, available: corev1.ConditionTrue,
		},
		"gone before it finished: never resubmitted": {
			mg:   lostRunning,
			want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, phase: workflow.PhaseRunning, available: corev1.ConditionFalse,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := newKube(t, tc.objects...)
			got, err := newExternal(kube).Observe(context.Background(), tc.mg)
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
			if got.ResourceExists && tc.phase != workflow.PhaseFailed && meta.GetExternalName(tc.mg) != tc.mg.Spec.ForProvider.RunName {
				t.Errorf("external name = %q: a submitted run must be recorded", meta.GetExternalName(tc.mg))
			}
			if tc.mg.Status.AtProvider.Phase != tc.phase {
				t.Errorf("phase = %q, want %q", tc.mg.Status.AtProvider.Phase, tc.phase)
			}
			if c := tc.mg.GetCondition(xpv2.TypeReady); tc.available != "" && c.Status != tc.available {
				t.Errorf("Ready = %s %q, want %s", c.Status, c.Message, tc.available)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		objects      []client.Object
		onMissing    v1alpha1.MissingTemplate
		noInline     bool
		wantTemplate string
		err          string
	}{
		"from the template, parameters in order":                    {objects: []client.Object{template()}, onMissing: v1alpha1.MissingTemplateFail, wantTemplate: "checks"},
		"inline when the template is missing and the run allows it": {onMissing: v1alpha1.MissingTemplateSuspend},
		"refused when the template is missing":                      {onMissing: v1alpha1.MissingTemplateFail, err: "WorkflowTemplate argo/checks does not exist"},
		"refused when the policy does not allow inline runs":        {onMissing: v1alpha1.MissingTemplateSuspend, noInline: true, err: "WorkflowTemplate argo/checks does not exist"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := newKube(t, tc.objects...)
			mg := run(tc.onMissing)
			e := newExternal(kube)
			if tc.noInline {
				e.policy.AllowInline = new(false)
			}
			_, err := e.Create(context.Background(), mg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error = %v, want %q", err, tc.err)
				}
				if meta.GetExternalName(mg) != "" {
					t.Error("a run not submitted must not be recorded as submitted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if meta.GetExternalName(mg) != "lab-exp-validation-1" {
				t.Errorf("external name %q: the durable record of the submission", meta.GetExternalName(mg))
			}
			wf := &unstructured.Unstructured{}
			wf.SetGroupVersionKind(workflow.WorkflowGVK)
			if err := kube.Get(context.Background(), types.NamespacedName{Namespace: "argo", Name: "lab-exp-validation-1"}, wf); err != nil {
				t.Fatal(err)
			}
			if wf.GetLabels()[workflow.LabelOwnerUID] != "run-uid" || wf.GetLabels()["team"] != "a" {
				t.Errorf("labels %v", wf.GetLabels())
			}
			ref, _, _ := unstructured.NestedString(wf.Object, "spec", "workflowTemplateRef", "name")
			if ref != tc.wantTemplate {
				t.Errorf("workflowTemplateRef = %q, want %q", ref, tc.wantTemplate)
			}
			params, _, _ := unstructured.NestedSlice(wf.Object, "spec", "arguments", "parameters")
			if len(params) != 2 || params[0].(map[string]any)["name"] != "b" {
				t.Errorf("parameters %v, want b then a, as given", params)
			}
		})
	}
}

func TestDeleteRemovesOnlyItsWorkflows(t *testing.T) {
	other := workflowObj("other-uid", "").(*unstructured.Unstructured)
	other.SetName("not-mine")
	kube := newKube(t, workflowObj("run-uid", workflow.PhaseSucceeded), other)
	mg := submitted(run(v1alpha1.MissingTemplateFail))
	now := metav1.Now()
	mg.DeletionTimestamp = &now
	e := newExternal(kube)
	o, err := e.Observe(context.Background(), mg)
	if err != nil || !o.ResourceExists {
		t.Fatalf("Observe while deleting = %+v, %v; want its workflow found", o, err)
	}
	if _, err := e.Delete(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(workflow.WorkflowListGVK)
	if err := kube.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "not-mine" {
		t.Errorf("workflows left: %d, want only the one this run did not submit", len(list.Items))
	}
}
