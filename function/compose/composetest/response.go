package composetest

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/fleetplane/fleetplane/function/compose"
)

// Response is a RunFunctionResponse with accessors for assertions.
type Response struct {
	T *testing.T
	*fnv1.RunFunctionResponse
	// Summary is what the composer told the function's metrics.
	Summary compose.Summary
}

// Names lists the desired composed resources, sorted.
func (r Response) Names() []string {
	var n []string
	for k := range r.GetDesired().GetResources() {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// WantNames fails unless exactly these resources are desired.
func (r Response) WantNames(want ...string) {
	r.T.Helper()
	slices.Sort(want)
	if diff := cmp.Diff(want, r.Names(), emptyIsNil); diff != "" {
		r.T.Errorf("desired composed resources (-want +got):\n%s", diff)
	}
}

var emptyIsNil = cmp.Transformer("emptyIsNil", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// Has reports whether a resource is desired.
func (r Response) Has(name string) bool {
	_, ok := r.GetDesired().GetResources()[name]
	return ok
}

// ReadyOf is the readiness the response gives a desired resource.
func (r Response) ReadyOf(name string) fnv1.Ready {
	return r.GetDesired().GetResources()[name].GetReady()
}

// Value reads a dotted path of a desired resource, or of the desired XR
// when name is "". A number indexes a list. Absent paths are nil.
func (r Response) Value(name, path string) any {
	r.T.Helper()
	var v any
	if name == "" {
		v = r.GetDesired().GetComposite().GetResource().AsMap()
	} else {
		res, ok := r.GetDesired().GetResources()[name]
		if !ok {
			r.T.Fatalf("no desired resource %q (have %v)", name, r.Names())
		}
		v = res.GetResource().AsMap()
	}
	for p := range strings.SplitSeq(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// Want compares a path with want as JSON, so that typed values, maps and
// numbers compare as Crossplane would see them.
func (r Response) Want(name, path string, want any) {
	r.T.Helper()
	got, _ := json.Marshal(r.Value(name, path))
	w, _ := json.Marshal(want)
	if string(got) != string(w) {
		what := name
		if what == "" {
			what = "XR"
		}
		r.T.Errorf("%s %s = %s, want %s", what, path, got, w)
	}
}

// Condition returns the condition of that type the response sets, or nil.
func (r Response) Condition(typ string) *fnv1.Condition {
	for _, c := range r.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}

// WantCondition checks a condition's status and reason and that its
// message mentions every part.
func (r Response) WantCondition(typ string, status fnv1.Status, reason string, msgParts ...string) {
	r.T.Helper()
	c := r.Condition(typ)
	if c == nil {
		r.T.Fatalf("no %s condition; results: %v", typ, r.GetResults())
	}
	if c.GetStatus() != status || c.GetReason() != reason {
		r.T.Errorf("condition %s = %s/%s (%q), want %s/%s", typ, c.GetStatus(), c.GetReason(), c.GetMessage(), status, reason)
	}
	for _, p := range msgParts {
		if !strings.Contains(c.GetMessage(), p) {
			r.T.Errorf("condition %s message %q does not mention %q", typ, c.GetMessage(), p)
		}
	}
}

// WantEvent checks the results: exactly one with that severity and reason,
// or none when reason is "".
func (r Response) WantEvent(sev fnv1.Severity, reason string) {
	r.T.Helper()
	rs := r.GetResults()
	if reason == "" {
		if len(rs) != 0 {
			r.T.Errorf("want no results (no transition), got %v", rs)
		}
		return
	}
	if len(rs) != 1 || rs[0].GetSeverity() != sev || rs[0].GetReason() != reason {
		r.T.Errorf("results = %v, want one %s %s", rs, sev, reason)
	}
}

// WantNotReady checks that the XR is held not Ready.
func (r Response) WantNotReady() {
	r.T.Helper()
	if got := r.GetDesired().GetComposite().GetReady(); got != fnv1.Ready_READY_FALSE {
		r.T.Errorf("desired composite readiness = %s, want READY_FALSE", got)
	}
}

// WantDerivedReadiness checks that the XR's readiness is left to
// Crossplane to derive from the composed resources.
func (r Response) WantDerivedReadiness() {
	r.T.Helper()
	if got := r.GetDesired().GetComposite().GetReady(); got != fnv1.Ready_READY_UNSPECIFIED {
		r.T.Errorf("desired composite readiness = %s, want it derived from composed resources", got)
	}
}
