// Package composetest builds RunFunctionRequests from typed fixtures and
// reads RunFunctionResponses, for the table tests of every composer.
//
// An XR is a typed Go object; observed composed resources are built with
// Observed and a few verbs (Ready, Failing, AtProvider), so a test says
// what state a resource is in, not how Crossplane spells it.
package composetest

import (
	"maps"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/fnwire"
)

// Call is one RunFunction request.
type Call struct {
	// XR is the observed composite resource, typed, with its TypeMeta set.
	XR runtime.Object
	// XRConditions are conditions the observed XR carries (its Go type
	// has no field for them: Crossplane adds them to every XR).
	XRConditions []Condition
	// Input is the function input; nil sends none.
	Input *v1beta1.Input
	// Observed composed resources by composition resource name.
	Observed map[string]*Resource
	// Required resources by requirement key. A nil map means Crossplane
	// has not answered yet; an empty list, that nothing matched.
	Required map[string][]runtime.Object
	// Policy is the fleetplane ClusterProviderConfig that governs a
	// namespaced XR's namespace, supplied with the namespace as Crossplane
	// supplies them; nil supplies Permissive. It is named by the
	// namespace's label when NamespaceLabels set one. For a cluster-scoped
	// XR it is supplied only when set, as the config the XR names.
	Policy *fpv1alpha1.ClusterProviderConfig
	// NamespaceLabels are the labels of the XR's namespace.
	NamespaceLabels map[string]string
	// PolicyUnanswered leaves the namespace and policy unanswered, as
	// before Crossplane's first answer.
	PolicyUnanswered bool
	// Siblings are the other XRs of the XR's kind in its namespace,
	// supplied with the policy (the XR itself is added to them).
	Siblings []runtime.Object
	// SiblingsUnanswered leaves them unanswered, as in the round after
	// the policy's.
	SiblingsUnanswered bool
}

// Condition is a condition on an observed object.
type Condition struct {
	Type, Status, Reason, Message string
}

// Request builds the RunFunctionRequest.
func (c Call) Request(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	xr := toMap(t, c.XR)
	if len(c.XRConditions) > 0 {
		status, _ := xr["status"].(map[string]any)
		if status == nil {
			status = map[string]any{}
		}
		status["conditions"] = conditions(c.XRConditions)
		xr["status"] = status
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "test"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: toStruct(t, xr)}},
		Desired:  &fnv1.State{Composite: &fnv1.Resource{Resource: &structpb.Struct{Fields: map[string]*structpb.Value{}}}},
	}
	if c.Input != nil {
		in := c.Input.DeepCopy()
		in.APIVersion, in.Kind = v1beta1.SchemeGroupVersion.String(), "Input"
		req.Input = toStruct(t, toMap(t, in))
	}
	if len(c.Observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for name, r := range c.Observed {
			req.Observed.Resources[name] = &fnv1.Resource{Resource: toStruct(t, r.Object())}
		}
	}
	required := c.Required
	ns, _, _ := unstructured.NestedString(xr, "metadata", "namespace")
	if ns == "" && c.Policy != nil && !c.PolicyUnanswered {
		// A cluster-scoped XR that reads a policy (ClusterPolicy) names
		// it itself; Crossplane answers that one requirement.
		required = maps.Clone(required)
		if required == nil {
			required = map[string][]runtime.Object{}
		}
		pol := c.Policy.DeepCopy()
		pol.APIVersion, pol.Kind = fpv1alpha1.SchemeGroupVersion.String(), fpv1alpha1.ClusterProviderConfigKind
		required[compose.PolicyRequirement] = []runtime.Object{pol}
	}
	if ns != "" && !c.PolicyUnanswered {
		required = maps.Clone(required)
		if required == nil {
			required = map[string][]runtime.Object{}
		}
		pol := c.Policy
		if pol == nil {
			pol = Permissive()
		}
		nsObj := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: c.NamespaceLabels}}
		pol = pol.DeepCopy()
		pol.APIVersion, pol.Kind = fpv1alpha1.SchemeGroupVersion.String(), fpv1alpha1.ClusterProviderConfigKind
		required[compose.NamespaceRequirement] = []runtime.Object{nsObj}
		required[compose.PolicyRequirement] = []runtime.Object{pol}
		if _, ok := required[compose.SiblingsRequirement]; !ok && !c.SiblingsUnanswered {
			required[compose.SiblingsRequirement] = append([]runtime.Object{c.XR}, c.Siblings...)
		}
	}
	if required != nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
		for key, objs := range required {
			rs := &fnv1.Resources{}
			for _, o := range objs {
				rs.Items = append(rs.Items, &fnv1.Resource{Resource: toStruct(t, toMap(t, o))})
			}
			req.RequiredResources[key] = rs
		}
	}
	return req
}

// Wire is the request as the function receives it: encoded as Crossplane
// encodes it and decoded by fnwire.
func (c Call) Wire(t testing.TB) *fnwire.Request {
	t.Helper()
	return Wire(t, c.Request(t))
}

// Wire encodes req as Crossplane does and decodes it as the function does.
func Wire(t testing.TB, req *fnv1.RunFunctionRequest) *fnwire.Request {
	t.Helper()
	w, err := fnwire.FromProto(req)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Proto encodes rsp as the function does and decodes it as Crossplane
// does, into generated protobuf types.
func Proto(t testing.TB, rsp *fnwire.Response) *fnv1.RunFunctionResponse {
	t.Helper()
	out, err := rsp.Proto()
	if err != nil {
		t.Fatalf("cannot carry the response across the wire: %v", err)
	}
	return out
}

// Run calls the composer the way function-fleetplane does, through the
// wire format both ways, and fails the test on an error: tests of errors
// call Compose themselves.
func Run(t *testing.T, c compose.Composer, call Call) Response {
	t.Helper()
	req := call.Wire(t)
	rsp := fnwire.NewResponse(req, response.DefaultTTL)
	sum, err := c.Compose(req, rsp, call.Input)
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	return Response{T: t, RunFunctionResponse: Proto(t, rsp), Summary: sum}
}

func conditions(cs []Condition) []any {
	out := make([]any, len(cs))
	for i, c := range cs {
		m := map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason}
		if c.Message != "" {
			m["message"] = c.Message
		}
		out[i] = m
	}
	return out
}

func toMap(t testing.TB, o runtime.Object) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatalf("cannot convert %T: %v", o, err)
	}
	compose.DropNulls(m)
	return m
}

func toStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(normalize(m).(map[string]any))
	if err != nil {
		t.Fatalf("cannot convert to a protobuf struct: %v", err)
	}
	return s
}

// normalize turns the integer types the converter emits into float64, as
// JSON decoding does, for structpb.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	default:
		return v
	}
}

// Resource is an observed composed resource under construction.
type Resource struct {
	obj map[string]any
}

// Observed starts an observed resource of a kind with an external name.
// It is neither Ready nor failing until a verb says so.
func Observed(apiVersion, kind, externalName string) *Resource {
	return &Resource{obj: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata": map[string]any{
			"name":        strings.ToLower(kind) + "-" + strings.ToLower(externalName),
			"annotations": map[string]any{"crossplane.io/external-name": externalName},
		},
		"status": map[string]any{"conditions": conditions([]Condition{
			{Type: "Ready", Status: "False", Reason: "Creating"},
			{Type: "Synced", Status: "True", Reason: "ReconcileSuccess"},
		})},
	}}
}

// Object returns the resource as Crossplane sends it.
func (r *Resource) Object() map[string]any { return r.obj }

// Ready marks the resource Ready=True, Synced=True.
func (r *Resource) Ready() *Resource {
	return r.withConditions(Condition{Type: "Ready", Status: "True", Reason: "Available"}, Condition{Type: "Synced", Status: "True", Reason: "ReconcileSuccess"})
}

// Failing marks the resource Ready=False and Synced=False with the
// provider's message.
func (r *Resource) Failing(msg string) *Resource {
	return r.withConditions(Condition{Type: "Ready", Status: "False", Reason: "Creating"}, Condition{Type: "Synced", Status: "False", Reason: "ReconcileError", Message: msg})
}

// Unavailable marks the resource Ready=False with the provider's message
// and Synced=True: it reconciles, and reports why it is not ready.
func (r *Resource) Unavailable(msg string) *Resource {
	return r.withConditions(Condition{Type: "Ready", Status: "False", Reason: "Unavailable", Message: msg}, Condition{Type: "Synced", Status: "True", Reason: "ReconcileSuccess"})
}

func (r *Resource) withConditions(cs ...Condition) *Resource {
	r.status()["conditions"] = conditions(cs)
	return r
}

func (r *Resource) status() map[string]any {
	s, _ := r.obj["status"].(map[string]any)
	if s == nil {
		s = map[string]any{}
		r.obj["status"] = s
	}
	return s
}

// AtProvider sets status.atProvider.<path> (dotted) to v.
func (r *Resource) AtProvider(path string, v any) *Resource {
	setPath(r.status(), "atProvider."+path, v)
	return r
}

// Set sets any dotted path of the object, such as spec.forProvider.x.
func (r *Resource) Set(path string, v any) *Resource {
	setPath(r.obj, path, v)
	return r
}

// Annotate adds an annotation.
func (r *Resource) Annotate(key, value string) *Resource {
	md := r.obj["metadata"].(map[string]any)
	md["annotations"].(map[string]any)[key] = value
	return r
}

func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, _ := m[p].(map[string]any)
		if next == nil {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = normalize(v)
}
