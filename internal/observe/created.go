package observe

import "github.com/crossplane/function-sdk-go/resource/composed"

// AnnotationCreateSucceeded is crossplane-runtime's record, on a managed
// resource, that its Create succeeded. The managed reconciler writes it
// only after Create, and never calls Create for what Observe found, so it
// is the proof that the MR made what it manages rather than found it.
const AnnotationCreateSucceeded = "crossplane.io/external-create-succeeded"

// CreatedHere reports whether the observed MR o created what it manages.
func CreatedHere(o *composed.Unstructured) bool {
	return Annotation(o, AnnotationCreateSucceeded) != ""
}

// FoundObject reports whether a provider-kubernetes Object found the
// object it delivers on its cluster instead of creating it: it reports
// the object (status.atProvider.manifest) without the proof of a create.
func FoundObject(o *composed.Unstructured) bool {
	if o == nil || CreatedHere(o) {
		return false
	}
	st, _ := o.Object["status"].(map[string]any)
	ap, _ := st["atProvider"].(map[string]any)
	m, _ := ap["manifest"].(map[string]any)
	return m != nil
}
