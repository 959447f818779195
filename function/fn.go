package main

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

	adxv1alpha1 "github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	expv1alpha1 "github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/adxcluster"
	"github.com/fleetplane/fleetplane/internal/adxmon"
	"github.com/fleetplane/fleetplane/internal/component"
	"github.com/fleetplane/fleetplane/internal/compose"
	"github.com/fleetplane/fleetplane/internal/experiment"
	"github.com/fleetplane/fleetplane/internal/placement"
)

// Function is fleetplane's composition function: it hands each request to
// the composer of the XR's kind.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log       logging.Logger
	composers map[schema.GroupKind]compose.Composer
}

// NewFunction returns the function with every kind it composes: one line
// per kind.
func NewFunction(log logging.Logger) *Function {
	return &Function{
		log: log,
		composers: map[schema.GroupKind]compose.Composer{
			adxv1alpha1.ADXClusterGroupVersionKind.GroupKind():            adxcluster.Composer,
			adxv1alpha1.ADXMonGroupVersionKind.GroupKind():                adxmon.Composer,
			expv1alpha1.ExperimentGroupVersionKind.GroupKind():            experiment.Composer,
			expv1alpha1.ComponentGroupVersionKind.GroupKind():             component.Composer,
			placementv1alpha1.PlacementGroupVersionKind.GroupKind():       placement.Composer,
			placementv1alpha1.CustomTransformGroupVersionKind.GroupKind(): placement.CustomTransformComposer,
			placementv1alpha1.StatusCollectorGroupVersionKind.GroupKind(): placement.StatusCollectorComposer,
		},
	}
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
	log := f.log.WithValues("kind", gvk.Kind, "namespace", md["namespace"].GetStringValue(), "name", md["name"].GetStringValue(), "tag", req.GetMeta().GetTag())

	c, ok := f.composers[gvk.GroupKind()]
	if !ok {
		response.Fatal(rsp, fmt.Errorf("function-fleetplane does not compose %s; it composes %s", gvk.GroupKind(), f.kinds()))
		return rsp, nil
	}
	if err := c.Compose(req, rsp, in); err != nil {
		log.Info("Cannot compose", "error", err)
		response.Fatal(rsp, err)
		return rsp, nil
	}
	log.Debug("Composed", "resources", len(rsp.GetDesired().GetResources()))
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
