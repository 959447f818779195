// Package fnwire reads RunFunctionRequests and writes RunFunctionResponses
// straight between protobuf's wire format and the unstructured maps that
// composers work on.
//
// The generated protobuf types hold every object of a request as a tree of
// structpb Values, which a function then converts to maps (AsMap) and back
// (NewStruct) before the response is encoded again: four passes over every
// object, each allocating a node per value. For a hub with 50 databases
// that was two thirds of the function's time per call. fnwire makes it
// one pass each way. The small messages, whose shape the SDK's helpers
// know (the request's meta, the response's results, conditions and
// requirements), stay generated protobuf types.
//
// What fnwire does not know it keeps: the fields of State and Resource
// that a newer Crossplane, or an earlier step built on a newer SDK, sets
// are held as they came and written back, as protobuf-go holds unknown
// fields, so a desired state passes through unchanged.
package fnwire

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The field numbers of RunFunctionRequest, State and Resource
// (apiextensions.fn.proto.v1, run_function.proto).
const (
	requestMeta              = 1
	requestObserved          = 2
	requestDesired           = 3
	requestInput             = 4
	requestContext           = 5
	requestRequiredResources = 8

	stateComposite = 1
	stateResources = 2

	resourceObject            = 1
	resourceConnectionDetails = 2
	resourceReady             = 3

	resourcesItems = 1 // Resources.items
)

// Request is a RunFunctionRequest with its objects decoded.
//
// Credentials (field 7), required schemas (9) and the deprecated extra
// resources (6) are not read: fleetplane asks for none of them, so no
// secret a request carries is ever decoded.
type Request struct {
	Meta     *fnv1.RequestMeta
	Observed State
	Desired  State
	// Input is the function input, nil when the request has none.
	Input map[string]any
	// Context is the encoded context Struct, passed on to the response
	// as it came; nil when the request has none.
	Context []byte
	// Required holds the required resources Crossplane resolved, by
	// requirement key; a key it has not resolved is absent.
	Required map[string][]map[string]any
}

// State is the observed or desired state of a composite resource and the
// resources it composes.
type State struct {
	Composite *Resource
	Resources map[string]*Resource
	// Unknown holds the fields fnwire does not know, encoded as they came
	// (a newer Crossplane's, or an earlier step's of a newer SDK), and
	// writes them back after the known ones, as protobuf-go does: a
	// desired state passed on keeps them.
	Unknown []byte
}

// Resource is a composite or composed resource.
type Resource struct {
	// Object is the resource, as unstructured.Unstructured holds one; nil
	// when the message had none.
	Object            map[string]any
	ConnectionDetails map[string][]byte
	Ready             fnv1.Ready
	// Unknown holds the fields fnwire does not know, as State.Unknown
	// does.
	Unknown []byte
}

// DecodeRequest decodes an encoded RunFunctionRequest. Later occurrences
// of a field merge into or replace earlier ones as protobuf's own decoding
// does; malformed input and invalid UTF-8 are errors.
func DecodeRequest(b []byte) (*Request, error) {
	d := getDecoder()
	defer putDecoder(d)
	r := &Request{}
	err := fields(b, func(num protowire.Number, v []byte) error {
		switch num { //nolint:exhaustive // every other field is skipped
		case requestMeta:
			if r.Meta == nil {
				r.Meta = &fnv1.RequestMeta{}
			}
			return proto.UnmarshalOptions{Merge: true}.Unmarshal(v, r.Meta)
		case requestObserved:
			return d.state(v, &r.Observed)
		case requestDesired:
			return d.state(v, &r.Desired)
		case requestInput:
			m, err := d.object(v, r.Input)
			r.Input = m
			return err
		case requestContext:
			// Merging two encodings of a message is appending them.
			r.Context = append(r.Context, v...)
			if r.Context == nil {
				r.Context = []byte{}
			}
		case requestRequiredResources:
			if r.Required == nil {
				r.Required = map[string][]map[string]any{}
			}
			return d.required(v, r.Required)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot decode the RunFunctionRequest: %w", err)
	}
	return r, nil
}

// stateKnows and resourceKnows say which fields of State and Resource
// fnwire reads: a field of another number, or of a known number with
// another wire type (which protobuf-go also keeps as unknown), is kept as
// it came.
func stateKnows(num protowire.Number, typ protowire.Type) bool {
	return (num == stateComposite || num == stateResources) && typ == protowire.BytesType
}

func resourceKnows(num protowire.Number, typ protowire.Type) bool {
	switch num { //nolint:exhaustive // other numbers are unknown
	case resourceObject, resourceConnectionDetails:
		return typ == protowire.BytesType
	case resourceReady:
		return typ == protowire.VarintType
	}
	return false
}

func (d *decoder) state(b []byte, s *State) error {
	return walk(b, stateKnows, &s.Unknown, func(num protowire.Number, v []byte) error {
		switch num { //nolint:exhaustive // every other field is skipped
		case stateComposite:
			if s.Composite == nil {
				s.Composite = &Resource{}
			}
			return d.resource(v, s.Composite)
		case stateResources:
			if s.Resources == nil {
				s.Resources = make(map[string]*Resource, count(b, stateResources))
			}
			return mapEntry(v, d.key, true, func(k string, parts [][]byte) error {
				r := &Resource{}
				s.Resources[k] = r
				for _, p := range parts {
					if err := d.resource(p, r); err != nil {
						return err
					}
				}
				return nil
			})
		}
		return nil
	}, nil)
}

func (d *decoder) resource(b []byte, r *Resource) error {
	// Ready is the one field that is not length-delimited.
	return walk(b, resourceKnows, &r.Unknown, func(num protowire.Number, v []byte) error {
		switch num { //nolint:exhaustive // every other field is skipped
		case resourceObject:
			m, err := d.object(v, r.Object)
			r.Object = m
			return err
		case resourceConnectionDetails:
			if r.ConnectionDetails == nil {
				r.ConnectionDetails = map[string][]byte{}
			}
			return mapEntry(v, d.key, false, func(k string, parts [][]byte) error {
				r.ConnectionDetails[k] = append([]byte{}, parts[0]...)
				return nil
			})
		}
		return nil
	}, func(num protowire.Number, v uint64) {
		if num == resourceReady {
			// protobuf reads an enum as the low 32 bits, as this does.
			r.Ready = fnv1.Ready(int32(v)) //nolint:gosec // G115: truncation is the wire format's rule
		}
	})
}

func (d *decoder) required(b []byte, into map[string][]map[string]any) error {
	return mapEntry(b, d.key, true, func(k string, parts [][]byte) error {
		var items []map[string]any
		item := func(num protowire.Number, v []byte) error {
			if num != resourcesItems {
				return nil
			}
			r := &Resource{}
			if err := d.resource(v, r); err != nil {
				return err
			}
			if r.Object == nil {
				r.Object = map[string]any{}
			}
			items = append(items, r.Object)
			return nil
		}
		var err error
		for _, p := range parts {
			if err = fields(p, item); err != nil {
				break
			}
		}
		if items == nil {
			items = []map[string]any{}
		}
		into[k] = items
		return err
	})
}

// fields calls f with the number and bytes of every length-delimited field
// of an encoded message, skipping every other field.
func fields(b []byte, f func(protowire.Number, []byte) error) error {
	return walk(b, nil, nil, f, nil)
}

// walk calls f with the number and bytes of every length-delimited field
// of an encoded message and g, when not nil, with every varint field.
// When known is not nil, a field it does not know is appended to unknown
// whole (tag and value, as it came) and not handed on; other fields are
// skipped.
func walk(b []byte, known func(protowire.Number, protowire.Type) bool, unknown *[]byte, f func(protowire.Number, []byte) error, g func(protowire.Number, uint64)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		if known != nil && !known(num, typ) {
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				return wireError(m)
			}
			// The tag written anew, shortest form, and the value as it
			// came: what protobuf-go keeps of an unknown field.
			*unknown = protowire.AppendTag(*unknown, num, typ)
			*unknown = append(*unknown, b[n:n+m]...)
			b = b[n+m:]
			continue
		}
		b = b[n:]
		switch typ { //nolint:exhaustive // other types are skipped whole below
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return wireError(n)
			}
			b = b[n:]
			if err := f(num, v); err != nil {
				return err
			}
			continue
		case protowire.VarintType:
			if g != nil {
				v, n := protowire.ConsumeVarint(b)
				if n < 0 {
					return wireError(n)
				}
				b = b[n:]
				g(num, v)
				continue
			}
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return wireError(n)
		}
		b = b[n:]
	}
	return nil
}

// mapEntry decodes one entry of a protobuf map with string keys, handing
// its key and its value's encodings to f: every one in order when the
// value is a message (protobuf merges them, and decoding each in turn
// into the same target merges them, in time linear in their size; joining
// their bytes instead was quadratic), the last one when it is not. A
// missing key is "", a missing value one empty encoding, as protobuf has
// them.
func mapEntry(b []byte, key func([]byte) (string, error), message bool, f func(string, [][]byte) error) error {
	var k string
	var parts [][]byte
	err := fields(b, func(num protowire.Number, b []byte) error {
		switch num { //nolint:exhaustive // every other field is skipped
		case entryKey:
			var err error
			k, err = key(b)
			return err
		case entryValue:
			if message {
				parts = append(parts, b)
			} else {
				parts = append(parts[:0], b)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if parts == nil {
		parts = [][]byte{nil}
	}
	return f(k, parts)
}
