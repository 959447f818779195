package standin

import (
	"context"
	"sync"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Argo Workflows kinds.
var (
	Workflow         = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"}
	WorkflowTemplate = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "WorkflowTemplate"}
)

// OutcomeLabel on a WorkflowTemplate tells the stand-in how its workflows
// end: Succeeded (the default) or Failed.
const OutcomeLabel = "standin.fleetplane.io/outcome"

// Workflows plays the Argo Workflows controller: a Workflow turns Running,
// then ends as its template's OutcomeLabel says; a Workflow whose template
// does not exist ends in Error, as Argo's does; an inline workflow whose
// entry step suspends stays Running, waiting for a resume that never
// comes.
type Workflows struct {
	kube client.Client
	// RunFor is how long a workflow runs.
	RunFor time.Duration

	mu      sync.Mutex
	started map[types.UID]time.Time
}

// NewWorkflows returns an Argo Workflows stand-in using kube.
func NewWorkflows(kube client.Client) *Workflows {
	return &Workflows{kube: kube, RunFor: time.Second, started: map[types.UID]time.Time{}}
}

// Run reconciles until ctx is done.
func (w *Workflows) Run(ctx context.Context) {
	every(ctx, func() {
		wfs := list(ctx, w.kube, Workflow, "")
		for i := range wfs {
			w.reconcile(ctx, &wfs[i])
		}
	})
}

func (w *Workflows) reconcile(ctx context.Context, wf *unstructured.Unstructured) {
	phase, _, _ := unstructured.NestedString(wf.Object, "status", "phase")
	if wf.GetDeletionTimestamp() != nil || phase == "Succeeded" || phase == "Failed" || phase == "Error" {
		return
	}
	now := time.Now()
	w.mu.Lock()
	if _, ok := w.started[wf.GetUID()]; !ok {
		w.started[wf.GetUID()] = now
	}
	started := w.started[wf.GetUID()]
	w.mu.Unlock()
	status := map[string]any{"phase": "Running", "startedAt": started.UTC().Format(time.RFC3339)}

	outcome, message := "Succeeded", ""
	if ref, _, _ := unstructured.NestedString(wf.Object, "spec", "workflowTemplateRef", "name"); ref != "" {
		t := &unstructured.Unstructured{}
		t.SetGroupVersionKind(WorkflowTemplate)
		err := w.kube.Get(ctx, types.NamespacedName{Namespace: wf.GetNamespace(), Name: ref}, t)
		switch {
		case kerrors.IsNotFound(err):
			outcome, message = "Error", "workflowtemplates.argoproj.io \""+ref+"\" not found"
		case err != nil:
			return
		case t.GetLabels()[OutcomeLabel] == "Failed":
			outcome, message = "Failed", "child 'validate' failed"
		}
	} else if suspends(wf) {
		outcome = ""
	}
	if outcome != "" && now.Sub(started) >= w.RunFor {
		status["phase"] = outcome
		status["finishedAt"] = now.UTC().Format(time.RFC3339)
		if message != "" {
			status["message"] = message
		}
	}
	writeStatus(ctx, w.kube, wf, status, false)
}

// suspends reports whether an inline workflow's entry template is a
// suspend step.
func suspends(wf *unstructured.Unstructured) bool {
	entry, _, _ := unstructured.NestedString(wf.Object, "spec", "entrypoint")
	tmpls, _, _ := unstructured.NestedSlice(wf.Object, "spec", "templates")
	for _, t := range tmpls {
		m, _ := t.(map[string]any)
		if m["name"] == entry && m["suspend"] != nil {
			return true
		}
	}
	return false
}
