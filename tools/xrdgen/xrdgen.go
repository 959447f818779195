// xrdgen turns the CRDs controller-gen writes for fleetplane's
// composite resource types into Crossplane v2 CompositeResourceDefinitions,
// so that the Go types in apis/ stay the one source of every XRD.

package main

import (
	"encoding/json"
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/apiextensions/v2"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// crossplaneOwned are the top-level properties Crossplane supplies itself;
// an XRD schema must leave them out.
var crossplaneOwned = []string{"apiVersion", "kind", "metadata"}

// FromCRD derives the XRD of a composite resource from its generated CRD.
// The XRD is namespaced when the CRD is, and its default Composition is
// named after the XRD, which is how package/configuration names them.
func FromCRD(crd *extv1.CustomResourceDefinition) (*xpv2.CompositeResourceDefinition, error) {
	scope := xpv2.CompositeResourceScopeCluster
	if crd.Spec.Scope == extv1.NamespaceScoped {
		scope = xpv2.CompositeResourceScopeNamespaced
	}
	xrd := &xpv2.CompositeResourceDefinition{
		TypeMeta: metav1.TypeMeta{
			APIVersion: xpv2.SchemeGroupVersion.String(),
			Kind:       xpv2.CompositeResourceDefinitionKind,
		},
		ObjectMeta: metav1.ObjectMeta{Name: crd.Name},
		Spec: xpv2.CompositeResourceDefinitionSpec{
			Group:                 crd.Spec.Group,
			Names:                 crd.Spec.Names,
			Scope:                 scope,
			DefaultCompositionRef: &xpv2.CompositionReference{Name: crd.Name},
		},
	}
	// ListKind is derived by Crossplane; leaving it in only adds noise.
	xrd.Spec.Names.ListKind = ""

	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("CRD %s version %s has no schema", crd.Name, v.Name)
		}
		s := v.Schema.OpenAPIV3Schema.DeepCopy()
		for _, p := range crossplaneOwned {
			delete(s.Properties, p)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("marshal schema of %s %s: %w", crd.Name, v.Name, err)
		}
		xrd.Spec.Versions = append(xrd.Spec.Versions, xpv2.CompositeResourceDefinitionVersion{
			Name:                     v.Name,
			Served:                   v.Served,
			Referenceable:            v.Storage,
			Deprecated:               ptrIfTrue(v.Deprecated),
			DeprecationWarning:       v.DeprecationWarning,
			Schema:                   &xpv2.CompositeResourceValidation{OpenAPIV3Schema: runtime.RawExtension{Raw: raw}},
			AdditionalPrinterColumns: v.AdditionalPrinterColumns,
		})
	}
	return xrd, nil
}

func ptrIfTrue(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

// Marshal renders an XRD as YAML without the empty status and timestamps a
// typed object would carry, so regenerated files are byte-stable.
func Marshal(xrd *xpv2.CompositeResourceDefinition) ([]byte, error) {
	raw, err := json.Marshal(xrd)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return yaml.Marshal(m)
}
