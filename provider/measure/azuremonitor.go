package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"

	"github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/scaling"
)

// Azure Monitor metrics of a Microsoft.Kusto cluster that the built-in
// types read, all percentages.
var adxMetrics = map[string]string{
	v1alpha1.MetricIngestionVolume: "IngestionUtilization",
	v1alpha1.MetricSystemLoad:      "CPU",
	v1alpha1.MetricCPUUsage:        "CPU",
}

// Window is how far back a metric is read; its latest point with a value
// is used.
const Window = 15 * time.Minute

// MetricsLister is armmonitor's MetricsClient.
type MetricsLister interface {
	List(ctx context.Context, resourceURI string, options *armmonitor.MetricsClientListOptions) (armmonitor.MetricsClientListResponse, error)
}

var _ MetricsLister = (*armmonitor.MetricsClient)(nil)

// ClusterURI is the resource ID of a Kusto cluster.
func ClusterURI(t v1alpha1.ADXTarget) string {
	return "/subscriptions/" + t.SubscriptionID + "/resourceGroups/" + t.ResourceGroup + "/providers/Microsoft.Kusto/clusters/" + t.ClusterName
}

// ADX measures an ADX cluster's metrics, one Azure Monitor request per
// metric (each may aggregate differently). Whole-cluster utilizations are
// not loads per node, so they never block a scale down.
func ADX(ctx context.Context, l MetricsLister, t v1alpha1.ADXTarget, metrics []v1alpha1.ScaleMetric, now time.Time) []scaling.Metric {
	out := make([]scaling.Metric, len(metrics))
	uri := ClusterURI(t)
	span := now.Add(-Window).UTC().Format(time.RFC3339) + "/" + now.UTC().Format(time.RFC3339)
	for i, m := range metrics {
		out[i] = scaling.Metric{Name: Name(m), Up: m.ScaleUpThreshold, Down: m.ScaleDownThreshold, Weight: m.Weight}
		name, agg := adxMetrics[m.Type], "Average"
		if m.AzureMetric != nil {
			name = m.AzureMetric.Name
			if m.AzureMetric.Aggregation != "" {
				agg = m.AzureMetric.Aggregation
			}
		}
		if name == "" {
			out[i].Err = m.Type + " is not an ADX metric"
			continue
		}
		v, err := latest(ctx, l, uri, name, agg, span)
		if err != nil {
			out[i].Err = err.Error()
			continue
		}
		out[i].Value = v
	}
	return out
}

func latest(ctx context.Context, l MetricsLister, uri, name, agg, span string) (float64, error) {
	resp, err := l.List(ctx, uri, &armmonitor.MetricsClientListOptions{
		Metricnames: &name,
		Aggregation: &agg,
		Timespan:    &span,
		Interval:    new("PT1M"),
	})
	if err != nil {
		return 0, fmt.Errorf("reading %s from Azure Monitor: %s", name, AzureError(err))
	}
	for _, metric := range resp.Value {
		if metric == nil || metric.Name == nil || !strings.EqualFold(deref(metric.Name.Value), name) {
			continue
		}
		if metric.ErrorCode != nil && *metric.ErrorCode != "Success" {
			return 0, fmt.Errorf("reading %s from Azure Monitor: %s %s", name, *metric.ErrorCode, deref(metric.ErrorMessage))
		}
		var at time.Time
		val, found := 0.0, false
		for _, ts := range metric.Timeseries {
			if ts == nil {
				continue
			}
			for _, p := range ts.Data {
				v := pick(p, agg)
				if v == nil || p.TimeStamp == nil || p.TimeStamp.Before(at) {
					continue
				}
				at, val, found = *p.TimeStamp, *v, true
			}
		}
		if !found {
			return 0, fmt.Errorf("no %s of %s from Azure Monitor in the last %s", agg, name, Window)
		}
		if math.IsNaN(val) || math.IsInf(val, 0) {
			return 0, fmt.Errorf("%s from Azure Monitor is not a finite number", name)
		}
		return val, nil
	}
	return 0, fmt.Errorf("no metric %s in Azure Monitor's answer", name)
}

func pick(p *armmonitor.MetricValue, agg string) *float64 {
	if p == nil {
		return nil
	}
	switch agg {
	case "Maximum":
		return p.Maximum
	case "Minimum":
		return p.Minimum
	case "Total":
		return p.Total
	}
	return p.Average
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AzureError is an SDK error in one line: Azure's status and error code,
// rather than the request dump the SDK's message spans. The status
// bounds its length (observe.Bound).
func AzureError(err error) string {
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return fmt.Sprintf("HTTP %d %s", re.StatusCode, re.ErrorCode)
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
