package composetest

import (
	"context"
	"net"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/fnwire"
)

// Loopback serves fn over gRPC on a loopback port, as fnwire.Serve serves
// function-fleetplane (without TLS and metrics), and returns a client of
// the generated protobuf types, as Crossplane's.
func Loopback(tb testing.TB, fn *compose.Function) fnv1.FunctionRunnerServiceClient {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := grpc.NewServer(grpc.MaxRecvMsgSize(4<<20), fnwire.Codec())
	fnwire.Register(s, fn)
	go func() { _ = s.Serve(lis) }()
	tb.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return fnv1.NewFunctionRunnerServiceClient(conn)
}

// BenchmarkRunFunction measures a request to one kind's composer behind
// compose.Function three ways:
//   - grpc: a call over gRPC on loopback, client and server both counted
//     (the client encodes and decodes with generated protobuf types, as
//     Crossplane does);
//   - wire: the function's share of a call: decode the request's bytes,
//     run, encode the response;
//   - in-process: Run on a decoded request.
func BenchmarkRunFunction(b *testing.B, gk schema.GroupKind, c compose.Composer, req *fnv1.RunFunctionRequest) {
	fn := compose.NewFunction(logging.NewNopLogger(), map[schema.GroupKind]compose.Composer{gk: c})
	ctx := context.Background()
	first, err := fn.RunFunction(ctx, req)
	if err != nil || len(first.GetResults()) > 0 && first.GetResults()[0].GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
		b.Fatalf("RunFunction: %v %v", err, first.GetResults())
	}
	raw, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("grpc", func(b *testing.B) {
		client := Loopback(b, fn)
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := client.RunFunction(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		var out []byte
		for b.Loop() {
			in, err := fnwire.DecodeRequest(raw)
			if err != nil {
				b.Fatal(err)
			}
			rsp, err := fn.Run(ctx, in)
			if err != nil {
				b.Fatal(err)
			}
			// The served codec reuses pooled buffers likewise.
			if out, err = rsp.AppendWire(out[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-process", func(b *testing.B) {
		in := Wire(b, req)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fn.Run(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCompose measures one composer on a decoded request: the plan
// and the skeleton around it, without the wire. It fails unless the first
// call composes wantResources resources, and returns that call's response.
func BenchmarkCompose(b *testing.B, c compose.Composer, call Call, wantResources int) *fnwire.Response {
	b.Helper()
	req := call.Wire(b)
	first := fnwire.NewResponse(req, response.DefaultTTL)
	if _, err := c.Compose(req, first, call.Input); err != nil {
		b.Fatal(err)
	}
	if got := len(first.Desired.Resources); got != wantResources {
		b.Fatalf("composed %d resources, want %d", got, wantResources)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compose(req, fnwire.NewResponse(req, response.DefaultTTL), call.Input); err != nil {
			b.Fatal(err)
		}
	}
	return first
}
