// Package workflow builds the Argo Workflows a WorkflowRun submits and
// reads back their progress. Workflow objects are handled unstructured:
// fleetplane does not link Argo's Go module, only speaks its API.
package workflow

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/internal/observe"
)

// Kinds of Argo Workflows.
var (
	WorkflowGVK         = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"}
	WorkflowListGVK     = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "WorkflowList"}
	WorkflowTemplateGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "WorkflowTemplate"}
)

// LabelOwnerUID carries the UID of the WorkflowRun that submitted a
// Workflow: a Workflow without it is never adopted or deleted.
const LabelOwnerUID = "workflows.fleetplane.io/owner-uid"

// AnnotationInline marks a Workflow run in place of a missing template.
const AnnotationInline = "workflows.fleetplane.io/inline"

// Phases of an Argo Workflow.
const (
	PhasePending   = "Pending"
	PhaseRunning   = "Running"
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
	PhaseError     = "Error"
)

// Terminal reports whether a workflow in phase will not change again.
func Terminal(phase string) bool {
	return phase == PhaseSucceeded || phase == PhaseFailed || phase == PhaseError
}

// Parameter is one workflow argument.
type Parameter struct{ Name, Value string }

// Submission is one Workflow to create.
type Submission struct {
	Name, Namespace string
	// Template is the WorkflowTemplate to run; empty runs the inline
	// suspend workflow.
	Template   string
	Parameters []Parameter
	Labels     map[string]string
	OwnerUID   string
}

// suspendStep is the inline workflow's only step: it waits until someone
// runs `argo resume`.
const suspendStep = "await-resume"

// Workflow renders the submission. Parameters keep their order.
func (s Submission) Workflow() *unstructured.Unstructured {
	params := make([]any, len(s.Parameters))
	for i, p := range s.Parameters {
		params[i] = map[string]any{"name": p.Name, "value": p.Value}
	}
	spec := map[string]any{}
	if len(params) > 0 {
		spec["arguments"] = map[string]any{"parameters": params}
	}
	labels := map[string]any{}
	for k, v := range s.Labels {
		labels[k] = v
	}
	labels[LabelOwnerUID] = s.OwnerUID
	md := map[string]any{"name": s.Name, "namespace": s.Namespace, "labels": labels}
	if s.Template != "" {
		spec["workflowTemplateRef"] = map[string]any{"name": s.Template}
	} else {
		spec["entrypoint"] = suspendStep
		spec["templates"] = []any{map[string]any{"name": suspendStep, "suspend": map[string]any{}}}
		md["annotations"] = map[string]any{AnnotationInline: "true"}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": md, "spec": spec}}
	u.SetGroupVersionKind(WorkflowGVK)
	return u
}

// Progress is what a Workflow says about itself.
type Progress struct {
	Phase                 string
	Message               string
	StartedAt, FinishedAt *metav1.Time
	Inline                bool
}

// Read reads a Workflow's progress. A Workflow the controller has not
// picked up yet has no phase: it is Pending. The object comes from the
// cluster, where anyone allowed to edit Workflows can write its status,
// so unknown phases and oversized messages are not passed on as they are.
func Read(u *unstructured.Unstructured) Progress {
	p := Progress{Inline: u.GetAnnotations()[AnnotationInline] == "true"}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	switch phase {
	case "":
		p.Phase = PhasePending
	case PhasePending, PhaseRunning, PhaseSucceeded, PhaseFailed, PhaseError:
		p.Phase = phase
	default:
		p.Phase = PhaseRunning
		p.Message = observe.Bound(fmt.Sprintf("unrecognised workflow phase %q", phase))
	}
	if msg, _, _ := unstructured.NestedString(u.Object, "status", "message"); msg != "" && p.Message == "" {
		p.Message = observe.Bound(msg)
	}
	p.StartedAt = timeAt(u, "startedAt")
	p.FinishedAt = timeAt(u, "finishedAt")
	return p
}

func timeAt(u *unstructured.Unstructured, field string) *metav1.Time {
	s, _, _ := unstructured.NestedString(u.Object, "status", field)
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil
	}
	return &metav1.Time{Time: t}
}
