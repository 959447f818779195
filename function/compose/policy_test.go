package compose_test

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// reportingPlan reports what a policy lookup answered in its condition,
// and composes only when granted.
func reportingPlan(policy func(*compose.Request[toy]) (*tenancy.Grant, bool, error)) compose.Plan[toy] {
	return func(r *compose.Request[toy]) (compose.Outcome, error) {
		g, resolved, err := policy(r)
		switch {
		case !resolved:
			return r.ReadingPolicy(condType), nil
		case err != nil:
			return r.Refused(condType, err), nil
		}
		r.Resources.Add("thing", thing(1))
		return compose.Outcome{Conditions: []compose.Condition{{Type: condType, Status: "True", Reason: "Granted", Message: g.String()}}}, nil
	}
}

// policyPlan and clusterPolicyPlan report what Policy and ClusterPolicy
// answered.
var (
	policyPlan        = reportingPlan((*compose.Request[toy]).Policy)
	clusterPolicyPlan = reportingPlan((*compose.Request[toy]).ClusterPolicy)
)

func config(name string, sel metav1.LabelSelector) *fpv1alpha1.ClusterProviderConfig {
	c := composetest.Permissive()
	c.Name = name
	c.Spec.NamespaceSelector = sel
	return c
}

func TestPolicy(t *testing.T) {
	teamB := metav1.LabelSelector{MatchLabels: map[string]string{compose.PolicyLabel: "team-b"}}
	cases := map[string]struct {
		call composetest.Call
		// reason and message of the condition; the requirement asked
		// for the config.
		reason, message, asked string
	}{
		"not answered yet": {
			call:   composetest.Call{PolicyUnanswered: true},
			reason: "ReadingPolicy", asked: "default",
		},
		"a namespace without a label is governed by default": {
			call:   composetest.Call{},
			reason: "Granted", message: "ClusterProviderConfig default", asked: "default",
		},
		"a selector that is invalid": {
			call:   composetest.Call{Policy: config("default", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}})},
			reason: compose.ReasonNotGranted, asked: "default",
			message: "namespace ns is granted nothing: it is governed by ClusterProviderConfig default (the namespace has no label fleetplane.io/policy), whose spec.namespaceSelector is invalid",
		},
		"the namespace's label names its config": {
			call:   composetest.Call{NamespaceLabels: map[string]string{compose.PolicyLabel: "team-b"}, Policy: config("team-b", teamB)},
			reason: "Granted", message: "ClusterProviderConfig team-b", asked: "team-b",
		},
		"the answer is for the name asked before the label was known": {
			call:   composetest.Call{NamespaceLabels: map[string]string{compose.PolicyLabel: "team-b"}, Policy: config("default", metav1.LabelSelector{})},
			reason: "ReadingPolicy", asked: "team-b",
		},
		"a config that does not select the namespace grants nothing": {
			call:   composetest.Call{Policy: config("default", teamB)},
			reason: compose.ReasonNotGranted, asked: "default",
			message: "namespace ns is granted nothing: it is governed by ClusterProviderConfig default (the namespace has no label fleetplane.io/policy), whose spec.namespaceSelector does not select it",
		},
		"a label that is no name": {
			call:   composetest.Call{NamespaceLabels: map[string]string{compose.PolicyLabel: "Team_B"}},
			reason: compose.ReasonNotGranted, asked: "default",
			message: "namespace ns is granted nothing: its label fleetplane.io/policy is no ClusterProviderConfig name",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			call := tc.call
			call.XR = toyXR(map[string]any{"size": int64(1)})
			rsp := composetest.Run(t, compose.Run(policyPlan), call)
			c := rsp.Condition(condType)
			if c == nil || c.GetReason() != tc.reason || !strings.Contains(c.GetMessage(), tc.message) {
				t.Fatalf("condition = %v, want %s %q", c, tc.reason, tc.message)
			}
			sel := rsp.GetRequirements().GetResources()[compose.PolicyRequirement]
			if sel.GetMatchName() != tc.asked || sel.GetKind() != fpv1alpha1.ClusterProviderConfigKind {
				t.Errorf("asked for %v, want ClusterProviderConfig %s", sel, tc.asked)
			}
			if ns := rsp.GetRequirements().GetResources()[compose.NamespaceRequirement]; ns.GetMatchName() != "ns" || ns.GetKind() != "Namespace" {
				t.Errorf("asked for namespace %v", ns)
			}
			granted := tc.reason == "Granted"
			if _, ok := rsp.GetDesired().GetResources()["thing"]; ok != granted {
				t.Errorf("composed = %v, want %v", ok, granted)
			}
		})
	}
}

func TestPolicyMissing(t *testing.T) {
	// Crossplane answered: no such config.
	req := composetest.Call{XR: toyXR(map[string]any{"size": int64(1)}), PolicyUnanswered: true, Required: map[string][]runtime.Object{
		compose.NamespaceRequirement: {toyNamespace()},
		compose.PolicyRequirement:    {},
	}}
	rsp := composetest.Run(t, compose.Run(policyPlan), req)
	c := rsp.Condition(condType)
	want := "namespace ns is granted nothing: it is governed by ClusterProviderConfig default (the namespace has no label fleetplane.io/policy), which does not exist"
	if c.GetReason() != compose.ReasonNotGranted || c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetMessage() != want {
		t.Errorf("condition = %v", c)
	}
	if tenancy.DefaultConfigName != "default" {
		t.Error("the default config is named default")
	}
}

// TestRefusalFailsTheComposition: a refused XR fails its composition
// with a fatal result, so that Crossplane marks it Synced=False with the
// refusal (what crossplane beta trace shows; a function cannot set
// Synced otherwise), ending with the reason and the condition to read, and
// still sets the condition. Nothing is composed.
func TestRefusalFailsTheComposition(t *testing.T) {
	rsp := composetest.Run(t, compose.Run(policyPlan), composetest.Call{XR: toyXR(map[string]any{"size": int64(1)}), Policy: config("default", metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}})})
	rs := rsp.GetResults()
	if len(rs) != 1 || rs[0].GetSeverity() != fnv1.Severity_SEVERITY_FATAL {
		t.Fatalf("results = %v, want one fatal", rs)
	}
	if msg := rs[0].GetMessage(); !strings.HasPrefix(msg, "namespace ns is granted nothing") || !strings.HasSuffix(msg, "does not select it (NotGranted: see condition "+condType+")") {
		t.Errorf("fatal message = %q", msg)
	}
	if c := rsp.Condition(condType); c == nil || c.GetReason() != compose.ReasonNotGranted {
		t.Errorf("condition = %v", c)
	}
	if len(rsp.GetDesired().GetResources()) != 0 {
		t.Errorf("composed %v", rsp.GetDesired().GetResources())
	}
}

// TestPolicyNamespaceNotSupplied: crossplane render given no required
// resources answers the namespace with nothing; the message says what to
// pass, not merely that it was not found.
func TestPolicyNamespaceNotSupplied(t *testing.T) {
	req := composetest.Call{XR: toyXR(map[string]any{"size": int64(1)}), PolicyUnanswered: true, Required: map[string][]runtime.Object{
		compose.NamespaceRequirement: {},
		compose.PolicyRequirement:    {},
	}}
	rsp := composetest.Run(t, compose.Run(policyPlan), req)
	c := rsp.Condition(condType)
	if c.GetReason() != compose.ReasonNotGranted || !strings.Contains(c.GetMessage(), "namespace ns was not found among the resources Crossplane supplied: crossplane render must be given it and its ClusterProviderConfig with --required-resources") {
		t.Errorf("condition = %v", c)
	}
}

func toyNamespace() runtime.Object {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
}

func TestClusterPolicy(t *testing.T) {
	clusterToy := func(labels map[string]any) *unstructured.Unstructured {
		u := toyXR(map[string]any{"size": int64(1)})
		unstructured.RemoveNestedField(u.Object, "metadata", "namespace")
		if labels != nil {
			u.Object["metadata"].(map[string]any)["labels"] = labels
		}
		return u
	}
	// A config whose namespaceSelector selects no namespace still
	// governs the cluster-scoped XRs that name it: only the admin makes
	// those.
	noNamespaces := config("platform", metav1.LabelSelector{MatchLabels: map[string]string{"none": "none"}})
	cases := map[string]struct {
		call                   composetest.Call
		reason, message, asked string
	}{
		"not answered yet": {
			call:   composetest.Call{XR: clusterToy(nil)},
			reason: "ReadingPolicy", message: "reading the ClusterProviderConfig that governs this Toy", asked: "default",
		},
		"no label: default": {
			call:   composetest.Call{XR: clusterToy(nil), Policy: config("default", metav1.LabelSelector{})},
			reason: "Granted", message: "ClusterProviderConfig default", asked: "default",
		},
		"the XR's label names its config": {
			call:   composetest.Call{XR: clusterToy(map[string]any{compose.PolicyLabel: "platform"}), Policy: noNamespaces},
			reason: "Granted", message: "ClusterProviderConfig platform", asked: "platform",
		},
		"an answer for another name is not taken": {
			call:   composetest.Call{XR: clusterToy(map[string]any{compose.PolicyLabel: "platform"}), Policy: config("default", metav1.LabelSelector{})},
			reason: "ReadingPolicy", asked: "platform",
		},
		"a label that is no name": {
			call:   composetest.Call{XR: clusterToy(map[string]any{compose.PolicyLabel: "Not_A_Name"})},
			reason: compose.ReasonNotGranted, message: "this Toy is granted nothing: its label fleetplane.io/policy is no ClusterProviderConfig name",
		},
		"a namespaced XR": {
			call:   composetest.Call{XR: toyXR(map[string]any{"size": int64(1)})},
			reason: compose.ReasonNotGranted, message: "a Toy is namespaced: its namespace's policy governs it",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := composetest.Run(t, compose.Run(clusterPolicyPlan), tc.call)
			c := rsp.Condition(condType)
			if c == nil || c.GetReason() != tc.reason || !strings.Contains(c.GetMessage(), tc.message) {
				t.Fatalf("condition = %v, want %s %q", c, tc.reason, tc.message)
			}
			if got := rsp.GetRequirements().GetResources()[compose.PolicyRequirement].GetMatchName(); got != tc.asked {
				t.Errorf("asked for config %q, want %q", got, tc.asked)
			}
			if _, ok := rsp.GetDesired().GetResources()["thing"]; ok != (tc.reason == "Granted") {
				t.Errorf("composed = %v", ok)
			}
		})
	}

	// Crossplane answered: no such config.
	rsp := composetest.Run(t, compose.Run(clusterPolicyPlan), composetest.Call{XR: clusterToy(nil), Required: map[string][]runtime.Object{compose.PolicyRequirement: {}}})
	if c := rsp.Condition(condType); c.GetReason() != compose.ReasonNotGranted || c.GetMessage() != "this Toy is granted nothing: it is governed by ClusterProviderConfig default (the Toy has no label fleetplane.io/policy), which does not exist" {
		t.Errorf("condition = %v", c)
	}
}
