package fnwire

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers of google.protobuf.Struct, its map entries, Value and
// ListValue (google/protobuf/struct.proto).
const (
	structFields = 1 // Struct.fields, map<string, Value>

	entryKey   = 1
	entryValue = 2

	valueNull   = 1
	valueNumber = 2
	valueString = 3
	valueBool   = 4
	valueStruct = 5
	valueList   = 6

	listValues = 1 // ListValue.values, repeated Value
)

// maxDepth bounds how deeply Values may nest. protobuf-go's own limit is
// 10,000 messages, which a Struct reaches at about 3,300 Values (three
// messages a level); Kubernetes objects nest a few dozen deep.
const maxDepth = 3000

// errTooDeep is returned for Values nested deeper than maxDepth.
var errTooDeep = errors.New("values nest deeper than 3000 levels")

// A decoder turns the Structs of a request into unstructured maps, the
// shape structpb's AsMap gives them: numbers are float64 (NaN and the
// infinities the strings AsInterface gives them), lists []any, objects
// map[string]any, null nil.
//
// It keeps one copy of every key and of every short string value, boxed
// once: a function's requests repeat the same few hundred keys and
// condition words thousands of times, and every copy would be an
// allocation for the garbage collector to trace. Decoders are pooled
// with what they keep, up to internBytes.
type decoder struct {
	keys    map[string]string
	strings map[string]any
	kept    int // bytes of keys and strings kept
	depth   int
}

// internBytes bounds what a pooled decoder keeps between requests.
const internBytes = 1 << 20

var decoders = sync.Pool{New: func() any {
	return &decoder{keys: make(map[string]string, 256), strings: make(map[string]any, 256)}
}}

func getDecoder() *decoder {
	d, _ := decoders.Get().(*decoder)
	return d
}

func putDecoder(d *decoder) {
	if d.kept > internBytes {
		clear(d.keys)
		clear(d.strings)
		d.kept = 0
	}
	d.depth = 0
	decoders.Put(d)
}

// internMax is the longest string value kept once per request: condition
// types, statuses, reasons, kinds and API versions are shorter; names,
// UIDs and messages are mostly unique and not worth a map entry each.
const internMax = 32

func (d *decoder) key(b []byte) (string, error) {
	if s, ok := d.keys[string(b)]; ok {
		return s, nil
	}
	if !utf8.Valid(b) {
		return "", errInvalidUTF8
	}
	s := string(b)
	d.keys[s] = s
	d.kept += len(s)
	return s, nil
}

func (d *decoder) str(b []byte) (any, error) {
	if len(b) > internMax {
		if !utf8.Valid(b) {
			return nil, errInvalidUTF8
		}
		return string(b), nil
	}
	if v, ok := d.strings[string(b)]; ok {
		return v, nil
	}
	if !utf8.Valid(b) {
		return nil, errInvalidUTF8
	}
	s := string(b)
	var v any = s
	d.strings[s] = v
	d.kept += len(s)
	return v, nil
}

var errInvalidUTF8 = errors.New("invalid UTF-8 in a string")

// object decodes an encoded Struct into m, which it returns, making it
// when nil. Decoding into a map that holds entries merges, as protobuf
// merges a message that appears twice.
func (d *decoder) object(b []byte, m map[string]any) (map[string]any, error) {
	if m == nil {
		// Counting the entries first costs one pass over their lengths
		// and saves growing the map as it fills.
		m = make(map[string]any, count(b, structFields))
	}
	for e, err := range repeated(b, structFields) {
		if err == nil {
			err = d.entry(e, m)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// repeated yields the bytes of every length-delimited field numbered num
// of an encoded message, skipping every other field, then the error that
// ends it early, if any.
func repeated(b []byte, num protowire.Number) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for len(b) > 0 {
			n, typ, l := protowire.ConsumeTag(b)
			if l < 0 {
				yield(nil, wireError(l))
				return
			}
			b = b[l:]
			if n != num || typ != protowire.BytesType {
				if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
					yield(nil, wireError(l))
					return
				}
				b = b[l:]
				continue
			}
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				yield(nil, wireError(l))
				return
			}
			b = b[l:]
			if !yield(v, nil) {
				return
			}
		}
	}
}

// entry decodes one map entry of a Struct into m. A later entry of the
// same key replaces an earlier one, as protobuf's maps do.
func (d *decoder) entry(b []byte, m map[string]any) error {
	var key string
	var val any
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == entryKey || num == entryValue) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return wireError(n)
			}
			b = b[n:]
			var err error
			if num == entryKey {
				key, err = d.key(v)
			} else {
				val, err = d.value(v, val)
			}
			if err != nil {
				return err
			}
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return wireError(n)
		}
		b = b[n:]
	}
	m[key] = val
	return nil
}

// value decodes an encoded Value over cur, the value decoded so far from
// earlier occurrences of the same field: a Value's kinds are a oneof, so
// the last one set wins, except that a struct or list following one of
// its own kind merges into it (fields added, values appended), as
// protobuf merges messages.
func (d *decoder) value(b []byte, cur any) (any, error) {
	if d.depth++; d.depth > maxDepth {
		return nil, errTooDeep
	}
	defer func() { d.depth-- }()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, wireError(n)
		}
		b = b[n:]
		switch {
		case num == valueNull && typ == protowire.VarintType:
			_, n = protowire.ConsumeVarint(b)
			cur = nil
		case num == valueNumber && typ == protowire.Fixed64Type:
			var v uint64
			v, n = protowire.ConsumeFixed64(b)
			cur = number(math.Float64frombits(v))
		case num == valueBool && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(b)
			cur = v != 0
		case typ == protowire.BytesType && (num == valueString || num == valueStruct || num == valueList):
			var v []byte
			if v, n = protowire.ConsumeBytes(b); n < 0 {
				return nil, wireError(n)
			}
			var err error
			switch num {
			case valueString:
				cur, err = d.str(v)
			case valueStruct:
				m, _ := cur.(map[string]any)
				cur, err = d.object(v, m)
			default:
				l, _ := cur.([]any)
				cur, err = d.list(v, l)
			}
			if err != nil {
				return nil, err
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, wireError(n)
		}
		b = b[n:]
	}
	return cur, nil
}

// number is a number Value as AsInterface gives it.
func number(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// list decodes an encoded ListValue, appending to l.
func (d *decoder) list(b []byte, l []any) ([]any, error) {
	if l == nil {
		l = make([]any, 0, count(b, listValues))
	}
	for v, err := range repeated(b, listValues) {
		var e any
		if err == nil {
			e, err = d.value(v, nil)
		}
		if err != nil {
			return nil, err
		}
		l = append(l, e)
	}
	return l, nil
}

// count returns how many length-delimited fields numbered num an encoded
// message holds, reading only tags and lengths; malformed input counts
// what precedes the fault and is reported by the decoding that follows.
func count(b []byte, num protowire.Number) int {
	c := 0
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return c
		}
		b = b[l:]
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return c
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			c++
		}
	}
	return c
}

func wireError(n int) error {
	return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
}

// An encoder writes unstructured maps as encoded Structs, converting
// values as structpb's NewValue does (every Go number a float64, []byte
// as base64 text), with each object's keys in sorted order so that the
// same object always encodes to the same bytes.
type encoder struct {
	// keys is one stack of every open object's sorted keys, so that
	// nested objects reuse its memory instead of allocating their own.
	keys []string
}

// object appends the encoding of m, without a tag, to b.
func (e *encoder) object(b []byte, m map[string]any) ([]byte, error) {
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	end := len(e.keys)
	slices.Sort(e.keys[start:end])
	defer func() { e.keys = e.keys[:start] }()
	for i := start; i < end; i++ {
		k := e.keys[i]
		if !utf8.ValidString(k) {
			return nil, &encodeError{path: []string{k}, err: errInvalidUTF8}
		}
		b = protowire.AppendTag(b, structFields, protowire.BytesType)
		at := open(&b)
		b = protowire.AppendTag(b, entryKey, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, entryValue, protowire.BytesType)
		vat := open(&b)
		var err error
		if b, err = e.value(b, m[k]); err != nil {
			return nil, under(err, k)
		}
		b = closeAt(b, vat)
		b = closeAt(b, at)
	}
	return b, nil
}

// value appends the fields of a Value for v to b.
func (e *encoder) value(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		b = protowire.AppendTag(b, valueNull, protowire.VarintType)
		return protowire.AppendVarint(b, 0), nil
	case bool:
		b = protowire.AppendTag(b, valueBool, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(x)), nil
	case string:
		if !utf8.ValidString(x) {
			return nil, &encodeError{err: errInvalidUTF8}
		}
		b = protowire.AppendTag(b, valueString, protowire.BytesType)
		return protowire.AppendString(b, x), nil
	case []byte:
		b = protowire.AppendTag(b, valueString, protowire.BytesType)
		return protowire.AppendString(b, base64.StdEncoding.EncodeToString(x)), nil
	case map[string]any:
		b = protowire.AppendTag(b, valueStruct, protowire.BytesType)
		at := open(&b)
		b, err := e.object(b, x)
		if err != nil {
			return nil, err
		}
		return closeAt(b, at), nil
	case []any:
		b = protowire.AppendTag(b, valueList, protowire.BytesType)
		at := open(&b)
		for i, el := range x {
			b = protowire.AppendTag(b, listValues, protowire.BytesType)
			vat := open(&b)
			var err error
			if b, err = e.value(b, el); err != nil {
				return nil, under(err, fmt.Sprintf("[%d]", i))
			}
			b = closeAt(b, vat)
		}
		return closeAt(b, at), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, &encodeError{err: fmt.Errorf("invalid number %q: %w", string(x), err)}
		}
		return appendNumber(b, f), nil
	}
	if f, ok := float(v); ok {
		return appendNumber(b, f), nil
	}
	return nil, &encodeError{err: fmt.Errorf("a %T cannot be a protobuf Value", v)}
}

func appendNumber(b []byte, f float64) []byte {
	b = protowire.AppendTag(b, valueNumber, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(f))
}

// float converts Go's numbers as structpb's NewValue does.
func float(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float32:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// open reserves one byte for the length of a message about to be
// appended to *b and returns where it is; closeAt writes the length.
func open(b *[]byte) int {
	*b = append(*b, 0)
	return len(*b) - 1
}

// closeAt writes the length of the message appended since open returned
// at. Most messages (a Value holding a name) fit the one byte reserved;
// a longer one moves its bytes up to make room, which costs each byte one
// move per enclosing level that is 128 bytes or more: far less than
// computing every size in a pass of its own.
func closeAt(b []byte, at int) []byte {
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n) //nolint:gosec // G115: n < 0x80
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	copy(b[at+size:], b[at+1:at+1+n])
	binary.PutUvarint(b[at:], uint64(n))
	return b
}

// encodeError says where in an object a value cannot be encoded.
type encodeError struct {
	path []string // innermost last once complete; built outward
	err  error
}

func (e *encodeError) Error() string {
	p := ""
	for _, s := range slices.Backward(e.path) {
		if p != "" && s[0] != '[' {
			p += "."
		}
		p += s
	}
	if p == "" {
		return e.err.Error()
	}
	return p + ": " + e.err.Error()
}

func (e *encodeError) Unwrap() error { return e.err }

// under records that err happened under the key or index s.
func under(err error, s string) error {
	if ee, ok := errors.AsType[*encodeError](err); ok {
		ee.path = append(ee.path, s)
		return ee
	}
	return &encodeError{path: []string{s}, err: err}
}
