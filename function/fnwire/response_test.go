package fnwire

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// The encoder is checked against protobuf-go too: what fnwire writes must
// decode, with the generated types, to what structpb's NewStruct builds
// from the same maps.

// composedObject holds every Go type NewValue takes.
func composedObject() map[string]any {
	return map[string]any{
		"apiVersion": "kusto.azure.upbound.io/v1beta1", "kind": "Database",
		"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/external-name": "Metrics"}},
		"spec": map[string]any{
			"forProvider": map[string]any{"location": "westeurope", "hotCachePeriod": "P30D"},
			"numbers": []any{int(1), int8(-2), int16(3), int32(-4), int64(1 << 40), uint(5), uint8(6), uint16(7), uint32(8), uint64(9),
				float32(0.5), float64(-0.25), json.Number("12.5"), math.Inf(1)},
			"bytes": []byte("raw"), "null": nil, "on": true, "off": false, "empty": map[string]any{}, "none": []any{},
			"text": "ünïcödé", "blank": "", "long": strings.Repeat("y", 70000),
			"deep": map[string]any{"a": []any{map[string]any{"b": []any{[]any{"c"}}}}},
		},
	}
}

func TestResponseAsProtobufWritesIt(t *testing.T) {
	req := &Request{
		Meta:    &fnv1.RequestMeta{Tag: "t2"},
		Desired: State{Resources: map[string]*Resource{"earlier-step": {Object: map[string]any{"kind": "Thing"}, Ready: fnv1.Ready_READY_TRUE}}},
		Context: marshal(t, mustStruct(t, map[string]any{"k": "v"})),
	}
	rsp := NewResponse(req, time.Minute)
	rsp.Desired.Composite = &Resource{Object: map[string]any{"status": map[string]any{"endpoint": "https://hub"}}, ConnectionDetails: map[string][]byte{"token": []byte("t"), "none": nil}, Ready: fnv1.Ready_READY_FALSE}
	rsp.Desired.Resources["database-Metrics"] = &Resource{Object: composedObject(), Ready: fnv1.Ready_READY_TRUE}
	rsp.Desired.Resources["no-object"] = &Resource{}
	rsp.Rest.Results = []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_NORMAL, Message: "fine", Reason: new("Fine")}}
	rsp.Rest.Conditions = []*fnv1.Condition{{Type: "Federated", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: "Fine"}}
	rsp.Rest.Requirements = &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{"labels": {ApiVersion: "v1", Kind: "ConfigMap", Match: &fnv1.ResourceSelector_MatchName{MatchName: "x"}}}}

	b, err := rsp.AppendWire(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, got); err != nil {
		t.Fatal(err)
	}
	want := &fnv1.RunFunctionResponse{
		Meta: &fnv1.ResponseMeta{Tag: "t2", Ttl: durationpb.New(time.Minute)},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{Resource: mustStruct(t, map[string]any{"status": map[string]any{"endpoint": "https://hub"}}), ConnectionDetails: map[string][]byte{"token": []byte("t"), "none": {}}, Ready: fnv1.Ready_READY_FALSE},
			Resources: map[string]*fnv1.Resource{
				"earlier-step":     {Resource: mustStruct(t, map[string]any{"kind": "Thing"}), Ready: fnv1.Ready_READY_TRUE},
				"database-Metrics": {Resource: mustStruct(t, composedObject()), Ready: fnv1.Ready_READY_TRUE},
				"no-object":        {},
			},
		},
		Results:      rsp.Rest.GetResults(),
		Conditions:   rsp.Rest.GetConditions(),
		Requirements: rsp.Rest.GetRequirements(),
		Context:      mustStruct(t, map[string]any{"k": "v"}),
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("decoded response (-structpb +fnwire):\n%s", diff)
	}
	// The request's desired state is carried on, not changed.
	if len(req.Desired.Resources) != 1 {
		t.Errorf("the request's desired resources changed: %v", req.Desired.Resources)
	}
}

func TestResponseEncodesDeterministically(t *testing.T) {
	rsp := &Response{Rest: &fnv1.RunFunctionResponse{}, Desired: State{Resources: map[string]*Resource{}}}
	for i := range 30 {
		rsp.Desired.Resources[string(rune('a'+i))] = &Resource{Object: composedObject()}
	}
	first, err := rsp.AppendWire(nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := rsp.AppendWire(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(first) {
			t.Fatal("the same response encoded to different bytes")
		}
	}
}

func TestResponseRefuses(t *testing.T) {
	with := func(spec map[string]any) *Response {
		return &Response{Desired: State{Resources: map[string]*Resource{"thing": {Object: map[string]any{"spec": spec}}}}}
	}
	cases := map[string]struct {
		rsp  *Response
		want string
	}{
		"a type structpb refuses": {
			with(map[string]any{"list": []any{"ok", map[string]any{"names": []string{"a"}}}}),
			`composed resource "thing": spec.list[1].names: a []string cannot be a protobuf Value`,
		},
		"invalid UTF-8 in a string": {with(map[string]any{"s": "\xff"}), `spec.s: invalid UTF-8`},
		"invalid UTF-8 in a key":    {with(map[string]any{"\xff": 1}), `invalid UTF-8`},
		"a number that is not one":  {with(map[string]any{"n": json.Number("1x")}), `spec.n: invalid number "1x"`},
		"state set on Rest": {
			&Response{Rest: &fnv1.RunFunctionResponse{Desired: &fnv1.State{}}},
			"belong in Response.Desired",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := tc.rsp.AppendWire(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := with(map[string]any{"s": "\xff"}).AppendWire(nil); !errors.Is(err, errInvalidUTF8) {
		t.Errorf("error %v does not wrap errInvalidUTF8", err)
	}
}

// Lengths of 127, 128, 16383 and 16384 bytes are where a length prefix
// grows a byte; each is written with one byte reserved and moved.
func TestResponseLengthBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, 120, 127, 128, 129, 16383, 16384, 2097152} {
		m := map[string]any{"s": strings.Repeat("z", n)}
		b, err := (&Response{Desired: State{Composite: &Resource{Object: m}}}).AppendWire(nil)
		if err != nil {
			t.Fatal(err)
		}
		got := &fnv1.RunFunctionResponse{}
		if err := proto.Unmarshal(b, got); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if s := got.GetDesired().GetComposite().GetResource().GetFields()["s"].GetStringValue(); len(s) != n {
			t.Errorf("a string of %d bytes came back as %d", n, len(s))
		}
	}
}

// FuzzEncodeObject encodes any JSON object as a desired resource and
// decodes it with protobuf-go: it must be what NewStruct builds.
func FuzzEncodeObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,"b",null,true,{"c":{}}],"d":-0.5e10}`, `{"":{"":[[[]]]}}`, `{"k":"` + strings.Repeat("v", 200) + `"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		want, err := structpb.NewStruct(m)
		b, encErr := (&Response{Desired: State{Composite: &Resource{Object: m}}}).AppendWire(nil)
		if err != nil {
			if encErr == nil {
				t.Fatalf("NewStruct refuses (%v), fnwire does not", err)
			}
			return
		}
		if encErr != nil {
			t.Fatalf("NewStruct accepts, fnwire refuses: %v", encErr)
		}
		got := &fnv1.RunFunctionResponse{}
		if err := proto.Unmarshal(b, got); err != nil {
			t.Fatalf("protobuf cannot decode what fnwire wrote: %v", err)
		}
		if diff := cmp.Diff(want, got.GetDesired().GetComposite().GetResource(), protocmp.Transform()); diff != "" {
			t.Errorf("(-structpb +fnwire):\n%s", diff)
		}
	})
}
