package jsonpath

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]Path{
		"$.spec.suspend":              {"spec", "suspend"},
		"$.xyz":                       {"xyz"},
		`$["foo.bar/baz"]`:            {"foo.bar/baz"},
		`$.metadata["annotations"].x`: {"metadata", "annotations", "x"},
		`$["a\"b\\c"]`:                {`a"b\c`},
		`$["\u00e9\ud83d\ude00\n"]`:   {"é😀\n"},
		`$["it's"]`:                   {"it's"},
		`$[""]`:                       {""},
		"$._x9.é":                     {"_x9", "é"},
		"$.spec.template.metadata":    {"spec", "template", "metadata"},
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                    "empty path",
		"$":                                   "names the whole object",
		"'xyz":                                "starts with the root $",
		"$.":                                  "expected a name",
		"$[":                                  "expected a string in double quotes",
		"$[]":                                 "expected a string in double quotes",
		"$['x']":                              "expected a string in double quotes",
		`$["x"`:                               "expected ]",
		`$["x]`:                               "missing closing quote",
		"$.9lives":                            "expected a name",
		"$ .x":                                "expected . or [",
		"$.x ":                                "expected . or [",
		"$.items[0]":                          "expected a string in double quotes",
		"$.items[*]":                          "expected a string in double quotes",
		`$..x`:                                "expected a name",
		`$.a["b","c"]`:                        "expected ]",
		"$.spec[?(@.a)]":                      "expected a string in double quotes",
		`$["\x"]`:                             "unknown escape",
		`$["\u12"]`:                           "four hexadecimal digits",
		`$["\u+123"]`:                         "four hexadecimal digits",
		"$[\"\\u\x100\x110\"]":                "four hexadecimal digits", // control bytes that OR 0x20 to digits
		`$["\ud800"]`:                         "without its low surrogate",
		`$["\udc00"]`:                         "lone low surrogate",
		"$[\"a\tb\"]":                         "control character",
		"$.a-b":                               "expected . or [",
		"$.\xff":                              "not valid UTF-8",
		"$" + strings.Repeat(".a", MaxLength): "longer than",
	}
	for in, want := range bad {
		_, err := Parse(in)
		var pe *Error
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}

func TestString(t *testing.T) {
	for _, p := range []Path{{"spec", "suspend"}, {"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, {`a"b\c`, "\x01", ""}, {"é"}} {
		got, err := Parse(p.String())
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("Parse(%q) = %q, %v; want %q", p.String(), got, err, p)
		}
	}
	if got := (Path{"metadata", "a.b"}).String(); got != `$.metadata["a.b"]` {
		t.Errorf("String = %s", got)
	}
}

func TestRemove(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{"spec": map[string]any{"suspend": true, "template": "x", "list": []any{map[string]any{"a": 1}}}}
	}
	cases := []struct {
		path string
		ok   bool
		want map[string]any
	}{
		{"$.spec.suspend", true, map[string]any{"spec": map[string]any{"template": "x", "list": []any{map[string]any{"a": 1}}}}},
		{"$.spec", true, map[string]any{}},
		{"$.spec.missing", false, obj()},
		{"$.spec.template.x", false, obj()}, // through a string: left alone
		{"$.spec.list.a", false, obj()},     // arrays cannot be addressed
		{"$.nothing.at.all", false, obj()},
	}
	for _, c := range cases {
		o := obj()
		if ok := Remove(o, must(t, c.path)); ok != c.ok || !reflect.DeepEqual(o, c.want) {
			t.Errorf("Remove(%s) = %v, %v; want %v, %v", c.path, ok, o, c.ok, c.want)
		}
	}
}

func must(t *testing.T, s string) Path {
	t.Helper()
	p, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzParse: any input is a path or an error, never a panic; a path
// prints to text that parses back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"$.spec.suspend", `$["foo.bar/baz"]`, `$["\ud83d\ude00"]`, "$", "$[", `$["\u"]`, "$.é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		if len(p) == 0 {
			t.Fatalf("Parse(%q) returned an empty path", s)
		}
		again, err := Parse(p.String())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("Parse(%q) = %q; its String %q parses to %q, %v", s, p, p.String(), again, err)
		}
	})
}
