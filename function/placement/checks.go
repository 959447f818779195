package placement

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/decode"
	"github.com/fleetplane/fleetplane/function/placement/combine"
	"github.com/fleetplane/fleetplane/function/placement/jsonpath"
)

// Reasons of the Valid condition.
const (
	ReasonValid   = "Valid"
	ReasonInvalid = "Invalid"
	// ReasonShared: valid, and another CustomTransform names the same
	// resource; the removals of both apply.
	ReasonShared = "SharedResource"
)

const customTransformsKey = "custom-transforms"

// CustomTransformComposer checks CustomTransforms: every remove entry must
// parse. An invalid entry is skipped by Placements (the others apply), as
// KubeStellar does, and listed in status.
var CustomTransformComposer = compose.Run(checkCustomTransform)

func checkCustomTransform(r *compose.Request[v1alpha1.CustomTransform]) (compose.Outcome, error) {
	ct := r.XR
	_, errs := removals(ct.Spec)
	st := v1alpha1.CustomTransformStatus{Errors: errs}

	all, resolved := r.Require(customTransformsKey, compose.Selector{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.CustomTransformKind, Labels: map[string]string{}})
	var others []string
	if resolved {
		for _, o := range all {
			var spec v1alpha1.CustomTransformSpec
			if o.Resource.GetName() == ct.GetName() || decodeSpec(o.Resource.Object, &spec) != nil {
				continue
			}
			if spec.APIGroup == ct.Spec.APIGroup && spec.Resource == ct.Spec.Resource {
				others = append(others, o.Resource.GetName())
			}
		}
	}
	slices.Sort(others)
	gr := groupResource(ct.Spec.APIGroup, ct.Spec.Resource)
	if len(others) > 0 {
		st.Warnings = []string{fmt.Sprintf("CustomTransforms %s also name %s; the removals of all of them apply", strings.Join(others, ", "), gr)}
	}

	if len(errs) > 0 {
		return compose.Outcome{Status: &st, Pending: true, Conditions: []compose.Condition{{
			Type: v1alpha1.ConditionValid, Status: corev1.ConditionFalse, Reason: ReasonInvalid, Warning: true,
			Message: fmt.Sprintf("%d of %d remove paths are invalid and skipped (see status.errors); the others apply to %s: %s", len(errs), len(ct.Spec.Remove), gr, errs[0]),
		}}}, nil
	}
	if len(others) > 0 {
		return compose.Outcome{Status: &st, Conditions: []compose.Condition{{
			Type: v1alpha1.ConditionValid, Status: corev1.ConditionTrue, Reason: ReasonShared, Message: st.Warnings[0],
		}}}, nil
	}
	return compose.Outcome{Status: &st, Conditions: []compose.Condition{{
		Type: v1alpha1.ConditionValid, Status: corev1.ConditionTrue, Reason: ReasonValid,
		Message: fmt.Sprintf("removes %d fields from every copy of %s", len(ct.Spec.Remove), gr),
	}}}, nil
}

// removals parses a CustomTransform's paths: the valid ones, and an error
// per invalid one.
func removals(spec v1alpha1.CustomTransformSpec) ([]jsonpath.Path, []string) {
	var ok []jsonpath.Path
	var errs []string
	for i, s := range spec.Remove {
		p, err := jsonpath.Parse(s)
		if err != nil {
			errs = append(errs, fmt.Sprintf("spec.remove[%d] %q: %v", i, s, err))
			continue
		}
		ok = append(ok, p)
	}
	return ok, errs
}

func groupResource(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// StatusCollectorComposer checks StatusCollectors with the rules the
// function evaluates them by; the XRD's schema checks most of them at
// apply time already.
var StatusCollectorComposer = compose.Run(checkStatusCollector)

func checkStatusCollector(r *compose.Request[v1alpha1.StatusCollector]) (compose.Outcome, error) {
	c, err := collector(r.XR.Spec)
	// What is wrong is the user's to fix: a condition, not an error of
	// the function.
	if problem := errorText(err); problem != "" {
		return compose.Outcome{Pending: true, Conditions: []compose.Condition{{
			Type: v1alpha1.ConditionValid, Status: corev1.ConditionFalse, Reason: ReasonInvalid, Warning: true, Message: problem,
		}}}, nil
	}
	cols := columns(c)
	return compose.Outcome{Status: &v1alpha1.StatusCollectorStatus{Columns: cols}, Conditions: []compose.Condition{{
		Type: v1alpha1.ConditionValid, Status: corev1.ConditionTrue, Reason: ReasonValid,
		Message: "columns " + strings.Join(cols, ", "),
	}}}, nil
}

// collector converts a StatusCollector's spec into what combine
// evaluates and checks it. The API's expression levels and combine's
// recursive Expr share one JSON shape.
func collector(spec v1alpha1.StatusCollectorSpec) (combine.Collector, error) {
	var c combine.Collector
	b, err := json.Marshal(spec)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, err
	}
	return c, c.Check()
}

func columns(c combine.Collector) []string {
	var out []string
	for _, n := range c.Select {
		out = append(out, n.Name)
	}
	for _, n := range c.GroupBy {
		out = append(out, n.Name)
	}
	for _, a := range c.CombinedFields {
		out = append(out, a.Name)
	}
	return out
}

// decodeSpec decodes the spec of a required object.
func decodeSpec(obj map[string]any, into any) error {
	spec, _ := obj["spec"].(map[string]any)
	return decode.Into(spec, into)
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
