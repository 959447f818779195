package compose

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/function/decode"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// PolicyLabel on a namespace names the fleetplane ClusterProviderConfig
// that governs what its XRs compose (tenancy.Governing).
const PolicyLabel = tenancy.PolicyLabel

// ReasonNotGranted is the reason of a kind's condition when the policy
// refuses what its XR asks for.
const ReasonNotGranted = "NotGranted"

// ReasonQuotaExceeded is the reason of a kind's condition when the XR
// asks for more than the policy's quota allows (tenancy.QuotaError).
const ReasonQuotaExceeded = "QuotaExceeded"

// RefusalReason is the reason a refusal err is reported with.
func RefusalReason(err error) string {
	if tenancy.IsQuota(err) {
		return ReasonQuotaExceeded
	}
	return ReasonNotGranted
}

// Requirement keys of the policy: the XR's namespace, and the
// ClusterProviderConfig that governs it.
const (
	NamespaceRequirement = "fleetplane-namespace"
	PolicyRequirement    = "fleetplane-policy"
	// SiblingsRequirement: the XRs of the XR's own kind in its namespace,
	// for quotas that count them (Siblings).
	SiblingsRequirement = "fleetplane-siblings"
)

// Policy asks Crossplane for the XR's namespace and the
// ClusterProviderConfig that governs it, and returns what that grants the
// namespace. resolved is false until Crossplane has answered for both;
// a resolved answer with an error means the namespace is granted nothing,
// and the error says why and what the admin must write.
//
// Whatever a kind composes for another provider acts with the platform's
// identity, so the function itself must refuse what the namespace is not
// granted: the provider that acts cannot tell one namespace's request
// from another's.
func (r *Request[X]) Policy() (g *tenancy.Grant, resolved bool, err error) {
	ns := r.namespace
	if ns == "" {
		return nil, true, fmt.Errorf("a %s is cluster-scoped: it has no namespace policy", r.kind)
	}
	nss, nsResolved := r.Require(NamespaceRequirement, Selector{APIVersion: "v1", Kind: "Namespace", Name: ns})
	name, which, labelErr := tenancy.DefaultConfigName, "", error(nil)
	if nsResolved && len(nss) > 0 {
		// A label that is no object name is never asked for: Crossplane
		// would fail the whole composition fetching it.
		if n, w, err := tenancy.Governing(nss[0].Resource.GetLabels()); err != nil {
			labelErr = err
		} else {
			name, which = n, w
		}
	}
	// Asked for with the namespace, under the default name: when the
	// namespace names none, Crossplane answers both in one round.
	pcs, pcResolved := r.Require(PolicyRequirement, Selector{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ClusterProviderConfigKind, Name: name})
	if !nsResolved || !pcResolved {
		return nil, false, nil
	}
	if len(nss) == 0 {
		// In a cluster Crossplane always finds an XR's namespace (or
		// fails the composition itself when it may not read it); only
		// crossplane render answers without one.
		return nil, true, fmt.Errorf("namespace %s was not found among the resources Crossplane supplied: crossplane render must be given it and its ClusterProviderConfig with --required-resources (each examples/<kind>/required/ holds the example policy's)", ns)
	}
	labels := nss[0].Resource.GetLabels()
	if labelErr != nil {
		return nil, true, fmt.Errorf("namespace %s is granted nothing: %w", ns, labelErr)
	}
	// The answer may still be for the name asked before the namespace
	// was known: only the config of this name counts.
	switch {
	case len(pcs) == 0:
		return nil, true, fmt.Errorf("namespace %s is granted nothing: it is governed by %s, which does not exist", ns, which)
	case pcs[0].Resource.GetName() != name:
		return nil, false, nil
	}
	pc := &v1alpha1.ClusterProviderConfig{}
	if err := decode.Into(pcs[0].Resource.Object, pc); err != nil {
		return nil, true, fmt.Errorf("namespace %s is granted nothing: it is governed by %s, which cannot be read: %w", ns, which, err)
	}
	switch ok, err := tenancy.Selects(pc, labels); {
	case err != nil:
		return nil, true, fmt.Errorf("namespace %s is granted nothing: it is governed by %s, whose spec.namespaceSelector is invalid: %w", ns, which, err)
	case !ok:
		return nil, true, fmt.Errorf("namespace %s is granted nothing: it is governed by %s, whose spec.namespaceSelector does not select it", ns, which)
	}
	g, err = tenancy.FromClusterProviderConfig(pc, ns, labels)
	if err != nil {
		return nil, true, err
	}
	return g, true, nil
}

// Siblings asks Crossplane for every XR of this XR's kind in its
// namespace, itself included, for a quota that counts them. resolved is
// false until Crossplane has answered. Crossplane lists them at every
// composition, so a kind asks only when its policy counts them.
func (r *Request[X]) Siblings() (items []resource.Required, resolved bool) {
	apiVersion, _ := objectOf(r.req.Observed.Composite)["apiVersion"].(string)
	return r.Require(SiblingsRequirement, Selector{APIVersion: apiVersion, Kind: r.kind, Namespace: r.namespace, Labels: map[string]string{}})
}

// ClusterPolicy is Policy for a cluster-scoped XR, which only the cluster
// admin makes: the ClusterProviderConfig its own label PolicyLabel names
// ("default" without one) governs it, with no namespaceSelector to pass.
// What the kind may do is still only what that config says for it.
func (r *Request[X]) ClusterPolicy() (g *tenancy.Grant, resolved bool, err error) {
	if r.namespace != "" {
		return nil, true, fmt.Errorf("a %s is namespaced: its namespace's policy governs it", r.kind)
	}
	md, _ := objectOf(r.req.Observed.Composite)["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	name, _ := labels[PolicyLabel].(string)
	which := fmt.Sprintf("ClusterProviderConfig %s (the %s's label %s)", name, r.kind, PolicyLabel)
	switch {
	case name == "":
		name = tenancy.DefaultConfigName
		which = fmt.Sprintf("ClusterProviderConfig %s (the %s has no label %s)", name, r.kind, PolicyLabel)
	case len(validation.IsDNS1123Subdomain(name)) > 0:
		return nil, true, fmt.Errorf("this %s is granted nothing: its label %s is no ClusterProviderConfig name", r.kind, PolicyLabel)
	}
	pcs, resolved := r.Require(PolicyRequirement, Selector{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ClusterProviderConfigKind, Name: name})
	switch {
	case !resolved:
		return nil, false, nil
	case len(pcs) == 0:
		return nil, true, fmt.Errorf("this %s is granted nothing: it is governed by %s, which does not exist", r.kind, which)
	case pcs[0].Resource.GetName() != name:
		return nil, false, nil
	}
	pc := &v1alpha1.ClusterProviderConfig{}
	if err := decode.Into(pcs[0].Resource.Object, pc); err != nil {
		return nil, true, fmt.Errorf("this %s is granted nothing: it is governed by %s, which cannot be read: %w", r.kind, which, err)
	}
	return tenancy.ForClusterScoped(pc), true, nil
}

// Refused is the outcome of a plan the policy refuses: nothing new is
// composed, nothing that exists is removed, and the kind's condition
// (type) says what grant is missing or which quota is exceeded.
func (r *Request[X]) Refused(conditionType string, err error) Outcome {
	r.Resources.Freeze()
	return Outcome{Pending: true, Settled: true, Conditions: []Condition{{
		Type: conditionType, Status: corev1.ConditionFalse, Reason: RefusalReason(err), Fatal: true, Message: observe.Bound(err.Error()),
	}}}
}

// ReadingPolicy is the outcome of a plan while Crossplane has not
// supplied the policy yet: nothing new, nothing removed.
func (r *Request[X]) ReadingPolicy(conditionType string) Outcome {
	r.Resources.Freeze()
	msg := "reading the ClusterProviderConfig that governs the namespace"
	if r.namespace == "" {
		msg = "reading the ClusterProviderConfig that governs this " + r.kind
	}
	return Outcome{Pending: true, Conditions: []Condition{{
		Type: conditionType, Status: corev1.ConditionUnknown, Reason: "ReadingPolicy", Quiet: true, Message: msg,
	}}}
}
