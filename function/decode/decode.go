// Package decode turns an object the function reads as unstructured (an XR, a
// required resource, a function input) into its Go type, with errors that
// name the field. The API server validates what it stores against the
// schema, but `crossplane render` hands the function what a file holds,
// and apimachinery's converter then fails with "cannot restore slice from
// string", naming nothing.
package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Into decodes obj into the value the pointer into points to. On failure
// it says which field holds what, and what the type wants there.
func Into(obj map[string]any, into any) error {
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
	if err == nil {
		return nil
	}
	if named := fieldError(obj, into); named != nil {
		return named
	}
	return err
}

// fieldError decodes obj again through JSON, whose errors carry the path
// of the field, into a fresh value of into's type. nil when that finds
// nothing wrong.
func fieldError(obj map[string]any, into any) error {
	t := reflect.TypeOf(into)
	b, err := json.Marshal(obj)
	if err != nil || t.Kind() != reflect.Pointer {
		// Not JSON at all, or nothing to decode into: the converter's
		// own error says more.
		return nil //nolint:nilerr // the caller returns the converter's error
	}
	fresh := reflect.New(t.Elem()).Interface()
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(b, fresh); errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s is %s, where %s is expected", te.Field, article(te.Value), describe(te.Type))
	}
	return nil
}

// article is a JSON kind with its article: "a string", "an object".
func article(kind string) string {
	switch {
	case kind == "":
		return "of another type"
	case strings.HasPrefix(kind, "array"):
		return "a list"
	case strings.HasPrefix(kind, "object"):
		return "an object"
	case strings.HasPrefix(kind, "number"):
		return "a number"
	case kind == "bool":
		return "true or false"
	}
	return "a " + kind
}

// describe says what a Go type holds, in the words of a YAML author.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() { //nolint:exhaustive // what a schema can hold; the rest by name
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}
