package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// chartRules reads the rules of the ClusterRole Crossplane's Helm chart
// gives Crossplane itself (its "system" half, which the chart labels to
// aggregate), leaving out the chart's template lines.
func chartRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	dir, err := controlplane.Tool(support.Root(), "crossplane-chart-templates")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		if !strings.Contains(doc, ":system:aggregate-to-crossplane") {
			continue
		}
		var lines []string
		for l := range strings.SplitSeq(doc, "\n") {
			if !strings.Contains(l, "{{") {
				lines = append(lines, l)
			}
		}
		var role struct {
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &role); err != nil {
			t.Fatalf("the chart's ClusterRole: %v", err)
		}
		if len(role.Rules) > 0 {
			return role.Rules
		}
	}
	t.Fatal("no aggregated system ClusterRole in Crossplane's chart")
	return nil
}

// TestCrossplaneRBAC applies what an ADXMon composes (the complete
// example's render, every Kubernetes kind) as a service account that holds
// only what a real install gives Crossplane: the chart's own rules and the
// ClusterRoles aggregated to it, package/rbac/crossplane-adxmon.yaml among
// them. Bindings are checked against escalation by the API server, so
// this also proves Crossplane may bind adx-mon's components to the roles
// of package/rbac/adxmon-roles.yaml, and to no other.
func TestCrossplaneRBAC(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	const label = "rbac.crossplane.io/aggregate-to-crossplane"
	system := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e:crossplane:system", Labels: map[string]string{label: "true"}}, Rules: chartRules(t)}
	aggregate := &rbacv1.ClusterRole{
		ObjectMeta:      metav1.ObjectMeta{Name: "e2e:crossplane"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{label: "true"}}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e:crossplane"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: aggregate.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "crossplane"}},
	}
	for _, o := range []client.Object{system, aggregate, binding} {
		if err := env.Kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Kube.Delete(context.Background(), o) })
	}
	for _, f := range []string{"adxmon-roles.yaml", "crossplane-adxmon.yaml"} {
		if err := env.CP.ApplyRBAC(ctx, filepath.Join(support.Root(), "package", "rbac", f)); err != nil {
			t.Fatal(err)
		}
	}
	kc, err := env.CP.ServiceAccountKubeconfig(ctx, ns, "crossplane")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	asCrossplane, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The complete example's stack, in a namespace of its own.
	target := "rbac-" + ns
	b, err := os.ReadFile(filepath.Join(support.Root(), "test", "render", "testdata", "adxmon", "complete@7-installed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": target}}}}
	for doc := range strings.SplitSeq(strings.ReplaceAll(string(b), "monitoring", target), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || len(u.Object) == 0 {
			continue
		}
		switch u.GroupVersionKind().Group {
		case "", "apps", "rbac.authorization.k8s.io":
		default:
			continue // ADXMon, ADXCluster, Object: Crossplane's RBAC manager grants those
		}
		if u.GetKind() == "Result" {
			continue
		}
		u.SetOwnerReferences(nil)
		objs = append(objs, u)
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = env.Kube.Delete(context.Background(), o)
		}
	})
	// Aggregation is the controller manager's work and takes a moment.
	eventually(t, time.Minute, "Crossplane's rules allow every object an ADXMon composes", func() (bool, string) {
		var refused []string
		for _, o := range objs {
			o := o.DeepCopy()
			o.SetResourceVersion("")
			if err := asCrossplane.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("e2e-crossplane"), client.ForceOwnership); err != nil {
				refused = append(refused, fmt.Sprintf("%s %s: %v", o.GetKind(), o.GetName(), err))
			}
		}
		return len(refused) == 0, strings.Join(refused, "\n")
	})
	// Crossplane binds only the roles adx-mon's components run with: not
	// another role, and it creates none.
	for _, o := range []client.Object{
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-escalate-" + ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: target, Name: "ingestor"}},
		},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-escalate-" + ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"update"}}},
		},
	} {
		if err := asCrossplane.Create(ctx, o); err == nil || !strings.Contains(err.Error(), "forbidden") {
			_ = env.Kube.Delete(ctx, o)
			t.Errorf("Crossplane created %T %s: %v", o, o.GetName(), err)
		}
	}
	// Nor may it rewrite or delete a namespace, the stack's included:
	// Kubernetes' garbage collector deletes that with the ADXMon
	// (TestADXMon), and no aggregated role gives Crossplane more.
	stackNS := &corev1.Namespace{}
	if err := asCrossplane.Get(ctx, client.ObjectKey{Name: target}, stackNS); err != nil {
		t.Fatalf("Crossplane cannot read the stack's namespace: %v", err)
	}
	stackNS.Labels = map[string]string{"e2e": "rewritten"}
	if err := asCrossplane.Update(ctx, stackNS, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("Crossplane may update namespace %s: %v", target, err)
	}
	if err := asCrossplane.Delete(ctx, stackNS, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("Crossplane may delete namespace %s: %v", target, err)
	}
	// And without this file's rules, Crossplane could not.
	if err := env.Kube.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleetplane:crossplane:adxmon"}}); err != nil {
		t.Fatal(err)
	}
	// The installed Crossplane's pods hold these rules too: back for
	// the journeys after this one.
	t.Cleanup(func() {
		if err := env.CP.ApplyRBAC(context.Background(), filepath.Join(support.Root(), "package", "rbac", "crossplane-adxmon.yaml")); err != nil {
			t.Error(err)
		}
	})
	// Created, not read: crossplane-placement.yaml, which the install
	// applies too, lets Crossplane read workloads, never write them. A
	// DaemonSet, the collector's: crossplane-vcluster.yaml lets Crossplane
	// write StatefulSets too (a vcluster target's), DaemonSets only this
	// file does.
	eventually(t, time.Minute, "a DaemonSet refused without package/rbac/crossplane-adxmon.yaml", func() (bool, string) {
		ds := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": "probe", "namespace": target},
		}}
		err := asCrossplane.Create(ctx, ds, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "forbidden"), fmt.Sprintf("create: %v", err)
	})
}
