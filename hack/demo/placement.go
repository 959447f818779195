package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	placementfn "github.com/fleetplane/fleetplane/function/placement"
	"github.com/fleetplane/fleetplane/function/placement/expand"
	"github.com/fleetplane/fleetplane/test/harness/environment"
)

// placement runs examples/placement on two clusters, as KubeStellar's
// users would: a web application whose ConfigMap each cluster fills in
// from its own properties, its combined status, a smoke Job placed on one
// cluster whose status and executing count come back, and the admin's
// ClusterPlacement of a CRD and a ClusterRole. It returns what stops the
// clusters.
func placement(ctx context.Context, env *environment.Env, root string) (func(), error) {
	const ns = "team-a"
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	// Two clusters of the inventory: wec1 runs pods on a real node, wec2
	// none, so the Deployment is available on wec1 only.
	var wecs []*environment.WEC
	for _, w := range []struct {
		name, region, owner string
	}{{"wec1", "eastus", "platform-east"}, {"wec2", "westus", "platform-west"}} {
		start := env.StartWEC
		if w.name == "wec1" {
			start = env.StartWECWithNode
		}
		wec, err := start(ctx, w.name, map[string]string{"env": "prod", "region": w.region}, map[string]string{"owner": w.owner})
		if err != nil {
			return stop, err
		}
		stops = append(stops, wec.Stop)
		wecs = append(wecs, wec)
		// The cluster's admin hands the namespace to fleetplane.
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{placementfn.LabelNamespace: ns}}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}},
		} {
			if err := wec.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
				return stop, fmt.Errorf("%s: %w", w.name, err)
			}
		}
	}
	// The team's image, built into wec1's registry, runs the workloads.
	app, err := wecs[0].TeamAppImage(ctx, root)
	if err != nil {
		return stop, err
	}
	sayf("started clusters wec1 (eastus, a real node: containerd, kubelet, kube-proxy, CoreDNS) and wec2 (westus, no node), in the inventory as ClusterProviderConfigs")

	for _, n := range []string{expand.PropertiesNamespace, ns} {
		if err := env.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil && !kerrors.IsAlreadyExists(err) {
			return stop, err
		}
	}
	var objs []*unstructured.Unstructured
	for _, f := range []string{"required/properties.yaml", "required/transforms.yaml", "required/collectors.yaml", "required/workloads.yaml", "web.yaml", "smoke.yaml"} {
		docs, err := environment.ExampleDocs(root, "placement/"+f)
		if err != nil {
			return stop, err
		}
		for _, d := range docs {
			d = environment.AsCreatedByUser(d)
			if f == "required/workloads.yaml" {
				if err := environment.RunTeamApp(d, app); err != nil {
					return stop, err
				}
			}
			objs = append(objs, d)
		}
	}
	// The admin's ClusterPlacement: a CRD and a ClusterRole to every
	// production cluster, which no team's Placement may deliver.
	for _, f := range []string{"placement/required/cluster-workloads.yaml", "clusterplacement/widgets-platform.yaml"} {
		docs, err := environment.ExampleDocs(root, f)
		if err != nil {
			return stop, err
		}
		for _, d := range docs {
			objs = append(objs, environment.AsCreatedByUser(d))
		}
	}
	applied := time.Now()
	for _, o := range objs {
		if err := env.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			return stop, fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	sayf("applied examples/placement: wec1's properties, a CustomTransform, StatusCollectors, the team's workload objects, Placements web (every production cluster) and smoke (eastus only); and the admin's ClusterPlacement widgets-platform (a CRD and a ClusterRole)")

	web := &unstructured.Unstructured{}
	web.SetAPIVersion("placement.fleetplane.io/v1alpha1")
	web.SetKind("Placement")
	seen := map[string]bool{}
	var rows string
	if err := until(ctx, 3*time.Minute, func() bool {
		if err := env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, web); err != nil {
			return false
		}
		delivered, dmsg := conditionOf(web, "Delivered")
		if k := "Delivered " + delivered; delivered != "" && !seen[k] {
			seen[k] = true
			sayf("Placement web: %s after %s (%s)", delivered, time.Since(applied).Round(100*time.Millisecond), dmsg)
		}
		rows = environment.CombinedRows(web, "Deployment", "availability")
		return delivered == "Delivered" && strings.Contains(rows, `"wec2"`) && strings.Contains(rows, `"available":2`)
	}); err != nil {
		return stop, fmt.Errorf("the Placement did not deliver: %w", err)
	}
	// What was composed, and when each turned Ready: the namespaces
	// first, then the copies, as each cluster took them.
	if err := timeline(ctx, env, web, applied); err != nil {
		return stop, err
	}
	sayf("combined status of Deployment web, as its clusters report it:\n  numwecs %s\n  sadones %s\n  availablereplicashistogram %s\n  availability (CEL) %s",
		environment.CombinedRows(web, "Deployment", "numwecs"), environment.CombinedRows(web, "Deployment", "sadones"), environment.CombinedRows(web, "Deployment", "availablereplicashistogram"), rows)
	for _, w := range wecs {
		cm := &corev1.ConfigMap{}
		if err := w.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-settings"}, cm); err == nil {
			sayf("ConfigMap web-settings on %s, filled in from its properties: %v", w.Name, cm.Data)
		}
	}

	job := &unstructured.Unstructured{}
	job.SetAPIVersion("batch/v1")
	job.SetKind("Job")
	var status string
	if err := until(ctx, 2*time.Minute, func() bool {
		if err := env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "smoke"}, job); err != nil {
			return false
		}
		st, _, _ := unstructured.NestedMap(job.Object, "status")
		b, _ := json.Marshal(st)
		status = string(b)
		// Ready once its pod fetched web through the Service.
		return st["ready"] == int64(1)
	}); err != nil {
		return stop, fmt.Errorf("the smoke Job's status did not come back: %w", err)
	}
	sayf("Job smoke runs on wec1 alone; its status here is what wec1 reports (wantSingletonReportedState), %s after apply: %s", time.Since(applied).Round(100*time.Millisecond), status)
	sayf("  (its pod on wec1's node is ready once it fetched http://web, the Service the web Placement delivered there, through wec1's cluster DNS and kube-proxy)")
	if err := until(ctx, time.Minute, func() bool {
		return env.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "smoke"}, job) == nil && job.GetLabels()[placementv1alpha1.ExecutingCountLabel] != ""
	}); err == nil {
		sayf("Job smoke carries the label %s=%s, the clusters it executes on, as KubeStellar's does: kubectl get jobs -n %s -l %s=1 selects it",
			placementv1alpha1.ExecutingCountLabel, job.GetLabels()[placementv1alpha1.ExecutingCountLabel], ns, placementv1alpha1.ExecutingCountLabel)
	}

	cp := &unstructured.Unstructured{}
	cp.SetAPIVersion("placement.fleetplane.io/v1alpha1")
	cp.SetKind("ClusterPlacement")
	if err := until(ctx, 2*time.Minute, func() bool {
		if env.Kube.Get(ctx, client.ObjectKey{Name: "widgets-platform"}, cp) != nil {
			return false
		}
		r, _ := conditionOf(cp, "Delivered")
		return r == "Delivered"
	}); err != nil {
		return stop, fmt.Errorf("the ClusterPlacement did not deliver: %w", err)
	}
	for _, w := range wecs {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := w.Kube.Get(ctx, client.ObjectKey{Name: "widgets.example.com"}, crd); err == nil {
			sayf("ClusterPlacement widgets-platform: CRD widgets.example.com and ClusterRole widgets-viewer are on %s (its Objects live in crossplane-system)", w.Name)
		}
	}
	out, err := env.Kubectl(ctx, "get", "placements", "-n", ns)
	if err != nil {
		return stop, err
	}
	sayf("kubectl get placements -n %s\n%s", ns, out)
	return stop, nil
}

// conditionOf is the reason and message of one of u's conditions.
func conditionOf(u *unstructured.Unstructured, t string) (string, string) {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["type"] == t {
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return r, msg
		}
	}
	return "", ""
}
