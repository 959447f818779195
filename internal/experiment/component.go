package experiment

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/compose"
)

// ComponentConditionType is the custom condition a Component carries.
const ComponentConditionType = "component.fleetplane.io"

// ComposeComponent checks a Component. It composes nothing: Experiments
// read Components when they resolve their targets.
func ComposeComponent(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) error {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot read the observed Component: %w", err)
	}
	c := &v1alpha1.Component{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(oxr.Resource.Object, c); err != nil {
		return fmt.Errorf("cannot decode the observed Component: %w", err)
	}
	cond := compose.Condition{Type: ComponentConditionType, Status: corev1.ConditionTrue, Reason: "Valid",
		Message: fmt.Sprintf("%s component with %d sources and %d declared parameters", c.Spec.Type, len(c.Spec.Sources), len(c.Spec.Parameters))}
	for _, p := range c.Spec.Parameters {
		if p.Required && p.Default != "" {
			cond = compose.Condition{Type: ComponentConditionType, Status: corev1.ConditionFalse, Reason: "Invalid", Warning: true,
				Message: fmt.Sprintf("parameter %s is required and has a default: a default makes it optional", p.Name)}
			compose.MarkCompositeNotReady(rsp)
			break
		}
	}
	compose.Report(rsp, oxr.Resource, cond)
	return nil
}
