package fnwire

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The field numbers of RunFunctionResponse that fnwire writes itself.
const (
	responseDesired = 2
	responseContext = 4
)

// Response is a RunFunctionResponse whose desired state is unstructured
// maps.
type Response struct {
	// Rest is the rest of the response: meta, results, requirements,
	// conditions and output, which the SDK's response helpers write. Its
	// Desired and Context must stay nil: they are the fields below.
	Rest *fnv1.RunFunctionResponse
	// Desired is the desired state: what earlier steps of the pipeline
	// desired, and this function's additions.
	Desired State
	// Context is the encoded context Struct, nil for none.
	Context []byte
}

// NewResponse starts the response to req as the SDK's response.To does:
// its tag, the TTL, and the desired state and context of the earlier
// steps of the pipeline, carried on. The desired state's maps are new;
// the resources in them are req's.
func NewResponse(req *Request, ttl time.Duration) *Response {
	return &Response{
		Rest: &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Tag: req.Meta.GetTag(), Ttl: durationpb.New(ttl)}},
		Desired: State{
			Composite: req.Desired.Composite,
			Resources: maps.Clone(req.Desired.Resources),
			Unknown:   req.Desired.Unknown,
		},
		Context: req.Context,
	}
}

var errRestCarriesState = errors.New("the response's desired state and context belong in Response.Desired and Response.Context, not in Response.Rest")

// AppendWire appends the protobuf encoding of the response to b. The same
// response always encodes to the same bytes: maps are written in key
// order.
func (r *Response) AppendWire(b []byte) ([]byte, error) {
	if r.Rest != nil {
		if r.Rest.GetDesired() != nil || r.Rest.GetContext() != nil {
			return nil, errRestCarriesState
		}
		var err error
		if b, err = (proto.MarshalOptions{Deterministic: true}).MarshalAppend(b, r.Rest); err != nil {
			return nil, err
		}
	}
	e := &encoder{}
	if r.Desired.Composite != nil || len(r.Desired.Resources) > 0 || len(r.Desired.Unknown) > 0 {
		b = protowire.AppendTag(b, responseDesired, protowire.BytesType)
		at := open(&b)
		var err error
		if b, err = e.state(b, &r.Desired); err != nil {
			return nil, fmt.Errorf("cannot encode the desired state: %w", err)
		}
		b = closeAt(b, at)
	}
	if r.Context != nil {
		b = protowire.AppendTag(b, responseContext, protowire.BytesType)
		b = protowire.AppendBytes(b, r.Context)
	}
	return b, nil
}

func (e *encoder) state(b []byte, s *State) ([]byte, error) {
	var err error
	if s.Composite != nil {
		b = protowire.AppendTag(b, stateComposite, protowire.BytesType)
		at := open(&b)
		if b, err = e.resource(b, s.Composite); err != nil {
			return nil, fmt.Errorf("the composite resource: %w", err)
		}
		b = closeAt(b, at)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Resources)) {
		r := s.Resources[name]
		b, err = appendEntry(b, stateResources, name, r != nil, func(b []byte) ([]byte, error) {
			at := open(&b)
			b, err := e.resource(b, r)
			if err != nil {
				return nil, err
			}
			return closeAt(b, at), nil
		})
		if err != nil {
			return nil, fmt.Errorf("composed resource %q: %w", name, err)
		}
	}
	return append(b, s.Unknown...), nil
}

// appendEntry appends one entry of a protobuf map field with string keys;
// value appends the value's encoding, length included, when there is one.
func appendEntry(b []byte, field protowire.Number, key string, hasValue bool, value func([]byte) ([]byte, error)) ([]byte, error) {
	if !utf8.ValidString(key) {
		return nil, fmt.Errorf("its key: %w", errInvalidUTF8)
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	at := open(&b)
	b = protowire.AppendTag(b, entryKey, protowire.BytesType)
	b = protowire.AppendString(b, key)
	if hasValue {
		b = protowire.AppendTag(b, entryValue, protowire.BytesType)
		var err error
		if b, err = value(b); err != nil {
			return nil, err
		}
	}
	return closeAt(b, at), nil
}

func (e *encoder) resource(b []byte, r *Resource) ([]byte, error) {
	if r.Object != nil {
		b = protowire.AppendTag(b, resourceObject, protowire.BytesType)
		at := open(&b)
		var err error
		if b, err = e.object(b, r.Object); err != nil {
			return nil, err
		}
		b = closeAt(b, at)
	}
	for _, k := range slices.Sorted(maps.Keys(r.ConnectionDetails)) {
		var err error
		b, err = appendEntry(b, resourceConnectionDetails, k, true, func(b []byte) ([]byte, error) {
			return protowire.AppendBytes(b, r.ConnectionDetails[k]), nil
		})
		if err != nil {
			return nil, fmt.Errorf("connection detail %q: %w", k, err)
		}
	}
	if r.Ready != fnv1.Ready_READY_UNSPECIFIED {
		b = protowire.AppendTag(b, resourceReady, protowire.VarintType)
		// Negative enums are sign-extended to ten bytes, as protobuf does.
		b = protowire.AppendVarint(b, uint64(int64(r.Ready))) //nolint:gosec // G115: the wire format's rule
	}
	return append(b, r.Unknown...), nil
}
