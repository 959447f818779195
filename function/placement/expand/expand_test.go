package expand

import (
	"reflect"
	"strings"
	"testing"
)

func TestProperties(t *testing.T) {
	got := Properties("wec1",
		map[string]string{"region": "label", "zone": "label", "app.kubernetes.io/x": "skipped", "clusterName": "from-label"},
		map[string]string{"zone": "annotation", "tier": "annotation", "location-group": "skipped"},
		map[string]string{"tier": "configmap"},
		map[string][]byte{"blob": []byte("bytes")})
	want := map[string]string{"clusterName": "from-label", "region": "label", "zone": "annotation", "tier": "configmap", "blob": "bytes"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Properties = %v, want %v", got, want)
	}
	if got := Properties("wec2", nil, nil, nil, nil); !reflect.DeepEqual(got, map[string]string{"clusterName": "wec2"}) {
		t.Errorf("Properties of a bare cluster = %v", got)
	}
}

func TestObject(t *testing.T) {
	props := map[string]string{"clusterName": "wec1", "region": "eu"}
	in := map[string]any{
		"metadata": map[string]any{"name": "web", "annotations": map[string]any{Annotation: "true", "{{.region}}": "keys stay"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"env":      []any{map[string]any{"name": "WHERE", "value": "{{.clusterName}}-{{.region}}"}, "plain"},
			"bad":      "{{.nope}}",
		},
	}
	out, errs := Object(in, props, NewBudget(DefaultBudget))
	if v := out["spec"].(map[string]any)["env"].([]any)[0].(map[string]any)["value"]; v != "wec1-eu" {
		t.Errorf("value = %v", v)
	}
	if _, ok := out["metadata"].(map[string]any)["annotations"].(map[string]any)["{{.region}}"]; !ok {
		t.Error("a map key was expanded")
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "$.spec.bad: ") || !strings.Contains(errs[0].Error(), `map has no entry for key "nope"`) {
		t.Errorf("errors = %v, want the missing key at $.spec.bad", errs)
	}
	if out["spec"].(map[string]any)["bad"] != "{{.nope}}" || out["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Errorf("a failed or non-string leaf changed: %v", out["spec"])
	}
	if in["spec"].(map[string]any)["env"].([]any)[0].(map[string]any)["value"] != "{{.clusterName}}-{{.region}}" {
		t.Error("Object changed its input")
	}
	if !Requested(in) || Requested(map[string]any{"metadata": map[string]any{"annotations": map[string]any{Annotation: "yes"}}}) {
		t.Error("Requested is wrong")
	}
}

func TestString(t *testing.T) {
	props := map[string]string{"clusterName": "wec1", "region": "eu", "tier": "gold"}
	good := map[string]string{
		"{{.region}}": "eu",
		`{{if eq .tier "gold"}}big{{else}}small{{end}}`: "big",
		`{{printf "%s-%03d" .clusterName 7}}`:           "wec1-007",
		`{{range $k, $v := .}}{{$k}}={{$v}};{{end}}`:    "clusterName=wec1;region=eu;tier=gold;",
		`{{with .region}}r={{.}}{{end}}`:                "r=eu",
	}
	for in, want := range good {
		if got, err := String(in, props, NewBudget(DefaultBudget)); err != nil || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"{{.nope}}":                     `map has no entry for key "nope"`,
		"{{inputs.parameters.message}}": `function "inputs" not defined`,
		"{{if}}x{{end}}":                "missing value for if",
		`{{define "a"}}{{template "a"}}{{template "a"}}{{end}}{{template "a"}}`: "not allowed",
		`{{template "x"}}`:                                       "not allowed",
		"{{range 1000000000}}{{end}}":                            "range is allowed only over the properties",
		`{{$n := 5}}{{range $n}}{{end}}`:                         "range is allowed only over the properties",
		"{{range .}}{{range $}}{{range $}}{{end}}{{end}}{{end}}": "nest at most 2 deep",
		`{{printf "%0999999999d" 1}}`:                            "over 1000",
		`{{printf "%.*d" 9999999 1}}`:                            "* widths",
		`{{range $k, $v := .}}{{range $a, $b := $}}` + strings.Repeat("x", 5000) + `{{end}}{{end}}`: "",
	}
	for in, want := range bad {
		got, err := String(in, props, NewBudget(DefaultBudget))
		if want == "" {
			// Within the limits: 3 × 3 × 5000 bytes.
			if err != nil || len(got) != 45000 {
				t.Errorf("String(nested ranges) = %d bytes, %v", len(got), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("String(%.60q) = %v, want an error saying %q", in, err, want)
		}
	}
	big := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		big[k] = strings.Repeat("v", 1000)
	}
	if _, err := String(`{{range $k, $v := .}}{{range $a, $b := $}}{{$v}}{{end}}{{end}}`, big, NewBudget(DefaultBudget)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("144 KB of output = %v, want refused", err)
	}
}

// FuzzString: any template text expands or fails, within the limits,
// never panicking.
func FuzzString(f *testing.F) {
	for _, s := range []string{"{{.region}}", "{{range .}}{{.}}{{end}}", `{{printf "%5s" .region}}`, "{{", "{{template \"x\"}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := String(s, map[string]string{"region": "eu", "clusterName": "c"}, NewBudget(DefaultBudget))
		if err == nil && len(out) > MaxOutput {
			t.Fatalf("%d bytes of output", len(out))
		}
	})
}
