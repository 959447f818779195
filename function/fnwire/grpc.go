package fnwire

import (
	"context"
	"sync/atomic"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	// The protobuf codec every other message of the server goes through.
	_ "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// Runner runs a composition function on decoded requests.
type Runner interface {
	Run(ctx context.Context, req *Request) (*Response, error)
}

// Register serves r as apiextensions.fn.proto.v1's FunctionRunnerService
// on s, which must have been made with the ServerOption of Codec: the
// service's name, method and protobuf messages are the generated ones, so
// Crossplane calls it as it calls any function.
func Register(s *grpc.Server, r Runner) {
	s.RegisterService(&serviceDesc, r)
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: fnv1.FunctionRunnerService_ServiceDesc.ServiceName,
	HandlerType: (*Runner)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "RunFunction", Handler: runFunction}},
	// The same file as the generated service's, so that gRPC reflection
	// describes it.
	Metadata: fnv1.FunctionRunnerService_ServiceDesc.Metadata,
}

func runFunction(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	req := &Request{}
	if err := dec(req); err != nil {
		return nil, err
	}
	r, _ := srv.(Runner)
	if interceptor == nil {
		return r.Run(ctx, req)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: fnv1.FunctionRunnerService_RunFunction_FullMethodName}
	return interceptor(ctx, req, info, func(ctx context.Context, req any) (any, error) {
		in, _ := req.(*Request)
		return r.Run(ctx, in)
	})
}

// Codec is the ServerOption that has a gRPC server decode Requests and
// encode Responses with this package, and every other message (health
// checks, reflection, the v1beta1 service) with gRPC's protobuf codec.
func Codec() grpc.ServerOption {
	return grpc.ForceServerCodecV2(codec{proto: encoding.GetCodecV2("proto")})
}

type codec struct{ proto encoding.CodecV2 }

// lastSize is the size of the latest response, which the next one's
// buffer is taken at: a function answers the same few XRs over and over,
// so this is nearly always enough, and a response does not grow its
// buffer by doubling (each step a copy and garbage) on every call.
var lastSize atomic.Int64

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*Response)
	if !ok {
		return c.proto.Marshal(v)
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(int(lastSize.Load()) + 1024)
	b, err := r.AppendWire((*buf)[:0])
	if err != nil {
		pool.Put(buf)
		return nil, err
	}
	lastSize.Store(int64(len(b)))
	if cap(b) != cap(*buf) {
		// It outgrew the pooled buffer after all.
		pool.Put(buf)
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*Request)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	// Everything decoded is copied out of data, which gRPC frees.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	got, err := DecodeRequest(buf.ReadOnlyData())
	if err != nil {
		return err
	}
	*r = *got
	return nil
}

func (codec) Name() string { return "proto" }
