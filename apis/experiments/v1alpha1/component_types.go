package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ComponentType is what a component is.
// +kubebuilder:validation:Enum=app;workflow;config
type ComponentType string

// Component types.
const (
	ComponentApp      ComponentType = "app"
	ComponentWorkflow ComponentType = "workflow"
	ComponentConfig   ComponentType = "config"
)

// ComponentSpec defines a reusable component.
type ComponentSpec struct {
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`

	// Type of the component.
	Type ComponentType `json:"type"`

	// Sources become Argo CD Application sources, in this order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Sources []Source `json:"sources"`

	// Parameters the component declares. Defaults apply when a reference
	// does not set them; a required one without a value fails the target.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Parameters []Parameter `json:"parameters,omitempty"`

	// Observability says how the component's metrics are scraped. It is
	// metadata: fleetplane composes no monitor from it, and hands it on,
	// in each Experiment's status and to its workflow as the parameter
	// <target>-observability, to whatever sets up monitoring there.
	// +optional
	Observability *Observability `json:"observability,omitempty"`
}

// LabelValue is a Kubernetes label value.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
type LabelValue string

// Observability is a component's metrics endpoint, as a Prometheus
// Operator ServiceMonitor or PodMonitor would scrape it.
type Observability struct {
	// ServiceMonitor: scrape the component through its Service.
	// +optional
	ServiceMonitor bool `json:"serviceMonitor,omitempty"`
	// PodMonitor: scrape the component's pods directly.
	// +optional
	PodMonitor bool `json:"podMonitor,omitempty"`
	// PodLabels select the pods that serve metrics. Keys are Kubernetes
	// label keys (checked by the Component's Ready condition and when an
	// Experiment resolves it).
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`
	// MetricsPath is the HTTP path metrics are served on.
	// +optional
	// +kubebuilder:default="/metrics"
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$`
	MetricsPath string `json:"metricsPath,omitempty"`
	// MetricsPort is the port metrics are served on; unset, the
	// monitor's own default (the Service's or pod's named port).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	MetricsPort int32 `json:"metricsPort,omitempty"`
}

// Source is one Argo CD Application source.
//
// +kubebuilder:validation:XValidation:rule="[has(self.path), has(self.chart), has(self.ref)].filter(x, x).size() == 1",message="a source has exactly one of path (Git), chart (Helm repository) or ref (values only)"
type Source struct {
	// RepoURL of a Git repository or Helm chart repository, as Argo CD
	// takes it: an https, ssh or oci URL, git@host:path, or an OCI
	// registry host and path (registry-1.docker.io/envoyproxy) with chart.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^(https://|oci://|git@|ssh://|[a-z0-9.-]+\.[a-z]{2,}(:[0-9]+)?/)[^\s]+$`
	RepoURL string `json:"repoURL"`

	// TargetRevision: a branch, tag, commit or chart version.
	// +optional
	// +kubebuilder:default="HEAD"
	// +kubebuilder:validation:MaxLength=256
	TargetRevision string `json:"targetRevision,omitempty"`

	// Path in a Git repository.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`

	// Chart in a Helm repository.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Chart string `json:"chart,omitempty"`

	// Ref names a Git source whose files other sources read as $ref/...
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Ref string `json:"ref,omitempty"`

	// Helm settings of a chart or path source.
	// +optional
	Helm *Helm `json:"helm,omitempty"`
}

// Helm settings of a source.
type Helm struct {
	// +optional
	// +kubebuilder:validation:MaxLength=53
	ReleaseName string `json:"releaseName,omitempty"`

	// +optional
	// +kubebuilder:validation:MaxItems=16
	ValueFiles []string `json:"valueFiles,omitempty"`

	// Parameters set with --set; reference params override them by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Parameters []HelmParameter `json:"parameters,omitempty"`
}

// HelmParameter is one Helm value.
type HelmParameter struct {
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
	// ForceString keeps a value such as "true" or "1" a string.
	// +optional
	ForceString bool `json:"forceString,omitempty"`
}

// ParameterType is the type of a declared parameter.
// +kubebuilder:validation:Enum=string;int;bool
type ParameterType string

// Parameter types.
const (
	ParameterString ParameterType = "string"
	ParameterInt    ParameterType = "int"
	ParameterBool   ParameterType = "bool"
)

// Check reports whether value is one of t: a whole number for int
// (as Helm reads one), true or false for bool, anything for string.
func (t ParameterType) Check(value string) error {
	switch t {
	case ParameterInt:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("is declared int, and %q is not a whole number", value)
		}
	case ParameterBool:
		if value != "true" && value != "false" {
			return fmt.Errorf("is declared bool, and %q is neither true nor false", value)
		}
	case ParameterString, "":
	}
	return nil
}

// Check reports what the schema cannot: every pod label key is a
// Kubernetes label key (a rule on map keys would cost the API server more
// CEL budget than the Component's whole schema). Keys are checked in
// order, so the error is the same every time.
func (o *Observability) Check() error {
	if o == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(o.PodLabels)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("pod label key %q: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

// Parameter is a declared component parameter.
//
// +kubebuilder:validation:XValidation:rule="!has(self.default) || !has(self.type) || self.type != 'int' || self.default.matches('^-?[0-9]{1,18}$')",message="the default of an int parameter is a whole number"
// +kubebuilder:validation:XValidation:rule="!has(self.default) || !has(self.type) || self.type != 'bool' || self.default in ['true', 'false']",message="the default of a bool parameter is true or false"
type Parameter struct {
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// +optional
	// +kubebuilder:default=string
	Type ParameterType `json:"type,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Default string `json:"default,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`
	// +optional
	Required bool `json:"required,omitempty"`
}

// ComponentStatus is what fleetplane observed.
type ComponentStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// A Component is a reusable set of Argo CD sources with declared
// parameters, deployed by Experiments that name it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={fleetplane,experiments}
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.type"
type Component struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ComponentSpec   `json:"spec"`
	Status ComponentStatus `json:"status,omitempty"`
}

// ComponentList is a list of Components.
//
// +kubebuilder:object:root=true
type ComponentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Component `json:"items"`
}
