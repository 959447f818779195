package fnwire

import (
	"maps"
	"slices"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// A field a newer Crossplane, or an earlier step built on a newer SDK,
// sets on State or Resource must reach the next step as the SDK would
// pass it: response.To hands the request's desired state on whole, and
// protobuf-go keeps the fields it does not know.

// future is what a newer schema might add: a string, a varint, a nested
// message, a fixed64 and a known number with another wire type, which
// protobuf-go also keeps as unknown.
func future(known protowire.Number) []byte {
	var b []byte
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	b = protowire.AppendString(b, "from a newer Crossplane")
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1))
	b = protowire.AppendTag(b, 6, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 42)
	b = protowire.AppendTag(b, known, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, 7)
}

// withUnknown is req with unknown fields on every State and Resource.
func withUnknown(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	req = proto.CloneOf(req)
	for _, s := range []*fnv1.State{req.GetObserved(), req.GetDesired()} {
		s.ProtoReflect().SetUnknown(future(stateComposite))
		for _, r := range append([]*fnv1.Resource{s.GetComposite()}, slices.Collect(maps.Values(s.GetResources()))...) {
			if r != nil {
				r.ProtoReflect().SetUnknown(future(resourceObject))
			}
		}
	}
	return req
}

func TestDecodeRequestKeepsUnknownFields(t *testing.T) {
	req := withUnknown(everything(t))
	got, err := DecodeRequest(marshal(t, req))
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, fromProto(req), got)
	if string(got.Desired.Composite.Unknown) != string(future(resourceObject)) {
		t.Errorf("the desired composite's unknown fields = %x, want %x", got.Desired.Composite.Unknown, future(resourceObject))
	}
	if string(got.Desired.Unknown) != string(future(stateComposite)) {
		t.Errorf("the desired state's unknown fields = %x, want %x", got.Desired.Unknown, future(stateComposite))
	}
}

// passOn is what the function answers a request it adds nothing to, and
// sdk what the SDK's response.To answers: they must be the same message.
func passOn(t testing.TB, b []byte) (ours, sdk *fnv1.RunFunctionResponse, ok bool) {
	t.Helper()
	want := &fnv1.RunFunctionRequest{}
	if proto.Unmarshal(b, want) != nil {
		return nil, nil, false
	}
	req, err := DecodeRequest(b)
	if err != nil {
		t.Fatalf("protobuf decodes the request, fnwire does not: %v", err)
	}
	out, err := NewResponse(req, time.Minute).AppendWire(nil)
	if err != nil {
		// A request protobuf-go decodes whose objects no response can
		// carry (a Struct key of invalid UTF-8 is refused on the way in,
		// so this is a bug).
		t.Fatalf("the request decoded, its desired state does not encode: %v", err)
	}
	ours = &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(out, ours); err != nil {
		t.Fatalf("the response does not decode: %v", err)
	}
	return ours, response.To(want, time.Minute), true
}

func TestPassedOnStateKeepsUnknownFields(t *testing.T) {
	ours, sdk, _ := passOn(t, marshal(t, withUnknown(everything(t))))
	if diff := cmp.Diff(sdk, ours, protocmp.Transform()); diff != "" {
		t.Errorf("passed-on response (-SDK +fnwire):\n%s", diff)
	}
	// And byte for byte where the SDK writes the same message
	// deterministically: unknown fields after the known ones.
	sdkDesired, err := proto.MarshalOptions{Deterministic: true}.Marshal(sdk.GetDesired())
	if err != nil {
		t.Fatal(err)
	}
	oursDesired, err := proto.MarshalOptions{Deterministic: true}.Marshal(ours.GetDesired())
	if err != nil {
		t.Fatal(err)
	}
	if string(sdkDesired) != string(oursDesired) {
		t.Error("the passed-on desired state differs from the SDK's in its bytes")
	}
}

// FuzzPassOn is the differential fuzzer of a pass-through: whatever
// request protobuf-go decodes, unknown fields and all, the function's
// untouched response must be the SDK's.
func FuzzPassOn(f *testing.F) {
	seed := withUnknown(everything(f))
	delete(seed.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue().GetFields(), "long")
	f.Add(marshal(f, seed))
	f.Add(marshal(f, withUnknown(&fnv1.RunFunctionRequest{Observed: &fnv1.State{}, Desired: &fnv1.State{Composite: &fnv1.Resource{}, Resources: map[string]*fnv1.Resource{"a": {Ready: fnv1.Ready_READY_TRUE}}}})))
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, sdk, ok := passOn(t, b)
		if !ok {
			return
		}
		// An empty desired state is the same as none on the wire, which
		// fnwire writes as none.
		if proto.Size(sdk.GetDesired()) == 0 {
			sdk.Desired = nil
		}
		if diff := cmp.Diff(sdk, ours, protocmp.Transform()); diff != "" {
			t.Errorf("passed-on response (-SDK +fnwire):\n%s", diff)
		}
	})
}
