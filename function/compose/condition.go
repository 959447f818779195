package compose

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
)

// Condition is the one custom condition a composer reports on its XR.
type Condition struct {
	Type    string
	Status  corev1.ConditionStatus
	Reason  string
	Message string
	// Warning makes the transition event a Warning instead of Normal.
	Warning bool
	// Quiet records no event for the transition: for kinds with a
	// condition per phase, whose every step would otherwise be an event.
	Quiet bool
}

// Report sets the condition on the XR and, when its reason or status
// differs from the observed XR's, adds a result so Crossplane records one
// event for the transition and none while nothing changes.
func Report(rsp *fnv1.RunFunctionResponse, xr *composite.Unstructured, c Condition) {
	var opt *response.ConditionOption
	switch c.Status {
	case corev1.ConditionTrue:
		opt = response.ConditionTrue(rsp, c.Type, c.Reason)
	case corev1.ConditionFalse:
		opt = response.ConditionFalse(rsp, c.Type, c.Reason)
	default:
		opt = response.ConditionUnknown(rsp, c.Type, c.Reason)
	}
	opt.WithMessage(c.Message).TargetComposite()

	prev := xr.GetCondition(xpv2.ConditionType(c.Type))
	if c.Quiet || (string(prev.Reason) == c.Reason && prev.Status == c.Status) {
		return
	}
	if c.Warning {
		response.Warning(rsp, plainError(c.Message)).WithReason(c.Reason).TargetComposite()
		return
	}
	response.Normal(rsp, c.Message).WithReason(c.Reason).TargetComposite()
}

type plainError string

func (e plainError) Error() string { return string(e) }
