package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterType is where a target runs.
// +kubebuilder:validation:Enum=gke;hub;vcluster;talos
type ClusterType string

// Cluster types.
const (
	// ClusterGKE is a Google Kubernetes Engine cluster provisioned for the
	// target.
	ClusterGKE ClusterType = "gke"
	// ClusterHub is the cluster Crossplane and Argo CD run on.
	ClusterHub ClusterType = "hub"
	// ClusterVCluster is a virtual cluster (vcluster) the Experiment runs
	// in its own namespace on the hub, as the ClusterProviderConfig's
	// spec.experiments.vcluster allows.
	ClusterVCluster ClusterType = "vcluster"
	// ClusterTalos is a Talos Linux cluster Cluster API provisions in the
	// Experiment's namespace, as the ClusterProviderConfig's
	// spec.experiments.talos allows.
	ClusterTalos ClusterType = "talos"
)

// ExperimentSpec is what the user asks for.
//
// +kubebuilder:validation:XValidation:rule="self.targets.all(t, !has(t.depends) || t.depends.all(d, d != t.name && self.targets.exists(o, o.name == d)))",message="targets[].depends must name other targets of this experiment",fieldPath=".targets"
type ExperimentSpec struct {
	// Description of the experiment.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// Targets are the clusters the experiment deploys to.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Targets []Target `json:"targets"`

	// Workflow validates the experiment once every target is deployed.
	Workflow WorkflowSpec `json:"workflow"`

	// TTLDays after which the experiment, and everything it created, is
	// deleted.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=365
	TTLDays int32 `json:"ttlDays,omitempty"`
}

// Target is one cluster and what is deployed on it.
type Target struct {
	// Name of the target, unique in the experiment.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name"`

	// Cluster the target runs on.
	Cluster ClusterSpec `json:"cluster"`

	// Components deployed to the target, as one Argo CD Application with a
	// source per component source.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Components []ComponentRef `json:"components,omitempty"`

	// Depends names targets whose applications must be Healthy and Synced
	// before this target's are created.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=20
	Depends []string `json:"depends,omitempty"`
}

// ClusterSpec says how to get a target's cluster.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'gke' || has(self.zone)",message="cluster.zone is required for gke clusters",fieldPath=".zone"
// +kubebuilder:validation:XValidation:rule="self.type != 'hub' || !(has(self.zone) || has(self.nodeCount) || has(self.machineType) || has(self.diskSizeGb) || has(self.network))",message="a hub target runs on the control plane's cluster: zone, nodeCount, machineType, diskSizeGb and network do not apply"
// +kubebuilder:validation:XValidation:rule="self.type != 'talos' || !(has(self.zone) || has(self.machineType) || has(self.diskSizeGb) || has(self.network) || has(self.preemptible))",message="a talos target's machines are the platform's (spec.experiments.talos of the ClusterProviderConfig): only nodeCount, its workers, applies"
// +kubebuilder:validation:XValidation:rule="self.type != 'vcluster' || !(has(self.zone) || has(self.nodeCount) || has(self.machineType) || has(self.diskSizeGb) || has(self.network) || has(self.preemptible))",message="a vcluster target runs in the Experiment's namespace on the hub: zone, nodeCount, machineType, diskSizeGb, preemptible and network do not apply"
type ClusterSpec struct {
	// Type of cluster.
	Type ClusterType `json:"type"`

	// Zone of a GKE cluster, such as us-central1-a.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z]+-[a-z]+[0-9]+(-[a-z])?$`
	// +kubebuilder:validation:MaxLength=64
	Zone string `json:"zone,omitempty"`

	// NodeCount of the node pool (a talos cluster's workers); 1 when
	// unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	NodeCount int32 `json:"nodeCount,omitempty"`

	// MachineType of the nodes; e2-medium when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+$`
	// +kubebuilder:validation:MaxLength=64
	MachineType string `json:"machineType,omitempty"`

	// DiskSizeGb of each node; 50 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=65536
	DiskSizeGb int32 `json:"diskSizeGb,omitempty"`

	// Preemptible nodes cost less and may be stopped at any time.
	// +optional
	Preemptible bool `json:"preemptible,omitempty"`

	// Network of a GKE cluster. By default each GKE target gets a VPC and
	// a subnet of its own, made before its cluster and removed after it;
	// dedicated: false uses the project's default network instead.
	// +optional
	Network *GKENetwork `json:"network,omitempty"`
}

// GKENetwork is the VPC and subnet a GKE target's cluster runs in: a
// VPC-native cluster whose nodes take addresses from the subnet's range,
// and pods and services from its two secondary ranges.
//
// +kubebuilder:validation:XValidation:rule="!has(self.dedicated) || self.dedicated || !(has(self.subnetCidr) || has(self.podsCidr) || has(self.servicesCidr))",message="the ranges apply to a dedicated network only: dedicated: false uses the project's default network"
type GKENetwork struct {
	// Dedicated makes a VPC and subnet for this target; false uses the
	// project's default network. Default true.
	// +optional
	Dedicated *bool `json:"dedicated,omitempty"`

	// SubnetCIDR is the subnet's primary range, the nodes' addresses.
	// Default 10.0.0.0/20.
	// +optional
	// +kubebuilder:validation:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4 && cidr(self) == cidr(self).masked()",message="an IPv4 network in CIDR notation, such as 10.0.0.0/20"
	SubnetCIDR string `json:"subnetCidr,omitempty"`

	// PodsCIDR is the secondary range pods take addresses from. Default
	// 10.4.0.0/14.
	// +optional
	// +kubebuilder:validation:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4 && cidr(self) == cidr(self).masked()",message="an IPv4 network in CIDR notation, such as 10.4.0.0/14"
	PodsCIDR string `json:"podsCidr,omitempty"`

	// ServicesCIDR is the secondary range services take addresses from.
	// Default 10.8.0.0/20.
	// +optional
	// +kubebuilder:validation:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4 && cidr(self) == cidr(self).masked()",message="an IPv4 network in CIDR notation, such as 10.8.0.0/20"
	ServicesCIDR string `json:"servicesCidr,omitempty"`
}

// ComponentRef names one Component to deploy, by kind of component.
//
// +kubebuilder:validation:XValidation:rule="[has(self.app), has(self.workflow), has(self.config)].filter(x, x).size() == 1",message="a component names exactly one of app, workflow or config"
type ComponentRef struct {
	// App names a Component of type app.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	App string `json:"app,omitempty"`

	// Workflow names a Component of type workflow.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Workflow string `json:"workflow,omitempty"`

	// Config names a Component of type config.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Config string `json:"config,omitempty"`

	// Params override the Component's parameter defaults. They become Helm
	// parameters, in name order.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Params map[string]string `json:"params,omitempty"`
}

// CompletionMode says when the experiment is done.
// +kubebuilder:validation:Enum=workflow;manual
type CompletionMode string

// Completion modes.
const (
	// CompletionWorkflow completes when the workflow succeeds.
	CompletionWorkflow CompletionMode = "workflow"
	// CompletionManual runs a workflow that waits to be resumed (argo
	// resume) when its template does not exist.
	CompletionManual CompletionMode = "manual"
)

// WorkflowSpec is the validation workflow.
type WorkflowSpec struct {
	// Template is the WorkflowTemplate to run (Argo Workflows limits its
	// name to 63 characters).
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Template string `json:"template"`

	// Completion of the experiment.
	// +optional
	Completion *Completion `json:"completion,omitempty"`

	// Params are passed as workflow arguments, in name order, after the
	// experiment's own (experiment-name, <target>-endpoint, <target>-name).
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Params map[string]string `json:"params,omitempty"`
}

// Completion says when the experiment is done.
type Completion struct {
	// +optional
	// +kubebuilder:default=workflow
	Mode CompletionMode `json:"mode,omitempty"`
}

// Phase of an experiment.
type Phase string

// Phases.
const (
	PhasePending      Phase = "Pending"
	PhaseProvisioning Phase = "Provisioning"
	PhaseReady        Phase = "Ready"
	PhaseRunning      Phase = "Running"
	PhaseComplete     Phase = "Complete"
	PhaseFailed       Phase = "Failed"
)

// ExperimentStatus is what fleetplane observed.
type ExperimentStatus struct {
	// Phase: Pending, Provisioning, Ready, Running, Complete or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// Targets, in spec order.
	// +optional
	Targets []TargetStatus `json:"targets,omitempty"`

	// WorkflowStatus of the validation run.
	// +optional
	WorkflowStatus *WorkflowStatus `json:"workflowStatus,omitempty"`

	// CompletedAt is when the experiment reached Complete or Failed.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// ExpiresAt is when the experiment is deleted.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// ObservedGeneration is the metadata.generation last composed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// TargetStatus is where one target stands.
type TargetStatus struct {
	Name string `json:"name"`
	// Phase: Pending, Provisioning, Registering, Deploying, Waiting (for
	// depends), Ready or Failed.
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Components resolved, as name@repo/path or name@repo chart.
	// +optional
	Components []string `json:"components,omitempty"`
	// Observability of the resolved components whose Component declares
	// it, in the order the target lists them.
	// +optional
	Observability []ComponentObservability `json:"observability,omitempty"`
	// Message explains a Waiting or Failed target.
	// +optional
	Message string `json:"message,omitempty"`
}

// ComponentObservability is one resolved component's observability, as
// its Component declares it.
type ComponentObservability struct {
	Component     string `json:"component"`
	Observability `json:",inline"`
}

// WorkflowStatus is the validation run.
type WorkflowStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// An Experiment provisions clusters for its targets, registers them with
// Argo CD, deploys each target's components as one Argo CD Application in
// dependency order, validates the whole with an Argo Workflow, and is
// deleted, with everything it created, after its TTL.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={fleetplane,experiments}
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="WORKFLOW",type="string",JSONPath=".status.workflowStatus.phase"
type Experiment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExperimentSpec   `json:"spec"`
	Status ExperimentStatus `json:"status,omitempty"`
}

// ExperimentList is a list of Experiments.
//
// +kubebuilder:object:root=true
type ExperimentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Experiment `json:"items"`
}
