package observe

import (
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
