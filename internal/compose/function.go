package compose

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
)

// Function is a composition function's gRPC service: it hands each
// request to the Composer of the XR's kind.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log       logging.Logger
	composers map[schema.GroupKind]Composer
}

// NewFunction serves the given composers.
func NewFunction(log logging.Logger, composers map[schema.GroupKind]Composer) *Function {
	return &Function{log: log, composers: composers}
}

// RunFunction composes the XR in req.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	in := &v1beta1.Input{}
	if req.GetInput() != nil {
		if err := request.GetInput(req, in); err != nil {
			response.Fatal(rsp, errors.Wrap(err, "cannot read the function input"))
			return rsp, nil
		}
	}
	// Only the kind is needed to dispatch; the composer decodes the XR.
	xr := req.GetObserved().GetComposite().GetResource().GetFields()
	md := xr["metadata"].GetStructValue().GetFields()
	gvk := schema.FromAPIVersionAndKind(xr["apiVersion"].GetStringValue(), xr["kind"].GetStringValue())

	c, ok := f.composers[gvk.GroupKind()]
	if !ok {
		response.Fatal(rsp, fmt.Errorf("function-fleetplane does not compose %s; it composes %s", gvk.GroupKind(), f.kinds()))
		return rsp, nil
	}
	err := c.Compose(req, rsp, in)
	// Built once a call has something to log, not before: a logger with
	// values costs allocations on every call.
	xrKeys := []any{"kind", gvk.Kind, "namespace", md["namespace"].GetStringValue(), "name", md["name"].GetStringValue(), "tag", req.GetMeta().GetTag()}
	if err != nil {
		f.log.Info("Cannot compose", append(xrKeys, "error", err)...)
		response.Fatal(rsp, err)
		return rsp, nil
	}
	f.log.Debug("Composed", append(xrKeys, "resources", len(rsp.GetDesired().GetResources()))...)
	return rsp, nil
}

func (f *Function) kinds() string {
	kinds := make([]string, 0, len(f.composers))
	for gk := range f.composers {
		kinds = append(kinds, gk.String())
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}
