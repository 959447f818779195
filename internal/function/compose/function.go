package compose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	"github.com/fleetplane/fleetplane/internal/function/fnwire"
)

// Function is a composition function's gRPC service: it hands each
// request to the Composer of the XR's kind. fnwire serves it: Run is what
// Crossplane calls; RunFunction takes and gives generated protobuf types.
type Function struct {
	log       logging.Logger
	composers map[schema.GroupKind]Composer
}

// NewFunction serves the given composers.
func NewFunction(log logging.Logger, composers map[schema.GroupKind]Composer) *Function {
	return &Function{log: log, composers: composers}
}

// Run composes the XR in req.
func (f *Function) Run(_ context.Context, req *fnwire.Request) (*fnwire.Response, error) {
	rsp := fnwire.NewResponse(req, response.DefaultTTL)

	in := &v1beta1.Input{}
	if req.Input != nil {
		if err := decodeInput(req.Input, in); err != nil {
			response.Fatal(rsp.Rest, errors.Wrap(err, "cannot read the function input"))
			return rsp, nil
		}
	}
	// Only the kind is needed to dispatch; the composer decodes the XR.
	var xr map[string]any
	if c := req.Observed.Composite; c != nil {
		xr = c.Object
	}
	md, _ := xr["metadata"].(map[string]any)
	apiVersion, _ := xr["apiVersion"].(string)
	kind, _ := xr["kind"].(string)
	namespace, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)

	c, ok := f.composers[gvk.GroupKind()]
	if !ok {
		response.Fatal(rsp.Rest, fmt.Errorf("function-fleetplane does not compose %s; it composes %s", gvk.GroupKind(), f.kinds()))
		return rsp, nil
	}
	err := c.Compose(req, rsp, in)
	// Built once a call has something to log, not before: a logger with
	// values costs allocations on every call.
	xrKeys := []any{"kind", gvk.Kind, "namespace", namespace, "name", name, "tag", req.Meta.GetTag()}
	if err != nil {
		f.log.Info("Cannot compose", append(xrKeys, "error", err)...)
		response.Fatal(rsp.Rest, err)
		return rsp, nil
	}
	f.log.Debug("Composed", append(xrKeys, "resources", len(rsp.Desired.Resources))...)
	return rsp, nil
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
