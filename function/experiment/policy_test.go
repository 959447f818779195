package experiment

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

// labPolicy is what an admin grants the lab namespace: its own Argo CD
// project and namespace, its templates, the hub and GKE.
func labPolicy() *fpv1alpha1.ClusterProviderConfig {
	p := ct.Permissive()
	p.Name = "lab"
	p.Spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"fleetplane.io/policy": "lab"}}
	p.Spec.ArgoCD = &fpv1alpha1.ArgoCDPolicy{Namespace: "gitops", Project: "lab", AllowedExecCommands: []string{"argocd-k8s-auth"}}
	p.Spec.Workflows = &fpv1alpha1.WorkflowsPolicy{Namespace: "lab-workflows", AllowedTemplates: []string{"gateway-tutorial-validation"}}
	p.Spec.Experiments = &fpv1alpha1.ExperimentsPolicy{
		AllowHubTargets: true, HubServer: "https://hub.example.org",
		KubernetesProviderConfigRef: &fpv1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "hub"},
		GCP: &fpv1alpha1.GCPPolicy{
			Project: "lab-gke", ArgoCDServiceAccount: "argocd@lab-gke.iam.gserviceaccount.com", ArgoCDRole: "roles/container.admin",
			ProviderConfigRef: &fpv1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "gcp-lab"},
		},
	}
	return p
}

var labLabels = map[string]string{"fleetplane.io/policy": "lab"}

// TestPlatformSettingsFromThePolicy: everything the platform decides
// comes from the policy, not the function input, and hub targets deploy
// into the Experiment's own namespace.
func TestPlatformSettingsFromThePolicy(t *testing.T) {
	observed := map[string]*ct.Resource{"cluster-app": runningGKE(), "nodepool-app": nodePool().Ready(), "argocd-access": argocdAccess().Ready(), "registration-app": registration().Ready(), "application-app": application("a").Ready()}
	r := run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: labPolicy(), NamespaceLabels: labLabels, Required: components(), Observed: observed})
	r.Want("cluster-app", "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "gcp-lab"})
	r.Want("cluster-app", "spec.forProvider.workloadIdentityConfig", map[string]any{"workloadPool": "lab-gke.svc.id.goog"})
	r.Want("argocd-access", "spec.forProvider", map[string]any{"project": "lab-gke", "role": "roles/container.admin", "member": "serviceAccount:argocd@lab-gke.iam.gserviceaccount.com"})
	for _, mr := range []string{"registration-app", "expiry"} {
		r.Want(mr, "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "lab"})
	}
	r.Want("application-loadgen", "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "hub"})
	r.Want("application-loadgen", "spec.forProvider.manifest.metadata.namespace", "gitops")
	r.Want("application-loadgen", "spec.forProvider.manifest.spec.project", "lab")
	r.Want("application-loadgen", "spec.forProvider.manifest.spec.destination", map[string]any{"server": "https://hub.example.org", "namespace": "lab"})
	r.Want("application-loadgen", "spec.forProvider.manifest.spec.syncPolicy.syncOptions", []string{"ServerSideApply=true"})
	// A GKE cluster is the experiment's own.
	r.Want("application-app", "spec.forProvider.manifest.spec.destination.namespace", "gateway-tutorial")
	r.Want("application-app", "spec.forProvider.manifest.spec.syncPolicy.syncOptions", []string{"CreateNamespace=true", "ServerSideApply=true"})
}

// TestPolicyRefuses: what the policy does not grant is refused before
// anything is composed, the Expiry included, so a refused Experiment
// leaves nothing behind; what exists stays.
func TestPolicyRefuses(t *testing.T) {
	without := func(edit func(*fpv1alpha1.ClusterProviderConfigSpec)) *fpv1alpha1.ClusterProviderConfig {
		p := labPolicy()
		edit(&p.Spec)
		return p
	}
	cases := map[string]struct {
		policy  *fpv1alpha1.ClusterProviderConfig
		xr      *v1alpha1.Experiment
		message []string
	}{
		"no experiments": {
			policy:  without(func(s *fpv1alpha1.ClusterProviderConfigSpec) { s.Experiments = nil }),
			message: []string{"ClusterProviderConfig lab grants no Experiments: the cluster admin adds spec.experiments"},
		},
		"no Argo CD": {
			policy:  without(func(s *fpv1alpha1.ClusterProviderConfigSpec) { s.ArgoCD = nil }),
			message: []string{"grants no Argo CD, which Experiments deploy with"},
		},
		"no hub targets": {
			policy:  without(func(s *fpv1alpha1.ClusterProviderConfigSpec) { s.Experiments.AllowHubTargets = false }),
			message: []string{"target loadgen deploys to the hub, which the policy does not allow (spec.experiments.allowHubTargets)"},
		},
		"no GKE": {
			policy:  without(func(s *fpv1alpha1.ClusterProviderConfigSpec) { s.Experiments.GCP = nil }),
			message: []string{"target app is a GKE cluster, which the policy does not grant", "spec.experiments.gcp"},
		},
		"no exec plugin for GKE": {
			policy:  without(func(s *fpv1alpha1.ClusterProviderConfigSpec) { s.ArgoCD.AllowedExecCommands = nil }),
			message: []string{"Argo CD reaches with argocd-k8s-auth, an exec plugin the policy does not allow (spec.argocd.allowedExecCommands)"},
		},
		"no vcluster": {
			policy: labPolicy(),
			xr: func() *v1alpha1.Experiment {
				xr := gatewayTutorial()
				xr.Spec.Targets[0].Cluster = v1alpha1.ClusterSpec{Type: v1alpha1.ClusterVCluster}
				return xr
			}(),
			message: []string{"target app is a vcluster, which the policy does not grant: the cluster admin adds spec.experiments.vcluster", "package/rbac/vcluster-roles.yaml"},
		},
		"no talos": {
			policy: labPolicy(),
			xr: func() *v1alpha1.Experiment {
				xr := gatewayTutorial()
				xr.Spec.Targets[0].Cluster = v1alpha1.ClusterSpec{Type: v1alpha1.ClusterTalos}
				return xr
			}(),
			message: []string{"target app is a talos cluster, which the policy does not grant: the cluster admin adds spec.experiments.talos", "package/rbac/crossplane-talos.yaml"},
		},
		"a template not allowed": {
			policy: labPolicy(),
			xr: func() *v1alpha1.Experiment {
				xr := gatewayTutorial()
				xr.Spec.Workflow.Template = "drain-every-node"
				return xr
			}(),
			message: []string{"the validation WorkflowTemplate drain-every-node is not one the policy lets this namespace run (spec.workflows.allowedTemplates)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := tc.xr
			if xr == nil {
				xr = gatewayTutorial()
			}
			r := run(t, ct.Call{XR: xr, Input: conventionInput, Policy: tc.policy, NamespaceLabels: labLabels, Required: components()})
			r.WantNames()
			r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "NotGranted", tc.message...)
			r.WantEvent(fnv1.Severity_SEVERITY_FATAL, "NotGranted")
			r.Want("", "status.phase", "Failed")
			r.WantNotReady()

			// Refused after it was composed: what exists stays, the
			// Expiry too, so the Experiment still expires.
			r = run(t, ct.Call{XR: xr, Input: conventionInput, Policy: tc.policy, NamespaceLabels: labLabels, Required: components(),
				Observed: map[string]*ct.Resource{"expiry": ct.Observed("lifecycle.m.fleetplane.io/v1alpha1", "Expiry", "e").Ready(), "application-loadgen": application("b").Ready()}})
			r.WantNames("application-loadgen", "expiry")
		})
	}
}

// TestNeverTakeOverApplications: an Argo CD Application of the name a
// target's would have, which its Object found rather than created (two
// Experiments whose namespace and name join to the same name, or one
// made by hand), is observed only, and the target fails saying so.
func TestNeverTakeOverApplications(t *testing.T) {
	found := application("b").Ready().AtProvider("manifest", map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"})
	xr := gatewayTutorial()
	xr.Spec.Targets = xr.Spec.Targets[1:]
	xr.Spec.Targets[0].Depends = nil
	r := run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: map[string]*ct.Resource{"application-loadgen": found}})
	r.Want("application-loadgen", "spec.managementPolicies", []string{"Observe", "Create"})
	r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "Failed", "Argo CD Application argocd/lab-gateway-tutorial-loadgen existed before this Experiment, which never takes over what it did not create")

	made := application("b").Ready().Annotate("crossplane.io/external-create-succeeded", "2026-11-23T10:00:00Z").AtProvider("manifest", map[string]any{"kind": "Application"})
	r = run(t, ct.Call{XR: xr, Input: conventionInput, Required: components(), Observed: map[string]*ct.Resource{"application-loadgen": made}})
	r.Want("application-loadgen", "spec.managementPolicies", nil)
}
