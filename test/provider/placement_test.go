package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementmv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/m/v1alpha1"
	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
)

// placementComposing is a Placement as Crossplane keeps it: selecting
// objects, wanting singleton reported state, and composing the named
// ReportedStates.
func placementComposing(t *testing.T, ns, name string, objects []any, reportedStates ...string) *unstructured.Unstructured {
	t.Helper()
	refs := []any{}
	for _, r := range reportedStates {
		refs = append(refs, map[string]any{"apiVersion": placementmv1alpha1.SchemeGroupVersion.String(), "kind": placementmv1alpha1.ReportedStateKind, "name": r})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": placementv1alpha1.SchemeGroupVersion.String(), "kind": placementv1alpha1.PlacementKind,
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"objects": objects, "clusters": map[string]any{}, "wantSingletonReportedState": true,
			"crossplane": map[string]any{"resourceRefs": refs},
		},
	}}
	create(t, u)
	return u
}

// reportedStateOf is the ReportedState name the Placement p composes to
// write status into the object of apiVersion and kind named object.
func reportedStateOf(p *unstructured.Unstructured, name, apiVersion, kind, object string, status string) *placementmv1alpha1.ReportedState {
	return &placementmv1alpha1.ReportedState{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.GetNamespace(), Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: p.GetAPIVersion(), Kind: p.GetKind(), Name: p.GetName(), UID: p.GetUID(), Controller: new(true),
		}}},
		Spec: placementmv1alpha1.ReportedStateSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: configOf(p.GetNamespace())},
			ForProvider: placementmv1alpha1.ReportedStateParameters{
				Placement: p.GetName(), Cluster: "wec1",
				Object: placementmv1alpha1.ObjectRef{APIVersion: apiVersion, Kind: kind, Name: object},
				Status: extv1.JSON{Raw: []byte(status)},
			},
		},
	}
}

func job(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "m", Image: "busybox"}},
		}}},
	}
	create(t, j)
	return j
}

func reportedStateCondition(t *testing.T, ns, name string, typ xpv2.ConditionType, parts ...string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("ReportedState %s %s: %s", name, typ, strings.Join(parts, ", ")), func() (bool, string) {
		r := get(t, &placementmv1alpha1.ReportedState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		c := condition(r.Status.Conditions, typ)
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return false, string(c.Status) + ": " + c.Message
			}
		}
		return true, ""
	})
}

func jobStatus(t *testing.T, ns, name string) string {
	t.Helper()
	j := get(t, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	b, _ := json.Marshal(j.Status)
	return string(b)
}

// TestReportedState writes a cluster's status into a Job on the real API
// server, under the RBAC the provider ships: written, rewritten when the
// cluster reports something new, cleared on removal. Nothing here runs
// Jobs, so the status is only ever the ReportedState's.
func TestReportedState(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	job(t, ns, "migrate")
	p := placementComposing(t, ns, "web", []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "names": []any{"migrate"}}}, "web-migrate")
	rs := reportedStateOf(p, "web-migrate", "batch/v1", "Job", "migrate", `{"active":1,"ready":1,"startTime":"2026-11-23T10:00:00Z"}`)
	rs.Spec.ForProvider.ExecutingCount = new(int32(1))
	create(t, rs)

	reportedStateCondition(t, ns, "web-migrate", xpv2.TypeReady, "holds the status cluster wec1 reports")
	executingCount(t, ns, "migrate", "1")
	if got := jobStatus(t, ns, "migrate"); got != `{"startTime":"2026-11-23T10:00:00Z","active":1,"ready":1}` {
		t.Errorf("Job status = %s", got)
	}
	rs = get(t, &placementmv1alpha1.ReportedState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-migrate"}})
	if at := rs.Status.AtProvider; at.Digest == "" || at.WrittenAt == nil || at.ExecutingCount != "1" {
		t.Errorf("atProvider = %+v", at)
	}

	// The cluster reports something new, and the copy no longer counts
	// as executing.
	rs.Spec.ForProvider.Status.Raw = []byte(`{"active":1,"ready":0,"startTime":"2026-11-23T10:00:00Z"}`)
	rs.Spec.ForProvider.ExecutingCount = new(int32(0))
	if err := kube.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the new report written", func() (bool, string) {
		got := jobStatus(t, ns, "migrate")
		return got == `{"startTime":"2026-11-23T10:00:00Z","active":1,"ready":0}`, got
	})
	executingCount(t, ns, "migrate", "0")

	// Removed: the status it wrote is cleared, all but the startTime a
	// Job keeps once set.
	if err := kube.Delete(ctx, rs); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the ReportedState gone", func() (bool, string) {
		return !exists(t, &placementmv1alpha1.ReportedState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-migrate"}}), "still there"
	})
	if got := jobStatus(t, ns, "migrate"); got != `{"startTime":"2026-11-23T10:00:00Z"}` {
		t.Errorf("Job status after removal = %s", got)
	}
	j := get(t, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrate"}})
	if v, ok := j.Labels[placementv1alpha1.ExecutingCountLabel]; ok {
		t.Errorf("label %s=%q left after removal", placementv1alpha1.ExecutingCountLabel, v)
	}
	if n := selected(t, ns, placementv1alpha1.ExecutingCountLabel); n != 0 {
		t.Errorf("%d Jobs still selected by %s after removal", n, placementv1alpha1.ExecutingCountLabel)
	}
}

// selected counts the Jobs in ns that a label selector selects, as
// `kubectl get jobs -l <selector>` asks the API server.
func selected(t *testing.T, ns, selector string) int {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := kube.List(context.Background(), &jobs, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		t.Fatal(err)
	}
	return len(jobs.Items)
}

// executingCount waits for the object's executing-count label.
func executingCount(t *testing.T, ns, name, want string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("label %s=%s on Job %s", placementv1alpha1.ExecutingCountLabel, want, name), func() (bool, string) {
		j := get(t, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		got := j.Labels[placementv1alpha1.ExecutingCountLabel]
		return got == want, fmt.Sprintf("%q", got)
	})
	// What tools written for KubeStellar ask: the objects whose status
	// comes back from one cluster.
	if n := selected(t, ns, placementv1alpha1.ExecutingCountLabel+"="+want); n != 1 {
		t.Errorf("%s=%s selects %d Jobs, want 1", placementv1alpha1.ExecutingCountLabel, want, n)
	}
}

// TestReportedStateDoesNotFight: the control plane's own deployment
// controller writes a Deployment's status too. The ReportedState writes
// once, sees its status rewritten, names the other writer and leaves it.
func TestReportedStateDoesNotFight(t *testing.T) {
	ns := namespace(t)
	labels := map[string]string{"app": "api"}
	create(t, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "nginx"}}}},
		},
	})
	p := placementComposing(t, ns, "api", []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "matchLabels": map[string]any{"app": "api"}}}, "api-status")
	create(t, reportedStateOf(p, "api-status", "apps/v1", "Deployment", "api", `{"replicas":3,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":3,"observedGeneration":9}`))
	reportedStateCondition(t, ns, "api-status", xpv2.TypeReady, "was rewritten after fleetplane wrote it", "kube-controller-manager")
}

// TestReportedStateWritesOnlyForItsPlacement is the tenant's attack: a
// ReportedState made by hand, its owner reference forged, or pointed at
// an object its Placement does not select. Nothing is written.
func TestReportedStateWritesOnlyForItsPlacement(t *testing.T) {
	ns := namespace(t)
	job(t, ns, "bystander")
	job(t, ns, "placed")
	const status = `{"active":1,"startTime":"2026-11-23T10:00:00Z"}`

	// Its owner reference names a Placement that does not compose it.
	other := placementComposing(t, ns, "other", []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "names": []any{"bystander"}}})
	create(t, reportedStateOf(other, "forged", "batch/v1", "Job", "bystander", status))
	reportedStateCondition(t, ns, "forged", xpv2.TypeSynced, "does not compose this ReportedState")

	// Its Placement composes it but does not select the Job it names.
	p := placementComposing(t, ns, "web", []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "names": []any{"placed"}}}, "rogue")
	create(t, reportedStateOf(p, "rogue", "batch/v1", "Job", "bystander", status))
	reportedStateCondition(t, ns, "rogue", xpv2.TypeSynced, "Placement web does not select Job bystander")

	// No Placement at all.
	orphan := reportedStateOf(p, "orphan", "batch/v1", "Job", "bystander", status)
	orphan.OwnerReferences = nil
	create(t, orphan)
	reportedStateCondition(t, ns, "orphan", xpv2.TypeSynced, "is not its controller")

	if got := jobStatus(t, ns, "bystander"); got != "{}" {
		t.Errorf("the bystander's status was written: %s", got)
	}
}

// TestReportedStateOnlyForKindsThePolicyLists: a PodDisruptionBudget's
// status decides evictions on the control plane, and the policy does not
// let it come back from a cluster: even a ReportedState its Placement
// composes and selects for writes nothing.
func TestReportedStateOnlyForKindsThePolicyLists(t *testing.T) {
	ns := namespace(t)
	create(t, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	})
	p := placementComposing(t, ns, "web", []any{map[string]any{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "names": []any{"web"}}}, "web-pdb")
	create(t, reportedStateOf(p, "web-pdb", "policy/v1", "PodDisruptionBudget", "web", `{"disruptionsAllowed":100,"currentHealthy":100,"desiredHealthy":0,"expectedPods":100}`))
	reportedStateCondition(t, ns, "web-pdb", xpv2.TypeSynced, "does not let namespace "+ns+" have the status of PodDisruptionBudget.policy written back (spec.placement.reportedStateKinds")
	pdb := &policyv1.PodDisruptionBudget{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, pdb); err != nil {
		t.Fatal(err)
	}
	if pdb.Status.DisruptionsAllowed != 0 {
		t.Errorf("the PodDisruptionBudget's status was written: %+v", pdb.Status)
	}
}
