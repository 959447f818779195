package kustoserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// scalar is a compiled scalar expression of one row: a column, a string
// literal, or one of the functions fleetplane's queries call. Within
// summarize, the aggregates count() and make_list(x) are scalars too, of
// the whole group, and may be nested in the other functions.
type scalar struct {
	typ  string
	eval func(row []any) any
}

func columnScalar(rs *result, name string) (scalar, error) {
	i := columnIndex(rs, name)
	if i < 0 {
		return scalar{}, badRequest("Semantic error: no column '%s'", name)
	}
	return scalar{typ: rs.columns[i].Type, eval: func(r []any) any { return r[i] }}, nil
}

// env is what an expression is compiled against: the columns, and within
// summarize the rows of the group.
type env struct {
	rs        *result
	group     [][]any
	summarize bool
}

// parseScalar reads a column, a string literal or a call of tostring,
// pack_array, hash_sha256 or array_sort_asc, or within summarize of count
// or make_list.
func parseScalar(e env, c *cursor) (scalar, error) {
	rs := e.rs
	t := c.peek()
	if t.Kind == kql.String {
		c.next()
		return scalar{typ: "string", eval: func([]any) any { return t.Value }}, nil
	}
	if t.Kind == kql.Number {
		c.next()
		n, err := strconv.ParseInt(t.Value, 10, 64)
		if err != nil {
			return scalar{}, badRequest("Syntax error: %q is not a long", t.Value)
		}
		return scalar{typ: "long", eval: func([]any) any { return n }}, nil
	}
	name, err := c.name()
	if err != nil {
		return scalar{}, err
	}
	if !c.accept("(") {
		return columnScalar(rs, name)
	}
	var args []scalar
	err = c.items(func() error {
		a, err := parseScalar(e, c)
		args = append(args, a)
		return err
	})
	if err != nil {
		return scalar{}, err
	}
	one := func() error {
		if len(args) != 1 {
			return badRequest("Semantic error: %s() takes one argument, got %d", name, len(args))
		}
		return nil
	}
	if e.summarize {
		switch name {
		case "count":
			if len(args) != 0 {
				return scalar{}, badRequest("Semantic error: count() takes no argument")
			}
			n := int64(len(e.group))
			return scalar{typ: "long", eval: func([]any) any { return n }}, nil
		case "make_list":
			if err := one(); err != nil {
				return scalar{}, err
			}
			group := e.group
			return scalar{typ: "dynamic", eval: func([]any) any {
				vals := make([]json.RawMessage, 0, len(group))
				for _, r := range group {
					vals = append(vals, toDynamic(args[0].eval(r)))
				}
				b, _ := json.Marshal(vals)
				return json.RawMessage(b)
			}}, nil
		}
	}
	switch name {
	case "array_sort_asc":
		if err := one(); err != nil {
			return scalar{}, err
		}
		return scalar{typ: "dynamic", eval: func(r []any) any { return sortAsc(args[0].eval(r)) }}, nil
	case "tostring":
		if err := one(); err != nil {
			return scalar{}, err
		}
		return scalar{typ: "string", eval: func(r []any) any { return toString(args[0].eval(r)) }}, nil
	case "hash_sha256":
		if err := one(); err != nil {
			return scalar{}, err
		}
		return scalar{typ: "string", eval: func(r []any) any {
			sum := sha256.Sum256([]byte(toString(args[0].eval(r))))
			return hex.EncodeToString(sum[:])
		}}, nil
	case "hash":
		// hash(x, n): a bucket of x in [0, n). Kusto hashes with xxHash64;
		// what callers rely on is only that equal values share a bucket.
		if len(args) != 2 {
			return scalar{}, badRequest("Semantic error: hash() takes a value and a modulo, got %d arguments", len(args))
		}
		return scalar{typ: "long", eval: func(r []any) any {
			n, _ := args[1].eval(r).(int64)
			if n <= 0 {
				return nil
			}
			h := fnv.New64a()
			_, _ = h.Write([]byte(toString(args[0].eval(r))))
			return int64(h.Sum64() % uint64(n))
		}}, nil
	case "pack_array":
		return scalar{typ: "dynamic", eval: func(r []any) any {
			// Joined as they are: each element is compact JSON already.
			var b bytes.Buffer
			b.WriteByte('[')
			for i, a := range args {
				if i > 0 {
					b.WriteByte(',')
				}
				b.Write(toDynamic(a.eval(r)))
			}
			b.WriteByte(']')
			return json.RawMessage(b.Bytes())
		}}, nil
	}
	return scalar{}, badRequest("Semantic error: this server does not support the function %s()", name)
}

// sortAsc is array_sort_asc() of a dynamic array: strings ordinally, then
// anything else by its JSON text; anything but an array is null.
func sortAsc(v any) any {
	raw, ok := v.(json.RawMessage)
	var vals []json.RawMessage
	if !ok || json.Unmarshal(raw, &vals) != nil {
		return nil
	}
	key := func(m json.RawMessage) (int, string) {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return 0, s
		}
		return 1, string(m)
	}
	slices.SortStableFunc(vals, func(a, b json.RawMessage) int {
		ka, sa := key(a)
		kb, sb := key(b)
		if ka != kb {
			return ka - kb
		}
		return strings.Compare(sa, sb)
	})
	b, _ := json.Marshal(vals)
	return json.RawMessage(b)
}

// toString is Kusto's tostring(): a dynamic string unquoted, any other
// dynamic value as compact JSON, null as the empty string.
func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.0000000Z")
	case json.RawMessage:
		// Compact already (convert, and whatever this server computes).
		if len(x) > 0 && x[0] == '"' {
			var s string
			if json.Unmarshal(x, &s) == nil {
				return s
			}
		}
		return string(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// toDynamic is a value as a dynamic element.
func toDynamic(v any) json.RawMessage {
	switch x := v.(type) {
	case json.RawMessage:
		return x
	case time.Time:
		b, _ := json.Marshal(toString(x))
		return b
	default:
		b, _ := json.Marshal(x)
		return b
	}
}
