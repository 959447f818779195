package fnwire

import (
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// The decoder is checked against protobuf-go itself: every request is
// decoded both ways, and what fnwire gives must be what the generated
// types and structpb's AsMap give.

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// everything is a request with every field fnwire reads, and some it
// does not.
func everything(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	xr := mustStruct(t, map[string]any{
		"apiVersion": "adx.fleetplane.io/v1alpha1", "kind": "ADXCluster",
		"metadata": map[string]any{"name": "hub", "namespace": "team-a", "generation": 3},
		"spec": map[string]any{
			"databases": []any{map[string]any{"databaseName": "Metrics"}, map[string]any{}},
			"empty":     []any{}, "nothing": nil, "yes": true, "no": false,
			"ratio": 0.25, "big": 1e300, "negative": -7, "text": "ünïcödé ✓", "blank": "",
			"long": strings.Repeat("x", 20000), "nested": map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{[]any{1, "two"}}}}},
		},
	})
	// The numbers that are not numbers in JSON, which AsInterface names.
	xr.Fields["spec"].GetStructValue().Fields["nan"] = structpb.NewNumberValue(math.NaN())
	xr.Fields["spec"].GetStructValue().Fields["inf"] = structpb.NewNumberValue(math.Inf(1))
	xr.Fields["spec"].GetStructValue().Fields["-inf"] = structpb.NewNumberValue(math.Inf(-1))
	// A Value of no kind.
	xr.Fields["spec"].GetStructValue().Fields["unset"] = &structpb.Value{}
	return &fnv1.RunFunctionRequest{
		Meta: &fnv1.RequestMeta{Tag: "t1", Capabilities: []fnv1.Capability{fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES, fnv1.Capability_CAPABILITY_CONDITIONS}},
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: xr, ConnectionDetails: map[string][]byte{"password": []byte("s3cret"), "empty": {}}},
			Resources: map[string]*fnv1.Resource{
				"cluster": {Resource: mustStruct(t, map[string]any{"kind": "Cluster", "status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}), Ready: fnv1.Ready_READY_TRUE},
				"bare":    {},
				"":        {Resource: mustStruct(t, map[string]any{})},
			},
		},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{Resource: mustStruct(t, map[string]any{"status": map[string]any{"x": "y"}}), Ready: fnv1.Ready_READY_FALSE},
			Resources: map[string]*fnv1.Resource{"earlier-step": {Resource: mustStruct(t, map[string]any{"kind": "Thing"}), Ready: fnv1.Ready(7)}},
		},
		Input:   mustStruct(t, map[string]any{"apiVersion": "fn.fleetplane.io/v1beta1", "kind": "Input", "kusto": map[string]any{"interval": "1m"}}),
		Context: mustStruct(t, map[string]any{"apiextensions.crossplane.io/environment": map[string]any{"region": "eu"}}),
		RequiredResources: map[string]*fnv1.Resources{
			"labels": {Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{"kind": "EnvironmentConfig", "data": map[string]any{"geo": "eu"}})}, {}}},
			"none":   {},
		},
		// Read by neither, so never decoded.
		ExtraResources:  map[string]*fnv1.Resources{"old": {Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{"kind": "Old"})}}}}, //nolint:staticcheck // SA1019: the deprecated field is the case: Crossplane may still send it
		Credentials:     map[string]*fnv1.Credentials{"azure": {Source: &fnv1.Credentials_CredentialData{CredentialData: &fnv1.CredentialData{Data: map[string][]byte{"key": []byte("k")}}}}},
		RequiredSchemas: map[string]*fnv1.Schema{"s": {OpenapiV3: mustStruct(t, map[string]any{"type": "object"})}},
	}
}

// fromProto is what fnwire must decode an encoded req to: the generated
// types' values, with every Struct as AsMap gives it.
func fromProto(req *fnv1.RunFunctionRequest) *Request {
	object := func(s *structpb.Struct) map[string]any {
		if s == nil {
			return nil
		}
		return s.AsMap()
	}
	resource := func(r *fnv1.Resource) *Resource {
		if r == nil {
			return nil
		}
		return &Resource{Object: object(r.GetResource()), ConnectionDetails: r.GetConnectionDetails(), Ready: r.GetReady(), Unknown: r.ProtoReflect().GetUnknown()}
	}
	state := func(s *fnv1.State) State {
		out := State{Composite: resource(s.GetComposite())}
		if s != nil {
			out.Unknown = s.ProtoReflect().GetUnknown()
		}
		if s.GetResources() != nil {
			out.Resources = map[string]*Resource{}
			for k, r := range s.GetResources() {
				out.Resources[k] = resource(r)
				if out.Resources[k] == nil {
					out.Resources[k] = &Resource{}
				}
			}
		}
		return out
	}
	out := &Request{Meta: req.GetMeta(), Observed: state(req.GetObserved()), Desired: state(req.GetDesired()), Input: object(req.GetInput())}
	if req.GetContext() != nil {
		out.Context, _ = proto.MarshalOptions{Deterministic: true}.Marshal(req.GetContext())
	}
	if req.GetRequiredResources() != nil {
		out.Required = map[string][]map[string]any{}
		for k, rs := range req.GetRequiredResources() {
			items := []map[string]any{}
			for _, r := range rs.GetItems() {
				m := object(r.GetResource())
				if m == nil {
					m = map[string]any{}
				}
				items = append(items, m)
			}
			out.Required[k] = items
		}
	}
	return out
}

// sameRequest compares two decoded requests, the context by what it
// encodes, connection details treating nil and empty values alike
// (protobuf does not tell them apart on the wire), and empty maps of
// resources as absent ones.
func sameRequest(t testing.TB, want, got *Request) {
	t.Helper()
	contextOf := func(b []byte) *structpb.Struct {
		if b == nil {
			return nil
		}
		s := &structpb.Struct{}
		if err := proto.Unmarshal(b, s); err != nil {
			t.Fatalf("context does not decode: %v", err)
		}
		return s
	}
	if diff := cmp.Diff(contextOf(want.Context), contextOf(got.Context), protocmp.Transform()); diff != "" {
		t.Errorf("context (-protobuf +fnwire):\n%s", diff)
	}
	w, g := *want, *got
	w.Context, g.Context = nil, nil
	// protobuf-go makes an empty map for a map field of the wrong wire
	// type, which it then skips; empty and absent mean the same.
	for _, r := range []*Request{&w, &g} {
		if len(r.Required) == 0 {
			r.Required = nil
		}
		for _, st := range []*State{&r.Observed, &r.Desired} {
			if len(st.Resources) == 0 {
				st.Resources = nil
			}
			for _, res := range append(slices.Collect(maps.Values(st.Resources)), st.Composite) {
				if res != nil && len(res.ConnectionDetails) == 0 {
					res.ConnectionDetails = nil
				}
			}
		}
	}
	bytesAlike := cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })
	if diff := cmp.Diff(&w, &g, protocmp.Transform(), bytesAlike); diff != "" {
		t.Errorf("decoded request (-protobuf +fnwire):\n%s", diff)
	}
}

func TestDecodeRequestAsProtobufDoes(t *testing.T) {
	req := everything(t)
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	// The generated types decode what was encoded; comparing with that,
	// not with req, makes the NaN a string on both sides.
	decoded := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(b, decoded); err != nil {
		t.Fatal(err)
	}
	sameRequest(t, fromProto(decoded), got)

	// A few facts the comparison rests on, stated plainly.
	spec, _ := got.Observed.Composite.Object["spec"].(map[string]any)
	for k, want := range map[string]any{"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity", "unset": nil, "negative": float64(-7), "text": "ünïcödé ✓"} {
		if v, ok := spec[k]; !ok || v != want {
			t.Errorf("spec.%s = %#v, want %#v", k, v, want)
		}
	}
	if _, ok := got.Required["none"]; !ok {
		t.Error("a requirement Crossplane resolved to nothing must be present, and empty")
	}
}

// field appends one length-delimited field.
func field(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Protobuf merges a message field that appears twice and lets the last of
// a oneof's fields win; encoders may split a message so, and fnwire must
// read the result as protobuf-go does.
func TestDecodeRequestMergesAsProtobufDoes(t *testing.T) {
	xr := func(m map[string]any) []byte {
		return marshal(t, &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, m)}})
	}
	value := func(v *structpb.Value) []byte { return marshal(t, v) }
	// One Struct entry whose Value arrives in three pieces: a list, more
	// of the list, then a number that replaces it.
	entry := field(nil, entryKey, []byte("k"))
	entry = field(entry, entryValue, value(structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("a")}})))
	entry = field(entry, entryValue, value(structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("b")}})))
	listThenMore := field(nil, structFields, entry)
	replaced := field(entry, entryValue, value(structpb.NewNumberValue(2)))

	cases := map[string][]byte{
		"a state in two parts": append(
			field(nil, requestObserved, xr(map[string]any{"spec": map[string]any{"a": 1}, "kind": "X"})),
			field(nil, requestObserved, xr(map[string]any{"spec": map[string]any{"b": 2}}))...),
		"a list value in two parts":            field(nil, requestInput, listThenMore),
		"a oneof set twice":                    field(nil, requestInput, field(nil, structFields, replaced)),
		"a context in two parts":               append(field(nil, requestContext, marshal(t, mustStruct(t, map[string]any{"a": 1}))), field(nil, requestContext, marshal(t, mustStruct(t, map[string]any{"b": 2})))...),
		"meta in two parts":                    append(field(nil, requestMeta, marshal(t, &fnv1.RequestMeta{Tag: "first"})), field(nil, requestMeta, marshal(t, &fnv1.RequestMeta{Capabilities: []fnv1.Capability{1}}))...),
		"unknown fields everywhere":            append(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 5), field(nil, requestInput, append(field(nil, 7, []byte("?")), field(nil, structFields, field(nil, 3, []byte("??")))...))...),
		"a known field of an unexpected type":  protowire.AppendVarint(protowire.AppendTag(nil, requestObserved, protowire.VarintType), 1),
		"an empty context":                     field(nil, requestContext, nil),
		"a map entry without its key or value": field(nil, requestRequiredResources, nil),
		"an empty request":                     nil,
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			want := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(b, want); err != nil {
				t.Fatalf("protobuf refuses the case itself: %v", err)
			}
			got, err := DecodeRequest(b)
			if err != nil {
				t.Fatal(err)
			}
			sameRequest(t, fromProto(want), got)
		})
	}
}

func TestDecodeRequestRefuses(t *testing.T) {
	xr := func(m map[string]any) []byte {
		return field(nil, requestObserved, marshal(t, &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, m)}}))
	}
	valid := xr(map[string]any{"kind": "X"})
	badKey := field(nil, requestInput, field(nil, structFields, field(nil, entryKey, []byte{0xff})))
	badString := field(nil, requestInput, field(nil, structFields, field(field(nil, entryKey, []byte("k")), entryValue, field(nil, valueString, []byte{'a', 0xc3}))))
	deep := []byte{}
	for range maxDepth + 1 {
		deep = field(nil, valueList, field(nil, listValues, deep))
	}
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"cut short":                     {valid[:len(valid)-3], "malformed protobuf"},
		"a length past the end":         {append(protowire.AppendTag(nil, requestObserved, protowire.BytesType), 0x7f), "malformed protobuf"},
		"field number zero":             {protowire.AppendVarint(nil, 0), "malformed protobuf"},
		"invalid UTF-8 in a key":        {badKey, "invalid UTF-8"},
		"invalid UTF-8 in a string":     {badString, "invalid UTF-8"},
		"values nested without end":     {field(nil, requestInput, field(nil, structFields, field(field(nil, entryKey, []byte("k")), entryValue, deep))), "deeper than 3000"},
		"an end of group never started": {protowire.AppendTag(nil, 5, protowire.EndGroupType), "malformed protobuf"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := proto.Unmarshal(tc.b, &fnv1.RunFunctionRequest{}); err == nil && !strings.Contains(tc.want, "deeper") {
				t.Fatal("protobuf accepts the case: it is not a refusal")
			}
			_, err := DecodeRequest(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzDecodeRequest decodes arbitrary bytes both ways: whatever protobuf-go
// accepts, fnwire must decode to the same request, and nothing may make
// it panic.
func FuzzDecodeRequest(f *testing.F) {
	// Without its long string, which the mutator would spend its time on.
	seed := everything(f)
	delete(seed.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue().GetFields(), "long")
	f.Add(marshal(f, seed))
	f.Add(marshal(f, &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {Ready: fnv1.Ready_READY_TRUE}}}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := DecodeRequest(b)
		runtime.ReadMemStats(&after)
		// Decoding is linear: what a request of n bytes may allocate is
		// a small multiple of n (an empty Struct is two bytes and a map),
		// whatever repeats or nests in it.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAllocPerByte*uint64(len(b))+64<<10 {
			t.Fatalf("%d bytes of request allocated %d bytes", len(b), alloc)
		}
		want := &fnv1.RunFunctionRequest{}
		if proto.Unmarshal(b, want) != nil {
			return
		}
		if err != nil {
			t.Fatalf("protobuf decodes the request, fnwire does not: %v", err)
		}
		sameRequest(t, fromProto(want), got)
	})
}

// maxAllocPerByte bounds what decoding allocates per byte of request.
const maxAllocPerByte = 256

// TestDecodeRequestMergesMapValuesInLinearTime: a map entry whose message
// value arrives in thousands of pieces merges as protobuf merges it, in
// time and memory linear in its size. Joining the pieces' bytes before
// decoding them was quadratic: 160 KB took 3.2 s (protobuf-go: 0.85 ms).
func TestDecodeRequestMergesMapValuesInLinearTime(t *testing.T) {
	piece := marshal(t, &fnv1.Resource{Resource: mustStruct(t, map[string]any{"a": 1})})
	entry := field(nil, entryKey, []byte("k"))
	for len(entry) < 160_000 {
		entry = field(entry, entryValue, piece)
	}
	requiredPiece := marshal(t, &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{"b": 2})}}})
	requiredEntry := field(nil, entryKey, []byte("r"))
	for len(requiredEntry) < 160_000 {
		requiredEntry = field(requiredEntry, entryValue, requiredPiece)
	}
	b := append(field(nil, requestObserved, field(nil, stateResources, entry)), field(nil, requestRequiredResources, requiredEntry)...)

	want := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(b, want); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	got, err := DecodeRequest(b)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, fromProto(want), got)
	if n := len(got.Required["r"]); n < 7_000 {
		t.Errorf("%d required items, want every piece's", n)
	}
	// Linear: about what protobuf-go allocates for the same bytes.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAllocPerByte*uint64(len(b)) {
		t.Errorf("allocated %d bytes for %d bytes of request", alloc, len(b))
	}
	if took > 200*time.Millisecond {
		t.Errorf("took %s for %d bytes", took, len(b))
	}
	t.Logf("%d bytes decoded in %s", len(b), took)
}
