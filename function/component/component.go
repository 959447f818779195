// Package component checks Components: reusable sets of Argo CD sources
// that Experiments deploy. A Component composes nothing; its condition
// says whether Experiments can use it as written.
package component

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
)

// Reasons of the Component condition.
const (
	ReasonValid   = "Valid"
	ReasonInvalid = "Invalid"
)

// Composer checks Components.
var Composer = compose.Run(plan)

func plan(r *compose.Request[v1alpha1.Component]) (compose.Outcome, error) {
	c := r.XR
	for _, p := range c.Spec.Parameters {
		msg := ""
		switch err := p.Type.Check(p.Default); {
		case p.Required && p.Default != "":
			msg = fmt.Sprintf("parameter %s is required and has a default: a default makes it optional", p.Name)
		case p.Default != "" && err != nil:
			// The schema refuses this at apply time; a Component stored
			// before that rule still says so here.
			msg = fmt.Sprintf("the default of parameter %s %s", p.Name, err)
		}
		if msg != "" {
			return compose.Outcome{Pending: true, Conditions: []compose.Condition{{
				Type: v1alpha1.ConditionComponent, Status: corev1.ConditionFalse, Reason: ReasonInvalid, Warning: true, Message: msg,
			}}}, nil
		}
	}
	if msg := observabilityProblem(c); msg != "" {
		return compose.Outcome{Pending: true, Conditions: []compose.Condition{{
			Type: v1alpha1.ConditionComponent, Status: corev1.ConditionFalse, Reason: ReasonInvalid, Warning: true, Message: msg,
		}}}, nil
	}
	return compose.Outcome{Conditions: []compose.Condition{{
		Type: v1alpha1.ConditionComponent, Status: corev1.ConditionTrue, Reason: ReasonValid,
		Message: fmt.Sprintf("%s component with %d sources and %d declared parameters", c.Spec.Type, len(c.Spec.Sources), len(c.Spec.Parameters)),
	}}}, nil
}

// observabilityProblem says what is wrong with the Component's
// observability, or nothing.
func observabilityProblem(c *v1alpha1.Component) string {
	if err := c.Spec.Observability.Check(); err != nil {
		return "observability: " + err.Error()
	}
	return ""
}
