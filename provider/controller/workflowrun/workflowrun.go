// Package workflowrun reconciles WorkflowRuns: it submits one Argo
// Workflow per run name, from a WorkflowTemplate or, when the template is
// missing and the run allows it, as an inline suspend workflow, and copies
// the workflow's phase into status.
//
// A run is submitted at most once. The run name submitted is recorded in
// the external-name annotation, which survives a lost status: a Workflow
// that finished and was garbage-collected by Argo is not run again. A new
// run name is a new run.
//
// It acts on the control plane the provider runs on, within what the
// ClusterProviderConfig's spec.workflows grants the resource's namespace:
// the namespace Workflows run in and the templates they may run.
package workflowrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/workflow"
)

// Setup adds the WorkflowRun controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	c := &connector{read: mgr.GetAPIReader(), write: mgr.GetClient(), grants: shared.NewGrants(mgr.GetClient())}
	// No initializer: the external name is the run name submitted, set
	// only once it was. No creation grace period: reads go straight to
	// the API server, which is never behind a write.
	return shared.Managed(mgr, o, v1alpha1.WorkflowRunGroupVersionKind, &v1alpha1.WorkflowRun{}, c, shared.Options{
		Reconciler: []managed.ReconcilerOption{managed.WithInitializers(), managed.WithCreationGracePeriod(0)},
	})
}

type connector struct {
	read   client.Reader
	write  client.Client
	grants *shared.Grants
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.WorkflowRun) (managed.TypedExternalClient[*v1alpha1.WorkflowRun], error) {
	g, err := c.grants.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	p, err := g.WorkflowsPolicy()
	if err != nil {
		return nil, err
	}
	return &external{read: c.read, write: c.write, policy: p}, nil
}

type external struct {
	read   client.Reader
	write  client.Client
	policy fpv1alpha1.WorkflowsPolicy
	// owned are the Workflows this run submitted, found while deleting.
	owned []unstructured.Unstructured
}

// namespace is where the run's Workflows go: the policy's.
func (e *external) namespace() string { return e.policy.Namespace }

// allowed refuses a template the policy does not list.
func (e *external) allowed(mg *v1alpha1.WorkflowRun) error {
	if t := mg.Spec.ForProvider.WorkflowTemplateRef; !tenancy.TemplateAllowed(e.policy, t) {
		return fmt.Errorf("WorkflowTemplate %s is not one this namespace may run (ClusterProviderConfig spec.workflows.allowedTemplates)", t)
	}
	return nil
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.WorkflowRun) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return e.observeDeletion(ctx, mg)
	}
	p := mg.Spec.ForProvider
	ns := e.namespace()
	wf := &unstructured.Unstructured{}
	wf.SetGroupVersionKind(workflow.WorkflowGVK)
	err := e.read.Get(ctx, types.NamespacedName{Namespace: ns, Name: p.RunName}, wf)
	switch {
	case err == nil:
		if wf.GetLabels()[workflow.LabelOwnerUID] != string(mg.UID) {
			return managed.ExternalObservation{}, fmt.Errorf("Workflow %s/%s exists and was not submitted by this WorkflowRun", ns, p.RunName) //nolint:staticcheck // Workflow is a kind
		}
		pr := workflow.Read(wf)
		mg.Status.AtProvider = v1alpha1.WorkflowRunObservation{
			WorkflowName: p.RunName, Namespace: ns, Phase: pr.Phase, Message: pr.Message,
			StartedAt: pr.StartedAt, FinishedAt: pr.FinishedAt, Inline: pr.Inline,
		}
		mg.SetConditions(xpv2.Available())
		// A provider stopped between submitting and recording the
		// submission finds the Workflow here: record it now, so that the
		// run is not submitted again once Argo deletes the Workflow.
		recorded := meta.GetExternalName(mg) == p.RunName
		meta.SetExternalName(mg, p.RunName)
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: !recorded}, nil
	case apimeta.IsNoMatchError(err):
		return managed.ExternalObservation{}, errors.New("the cluster has no Argo Workflows (kind Workflow of argoproj.io/v1alpha1 is not served)")
	case !kerrors.IsNotFound(err):
		return managed.ExternalObservation{}, fmt.Errorf("cannot read Workflow %s/%s: %w", ns, p.RunName, err)
	}

	if meta.GetExternalName(mg) != p.RunName {
		return e.observeUnsubmitted(ctx, mg)
	}
	// Submitted before and gone since (Argo's TTL, or deleted by hand):
	// the outcome recorded stands and the run is not repeated.
	st := &mg.Status.AtProvider
	st.WorkflowName = p.RunName
	if st.Phase == "" || !workflow.Terminal(st.Phase) {
		st.Message = fmt.Sprintf("Workflow %s/%s no longer exists and its outcome was not recorded; a run is never submitted twice: set a new runName to run again", ns, p.RunName)
		mg.SetConditions(xpv2.Unavailable().WithMessage(st.Message))
	} else {
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("Workflow %s/%s no longer exists; its outcome, %s, stands", ns, p.RunName, st.Phase)))
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// observeUnsubmitted decides whether a run not submitted yet can be. A
// missing template fails a run that does not allow the inline workflow;
// the check is repeated each poll, so creating the template lets the run
// go ahead.
func (e *external) observeUnsubmitted(ctx context.Context, mg *v1alpha1.WorkflowRun) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	if err := e.allowed(mg); err != nil {
		// Not an error to retry: the run failed, as one whose template is
		// missing does, until the policy or the spec changes.
		msg := err.Error() + "; nothing was submitted"
		mg.Status.AtProvider = v1alpha1.WorkflowRunObservation{Phase: workflow.PhaseFailed, Message: msg}
		mg.SetConditions(xpv2.Unavailable().WithMessage(msg))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil //nolint:nilerr // reported in status, see above
	}
	found, err := e.templateExists(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if found || (p.OnMissingTemplate == v1alpha1.MissingTemplateSuspend && *e.policy.AllowInline) {
		mg.Status.AtProvider = v1alpha1.WorkflowRunObservation{}
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	msg := fmt.Sprintf("WorkflowTemplate %s/%s does not exist; nothing was submitted", e.namespace(), p.WorkflowTemplateRef)
	mg.Status.AtProvider = v1alpha1.WorkflowRunObservation{Phase: workflow.PhaseFailed, Message: msg}
	mg.SetConditions(xpv2.Unavailable().WithMessage(msg))
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

func (e *external) templateExists(ctx context.Context, mg *v1alpha1.WorkflowRun) (bool, error) {
	ns, name := e.namespace(), mg.Spec.ForProvider.WorkflowTemplateRef
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(workflow.WorkflowTemplateGVK)
	err := e.read.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, tmpl)
	switch {
	case err == nil:
		return true, nil
	case kerrors.IsNotFound(err):
		return false, nil
	case apimeta.IsNoMatchError(err):
		return false, errors.New("the cluster has no Argo Workflows (kind WorkflowTemplate of argoproj.io/v1alpha1 is not served)")
	}
	return false, fmt.Errorf("cannot read WorkflowTemplate %s/%s: %w", ns, name, err)
}

// observeDeletion finds every Workflow this run submitted, under any run
// name it had.
func (e *external) observeDeletion(ctx context.Context, mg *v1alpha1.WorkflowRun) (managed.ExternalObservation, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(workflow.WorkflowListGVK)
	err := e.read.List(ctx, list, client.InNamespace(e.namespace()), client.MatchingLabels{workflow.LabelOwnerUID: string(mg.UID)})
	if apimeta.IsNoMatchError(err) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if err != nil {
		return managed.ExternalObservation{}, fmt.Errorf("cannot list the Workflows of this run: %w", err)
	}
	for _, w := range list.Items {
		if w.GetDeletionTimestamp() == nil {
			e.owned = append(e.owned, w)
		}
	}
	// Workflows already being deleted are Argo's to finish.
	return managed.ExternalObservation{ResourceExists: len(e.owned) > 0}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.WorkflowRun) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	ns := e.namespace()
	sub := workflow.Submission{Name: p.RunName, Namespace: ns, Template: p.WorkflowTemplateRef, Labels: p.Labels, OwnerUID: string(mg.UID)}
	for _, q := range p.Parameters {
		sub.Parameters = append(sub.Parameters, workflow.Parameter{Name: q.Name, Value: q.Value})
	}

	if err := e.allowed(mg); err != nil {
		return managed.ExternalCreation{}, err
	}
	found, err := e.templateExists(ctx, mg)
	switch {
	case err != nil:
		return managed.ExternalCreation{}, err
	case !found && (p.OnMissingTemplate != v1alpha1.MissingTemplateSuspend || !*e.policy.AllowInline):
		return managed.ExternalCreation{}, fmt.Errorf("WorkflowTemplate %s/%s does not exist", ns, p.WorkflowTemplateRef)
	case !found:
		sub.Template = ""
	}
	if err := e.write.Create(ctx, sub.Workflow()); err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("cannot submit Workflow %s/%s: %w", ns, p.RunName, err)
	}
	// The reconciler persists the external name, not status, after
	// Create: it is the durable record that this run was submitted.
	meta.SetExternalName(mg, p.RunName)
	return managed.ExternalCreation{}, nil
}

// Update has nothing to do: a submitted Workflow is not changed.
func (e *external) Update(context.Context, *v1alpha1.WorkflowRun) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.WorkflowRun) (managed.ExternalDelete, error) {
	for i := range e.owned {
		w := &e.owned[i]
		uid := w.GetUID()
		err := e.write.Delete(ctx, w, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !kerrors.IsNotFound(err) {
			return managed.ExternalDelete{}, fmt.Errorf("cannot delete Workflow %s/%s: %w", w.GetNamespace(), w.GetName(), err)
		}
	}
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
