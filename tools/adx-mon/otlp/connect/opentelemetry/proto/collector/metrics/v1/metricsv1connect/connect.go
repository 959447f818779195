// Package metricsv1connect serves OTLP's MetricsService with connect-go,
// under the import path adx-mon's collector uses, whose buf.build module
// the Go module proxy does not serve. Only what the collector uses: the
// handler, as protoc-gen-connect-go writes it.
package metricsv1connect

import (
	"context"
	"net/http"

	v1 "buf.build/gen/go/opentelemetry/opentelemetry/protocolbuffers/go/opentelemetry/proto/collector/metrics/v1"
	connect "github.com/bufbuild/connect-go"
)

const (
	// MetricsServiceName is the service's fully-qualified protobuf name.
	MetricsServiceName = "opentelemetry.proto.collector.metrics.v1.MetricsService"
	// MetricsServiceExportProcedure is the Export RPC's path.
	MetricsServiceExportProcedure = "/" + MetricsServiceName + "/Export"
)

// MetricsServiceHandler serves the MetricsService.
type MetricsServiceHandler interface {
	Export(ctx context.Context, req *connect.Request[v1.ExportMetricsServiceRequest]) (*connect.Response[v1.ExportMetricsServiceResponse], error)
}

// NewMetricsServiceHandler returns the path prefix to mount the handler
// at and the handler, which serves Export over the Connect, gRPC and
// gRPC-Web protocols.
func NewMetricsServiceHandler(svc MetricsServiceHandler, opts ...connect.HandlerOption) (string, http.Handler) {
	export := connect.NewUnaryHandler(MetricsServiceExportProcedure, svc.Export, opts...)
	return "/" + MetricsServiceName + "/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != MetricsServiceExportProcedure {
			http.NotFound(w, r)
			return
		}
		export.ServeHTTP(w, r)
	})
}
