package heartbeat

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// ttlSchemas are the heartbeatTTL fields users write: the ADXCluster XRD
// and the Federation CRD, generated from apis/.
var ttlSchemas = []struct{ file, path string }{
	{"../../package/configuration/xrds/adxclusters.adx.fleetplane.io.yaml", "spec.federation.heartbeatTTL"},
	{"../../package/provider/crds/kusto.m.fleetplane.io_federations.yaml", "spec.forProvider.heartbeatTTL"},
}

// apiServerTTL is what the API server decides for a heartbeatTTL: the
// schema's pattern and length as its OpenAPI validation checks them, and
// its CEL rules run by the API server's own CEL validator.
type apiServerTTL struct {
	props     apiextensionsv1.JSONSchemaProps
	pattern   *regexp.Regexp
	validator *cel.Validator
	schema    *schema.Structural
}

func loadTTLSchema(t testing.TB, file, path string) *apiServerTTL {
	t.Helper()
	b, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		t.Fatal(err)
	}
	// An XRD and a CRD both keep the schema at spec.versions[0].schema.
	var doc struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Spec.Versions[0].Schema.OpenAPIV3Schema
	for p := range strings.SplitSeq(path, ".") {
		next, ok := props.Properties[p]
		if !ok {
			t.Fatalf("%s has no %s", file, path)
		}
		props = next
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := schema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return &apiServerTTL{props: props, pattern: regexp.MustCompile(props.Pattern), validator: cel.NewValidator(s, false, celconfig.PerCallLimit), schema: s}
}

func (a *apiServerTTL) accepts(s string) bool {
	if int64(len(s)) < *a.props.MinLength || int64(len(s)) > *a.props.MaxLength || !a.pattern.MatchString(s) {
		return false
	}
	errs, _ := a.validator.Validate(context.Background(), field.NewPath("heartbeatTTL"), a.schema, s, nil, celconfig.RuntimeCELCostBudget)
	return len(errs) == 0
}

// TestTTLSchemasAreParseTTL holds the generated schemas to the grammar
// ParseTTL reads, so that one definition decides at apply time and in the
// provider.
func TestTTLSchemasAreParseTTL(t *testing.T) {
	for _, f := range ttlSchemas {
		a := loadTTLSchema(t, f.file, f.path)
		if a.props.Pattern != TTLPattern {
			t.Errorf("%s %s pattern is %q, want heartbeat.TTLPattern", f.file, f.path, a.props.Pattern)
		}
		have := map[string]string{}
		for _, r := range a.props.XValidations {
			have[r.Rule] = r.Message
		}
		for rule, msg := range TTLCELRules {
			if have[rule] != msg {
				t.Errorf("%s %s lacks the rule %q of heartbeat.TTLCELRules", f.file, f.path, msg)
			}
		}
		for _, s := range append(ttlExamples(), "", "1w") {
			_, err := ParseTTL(s)
			if got := a.accepts(s); got != (err == nil) {
				t.Errorf("%s: the API server accepts %q: %v; ParseTTL: %v", f.path, s, got, err)
			}
		}
	}
}

// FuzzTTLSchema: the API server and ParseTTL agree on every input.
func FuzzTTLSchema(f *testing.F) {
	for _, s := range ttlExamples() {
		f.Add(s)
	}
	a := loadTTLSchema(f, ttlSchemas[0].file, ttlSchemas[0].path)
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseTTL(s)
		if got := a.accepts(s); got != (err == nil) {
			t.Fatalf("the API server accepts %q: %v; ParseTTL: %v", s, got, err)
		}
	})
}
