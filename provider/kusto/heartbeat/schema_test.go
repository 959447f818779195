package heartbeat

import (
	"context"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// apiServerField is one field of a generated CRD or XRD schema, with the
// API server's own CEL validator for its rules, so that tests hold the
// apply-time checks to the Go ones they mirror.
type apiServerField struct {
	props     apiextensionsv1.JSONSchemaProps
	validator *cel.Validator
	schema    *schema.Structural
}

func loadFieldSchema(t testing.TB, file, path string) *apiServerField {
	t.Helper()
	props := support.GeneratedField(t, file, path)
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := schema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return &apiServerField{props: props, validator: cel.NewValidator(s, false, celconfig.PerCallLimit), schema: s}
}

// celAccepts runs the field's CEL rules on v.
func (a *apiServerField) celAccepts(v any) bool {
	errs, _ := a.validator.Validate(context.Background(), field.NewPath("value"), a.schema, v, nil, celconfig.RuntimeCELCostBudget)
	return len(errs) == 0
}

// rules are the field's CEL rules and their messages.
func (a *apiServerField) rules() map[string]string {
	have := map[string]string{}
	for _, r := range a.props.XValidations {
		have[r.Rule] = r.Message
	}
	return have
}
