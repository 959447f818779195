// Package observe reads the state Crossplane reports for composed resources:
// whether one is ready, and whether its provider was refused access.
//
// Messages come from other providers and, through them, from remote APIs,
// so everything returned here is trimmed to a bounded length.
package observe

import (
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMessage bounds any message copied from a composed resource.
const MaxMessage = 512

// Ready reports whether a composed resource is ready: for Crossplane
// resources, that it carries Ready=True; for the Kubernetes and Cluster
// API kinds composed directly, what their controllers report (see
// workload.go and clusterapi.go).
func Ready(o *composed.Unstructured) bool {
	if r, ok := kubernetesReady(o); ok {
		return r
	}
	if r, ok := clusterAPIReady(o); ok {
		return r
	}
	return condition(o, xpv2.TypeReady).Status == corev1.ConditionTrue
}

// ConditionOf returns the condition of type t a composed resource
// carries, its message bounded; the zero condition when it has none.
func ConditionOf(o *composed.Unstructured, t string) xpv2.Condition {
	c := condition(o, xpv2.ConditionType(t))
	c.Message = Bound(c.Message)
	return c
}

// condition reads one condition straight from the object's map. The SDK's
// GetCondition round-trips the whole status through JSON, which dominated
// the cost of composing an XR with many resources.
func condition(o *composed.Unstructured, t xpv2.ConditionType) xpv2.Condition {
	if o == nil {
		return xpv2.Condition{}
	}
	status, _ := o.Object["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != string(t) {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		c := xpv2.Condition{Type: t, Status: corev1.ConditionStatus(s), Reason: xpv2.ConditionReason(r), Message: msg}
		// Every field a provider writes is read, not only the four the
		// gating rule needs: a caller that reads the time or generation
		// of a condition rebuilt without them sees nothing (the
		// Placement's lastReturnedUpdateTimestamp was always empty).
		// A time that does not parse is no time, as metav1.Time reads it.
		if at, ok := m["lastTransitionTime"].(string); ok {
			if tm, err := time.Parse(time.RFC3339, at); err == nil {
				c.LastTransitionTime = metav1.NewTime(tm)
			}
		}
		c.ObservedGeneration, _ = number(m["observedGeneration"])
		return c
	}
	return xpv2.Condition{}
}

// forbidden matches how Azure (through upjet and Terraform) and Kusto word
// an authorization failure.
var forbidden = regexp.MustCompile(`(?i)(\b403\b|forbidden|AuthorizationFailed|does not have authorization|insufficient privileges)`)

// Failure is a composed resource's provider reporting it cannot sync it.
type Failure struct {
	// Forbidden is true when the failure is an authorization refusal.
	Forbidden bool
	// Message is the provider's message, bounded.
	Message string
}

// Failed returns the failure a composed resource reports through
// Synced=False, if any.
func Failed(o *composed.Unstructured) (Failure, bool) {
	c := condition(o, xpv2.TypeSynced)
	if c.Status != corev1.ConditionFalse {
		return Failure{}, false
	}
	return Failure{Forbidden: forbidden.MatchString(c.Message), Message: Bound(c.Message)}, true
}

// Bound trims s to MaxMessage bytes on a rune boundary and folds newlines,
// so a remote message cannot flood a condition or event.
func Bound(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Count bounds a count for an int32 status field.
func Count(n int) int32 {
	return int32(max(min(n, math.MaxInt32), 0))
}
