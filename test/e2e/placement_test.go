package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	placementfn "github.com/fleetplane/fleetplane/function/placement"
	"github.com/fleetplane/fleetplane/function/placement/expand"
	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

const placementAPI = "placement.fleetplane.io/v1alpha1"

const executingCount = placementv1alpha1.ExecutingCountLabel

// exampleDocs are the documents of a file under examples/placement.
func exampleDocs(t *testing.T, rel string) []*unstructured.Unstructured {
	t.Helper()
	out, err := environment.ExampleDocs(support.Root(), filepath.Join("placement", rel))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// asCreatedByUser drops what the API server sets.
func asCreatedByUser(u *unstructured.Unstructured) *unstructured.Unstructured {
	return environment.AsCreatedByUser(u)
}

// tenantClient is a client of a ServiceAccount of ns that may edit
// Placements and the workload kinds of the example in ns, and nothing
// else: what a team gets on a shared control plane.
func tenantClient(t *testing.T, ns string) client.Client {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"placement.fleetplane.io"}, Resources: []string{"placements"}, Verbs: []string{"*"}},
		{APIGroups: []string{"", "apps", "batch"}, Resources: []string{"configmaps", "services", "deployments", "jobs"}, Verbs: []string{"*"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "tenant"}}}
	return serviceAccountClient(t, ns, "tenant", role, binding)
}

func getIn(c client.Client, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return u
}

// sent is the manifest of the copy of a kind (lowercase) a Placement in
// team-a sends to a cluster, as its provider-kubernetes Object holds it.
func sent(t *testing.T, cluster, kind string) map[string]any {
	t.Helper()
	var objs unstructured.UnstructuredList
	objs.SetAPIVersion("kubernetes.m.crossplane.io/v1alpha1")
	objs.SetKind("ObjectList")
	if err := env.Kube.List(context.Background(), &objs, client.InNamespace("team-a"), client.MatchingLabels{"placement.fleetplane.io/cluster": cluster, "placement.fleetplane.io/kind": kind}); err != nil || len(objs.Items) != 1 {
		t.Fatalf("%s: the Object of the %s: %v (%d)", cluster, kind, err, len(objs.Items))
	}
	m, _, _ := unstructured.NestedMap(objs.Items[0].Object, "spec", "forProvider", "manifest")
	return m
}

// TestPlacement is KubeStellar's journey on Crossplane: a team's
// Deployment, Service, Job and templated ConfigMap placed on two real
// clusters with different properties; what arrives on each; a property
// change reaching its cluster; a broken template leaving every copy as
// it was; the seed's combined status matching what the clusters report;
// a Job placed on one cluster whose status comes back into it, is
// cleared when it is placed on two, and comes back aggregated over both,
// as the Deployment's does, each with its executing count; and the
// admin's ClusterPlacement of a CRD and a ClusterRole, which the team may
// not make.
func TestPlacement(t *testing.T) {
	ctx := context.Background()
	const ns = "team-a"

	// Two clusters: wec1 has a real node (containerd, kubelet, kube-proxy,
	// cluster DNS) that runs the team's pods, wec2 none, so the
	// Deployment is fully available on wec1 only.
	wec1, err := env.StartWECWithNode(ctx, "wec1", map[string]string{"env": "prod", "region": "eastus"}, map[string]string{"owner": "platform-east"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wec1.Stop)
	wec2, err := env.StartWEC(ctx, "wec2", map[string]string{"env": "prod", "region": "westus"}, map[string]string{"owner": "platform-west"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wec2.Stop)
	// The team's image, in wec1's registry (wec2 pulls nothing).
	app, err := wec1.TeamAppImage(ctx, support.Root())
	if err != nil {
		t.Fatal(err)
	}
	wecs := []*environment.WEC{wec1, wec2}
	// The clusters' admins make the namespace and hand it to fleetplane
	// with its label (the Placement's Namespace Object then finds it
	// there, and uses it; a namespace without the label would be
	// someone else's), with the default ServiceAccount, without which no
	// pod that names none is created: wec2 runs no ServiceAccount
	// controller to make it, wec1's may have made it already.
	for _, w := range wecs {
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{placementfn.LabelNamespace: ns}}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}},
		} {
			if err := w.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
				t.Fatalf("%s: %v", w.Name, err)
			}
		}
	}

	// The admin's part: wec1's properties ConfigMap, the CustomTransform
	// and the StatusCollectors.
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: expand.PropertiesNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
	} {
		if err := env.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	props := exampleDocs(t, "required/properties.yaml")
	apply(t, props...)
	apply(t, exampleDocs(t, "required/transforms.yaml")...)
	apply(t, exampleDocs(t, "required/collectors.yaml")...)

	// The admin's ClusterPlacement: the Widget CRD and a ClusterRole to
	// every production cluster, which no tenant's Placement may deliver.
	// Applied now, checked at the end: it converges while the team's
	// journey runs.
	apply(t, exampleDocs(t, "required/cluster-workloads.yaml")...)
	platform, err := environment.ExampleDocs(support.Root(), filepath.Join("clusterplacement", "widgets-platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, platform...)

	// The team's part, with namespaced rights only.
	tenant := tenantClient(t, ns)
	if err := tenant.Create(ctx, asCreatedByUser(platform[0].DeepCopy())); !kerrors.IsForbidden(err) {
		t.Errorf("a tenant creating a ClusterPlacement: %v, want forbidden", err)
	}
	ctObj := exampleDocs(t, "required/transforms.yaml")[0]
	ctObj.SetName("tenant-transform")
	if err := tenant.Create(ctx, ctObj); !kerrors.IsForbidden(err) {
		t.Errorf("a tenant creating a cluster-scoped CustomTransform: %v, want forbidden", err)
	}
	for _, o := range exampleDocs(t, "required/workloads.yaml") {
		o = asCreatedByUser(o)
		if err := environment.RunTeamApp(o, app); err != nil {
			t.Fatal(err)
		}
		if err := tenant.Create(ctx, o); err != nil {
			t.Fatalf("tenant creates %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	wdsJob := get(t, "batch/v1", "Job", ns, "migrate")
	if sel, _, _ := unstructured.NestedString(wdsJob.Object, "spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid"); sel != string(wdsJob.GetUID()) {
		t.Fatalf("the control plane's Job has selector %q, not its own uid: nothing for the transform to strip", sel)
	}
	placement := exampleDocs(t, "web.yaml")[0]
	if err := tenant.Create(ctx, placement); err != nil {
		t.Fatalf("tenant creates the Placement: %v", err)
	}
	// Before the WECs stop (cleanups run last first): the copies go with
	// the Placement while provider-kubernetes can still reach them.
	t.Cleanup(func() { _ = tenant.Delete(context.Background(), placement) })
	// The smoke Job goes to wec1 alone, whose status comes back into it.
	smoke := exampleDocs(t, "smoke.yaml")[0]
	if err := tenant.Create(ctx, smoke); err != nil {
		t.Fatalf("tenant creates the smoke Placement: %v", err)
	}
	t.Cleanup(func() { _ = tenant.Delete(context.Background(), smoke) })

	eventually(t, 3*time.Minute, "the Placement delivers every copy", func() (bool, string) {
		p := get(t, placementAPI, "Placement", ns, "web")
		s, r, msg := condition(p, "Delivered")
		return s == "True", r + ": " + msg
	})

	// What arrived, on each cluster.
	wds := get(t, "v1", "Service", ns, "web")
	wdsIP, _, _ := unstructured.NestedString(wds.Object, "spec", "clusterIP")
	for _, w := range wecs {
		d := getIn(w.Kube, "apps/v1", "Deployment", ns, "web")
		if d == nil {
			t.Fatalf("%s has no Deployment", w.Name)
		}
		if _, ok := d.GetAnnotations()["review.example.com/approved-by"]; ok {
			t.Errorf("%s: the CustomTransform's annotation travelled", w.Name)
		}
		// provider-kubernetes writes a last-applied annotation of its own
		// on the cluster; what it was sent carries none.
		if ann, _, _ := unstructured.NestedStringMap(sent(t, w.Name, "deployment"), "metadata", "annotations"); ann["kubectl.kubernetes.io/last-applied-configuration"] != "" {
			t.Errorf("%s: the last-applied annotation travelled", w.Name)
		}
		if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 2 {
			t.Errorf("%s: replicas %d, want 2", w.Name, r)
		}
		// The Service: clusterIP and nodePort are the cluster's own. The
		// copy sent carries neither (the Object's manifest).
		svc, _, _ := unstructured.NestedMap(sent(t, w.Name, "service"), "spec")
		if _, ok := svc["clusterIP"]; ok {
			t.Errorf("%s: the copy carries clusterIP: %v", w.Name, svc)
		}
		if ports, _ := svc["ports"].([]any); len(ports) != 1 || ports[0].(map[string]any)["nodePort"] != nil {
			t.Errorf("%s: the copy carries a nodePort: %v", w.Name, svc["ports"])
		}
		s := getIn(w.Kube, "v1", "Service", ns, "web")
		ip, _, _ := unstructured.NestedString(s.Object, "spec", "clusterIP")
		ports, _, _ := unstructured.NestedSlice(s.Object, "spec", "ports")
		if ip == "" || len(ports) != 1 || ports[0].(map[string]any)["nodePort"] == nil {
			t.Errorf("%s: the Service has no clusterIP or nodePort of its own: %s %v (the WDS's is %s)", w.Name, ip, ports, wdsIP)
		}
		// The Job: its selector and controller-uid labels are the
		// cluster's, or the API server would have refused it.
		j := getIn(w.Kube, "batch/v1", "Job", ns, "migrate")
		if j == nil {
			t.Fatalf("%s has no Job", w.Name)
		}
		if sel, _, _ := unstructured.NestedString(j.Object, "spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid"); sel != string(j.GetUID()) || sel == string(wdsJob.GetUID()) {
			t.Errorf("%s: the Job's selector %q is not its own uid %s", w.Name, sel, j.GetUID())
		}
	}
	// The copies run where there is a node: wec1 ran migrate to its end;
	// on wec2 its pod waits.
	eventually(t, 2*time.Minute, "the migrate Job complete on wec1, waiting on wec2", func() (bool, string) {
		var says []string
		done := true
		for _, w := range wecs {
			j := getIn(w.Kube, "batch/v1", "Job", ns, "migrate")
			succeeded, _, _ := unstructured.NestedInt64(j.Object, "status", "succeeded")
			active, _, _ := unstructured.NestedInt64(j.Object, "status", "active")
			done = done && ((w == wec1 && succeeded == 1) || (w == wec2 && active == 1))
			says = append(says, fmt.Sprintf("%s: succeeded %d, active %d", w.Name, succeeded, active))
		}
		return done, strings.Join(says, "; ")
	})
	wantSettings := func(w *environment.WEC, want map[string]string) {
		t.Helper()
		eventually(t, 90*time.Second, w.Name+"'s web-settings", func() (bool, string) {
			cm := getIn(w.Kube, "v1", "ConfigMap", ns, "web-settings")
			if cm == nil {
				return false, "absent"
			}
			got, _, _ := unstructured.NestedStringMap(cm.Object, "data")
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
		})
	}
	// Precedence: wec1's ConfigMap over its annotation; wec2's annotation.
	wantSettings(wec1, map[string]string{"region": "eastus", "owner": "team-east-oncall", "cluster": "wec1"})
	wantSettings(wec2, map[string]string{"region": "westus", "owner": "platform-west", "cluster": "wec2"})

	// Combined status, as the clusters report it: wec2 runs no pods.
	eventually(t, 2*time.Minute, "combined status from both clusters", func() (bool, string) {
		p := get(t, placementAPI, "Placement", ns, "web")
		got := environment.CombinedRows(p, "Deployment", "numwecs") + " " + environment.CombinedRows(p, "Deployment", "sadones") + " " + environment.CombinedRows(p, "Deployment", "availablereplicashistogram") +
			" " + environment.CombinedRows(p, "Deployment", "availability")
		return got == `[{"count":2}] [{"wec":"wec2"}] [{"count":1,"numAvailable":2},{"count":1,"numAvailable":null}]`+
			` [{"available":2,"complete":true,"wec":"wec1"},{"available":0,"complete":false,"wec":"wec2"}]`, got
	})
	for _, w := range wecs {
		d := getIn(w.Kube, "apps/v1", "Deployment", ns, "web")
		avail, found, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas")
		if (w == wec1) != (found && avail == 2) {
			t.Errorf("%s reports availableReplicas %d (set: %v), unlike its combined status", w.Name, avail, found)
		}
	}

	// A property changes: the copy on that cluster follows.
	cm := &corev1.ConfigMap{}
	if err := env.Kube.Get(ctx, client.ObjectKey{Namespace: expand.PropertiesNamespace, Name: "wec1"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["owner"] = "team-east-weekend"
	if err := env.Kube.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	wantSettings(wec1, map[string]string{"region": "eastus", "owner": "team-east-weekend", "cluster": "wec1"})

	// A broken template: nothing changes anywhere, and the Placement says
	// why, for the first cluster it fails on.
	settings := &corev1.ConfigMap{}
	if err := tenant.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-settings"}, settings); err != nil {
		t.Fatal(err)
	}
	settings.Data["cluster"] = "{{.clusterName}}-v2"
	settings.Data["zone"] = "{{.zone}}"
	if err := tenant.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the Placement reports the failed expansion", func() (bool, string) {
		p := get(t, placementAPI, "Placement", ns, "web")
		s, r, msg := condition(p, "Delivered")
		return s == "False" && r == "ExpansionFailed" && strings.Contains(msg, "ConfigMap/web-settings for cluster wec1") && strings.Contains(msg, `no entry for key "zone"`), r + ": " + msg
	})
	// Crossplane applies the composed Objects before it writes the
	// Placement's status, so what the copies are sent is final here.
	for _, w := range wecs {
		if data, _, _ := unstructured.NestedStringMap(sent(t, w.Name, "configmap"), "data"); data["cluster"] != w.Name || data["zone"] != "" {
			t.Errorf("%s: the copy sent after the failed expansion changed: %v", w.Name, data)
		}
	}
	wantSettings(wec1, map[string]string{"region": "eastus", "owner": "team-east-weekend", "cluster": "wec1"})
	wantSettings(wec2, map[string]string{"region": "westus", "owner": "platform-west", "cluster": "wec2"})
	// Singleton reported state: wec1 runs the smoke Job (the control
	// plane runs no Jobs), and what wec1 reports is its status here. Its
	// pod is ready once it fetched web through the Service that the
	// same Placement delivered, by its name in wec1's cluster DNS.
	var startTime string
	eventually(t, 2*time.Minute, "the smoke Job's status is what wec1 reports", func() (bool, string) {
		here, _, _ := unstructured.NestedMap(get(t, "batch/v1", "Job", ns, "smoke").Object, "status")
		there := getIn(wec1.Kube, "batch/v1", "Job", ns, "smoke")
		if there == nil {
			return false, "not on wec1"
		}
		remote, _, _ := unstructured.NestedMap(there.Object, "status")
		a, _ := json.Marshal(here)
		b, _ := json.Marshal(remote)
		startTime, _ = here["startTime"].(string)
		count := get(t, "batch/v1", "Job", ns, "smoke").GetLabels()[executingCount]
		return string(a) == string(b) && here["active"] == int64(1) && here["ready"] == int64(1) && count == "1", fmt.Sprintf("here %s, wec1 %s, %s=%q", a, b, executingCount, count)
	})
	eventually(t, time.Minute, "the smoke Placement says the status is written", func() (bool, string) {
		s, r, msg := condition(get(t, placementAPI, "Placement", ns, "smoke"), "ReportedState")
		return s == "True" && r == "Reported", r + ": " + msg
	})
	// On two clusters nothing is written, and what was written is
	// cleared, all but the startTime a Job keeps once set.
	editPlacement(t, tenant, ns, "smoke", func(p *unstructured.Unstructured) {
		_ = unstructured.SetNestedStringMap(p.Object, map[string]string{"env": "prod"}, "spec", "clusters", "matchLabels")
	})
	eventually(t, 2*time.Minute, "the smoke Job's status cleared", func() (bool, string) {
		_, r, msg := condition(get(t, placementAPI, "Placement", ns, "smoke"), "ReportedState")
		here, _, _ := unstructured.NestedMap(get(t, "batch/v1", "Job", ns, "smoke").Object, "status")
		b, _ := json.Marshal(here)
		count, labelled := get(t, "batch/v1", "Job", ns, "smoke").GetLabels()[executingCount]
		return r == "NotSingleton" && fmt.Sprint(here) == fmt.Sprint(map[string]any{"startTime": startTime}) && !labelled,
			r + ": " + msg + "; status " + string(b) + "; " + executingCount + "=" + count
	})
	// Aggregated: with wantMultiClusterReportedState what both clusters
	// report is written together. wec1 runs the pod; wec2, without a
	// node, has its pod waiting: two active, one ready.
	editPlacement(t, tenant, ns, "smoke", func(p *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(p.Object, true, "spec", "wantMultiClusterReportedState")
	})
	eventually(t, 2*time.Minute, "the smoke Job's status aggregated over both clusters", func() (bool, string) {
		_, r, msg := condition(get(t, placementAPI, "Placement", ns, "smoke"), "ReportedState")
		here, _, _ := unstructured.NestedMap(get(t, "batch/v1", "Job", ns, "smoke").Object, "status")
		b, _ := json.Marshal(here)
		// Both copies are there and ready, though wec2's pod waits: the
		// executing count is copies, not pods.
		count := get(t, "batch/v1", "Job", ns, "smoke").GetLabels()[executingCount]
		return r == "Reported" && here["active"] == int64(2) && here["ready"] == int64(1) && count == "2", r + ": " + msg + "; status " + string(b) + "; " + executingCount + "=" + count
	})

	// A multi-cluster Deployment: web's Deployment runs on wec1, and on
	// wec2, which has no node, waits for its pods. What both report comes
	// back aggregated, done only where done everywhere: none available,
	// naming wec2. The control plane here runs a deployment controller of
	// its own, which writes the Deployment's status too; the ReportedState
	// either holds the aggregate or names that other writer and backs off
	// (docs/placement.md). The executing count is the copies: 2.
	editPlacement(t, tenant, ns, "web", func(p *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(p.Object, true, "spec", "wantMultiClusterReportedState")
	})
	eventually(t, 2*time.Minute, "the web Deployment's status aggregated over both clusters", func() (bool, string) {
		var rss unstructured.UnstructuredList
		rss.SetAPIVersion("placement.m.fleetplane.io/v1alpha1")
		rss.SetKind("ReportedStateList")
		if err := env.Kube.List(ctx, &rss, client.InNamespace(ns), client.MatchingLabels{"crossplane.io/composite": "web", "placement.fleetplane.io/kind": "deployment"}); err != nil || len(rss.Items) != 1 {
			return false, fmt.Sprintf("ReportedStates of the Deployment: %v (%d)", err, len(rss.Items))
		}
		rs := rss.Items[0]
		clusters, _, _ := unstructured.NestedStringSlice(rs.Object, "spec", "forProvider", "clusters")
		status, _, _ := unstructured.NestedMap(rs.Object, "spec", "forProvider", "status")
		available, _, _ := unstructured.NestedInt64(status, "availableReplicas")
		conds, _, _ := unstructured.NestedSlice(status, "conditions")
		b, _ := json.Marshal(status)
		availableCond := ""
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Available" {
				availableCond = fmt.Sprint(m["status"], " ", m["message"])
			}
		}
		_, _, ready := condition(&rs, "Ready")
		count := get(t, "apps/v1", "Deployment", ns, "web").GetLabels()[executingCount]
		ok := fmt.Sprint(clusters) == "[wec1 wec2]" && available == 0 && strings.HasPrefix(availableCond, "False") && strings.Contains(availableCond, "wec2") &&
			(strings.Contains(ready, "its 2 clusters report, aggregated") || strings.Contains(ready, "kube-controller-manager")) && count == "2"
		return ok, fmt.Sprintf("clusters %v, status %s, Ready %q, %s=%q", clusters, b, ready, executingCount, count)
	})

	// The ClusterPlacement's CRD and ClusterRole are on both clusters, as
	// the control plane holds them; its Objects are in crossplane-system,
	// out of the tenants' reach.
	eventually(t, 2*time.Minute, "the ClusterPlacement delivered", func() (bool, string) {
		cp := get(t, placementAPI, "ClusterPlacement", "", "widgets-platform")
		s, r, msg := condition(cp, "Delivered")
		if s != "True" {
			return false, r + ": " + msg
		}
		for _, w := range wecs {
			if getIn(w.Kube, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com") == nil ||
				getIn(w.Kube, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "widgets-viewer") == nil {
				return false, "not on " + w.Name
			}
		}
		return true, ""
	})
	var objs unstructured.UnstructuredList
	objs.SetAPIVersion("kubernetes.m.crossplane.io/v1alpha1")
	objs.SetKind("ObjectList")
	if err := env.Kube.List(ctx, &objs, client.MatchingLabels{"crossplane.io/composite": "widgets-platform"}); err != nil || len(objs.Items) != 4 {
		t.Errorf("the ClusterPlacement's Objects: %v (%d, want 4)", err, len(objs.Items))
	}
	for _, o := range objs.Items {
		if o.GetNamespace() != "crossplane-system" {
			t.Errorf("Object %s/%s is outside crossplane-system", o.GetNamespace(), o.GetName())
		}
	}

	// Fixing the template and deleting the Placement are left out: each
	// would wait another half minute for Crossplane's per-XR circuit
	// breaker, which ten Objects' watch events open (docs/placement.md,
	// event volume); the unit tables cover both (TestDelivers,
	// TestNothingToDeliver).
}

// editPlacement edits a Placement's spec as the tenant, read afresh and
// tried again when Crossplane wrote it in between (an update conflict).
func editPlacement(t *testing.T, tenant client.Client, ns, name string, edit func(*unstructured.Unstructured)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := get(t, placementAPI, "Placement", ns, name)
		edit(p)
		return tenant.Update(t.Context(), p)
	}); err != nil {
		t.Fatal(err)
	}
}
