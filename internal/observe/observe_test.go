package observe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
)

func withConditions(cs ...xpv2.Condition) *composed.Unstructured {
	o := composed.New()
	o.SetConditions(cs...)
	return o
}

func TestReady(t *testing.T) {
	if Ready(nil) {
		t.Error("a missing resource is not ready")
	}
	if Ready(withConditions(xpv2.Creating())) {
		t.Error("Ready=False is not ready")
	}
	if !Ready(withConditions(xpv2.Available())) {
		t.Error("Ready=True is ready")
	}
}

func TestFailed(t *testing.T) {
	cases := map[string]struct {
		msg           string
		wantForbidden bool
	}{
		"azure 403": {msg: `async create failed: failed to create the resource: [{0 creating Kusto Cluster: unexpected status 403 (403 Forbidden) with error: AuthorizationFailed: The client 'x' does not have authorization to perform action`, wantForbidden: true},
		"other":     {msg: `async create failed: SkuNotAvailable: the SKU is not available in eastus2`},
		"port 4030": {msg: `dial tcp 10.0.0.1:4030: connection refused`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, ok := Failed(withConditions(xpv2.ReconcileError(stringError(tc.msg))))
			if !ok {
				t.Fatal("Synced=False should be a failure")
			}
			if f.Forbidden != tc.wantForbidden {
				t.Errorf("Forbidden = %v, want %v", f.Forbidden, tc.wantForbidden)
			}
		})
	}
	if _, ok := Failed(withConditions(xpv2.ReconcileSuccess())); ok {
		t.Error("Synced=True is no failure")
	}
	if c := withConditions(xpv2.ReconcileSuccess()).GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionTrue {
		t.Fatalf("test setup: %v", c)
	}
}

type stringError string

func (e stringError) Error() string { return string(e) }

func TestBound(t *testing.T) {
	long := strings.Repeat("é", 1000) + "\nnext line"
	b := Bound(long)
	if len(b) > MaxMessage || !utf8.ValidString(b) || strings.Contains(b, "\n") {
		t.Errorf("Bound gave %d bytes, valid=%v", len(b), utf8.ValidString(b))
	}
	if got := Bound("a\n  b"); got != "a b" {
		t.Errorf("Bound folds whitespace: got %q", got)
	}
}

// TestConditionOfReadsWhatProvidersWrite: a condition as the API server
// sends it (times as RFC 3339 text, the generation a JSON number, so a
// float64 once decoded) is read whole, as the SDK's own GetCondition reads
// it, time and generation included.
func TestConditionOfReadsWhatProvidersWrite(t *testing.T) {
	const written = `{"apiVersion":"kubernetes.m.crossplane.io/v1alpha1","kind":"Object","metadata":{"name":"wec1-web","generation":3},
"status":{"conditions":[
 {"type":"Ready","status":"True","reason":"Available","lastTransitionTime":"2026-11-26T06:05:00Z","observedGeneration":3},
 {"type":"Synced","status":"True","reason":"ReconcileSuccess","lastTransitionTime":"2026-11-26T06:00:00Z","observedGeneration":2}]}}`
	o := composed.New()
	if err := json.Unmarshal([]byte(written), &o.Object); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []xpv2.ConditionType{xpv2.TypeReady, xpv2.TypeSynced} {
		got, want := ConditionOf(o, string(typ)), o.GetCondition(typ)
		if !got.Equal(want) || !got.LastTransitionTime.Equal(&want.LastTransitionTime) || got.ObservedGeneration != want.ObservedGeneration {
			t.Errorf("ConditionOf(%s) = %+v, the SDK reads %+v", typ, got, want)
		}
		if got.LastTransitionTime.IsZero() || got.ObservedGeneration == 0 {
			t.Errorf("ConditionOf(%s) lost the time or generation: %+v", typ, got)
		}
	}

	// A time that does not parse is no time; the rest of the condition
	// stands.
	bad := composed.New()
	bad.Object = map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "yesterday", "observedGeneration": "3"}}}}
	if c := ConditionOf(bad, "Ready"); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.IsZero() || c.ObservedGeneration != 0 {
		t.Errorf("a malformed time and generation read as %+v", c)
	}
}
