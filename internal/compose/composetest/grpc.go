package composetest

import (
	"context"
	"net"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetplane/fleetplane/internal/compose"
)

// Loopback serves srv over gRPC on a loopback port, as function.Serve
// serves a function (without TLS and metrics), and returns a client.
func Loopback(tb testing.TB, srv fnv1.FunctionRunnerServiceServer) fnv1.FunctionRunnerServiceClient {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := grpc.NewServer(grpc.MaxRecvMsgSize(4 << 20))
	fnv1.RegisterFunctionRunnerServiceServer(s, srv)
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
//   - grpc: a call over gRPC on loopback, client and server both counted;
//   - wire: the function's share of a call: decode the request's bytes,
//     run, encode the response;
//   - in-process: RunFunction on a decoded request.
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
		for b.Loop() {
			in := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(raw, in); err != nil {
				b.Fatal(err)
			}
			rsp, err := fn.RunFunction(ctx, in)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := proto.Marshal(rsp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-process", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fn.RunFunction(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
