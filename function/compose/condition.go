package compose

import (
	"fmt"
	"strings"

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
	// Fatal also fails the composition, at every call while the
	// condition holds: for a refusal of the whole XR, which composes
	// nothing new. Crossplane then applies and removes nothing, marks the
	// XR Synced=False with the message (the one condition
	// `crossplane beta trace` prints beside Ready, which a function
	// cannot set otherwise), records a Warning event of it, and retries
	// with backoff (at most every 30 s) as well as on the watches of what
	// the XR read. The condition itself is set as always.
	Fatal bool
}

// FatalMessage is what a Fatal condition fails the composition with.
// `crossplane beta trace` shows the last 64 characters of it unless run
// with -o wide, so it ends with the reason and where the whole story is.
func FatalMessage(c Condition) string {
	return fmt.Sprintf("%s (%s: see condition %s)", strings.TrimSuffix(c.Message, "."), c.Reason, c.Type)
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
	if c.Fatal {
		// Crossplane records the failure as a Warning event itself. The
		// reason is for the function's own tests: Crossplane reads only
		// the message of a fatal result.
		reason := c.Reason
		rsp.Results = append(rsp.Results, &fnv1.Result{
			Severity: fnv1.Severity_SEVERITY_FATAL, Message: FatalMessage(c), Reason: &reason, Target: fnv1.Target_TARGET_COMPOSITE.Enum(),
		})
		return
	}

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
