package fnwire

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// copier composes one resource from the observed XR's spec, fails when
// the spec says so, and composes what cannot be encoded when asked to.
type copier struct{}

func (copier) Run(_ context.Context, req *Request) (*Response, error) {
	spec, _ := req.Observed.Composite.Object["spec"].(map[string]any)
	if spec["fail"] == true {
		return nil, status.Error(codes.FailedPrecondition, "asked to fail")
	}
	rsp := NewResponse(req, time.Minute)
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*Resource{}
	}
	obj := map[string]any{"apiVersion": "example.org/v1", "kind": "Copy", "spec": spec}
	if spec["unencodable"] == true {
		obj["bad"] = []string{"x"}
	}
	rsp.Desired.Resources["copy"] = &Resource{Object: obj, Ready: fnv1.Ready_READY_TRUE}
	return rsp, nil
}

// serve starts fn on loopback as Serve would, recording the methods and
// request types the interceptors see, and returns a connection to it.
func serve(t *testing.T, seen *[]string) *grpc.ClientConn {
	t.Helper()
	record := func(o *function.ServeOptions) error {
		o.UnaryInterceptors = append(o.UnaryInterceptors, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			_, wire := req.(*Request)
			*seen = append(*seen, info.FullMethod+map[bool]string{true: " fnwire", false: " protobuf"}[wire])
			return h(ctx, req)
		})
		return nil
	}
	s, lis, err := NewServer(copier{}, function.Listen("tcp", "127.0.0.1:0"), function.Insecure(true), function.WithMetricsServer(""), record)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func requestWithSpec(t *testing.T, spec map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	return &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "served"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, map[string]any{"kind": "XR", "spec": spec})}},
	}
}

func TestServedAsEitherVersion(t *testing.T) {
	var seen []string
	conn := serve(t, &seen)
	ctx := context.Background()
	req := requestWithSpec(t, map[string]any{"size": 3, "name": "x"})

	v1, err := fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	copied := v1.GetDesired().GetResources()["copy"]
	if copied.GetReady() != fnv1.Ready_READY_TRUE || copied.GetResource().AsMap()["spec"].(map[string]any)["size"] != float64(3) || v1.GetMeta().GetTag() != "served" {
		t.Errorf("v1 response = %v", v1)
	}

	// v1beta1's messages are v1's, field for field.
	breq := &v1beta1.RunFunctionRequest{}
	if err := proto.Unmarshal(marshal(t, req), breq); err != nil {
		t.Fatal(err)
	}
	beta, err := v1beta1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, breq)
	if err != nil {
		t.Fatal(err)
	}
	if b, v := marshalDeterministic(t, beta), marshalDeterministic(t, v1); string(b) != string(v) {
		t.Error("v1beta1 answered differently from v1")
	}
	want := []string{
		"/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction fnwire",
		"/apiextensions.fn.proto.v1beta1.FunctionRunnerService/RunFunction protobuf",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("interceptors saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

func marshalDeterministic(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// raw sends bytes as they are, for requests no generated client would
// encode.
type raw struct{}

func (raw) Marshal(v any) (mem.BufferSlice, error) {
	b, _ := v.(*[]byte)
	return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
}

func (raw) Unmarshal(data mem.BufferSlice, v any) error {
	b, _ := v.(*[]byte)
	*b = data.Materialize()
	return nil
}

func (raw) Name() string { return "proto" }

func TestServedErrors(t *testing.T) {
	conn := serve(t, new([]string))
	ctx := context.Background()
	client := fnv1.NewFunctionRunnerServiceClient(conn)

	_, err := client.RunFunction(ctx, requestWithSpec(t, map[string]any{"fail": true}))
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("a runner's error: %v, want its own status", err)
	}
	_, err = client.RunFunction(ctx, requestWithSpec(t, map[string]any{"unencodable": true}))
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), `composed resource "copy": bad: a []string cannot be a protobuf Value`) {
		t.Errorf("a response that cannot be encoded: %v", err)
	}

	badKey := field(nil, requestInput, field(nil, structFields, field(nil, entryKey, []byte{0xff})))
	var out []byte
	err = conn.Invoke(ctx, fnv1.FunctionRunnerService_RunFunction_FullMethodName, &badKey, &out, grpc.ForceCodecV2(raw{}))
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "invalid UTF-8") {
		t.Errorf("a request that does not decode: %v", err)
	}
	truncated := protowire.AppendTag(nil, requestObserved, protowire.BytesType)
	err = conn.Invoke(ctx, fnv1.FunctionRunnerService_RunFunction_FullMethodName, &truncated, &out, grpc.ForceCodecV2(raw{}))
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "malformed protobuf") {
		t.Errorf("a truncated request: %v", err)
	}
}

func TestNewServerRefuses(t *testing.T) {
	if _, _, err := NewServer(copier{}, function.Listen("tcp", "127.0.0.1:0")); err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Errorf("no credentials: %v", err)
	}
	broken := func(*function.ServeOptions) error { return errors.New("broken option") }
	if _, _, err := NewServer(copier{}, broken); err == nil || !strings.Contains(err.Error(), "broken option") {
		t.Errorf("a failing option: %v", err)
	}
}

// TestServeFollowsTheSDK fails when function-sdk-go's serve options
// change: NewServer re-implements function.Serve around them (the SDK has
// no hook for a codec), so a new option, or a changed type, must be read
// here too before the SDK is upgraded.
func TestServeFollowsTheSDK(t *testing.T) {
	handled := map[string]string{
		"Network":           "string",
		"Address":           "string",
		"MaxRecvMsgSize":    "int",
		"Credentials":       "credentials.TransportCredentials",
		"HealthServer":      "grpc_health_v1.HealthServer",
		"MetricsAddress":    "string",
		"MetricsRegistry":   "*prometheus.Registry",
		"UnaryInterceptors": "[]grpc.UnaryServerInterceptor",
		"MetricsServerOpts": "[]prometheus.ServerMetricsOption",
	}
	got := map[string]string{}
	for f := range reflect.TypeFor[function.ServeOptions]().Fields() {
		got[f.Name] = f.Type.String()
	}
	if diff := cmp.Diff(handled, got); diff != "" {
		t.Errorf("function.ServeOptions changed (-what NewServer handles +the SDK's); follow it in NewServer:\n%s", diff)
	}
}
