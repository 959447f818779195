package compose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	"github.com/fleetplane/fleetplane/function/fnwire"
)

// Function is a composition function's gRPC service: it hands each
// request to the Composer of the XR's kind. fnwire serves it: Run is what
// Crossplane calls; RunFunction takes and gives generated protobuf types.
type Function struct {
	log       logging.Logger
	composers map[schema.GroupKind]Composer
	rec       Recorder
}

// A Recorder takes what each call did, for the function's metrics.
type Recorder interface {
	// Run is one call: the XR's kind (UnknownKind for a kind the function
	// does not compose), how long it took and its Result.
	Run(kind string, took time.Duration, result string)
	// Copies is what a call placed for the XR namespace/name.
	Copies(namespace, name string, c Copies)
}

// Results of a call, by the most severe result it returned.
const (
	ResultNormal  = "normal"
	ResultWarning = "warning"
	// ResultRefused: the policy refused the XR (a Fatal condition): the
	// tenant's to change, not a failure of the function, so it is counted
	// apart from ResultFatal, which pages.
	ResultRefused = "refused"
	ResultFatal   = "fatal"
)

// UnknownKind is the kind a Recorder is told for an XR of a kind the
// function does not compose: never the kind itself, which any XRD may
// name.
const UnknownKind = "unknown"

// NewFunction serves the given composers.
func NewFunction(log logging.Logger, composers map[schema.GroupKind]Composer) *Function {
	return &Function{log: log, composers: composers}
}

// WithRecorder makes f report each call to r.
func (f *Function) WithRecorder(r Recorder) *Function {
	f.rec = r
	return f
}

// Run composes the XR in req.
func (f *Function) Run(_ context.Context, req *fnwire.Request) (*fnwire.Response, error) {
	start := time.Now()
	rsp := fnwire.NewResponse(req, response.DefaultTTL)
	kind, namespace, name, sum := f.run(req, rsp)
	if f.rec != nil {
		f.rec.Run(kind, time.Since(start), result(rsp.Rest))
		if sum.Copies != nil {
			f.rec.Copies(namespace, name, *sum.Copies)
		}
	}
	return rsp, nil
}

// run composes into rsp and says for which kind and XR.
func (f *Function) run(req *fnwire.Request, rsp *fnwire.Response) (kind, namespace, name string, sum Summary) {
	// Only the kind is needed to dispatch; the composer decodes the XR.
	var xr map[string]any
	if c := req.Observed.Composite; c != nil {
		xr = c.Object
	}
	md, _ := xr["metadata"].(map[string]any)
	apiVersion, _ := xr["apiVersion"].(string)
	kind, _ = xr["kind"].(string)
	namespace, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)

	c, ok := f.composers[gvk.GroupKind()]
	if !ok {
		kind = UnknownKind
	}
	in := &v1beta1.Input{}
	if req.Input != nil {
		if err := decodeInput(req.Input, in); err != nil {
			response.Fatal(rsp.Rest, errors.Wrap(err, "cannot read the function input"))
			return kind, namespace, name, sum
		}
	}
	if !ok {
		response.Fatal(rsp.Rest, fmt.Errorf("function-fleetplane does not compose %s; it composes %s", gvk.GroupKind(), f.kinds()))
		return kind, namespace, name, sum
	}
	sum, err := c.Compose(req, rsp, in)
	// Built once a call has something to log, not before: a logger with
	// values costs allocations on every call.
	xrKeys := []any{"kind", gvk.Kind, "namespace", namespace, "name", name, "tag", req.Meta.GetTag()}
	if err != nil {
		f.log.Info("Cannot compose", append(xrKeys, "error", err)...)
		response.Fatal(rsp.Rest, err)
		return kind, namespace, name, Summary{}
	}
	f.log.Debug("Composed", append(xrKeys, "resources", len(rsp.Desired.Resources))...)
	return kind, namespace, name, sum
}

// result is the most severe result of rsp: normal, warning, refused,
// fatal.
func result(rsp *fnv1.RunFunctionResponse) string {
	out := ResultNormal
	for _, r := range rsp.GetResults() {
		switch r.GetSeverity() {
		case fnv1.Severity_SEVERITY_FATAL:
			// A Fatal condition's result carries its reason (Report);
			// the function's own failures carry none.
			if r.GetReason() != "" {
				out = ResultRefused
				continue
			}
			return ResultFatal
		case fnv1.Severity_SEVERITY_WARNING:
			if out == ResultNormal {
				out = ResultWarning
			}
		case fnv1.Severity_SEVERITY_UNSPECIFIED, fnv1.Severity_SEVERITY_NORMAL:
		}
	}
	return out
}

// decodeInput decodes the function input strictly, as the SDK's
// request.GetInput does: a field the Input does not have is an error,
// not silently ignored. A field that moved to the cluster admin's
// ClusterProviderConfig is named with where it went.
func decodeInput(m map[string]any, in *v1beta1.Input) error {
	var moved []string
	for _, path := range slices.Sorted(maps.Keys(v1beta1.Moved)) {
		if _, ok, _ := unstructured.NestedFieldNoCopy(m, strings.Split(path, ".")...); ok {
			moved = append(moved, fmt.Sprintf("%s moved to %s", path, v1beta1.Moved[path]))
		}
	}
	if len(moved) > 0 {
		return fmt.Errorf("the input sets what is now the cluster admin's policy, so that every Composition follows it: %s", strings.Join(moved, "; "))
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, in, true)
}

// RunFunction is Run for a request and response as generated protobuf
// types, for callers that hold those (tests, mostly).
func (f *Function) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return fnwire.RunProto(ctx, f, req)
}

func (f *Function) kinds() string {
	kinds := make([]string, 0, len(f.composers))
	for gk := range f.composers {
		kinds = append(kinds, gk.String())
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}
