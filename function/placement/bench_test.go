package placement_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/fnwire"
	"github.com/fleetplane/fleetplane/function/placement"
)

// fleet is a Placement of objects Deployments, each asking for template
// expansion, on clusters clusters, in the steady state: every copy
// delivered and reporting its status, two of the seed's collectors named.
func fleet(b testing.TB, objects, clusters int) ct.Call {
	b.Helper()
	p := xr(b, `{objects: [{apiVersion: apps/v1, kind: Deployment, matchLabels: {app: fleet}}], clusters: {}, statusCollectors: [numwecs, sadones]}`)
	req := map[string][]runtime.Object{
		"collector-numwecs":        {collectorObject(b, "numwecs", seedCollectors["numwecs"])},
		"collector-sadones":        {collectorObject(b, "sadones", seedCollectors["sadones"])},
		"custom-transforms":        nil,
		"customization-properties": nil,
	}
	observed := map[string]*ct.Resource{}
	for i := range clusters {
		c := fmt.Sprintf("wec%03d", i)
		req["inventory"] = append(req["inventory"], cluster(b, c, fmt.Sprintf("region: r%d", i%7), ""))
		observed[c+"/Namespace"] = ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", c).Ready()
	}
	for j := range objects {
		name := fmt.Sprintf("app%03d", j)
		d := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns, "uid": "u", "resourceVersion": "1",
				"labels": map[string]any{"app": "fleet", "region": "{{.region}}"}, "annotations": map[string]any{"control.kubestellar.io/expand-templates": "true"}},
			"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
		}}
		req["objects-0"] = append(req["objects-0"], d)
		for i := range clusters {
			c := fmt.Sprintf("wec%03d", i)
			reported := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{"replicas": 2}, "status": map[string]any{"replicas": 2, "availableReplicas": 2 - (i+j)%3/2}}
			observed[c+"/Deployment.apps/"+name] = ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", c+name).Ready().AtProvider("manifest", reported)
		}
	}
	return ct.Call{XR: p, Required: req, Observed: observed}
}

// BenchmarkCompose100Objects50Clusters is one RunFunction of a Placement of
// 100 templated Deployments on 50 clusters, everything delivered: 5,050
// composed resources, 5,000 expansions and 200 combined results.
func BenchmarkCompose100Objects50Clusters(b *testing.B) {
	rsp := ct.BenchmarkCompose(b, placement.Composer, fleet(b, 100, 50), 5050)
	// After the loop: b.Loop resets what was reported before it.
	out, err := rsp.AppendWire(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(out))/(1<<20), "MiB/response")
}

// BenchmarkCombine1000Clusters is one Placement of one object on 1,000
// clusters: the rows of every cluster through two collectors.
func BenchmarkCombine1000Clusters(b *testing.B) {
	req := fleet(b, 1, 1000).Wire(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := placement.Composer.Compose(req, fnwire.NewResponse(req, response.DefaultTTL), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCombinedStatusBudget measures what the 64 KiB budget of a
// Placement's combined status holds: a collector that lists every
// cluster (limit 100) with two values per row, for more and more objects
// on 100 clusters. Rows past the budget are counted, never lost
// silently, and the status never exceeds it.
func TestCombinedStatusBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("composes 4,000 copies")
	}
	for _, objects := range []int{1, 10, 40} {
		call := fleet(t, objects, 100)
		p, ok := call.XR.(*v1alpha1.Placement)
		if !ok {
			t.Fatalf("the fleet's XR is a %T", call.XR)
		}
		p.Spec.StatusCollectors = []string{"everyone"}
		call.Required["collector-everyone"] = []runtime.Object{collectorObject(t, "everyone",
			`{select: [{name: wec, def: {cel: inventory.name}}, {name: available, def: {cel: returned.status.availableReplicas}}], limit: 100}`)}
		rsp := ct.Run(t, placement.Composer, call)
		objs, _ := rsp.Value("", "status.objects").([]any)
		shown, omitted, size := 0, 0, 0
		for _, o := range objs {
			for _, cs := range o.(map[string]any)["combinedStatus"].([]any) {
				m := cs.(map[string]any)
				rows, _ := m["rows"].([]any)
				shown += len(rows)
				if n, ok := m["omitted"].(float64); ok {
					omitted += int(n)
				} else if n, ok := m["omitted"].(int64); ok {
					omitted += int(n)
				}
				for _, r := range rows {
					b, _ := json.Marshal(r)
					size += len(b)
				}
			}
		}
		t.Logf("%d objects × 100 clusters: %d rows shown (%d bytes), %d omitted", objects, shown, size, omitted)
		if shown+omitted != objects*100 {
			t.Errorf("%d objects: %d rows shown and %d omitted, want %d in all", objects, shown, omitted, objects*100)
		}
		if size > placement.MaxCombinedStatus {
			t.Errorf("%d objects: %d bytes of rows, past the budget", objects, size)
		}
	}
}
