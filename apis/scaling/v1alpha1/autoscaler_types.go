package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Metric types. The ingestor's come from its pods' Prometheus endpoint, an
// ADX cluster's from Azure Monitor; Custom names its own series.
const (
	MetricQueueLength     = "QueueLength"
	MetricMemoryUsage     = "MemoryUsage"
	MetricIngestionVolume = "IngestionVolume"
	MetricSystemLoad      = "SystemLoad"
	MetricCPUUsage        = "CPUUsage"
	MetricCustom          = "Custom"
)

// Decisions.
const (
	DecisionUp   = "Up"
	DecisionDown = "Down"
	DecisionHold = "Hold"
)

// AutoscalerParameters say what to scale, on which metrics, within which
// bounds, and how often to decide.
//
// +kubebuilder:validation:XValidation:rule="has(self.ingestor) != has(self.adx)",message="set exactly one of ingestor and adx"
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="min must not exceed max"
// +kubebuilder:validation:XValidation:rule="!has(self.ingestor) || self.metrics.all(m, m.type in ['QueueLength', 'MemoryUsage'] || (m.type == 'Custom' && has(m.series)))",message="the ingestor scales on QueueLength, MemoryUsage, or Custom with a series"
// +kubebuilder:validation:XValidation:rule="!has(self.adx) || self.metrics.all(m, m.type in ['IngestionVolume', 'SystemLoad', 'CPUUsage'] || (m.type == 'Custom' && has(m.azureMetric)))",message="an ADX cluster scales on IngestionVolume, SystemLoad, CPUUsage, or Custom with an azureMetric"
// +kubebuilder:validation:XValidation:rule="!has(self.adx) || self.min >= 2",message="an ADX cluster has at least 2 nodes"
type AutoscalerParameters struct {
	// Schedule of evaluations: a five-field cron expression (minute hour
	// day-of-month month day-of-week), in UTC. Default */5 * * * *.
	// +optional
	// +kubebuilder:default="*/5 * * * *"
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^(\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?(,(\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?)* +(\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?(,(\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)* +(\*|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?(,(\*|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)* +(\*|(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]?)?(,(\*|(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]?)?)* +(\*|([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat)(-([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]?)?(,(\*|([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat)(-([0-6]|SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]?)?)*$`
	Schedule string `json:"schedule,omitempty"`

	// Ingestor scales an ingestor StatefulSet's replicas, measured on the
	// pods its Service selects, in this resource's namespace.
	// +optional
	Ingestor *IngestorTarget `json:"ingestor,omitempty"`

	// ADX scales an Azure Data Explorer cluster's node count, measured
	// through Azure Monitor.
	// +optional
	ADX *ADXTarget `json:"adx,omitempty"`

	// Metrics weighed into each decision; every one must have a value.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Metrics []ScaleMetric `json:"metrics"`

	// Min and Max bound the size: replicas or nodes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Min int32 `json:"min"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Max int32 `json:"max"`

	// Cooldown after a scale before the next one. Default 5m.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="cooldown must be between 0s and 24h"
	Cooldown *metav1.Duration `json:"cooldown,omitempty"`

	// Bound is the weighted vote, from 0 to 1, a scale needs: up at
	// score >= bound, down at score <= -bound. Default 0.5.
	// +optional
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Bound *float64 `json:"bound,omitempty"`
}

// IngestorTarget is an ingestor in the Autoscaler's namespace.
type IngestorTarget struct {
	// StatefulSet whose size is decided; read for the starting size,
	// never written.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	StatefulSet string `json:"statefulSet"`

	// Service whose selector finds the pods to scrape.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Service string `json:"service"`

	// MetricsPort of the pods: a container port's name or number.
	// Default "metrics".
	// +optional
	// +kubebuilder:validation:XIntOrString
	MetricsPort *intstr.IntOrString `json:"metricsPort,omitempty"`

	// MetricsPath of the Prometheus endpoint. Default /metrics.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9/._~-]*$`
	MetricsPath string `json:"metricsPath,omitempty"`
}

// ADXTarget is an Azure Data Explorer cluster.
type ADXTarget struct {
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	SubscriptionID string `json:"subscriptionId"`
	// +kubebuilder:validation:MaxLength=90
	// +kubebuilder:validation:Pattern=`^[-\w._()]*[-\w_()]$`
	ResourceGroup string `json:"resourceGroup"`
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]{3,21}$`
	ClusterName string `json:"clusterName"`
}

// ScaleMetric is one weighted input of a decision.
//
// +kubebuilder:validation:XValidation:rule="self.scaleDownThreshold < self.scaleUpThreshold",message="scaleDownThreshold must be below scaleUpThreshold"
// +kubebuilder:validation:XValidation:rule="self.type == 'Custom' || (!has(self.series) && !has(self.azureMetric))",message="series and azureMetric are for type Custom"
// +kubebuilder:validation:XValidation:rule="self.type != 'Custom' || has(self.series) != has(self.azureMetric)",message="a Custom metric names exactly one of series and azureMetric"
type ScaleMetric struct {
	// Type of the metric. QueueLength is the ingestor's queued batches
	// (adxmon_ingestor_queue_size, all queues) per pod; MemoryUsage its
	// resident memory as a percentage of the container's memory limit;
	// IngestionVolume an ADX cluster's IngestionUtilization (%); SystemLoad
	// and CPUUsage its CPU (%).
	// +kubebuilder:validation:Enum=QueueLength;MemoryUsage;IngestionVolume;SystemLoad;CPUUsage;Custom
	Type string `json:"type"`

	// Series is a Custom ingestor metric: the sum of a Prometheus
	// series' matching samples per pod, averaged over the pods.
	// +optional
	Series *SeriesSelector `json:"series,omitempty"`

	// AzureMetric is a Custom ADX metric from Azure Monitor.
	// +optional
	AzureMetric *AzureMetric `json:"azureMetric,omitempty"`

	// ScaleUpThreshold: above it, the metric votes to grow.
	ScaleUpThreshold float64 `json:"scaleUpThreshold"`
	// ScaleDownThreshold: below it, the metric votes to shrink.
	ScaleDownThreshold float64 `json:"scaleDownThreshold"`
	// Weight of the metric's vote, 0 to 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Weight float64 `json:"weight"`
}

// SeriesSelector picks Prometheus samples by name and labels.
type SeriesSelector struct {
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_:][a-zA-Z0-9_:]*$`
	Name string `json:"name"`
	// MatchLabels the samples must carry.
	// +optional
	// +kubebuilder:validation:MaxProperties=8
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// AzureMetric is an Azure Monitor metric of the cluster.
type AzureMetric struct {
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_ ./-]+$`
	Name string `json:"name"`
	// Aggregation over the last five minutes. Default Average.
	// +optional
	// +kubebuilder:default=Average
	// +kubebuilder:validation:Enum=Average;Maximum;Minimum;Total
	Aggregation string `json:"aggregation,omitempty"`
}

// MetricObservation is one metric's last measurement and vote.
type MetricObservation struct {
	// Name of the metric (its type, or its series or Azure metric).
	Name string `json:"name"`
	// Value measured; absent when none could be.
	// +optional
	Value *float64 `json:"value,omitempty"`
	// Vote: 1 (up), -1 (down) or 0.
	// +optional
	Vote int32 `json:"vote,omitempty"`
	// Error of the metric's source, when it has no value.
	// +optional
	Error string `json:"error,omitempty"`
}

// AutoscalerObservation is the last evaluation.
type AutoscalerObservation struct {
	// DesiredSize is the size decided: what the function composes.
	// +optional
	DesiredSize int32 `json:"desiredSize,omitempty"`
	// ObservedSize is the target's size when it was last evaluated.
	// +optional
	ObservedSize *int32 `json:"observedSize,omitempty"`
	// Decision of the last evaluation: Up, Down or Hold.
	// +optional
	Decision string `json:"decision,omitempty"`
	// Reason for it, e.g. "hold: score 1.00, but at max 10".
	// +optional
	Reason string `json:"reason,omitempty"`
	// Score is the weighted vote, -1 to 1.
	// +optional
	Score *float64 `json:"score,omitempty"`
	// Metrics as last measured.
	// +optional
	Metrics []MetricObservation `json:"metrics,omitempty"`
	// LastEvaluationTime is when the metrics were last measured.
	// +optional
	LastEvaluationTime *metav1.Time `json:"lastEvaluationTime,omitempty"`
	// NextEvaluationTime is the schedule's next time.
	// +optional
	NextEvaluationTime *metav1.Time `json:"nextEvaluationTime,omitempty"`
	// LastScaleTime is when the desired size last changed.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
	// ObservedGeneration is the spec generation last evaluated; a spec
	// change is evaluated at once, not at the next scheduled time.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// AutoscalerSpec defines the desired state of an Autoscaler.
type AutoscalerSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              AutoscalerParameters `json:"forProvider"`
}

// AutoscalerStatus is the observed state of an Autoscaler.
type AutoscalerStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 AutoscalerObservation `json:"atProvider,omitempty"`
}

// Autoscaler measures a component (an ingestor or an ADX cluster) on a
// schedule and decides its size, one unit at a time, within bounds, after
// a cooldown; status.atProvider says what it decided and why. It never
// changes the component: the function composes the desired size.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="SIZE",type="integer",JSONPath=".status.atProvider.observedSize"
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".status.atProvider.desiredSize"
// +kubebuilder:printcolumn:name="DECISION",type="string",JSONPath=".status.atProvider.decision"
// +kubebuilder:printcolumn:name="REASON",type="string",priority=1,JSONPath=".status.atProvider.reason"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,fleetplane}
type Autoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AutoscalerSpec   `json:"spec"`
	Status AutoscalerStatus `json:"status,omitempty"`
}

// AutoscalerList is a list of Autoscalers.
//
// +kubebuilder:object:root=true
type AutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Autoscaler `json:"items"`
}
