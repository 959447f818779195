package decode

import (
	"strings"
	"testing"
)

type spec struct {
	Databases []struct {
		Name string `json:"name"`
	} `json:"databases"`
	Replicas *int32            `json:"replicas"`
	Labels   map[string]string `json:"labels"`
	Enabled  bool              `json:"enabled"`
}

type object struct {
	Spec spec `json:"spec"`
}

func TestIntoNamesTheField(t *testing.T) {
	for name, tc := range map[string]struct {
		obj  map[string]any
		want string
	}{
		"a string for a list":    {map[string]any{"spec": map[string]any{"databases": "Metrics"}}, "spec.databases is a string, where a list is expected"},
		"a string for a number":  {map[string]any{"spec": map[string]any{"replicas": "three"}}, "spec.replicas is a string, where a whole number is expected"},
		"a list for a map":       {map[string]any{"spec": map[string]any{"labels": []any{"a"}}}, "spec.labels is a list, where an object is expected"},
		"a number in a list":     {map[string]any{"spec": map[string]any{"databases": []any{map[string]any{"name": int64(3)}}}}, "spec.databases.name is a number, where a string is expected"},
		"a string for a boolean": {map[string]any{"spec": map[string]any{"enabled": "yes"}}, "spec.enabled is a string, where true or false is expected"},
	} {
		t.Run(name, func(t *testing.T) {
			var o object
			err := Into(tc.obj, &o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
	var o object
	if err := Into(map[string]any{"spec": map[string]any{"databases": []any{map[string]any{"name": "Metrics"}}, "replicas": int64(3)}}, &o); err != nil || o.Spec.Databases[0].Name != "Metrics" || *o.Spec.Replicas != 3 {
		t.Errorf("a valid object: %v %+v", err, o)
	}
}
