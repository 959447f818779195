package fnwire

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/proto"
)

// Serve serves fn as function.Serve of the SDK does, with the same
// options (listener, mTLS, message size, metrics, health), except that
// the gRPC server's metrics are only registered in the metrics registry,
// whose endpoint the caller serves (securely: package securemetrics), and
// requests and responses of apiextensions.fn.proto.v1, the version
// Crossplane v1.17 and later call, are decoded and encoded by this
// package. v1beta1, for older Crossplane, is served through generated
// protobuf types, as the SDK serves it. It blocks until the server fails.
func Serve(fn Runner, opts ...function.ServeOption) error {
	s, lis, err := NewServer(fn, opts...)
	if err != nil {
		return err
	}
	if err := s.Serve(lis); err != nil {
		return fmt.Errorf("cannot serve gRPC connections: %w", err)
	}
	return nil
}

// NewServer builds the server Serve serves, and its listener.
func NewServer(fn Runner, opts ...function.ServeOption) (*grpc.Server, net.Listener, error) {
	so := &function.ServeOptions{
		Network:        function.DefaultNetwork,
		Address:        function.DefaultAddress,
		MaxRecvMsgSize: function.DefaultMaxRecvMsgSize,
		MetricsAddress: function.DefaultMetricsAddress,
	}
	for _, o := range opts {
		if err := o(so); err != nil {
			return nil, nil, fmt.Errorf("cannot apply a serve option: %w", err)
		}
	}
	if so.Credentials == nil {
		return nil, nil, errors.New("no credentials: serve with mTLS certificates or insecurely, and say which")
	}
	if so.MetricsRegistry == nil {
		if r, ok := prometheus.DefaultRegisterer.(*prometheus.Registry); ok {
			so.MetricsRegistry = r
		} else {
			so.MetricsRegistry = prometheus.NewRegistry()
		}
	}
	lis, err := (&net.ListenConfig{}).Listen(context.Background(), so.Network, so.Address)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot listen for %s connections at %q: %w", so.Network, so.Address, err)
	}
	serverOpts := []grpc.ServerOption{grpc.MaxRecvMsgSize(so.MaxRecvMsgSize), grpc.Creds(so.Credentials), Codec()}
	var metrics *grpcprometheus.ServerMetrics
	if so.MetricsAddress != "" {
		metrics = grpcprometheus.NewServerMetrics(so.MetricsServerOpts...)
		serverOpts = append(serverOpts, grpc.ChainUnaryInterceptor(append([]grpc.UnaryServerInterceptor{metrics.UnaryServerInterceptor()}, so.UnaryInterceptors...)...))
		so.MetricsRegistry.MustRegister(metrics)
	} else if len(so.UnaryInterceptors) > 0 {
		serverOpts = append(serverOpts, grpc.ChainUnaryInterceptor(so.UnaryInterceptors...))
	}
	s := grpc.NewServer(serverOpts...)
	reflection.Register(s)
	Register(s, fn)
	v1beta1.RegisterFunctionRunnerServiceServer(s, function.ServeBeta(protoServer{r: fn}))
	if so.HealthServer != nil {
		healthgrpc.RegisterHealthServer(s, so.HealthServer)
	}
	if metrics != nil {
		metrics.InitializeMetrics(s)
	}
	return s, lis, nil
}

// RunProto runs r on a request of generated protobuf types. It passes
// through the wire format both ways, so r behaves exactly as served.
func RunProto(ctx context.Context, r Runner, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	wreq, err := FromProto(req)
	if err != nil {
		return nil, err
	}
	wrsp, err := r.Run(ctx, wreq)
	if err != nil {
		return nil, err
	}
	return wrsp.Proto()
}

// FromProto is req, held as generated protobuf types, as a function
// served by this package receives it: encoded, then decoded.
func FromProto(req *fnv1.RunFunctionRequest) (*Request, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	return DecodeRequest(b)
}

// Proto is the response as Crossplane receives it: encoded, then decoded
// into generated protobuf types.
func (r *Response) Proto() (*fnv1.RunFunctionResponse, error) {
	b, err := r.AppendWire(nil)
	if err != nil {
		return nil, err
	}
	rsp := &fnv1.RunFunctionResponse{}
	return rsp, proto.Unmarshal(b, rsp)
}

// protoServer serves a Runner as the generated service.
type protoServer struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	r Runner
}

func (s protoServer) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return RunProto(ctx, s.r, req)
}
