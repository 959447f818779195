package experiment

import (
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/internal/tenancy"
)

// TestQuotas: an Experiment over one of its namespace's quotas is
// refused whole before anything is composed, with reason QuotaExceeded
// and the policy field that sets the quota; labPolicy sets none, so the
// defaults apply (4 targets, 3 nodes a target, 8 in all, 7 days, the
// e2 machine types).
func TestQuotas(t *testing.T) {
	edit := func(f func(*v1alpha1.Experiment)) *v1alpha1.Experiment {
		xr := gatewayTutorial()
		f(xr)
		return xr
	}
	gke := func(name string, nodes int32) v1alpha1.Target {
		return v1alpha1.Target{Name: name, Cluster: v1alpha1.ClusterSpec{Type: v1alpha1.ClusterGKE, Zone: "us-central1-a", NodeCount: nodes}}
	}
	cases := map[string]struct {
		xr      *v1alpha1.Experiment
		policy  func(*fpv1alpha1.ExperimentsPolicy)
		message []string
	}{
		"too many targets": {
			xr: edit(func(xr *v1alpha1.Experiment) {
				xr.Spec.Targets = append(xr.Spec.Targets, gke("c", 1), gke("d", 1), gke("e", 1))
			}),
			message: []string{"the Experiment has 5 targets, more than the 4 an Experiment may have (spec.experiments.quota.maxTargets)"},
		},
		"too long": {
			xr:      edit(func(xr *v1alpha1.Experiment) { xr.Spec.TTLDays = 365 }),
			message: []string{"spec.ttlDays 365 is longer than the 7 days an Experiment may live (spec.experiments.quota.maxTTLDays)"},
		},
		"too big a node pool": {
			xr:      edit(func(xr *v1alpha1.Experiment) { xr.Spec.Targets[0].Cluster.NodeCount = 100 }),
			message: []string{"target app asks for 100 nodes, more than the 3 a target may have (spec.experiments.quota.maxNodesPerTarget)"},
		},
		"too many workers": {
			xr: edit(func(xr *v1alpha1.Experiment) {
				xr.Spec.Targets[0].Cluster = v1alpha1.ClusterSpec{Type: v1alpha1.ClusterTalos, NodeCount: 4}
			}),
			policy: func(e *fpv1alpha1.ExperimentsPolicy) {
				e.Talos = ct.Permissive().Spec.Experiments.Talos
			},
			message: []string{"target app asks for 4 nodes", "(spec.experiments.quota.maxNodesPerTarget)"},
		},
		"too many nodes in all": {
			xr: edit(func(xr *v1alpha1.Experiment) {
				xr.Spec.Targets = []v1alpha1.Target{gke("a", 3), gke("b", 3), gke("c", 3)}
				xr.Spec.Targets[0].Components = gatewayTutorial().Spec.Targets[0].Components
			}),
			message: []string{"the Experiment's targets ask for 9 nodes in all, more than the 8 an Experiment may have (spec.experiments.quota.maxNodes)"},
		},
		"a GPU machine": {
			xr:      edit(func(xr *v1alpha1.Experiment) { xr.Spec.Targets[0].Cluster.MachineType = "a3-megagpu-8g" }),
			message: []string{"target app asks for machine type a3-megagpu-8g, which the policy does not allow (it allows e2-medium, e2-standard-2, e2-standard-4) (spec.experiments.gcp.machineTypes)"},
		},
		"a quota lowered by the admin": {
			policy: func(e *fpv1alpha1.ExperimentsPolicy) {
				e.Quota = &fpv1alpha1.ExperimentsQuota{MaxNodes: ptr.To[int32](2)}
			},
			message: []string{"ask for 3 nodes in all, more than the 2 an Experiment may have"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			policy := labPolicy()
			if tc.policy != nil {
				tc.policy(policy.Spec.Experiments)
			}
			xr := tc.xr
			if xr == nil {
				xr = gatewayTutorial()
				xr.Spec.Targets[0].Cluster.NodeCount = 1
				xr.Spec.Targets = append(xr.Spec.Targets, gke("extra", 2))
			}
			r := run(t, ct.Call{XR: xr, Input: conventionInput, Policy: policy, NamespaceLabels: labLabels, Required: components()})
			r.WantNames()
			r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "QuotaExceeded", tc.message...)
			r.WantEvent(fnv1.Severity_SEVERITY_FATAL, "QuotaExceeded")
			r.Want("", "status.phase", "Failed")
			r.WantNotReady()
		})
	}

	t.Run("raised by the admin", func(t *testing.T) {
		policy := labPolicy()
		policy.Spec.Experiments.Quota = &fpv1alpha1.ExperimentsQuota{MaxTTLDays: ptr.To[int32](365), MaxNodesPerTarget: ptr.To[int32](100), MaxNodes: ptr.To[int32](100)}
		policy.Spec.Experiments.GCP.MachineTypes = []string{"e2-*", "a3-*"}
		xr := gatewayTutorial()
		xr.Spec.TTLDays, xr.Spec.Targets[0].Cluster.NodeCount, xr.Spec.Targets[0].Cluster.MachineType = 365, 100, "a3-megagpu-8g"
		r := run(t, ct.Call{XR: xr, Input: conventionInput, Policy: policy, NamespaceLabels: labLabels, Required: components()})
		if !r.Has("network-app") {
			t.Fatalf("composed %v, want the GKE target's network", r.Names())
		}
	})
}

// TestSiblingsAndComponentsInOneRound: once the policy is read, the
// Experiment asks for the namespace's Experiments and for its Components
// together, so that Crossplane answers both in one more round, and says
// what it is listing meanwhile.
func TestSiblingsAndComponentsInOneRound(t *testing.T) {
	policy := labPolicy()
	policy.Spec.Experiments.Quota = &fpv1alpha1.ExperimentsQuota{MaxExperiments: ptr.To[int32](2)}
	r := run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: policy, NamespaceLabels: labLabels, SiblingsUnanswered: true})
	asked := r.GetRequirements().GetResources()
	if _, ok := asked[compose.SiblingsRequirement]; !ok {
		t.Errorf("asked for %d requirements, not the namespace's Experiments", len(asked))
	}
	for _, c := range []string{"envoy-gateway", "k6"} {
		if _, ok := asked[componentsRequirement(c)]; !ok {
			t.Errorf("did not ask for Component %s in the same round", c)
		}
	}
	r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_UNKNOWN, "ReadingPolicy", "listing the namespace's Experiments")
}

// TestExperimentsAtOnce: the namespace's maxExperiments places go to its
// oldest Experiments; a newer one composes nothing, says who holds the
// places, and is composed once one of them is gone. Its own age, not
// anything it writes, decides.
func TestExperimentsAtOnce(t *testing.T) {
	at := func(name string, day int) runtime.Object {
		xr := gatewayTutorial()
		xr.Name, xr.UID = name, ""
		xr.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, day, 8, 0, 0, 0, time.UTC))
		return xr
	}
	policy := labPolicy()
	policy.Spec.Experiments.Quota = &fpv1alpha1.ExperimentsQuota{MaxExperiments: ptr.To[int32](2)}
	call := func(siblings ...runtime.Object) ct.Response {
		return run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: policy, NamespaceLabels: labLabels, Required: components(), Siblings: siblings})
	}

	r := call(at("first", 1), at("second", 2))
	r.WantNames()
	r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "QuotaExceeded",
		"waiting for a place: the namespace may have 2 Experiments at once, and the 2 older ones hold them (first, second); this one is composed when one of them is deleted (spec.experiments.quota.maxExperiments)")
	r.Want("", "status.phase", "Pending")
	r.WantNotReady()

	// Newer ones never take its place; one created the same second is
	// ordered by name.
	r = call(at("first", 1), at("later", 25), at("gateway-tutorial-b", 20))
	if !r.Has("network-app") {
		t.Fatalf("composed %v, want the Experiment to hold the second place", r.Names())
	}
	r = call(at("first", 1), at("gateway-tutoria", 20))
	if r.Has("network-app") {
		t.Fatal("an Experiment created with it and named before it holds the place")
	}

	policy.Spec.Experiments.Quota.MaxExperiments = ptr.To[int32](0)
	r = call()
	r.WantCondition(v1alpha1.ConditionExperiment, fnv1.Status_STATUS_CONDITION_FALSE, "QuotaExceeded", "the namespace may have no Experiments (spec.experiments.quota.maxExperiments)")

	// Alone in its namespace, under the default quota, it composes.
	r = run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: labPolicy(), NamespaceLabels: labLabels, Required: components()})
	if !r.Has("network-app") {
		t.Fatalf("composed %v alone in its namespace", r.Names())
	}
}

// TestNodesRunAsThePlatformSays: GKE nodes get the policy's service
// account and scopes, GKE's default scopes when it names none, never
// cloud-platform by default.
func TestNodesRunAsThePlatformSays(t *testing.T) {
	observed := map[string]*ct.Resource{"cluster-app": runningGKE()}
	r := run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: labPolicy(), NamespaceLabels: labLabels, Required: components(), Observed: observed})
	r.Want("nodepool-app", "spec.forProvider.nodeConfig.oauthScopes", tenancy.DefaultNodeOAuthScopes)
	r.Want("nodepool-app", "spec.forProvider.nodeConfig.serviceAccount", nil)

	policy := labPolicy()
	policy.Spec.Experiments.GCP.NodeServiceAccount = "gke-nodes@lab-gke.iam.gserviceaccount.com"
	policy.Spec.Experiments.GCP.NodeOAuthScopes = []string{"https://www.googleapis.com/auth/cloud-platform"}
	r = run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: policy, NamespaceLabels: labLabels, Required: components(), Observed: observed})
	r.Want("nodepool-app", "spec.forProvider.nodeConfig.oauthScopes", []string{"https://www.googleapis.com/auth/cloud-platform"})
	r.Want("nodepool-app", "spec.forProvider.nodeConfig.serviceAccount", "gke-nodes@lab-gke.iam.gserviceaccount.com")

	// A pool made before keeps what it was made with: GKE would replace
	// every node to change it.
	observed["nodepool-app"] = nodePool().Ready().Set("spec.forProvider.nodeConfig", map[string]any{"oauthScopes": []any{"https://www.googleapis.com/auth/logging.write"}})
	r = run(t, ct.Call{XR: gatewayTutorial(), Input: conventionInput, Policy: policy, NamespaceLabels: labLabels, Required: components(), Observed: observed})
	r.Want("nodepool-app", "spec.forProvider.nodeConfig.oauthScopes", []string{"https://www.googleapis.com/auth/logging.write"})
	r.Want("nodepool-app", "spec.forProvider.nodeConfig.serviceAccount", nil)
}
