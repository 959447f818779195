package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Parameter is a workflow argument.
type Parameter struct {
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// MissingTemplate says what to do when the WorkflowTemplate does not exist.
// +kubebuilder:validation:Enum=Fail;Suspend
type MissingTemplate string

// What to do without a template.
const (
	// MissingTemplateFail reports the run as failed.
	MissingTemplateFail MissingTemplate = "Fail"
	// MissingTemplateSuspend runs a workflow with one suspend step, to be
	// resumed by hand (argo resume).
	MissingTemplateSuspend MissingTemplate = "Suspend"
)

// WorkflowRunParameters are the desired run. The namespace it runs in and
// the templates it may run come from the ClusterProviderConfig
// (spec.workflows), never from here.
type WorkflowRunParameters struct {
	// WorkflowTemplateRef names the WorkflowTemplate to run, one the
	// ClusterProviderConfig allows.
	// +kubebuilder:validation:MaxLength=63
	WorkflowTemplateRef string `json:"workflowTemplateRef"`

	// RunName names the Workflow. A name is submitted at most once, even
	// after its Workflow is gone; a new name submits a new run, and the
	// Workflows of earlier names stay until the WorkflowRun is deleted.
	// Argo Workflows puts it in labels, hence a DNS label.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	RunName string `json:"runName"`

	// Parameters in order.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Parameters []Parameter `json:"parameters,omitempty"`

	// OnMissingTemplate: Fail (default) or Suspend.
	// +optional
	// +kubebuilder:default=Fail
	OnMissingTemplate MissingTemplate `json:"onMissingTemplate,omitempty"`

	// Labels added to the Workflow. Keys under workflows.argoproj.io/ and
	// workflows.fleetplane.io/ are reserved.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('workflows.argoproj.io/') && !k.startsWith('workflows.fleetplane.io/'))",message="labels under workflows.argoproj.io/ and workflows.fleetplane.io/ are reserved"
	Labels map[string]string `json:"labels,omitempty"`
}

// WorkflowRunObservation is the run as found.
type WorkflowRunObservation struct {
	// +optional
	WorkflowName string `json:"workflowName,omitempty"`
	// Namespace the Workflow runs in, as the ClusterProviderConfig says.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Phase: Pending, Running, Succeeded, Failed or Error.
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// Inline is true when the template was missing and a suspend workflow
	// was run instead.
	// +optional
	Inline bool `json:"inline,omitempty"`
}

// WorkflowRunSpec defines the desired state of a WorkflowRun.
type WorkflowRunSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              WorkflowRunParameters `json:"forProvider"`
}

// WorkflowRunStatus is the observed state of a WorkflowRun.
type WorkflowRunStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 WorkflowRunObservation `json:"atProvider,omitempty"`
}

// A WorkflowRun submits one Argo Workflow from a WorkflowTemplate and
// tracks its phase. It is Ready while the workflow exists.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="WORKFLOW",type="string",JSONPath=".status.atProvider.workflowName"
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.atProvider.phase"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type WorkflowRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkflowRunSpec   `json:"spec"`
	Status WorkflowRunStatus `json:"status,omitempty"`
}

// WorkflowRunList is a list of WorkflowRuns.
//
// +kubebuilder:object:root=true
type WorkflowRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkflowRun `json:"items"`
}
