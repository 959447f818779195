package main

import (
	"encoding/json"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/apiextensions/v2"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestFromCRD(t *testing.T) {
	crd := &extv1.CustomResourceDefinition{}
	crd.Name = "widgets.example.org"
	crd.Spec = extv1.CustomResourceDefinitionSpec{
		Group: "example.org",
		Scope: extv1.NamespaceScoped,
		Names: extv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets"},
		Versions: []extv1.CustomResourceDefinitionVersion{{
			Name: "v1alpha1", Served: true, Storage: true,
			AdditionalPrinterColumns: []extv1.CustomResourceColumnDefinition{{Name: "ROLE", Type: "string", JSONPath: ".spec.role"}},
			Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]extv1.JSONSchemaProps{
					"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
					"spec":   {Type: "object", XValidations: extv1.ValidationRules{{Rule: "has(self.a)"}}},
					"status": {Type: "object"},
				},
			}},
		}},
	}
	xrd, err := FromCRD(crd)
	if err != nil {
		t.Fatal(err)
	}
	if xrd.Spec.Scope != xpv2.CompositeResourceScopeNamespaced {
		t.Errorf("scope = %q, want Namespaced", xrd.Spec.Scope)
	}
	if xrd.Spec.DefaultCompositionRef == nil || xrd.Spec.DefaultCompositionRef.Name != "widgets.example.org" {
		t.Errorf("defaultCompositionRef = %v", xrd.Spec.DefaultCompositionRef)
	}
	v := xrd.Spec.Versions[0]
	if !v.Referenceable || !v.Served || len(v.AdditionalPrinterColumns) != 1 {
		t.Errorf("version = %+v", v)
	}
	var s extv1.JSONSchemaProps
	if err := json.Unmarshal(v.Schema.OpenAPIV3Schema.Raw, &s); err != nil {
		t.Fatal(err)
	}
	for _, p := range crossplaneOwned {
		if _, ok := s.Properties[p]; ok {
			t.Errorf("schema keeps %q, which Crossplane owns", p)
		}
	}
	if len(s.Properties["spec"].XValidations) != 1 {
		t.Error("CEL rules on spec must survive")
	}
	out, err := Marshal(xrd)
	if err != nil {
		t.Fatal(err)
	}
	for _, noise := range []string{"\nstatus:", "creationTimestamp", "listKind"} {
		if strings.Contains(string(out), noise) {
			t.Errorf("marshalled XRD contains %q:\n%s", noise, out)
		}
	}
}
