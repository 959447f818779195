package placement_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
	"github.com/fleetplane/fleetplane/function/placement"
)

const ns = "team-a"

func obj(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func xr(t testing.TB, spec string) *v1alpha1.Placement {
	t.Helper()
	p := &v1alpha1.Placement{}
	if err := yaml.UnmarshalStrict([]byte(spec), &p.Spec); err != nil {
		t.Fatal(err)
	}
	p.APIVersion, p.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.PlacementKind
	p.Name, p.Namespace, p.Generation = "web", ns, 3
	return p
}

// cluster is an inventory ClusterProviderConfig.
func cluster(t testing.TB, name, labels, annotations string) *unstructured.Unstructured {
	t.Helper()
	return obj(t, `
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: ClusterProviderConfig
metadata:
  name: `+name+`
  labels: {placement.fleetplane.io/inventory: "true", `+labels+`}
  annotations: {`+annotations+`}
`)
}

const spec = `
objects:
- {apiVersion: apps/v1, kind: Deployment, names: [web]}
- {apiVersion: v1, kind: Service, names: [web]}
- {apiVersion: batch/v1, kind: Job, names: [migrate]}
- {apiVersion: v1, kind: ConfigMap, matchLabels: {app: web}}
clusters: {matchLabels: {env: prod}}
`

func workloads(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	return map[string][]runtime.Object{
		"object-0-web": {obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a, uid: u1, resourceVersion: "7", generation: 2, labels: {app: web}}
spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}
status: {replicas: 2, availableReplicas: 2}
`)},
		"object-1-web": {obj(t, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-a, uid: u2}
spec: {type: NodePort, clusterIP: 10.0.0.7, clusterIPs: [10.0.0.7], ports: [{port: 80, nodePort: 30080}], selector: {app: web}}
`)},
		"object-2-migrate": {obj(t, `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: team-a, labels: {batch.kubernetes.io/controller-uid: abc, controller-uid: abc}}
spec:
  suspend: false
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: abc}}
  template: {metadata: {labels: {batch.kubernetes.io/controller-uid: abc, controller-uid: abc, job-name: migrate}}, spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}
`)},
		"objects-3": {obj(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a, labels: {app: web}, annotations: {control.kubestellar.io/expand-templates: "true"}}
data: {region: "{{.region}}", tier: "{{.tier}}", owner: "{{.owner}}", where: "{{.clusterName}}"}
`)},
		"inventory": {
			cluster(t, "wec2", "env: prod, region: westus, tier: bronze, owner: wec2-labels", "tier: silver"),
			cluster(t, "wec1", "env: prod, region: eastus, tier: bronze, owner: labels", "owner: annotations"),
		},
		"custom-transforms": {obj(t, `
apiVersion: placement.fleetplane.io/v1alpha1
kind: CustomTransform
metadata: {name: deployments}
spec: {apiGroup: apps, resource: deployments, remove: ["$.spec.replicas", "$.metadata.labels[\"app\"]", "$ bad"]}
`)},
		"customization-properties": {obj(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: wec1, namespace: customization-properties}
data: {owner: configmap, not-an-identifier: x}
`)},
	}
}

func TestRequirementsFirst(t *testing.T) {
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec)})
	rsp.WantNames()
	rsp.WantNotReady()
	reqs := rsp.GetRequirements().GetResources()
	inv := reqs["inventory"]
	if got := inv.GetMatchLabels().GetLabels(); got["placement.fleetplane.io/inventory"] != "true" || got["env"] != "prod" || inv.Namespace != nil {
		t.Errorf("inventory requirement = %v", inv)
	}
	if o := reqs["object-0-web"]; o.GetNamespace() != ns || o.GetMatchName() != "web" || o.GetKind() != "Deployment" {
		t.Errorf("object requirement = %v", o)
	}
	if o := reqs["objects-3"]; o.GetNamespace() != ns || o.GetMatchLabels().GetLabels()["app"] != "web" {
		t.Errorf("label requirement = %v", o)
	}
	if _, ok := reqs["customization-properties"]; ok {
		t.Error("properties are read only once the objects show one asks for expansion")
	}
}

func TestDelivers(t *testing.T) {
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: workloads(t)})
	var names []string
	for _, c := range []string{"wec1", "wec2"} {
		names = append(names, c+"/Namespace", c+"/Deployment.apps/web", c+"/Service/web", c+"/Job.batch/migrate", c+"/ConfigMap/settings")
	}
	// Only the namespaces at first: the copies come after them.
	rsp.WantNames("wec1/Namespace", "wec2/Namespace")
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonDelivering, "0 of 8 copies")
	// Every copy waits for its cluster's namespace.
	wantCopies(t, rsp, compose.Copies{Desired: 8, Held: 8})

	observed := map[string]*ct.Resource{
		"wec1/Namespace": made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns1").Ready()),
		"wec2/Namespace": made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns2").Ready()),
	}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: workloads(t), Observed: observed})
	rsp.WantNames(names...)

	d := "wec1/Deployment.apps/web"
	rsp.Want(d, "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "wec1"})
	rsp.Want(d, "spec.watch", true)
	rsp.Want(d, "metadata.labels", map[string]any{"placement.fleetplane.io/cluster": "wec1", "placement.fleetplane.io/kind": "deployment", "placement.fleetplane.io/name": "web"})
	// Server-set metadata and status stay behind; the CustomTransform
	// removes replicas and the app label, and skips its invalid path.
	rsp.Want(d, "spec.forProvider.manifest.metadata", map[string]any{"name": "web", "namespace": ns, "labels": map[string]any{}})
	rsp.Want(d, "spec.forProvider.manifest.status", nil)
	rsp.Want(d, "spec.forProvider.manifest.spec.replicas", nil)
	rsp.Want(d, "spec.forProvider.manifest.spec.selector", map[string]any{"matchLabels": map[string]any{"app": "web"}})

	s := "wec2/Service/web"
	rsp.Want(s, "spec.forProvider.manifest.spec", map[string]any{"type": "NodePort", "ports": []any{map[string]any{"port": 80}}, "selector": map[string]any{"app": "web"}})

	j := "wec1/Job.batch/migrate"
	rsp.Want(j, "spec.forProvider.manifest.spec.selector", nil)
	rsp.Want(j, "spec.forProvider.manifest.spec.suspend", nil)
	rsp.Want(j, "spec.forProvider.manifest.spec.template.metadata.labels", map[string]any{"job-name": "migrate"})

	// Precedence: ConfigMap > annotations > labels > clusterName.
	rsp.Want("wec1/ConfigMap/settings", "spec.forProvider.manifest.data", map[string]any{"region": "eastus", "tier": "bronze", "owner": "configmap", "where": "wec1"})
	rsp.Want("wec2/ConfigMap/settings", "spec.forProvider.manifest.data", map[string]any{"region": "westus", "tier": "silver", "owner": "wec2-labels", "where": "wec2"})

	// The namespace says whose it is and which Pod Security Standard it
	// enforces (the policy's); made by this Object, it is kept in step.
	rsp.Want("wec1/Namespace", "spec.forProvider.manifest", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": ns, "labels": map[string]any{"placement.fleetplane.io/namespace": ns, "pod-security.kubernetes.io/enforce": "baseline"},
	}})
	rsp.Want("wec1/Namespace", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})
	// A copy not yet made may only be created.
	rsp.Want(d, "spec.managementPolicies", []any{"Observe", "Create"})
	rsp.Want("", "status.clusters", []any{"wec1", "wec2"})
}

// delivered is every copy of spec observed: Objects that provider-kubernetes
// synced, carrying what each cluster reports.
func delivered(t *testing.T, reported map[string]map[string]any) map[string]*ct.Resource {
	t.Helper()
	out := map[string]*ct.Resource{}
	for _, c := range []string{"wec1", "wec2"} {
		out[c+"/Namespace"] = made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", c+"-ns").Ready())
		for _, n := range []string{"Deployment.apps/web", "Service/web", "Job.batch/migrate", "ConfigMap/settings"} {
			r := made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", c+"-"+n).Ready()).
				Set("spec.forProvider.manifest", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "old-" + c}})
			if m, ok := reported[c+"/"+n]; ok {
				r.AtProvider("manifest", m)
			}
			out[c+"/"+n] = r
		}
	}
	return out
}

// made marks an Object as having created what it delivers, as
// crossplane-runtime records after a successful Create.
func made(r *ct.Resource) *ct.Resource {
	return r.Annotate("crossplane.io/external-create-succeeded", "2026-11-23T10:00:00Z")
}

// TestExpansionFailureHoldsBackThePlacement: as the seed says, a template
// that fails for any object on any cluster holds back the whole
// Placement: every copy already delivered stays exactly as it was, on
// every cluster and for every object, and nothing new is created, not
// even a new cluster's namespace.
func TestExpansionFailureHoldsBackThePlacement(t *testing.T) {
	req := workloads(t)
	// wec2 has no owner property: {{.owner}} fails there only.
	req["inventory"] = []runtime.Object{
		cluster(t, "wec2", "env: prod, region: westus", ""),
		cluster(t, "wec1", "env: prod, region: eastus, tier: gold, owner: o", ""),
		cluster(t, "wec3", "env: prod", ""),
	}
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: req, Observed: delivered(t, nil)})
	for _, c := range []string{"wec1", "wec2"} {
		for _, o := range []string{"ConfigMap/settings", "Deployment.apps/web", "Service/web", "Job.batch/migrate"} {
			rsp.Want(c+"/"+o, "spec.forProvider.manifest.metadata.name", "old-"+c)
		}
	}
	for _, n := range rsp.Names() {
		if strings.HasPrefix(n, "wec3/") {
			t.Errorf("%s created while the Placement is held back", n)
		}
	}
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonExpansionFailed,
		"nothing of this Placement is delivered", "ConfigMap/settings for cluster wec2", `map has no entry for key "owner"`)
	rsp.Want("", "status.expansionFailures", []any{map[string]any{
		"object": "ConfigMap/settings", "cluster": "wec2", "observedGeneration": 3,
		"errors": []any{`$.data.owner: template: leaf:1:2: executing "leaf" at <.owner>: map has no entry for key "owner"`, `$.data.tier: template: leaf:1:2: executing "leaf" at <.tier>: map has no entry for key "tier"`},
	}})
	rsp.WantNotReady()
	// The eight copies on wec1 and wec2 are ready as they were; none of
	// the twelve is delivered as it should now be.
	wantCopies(t, rsp, compose.Copies{Desired: 12, Delivered: 8, Failed: 12})

	// Fixed: every cluster has the properties, and delivery resumes.
	req["inventory"] = []runtime.Object{
		cluster(t, "wec2", "env: prod, region: westus, tier: silver, owner: o2", ""),
		cluster(t, "wec1", "env: prod, region: eastus, tier: gold, owner: o", ""),
		cluster(t, "wec3", "env: prod, region: northeurope, tier: bronze, owner: o3", ""),
	}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: req, Observed: delivered(t, nil)})
	if !rsp.Has("wec3/Namespace") || rsp.Condition(v1alpha1.ConditionDelivered).GetReason() == placement.ReasonExpansionFailed {
		t.Errorf("still held back once the templates expand: %v", rsp.Condition(v1alpha1.ConditionDelivered))
	}
}

// wantCopies checks what the composition tells the function's metrics.
func wantCopies(t *testing.T, rsp ct.Response, want compose.Copies) {
	t.Helper()
	if got := rsp.Summary.Copies; got == nil || *got != want {
		t.Errorf("copies %+v, want %+v", got, want)
	}
}

func TestNothingToDeliver(t *testing.T) {
	req := workloads(t)
	req["inventory"] = nil
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: req})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNoClusters, "placement.fleetplane.io/inventory=true", "{env=prod}")
	rsp.WantNames()

	req = workloads(t)
	req["object-0-web"] = nil
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: req, Observed: delivered(t, nil)})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonObjectsMissing, "Deployment.apps/web", "namespace team-a")
	if rsp.Has("wec1/Deployment.apps/web") {
		t.Error("the copies of an object that is gone are no longer desired (provider-kubernetes deletes them)")
	}

	rsp = ct.Run(t, placement.Composer, ct.Call{XR: xr(t, `{objects: [{apiVersion: v1, kind: ConfigMap, matchLabels: {app: none}}], clusters: {}}`),
		Required: map[string][]runtime.Object{"objects-0": nil, "inventory": req["inventory"], "custom-transforms": nil}})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNoObjects, "namespace team-a")
}

func TestTooLarge(t *testing.T) {
	req := workloads(t)
	var many []runtime.Object
	for i := range placement.MaxCopies/4 + 1 {
		many = append(many, cluster(t, fmt.Sprintf("c%04d", i), "env: prod", ""))
	}
	req["inventory"] = many
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: xr(t, spec), Required: req, Observed: delivered(t, nil)})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonTooLarge, "4 objects on 1251 clusters", "split the Placement")
	wantCopies(t, rsp, compose.Copies{Desired: 5004, Failed: 5004})
	// Nothing new, nothing lost.
	if n := len(rsp.Names()); n != 10 {
		t.Errorf("%d resources desired, want the 10 that exist", n)
	}
}

// TestTooLargeWritesNoNewStatus: a Placement too large to deliver
// composes no new ReportedState either, though its one cluster reports.
func TestTooLargeWritesNoNewStatus(t *testing.T) {
	p := xr(t, "{objects: [{apiVersion: apps/v1, kind: Deployment, matchLabels: {app: web}}], clusters: {}, wantSingletonReportedState: true}")
	var many []runtime.Object
	for i := range placement.MaxObjects + 1 {
		many = append(many, obj(t, fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, metadata: {name: d%03d, namespace: team-a, labels: {app: web}}}", i)))
	}
	req := workloads(t)
	req["objects-0"] = many
	req["inventory"] = req["inventory"][1:] // wec1
	observed := map[string]*ct.Resource{
		"wec1/Namespace": ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns").Ready(),
		"wec1/Deployment.apps/d000": ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "d0").Ready().
			AtProvider("manifest", map[string]any{"status": map[string]any{"replicas": 1}}),
	}
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	rsp.WantCondition(v1alpha1.ConditionDelivered, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonTooLarge)
	rsp.WantNames("wec1/Namespace", "wec1/Deployment.apps/d000")
}

// collectorObject is a StatusCollector as the API server holds it.
func collectorObject(t testing.TB, name, spec string) *unstructured.Unstructured {
	t.Helper()
	u := obj(t, "{apiVersion: placement.fleetplane.io/v1alpha1, kind: StatusCollector, metadata: {name: "+name+"}}")
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	u.Object["spec"] = s
	return u
}

// The seed's examples, verbatim but for the stale list's select, which the
// seed writes as a bare expression where its own API has named columns.
var seedCollectors = map[string]string{
	"numwecs": `
combinedFields:
   - name: count
     type: COUNT
`,
	"staleones": `
filter:
   op: Path
   path: "$.propagation.stale"
select:
   - name: wec
     def:
        op: Path
        path: "$.inventory.name"
`,
	"availablereplicashistogram": `
groupBy:
   - name: numAvailable
     def:
        op: Path
        path: "$.status.availableReplicas"
combinedFields:
   - name: count
     type: COUNT
`,
	"sadones": `
filter:
   op: Not
   args:
      - op: Equal
        args:
           - op: Path
             path: "$.spec.replicas"
           - op: Path
             path: "$.status.availableReplicas"
select:
   - name: wec
     def:
        op: Path
        path: "$.inventory.name"
`,
	"fullstatus": `
select:
   - name: wec
     def:
        op: Path
        path: "$.inventory.name"
   - name: status
     def:
        op: Path
        path: "$.status"
`,
}

func TestCombinedStatus(t *testing.T) {
	names := []string{"numwecs", "staleones", "availablereplicashistogram", "sadones", "fullstatus"}
	p := xr(t, `{objects: [{apiVersion: apps/v1, kind: Deployment, names: [web]}], clusters: {matchLabels: {env: prod}}}`)
	p.Spec.StatusCollectors = names
	req := workloads(t)
	for _, n := range names {
		req["collector-"+n] = []runtime.Object{collectorObject(t, n, seedCollectors[n])}
	}
	deploy := func(available int) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"replicas": 2}, "status": map[string]any{"replicas": 2, "availableReplicas": available}}
	}
	observed := delivered(t, map[string]map[string]any{"wec1/Deployment.apps/web": deploy(2), "wec2/Deployment.apps/web": deploy(1)})
	// wec2's copy cannot be synced: what it reports is stale.
	observed["wec2/Deployment.apps/web"].Failing("cannot apply")
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})

	rsp.WantCondition(v1alpha1.ConditionStatusCombined, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonCombined)
	got, _ := json.Marshal(rsp.Value("", "status.objects"))
	want := `[{"apiVersion":"apps/v1","clusters":2,"combinedStatus":[` +
		`{"collector":"numwecs","columns":["count"],"rows":[{"count":2}]},` +
		`{"collector":"staleones","columns":["wec"],"rows":[{"wec":"wec2"}]},` +
		`{"collector":"availablereplicashistogram","columns":["numAvailable","count"],"rows":[{"count":1,"numAvailable":1},{"count":1,"numAvailable":2}]},` +
		`{"collector":"sadones","columns":["wec"],"rows":[{"wec":"wec2"}]},` +
		`{"collector":"fullstatus","columns":["wec","status"],"rows":[{"status":{"availableReplicas":2,"replicas":2},"wec":"wec1"},{"status":{"availableReplicas":1,"replicas":2},"wec":"wec2"}]}],` +
		`"kind":"Deployment","name":"web","ready":1,"resource":"deployments","synced":1}]`
	if string(got) != want {
		t.Errorf("status.objects =\n%s\nwant\n%s", got, want)
	}

	// A collector that is missing or invalid is named, in the condition
	// and in the object's results; the others still combine.
	p.Spec.StatusCollectors = []string{"numwecs", "gone", "broken"}
	req["collector-gone"] = nil
	req["collector-broken"] = []runtime.Object{collectorObject(t, "broken", `{select: [{name: a, def: {op: Equal, args: [{op: Path, path: "$.a"}]}}]}`)}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	rsp.WantCondition(v1alpha1.ConditionStatusCombined, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonCollectorMissing, "gone")
	got, _ = json.Marshal(rsp.Value("", "status.objects"))
	for _, part := range []string{`"errors":["StatusCollector gone does not exist"]`, `StatusCollector broken is invalid: column 0 (a): Equal takes 2 argument(s), not 1`, `"rows":[{"count":2}]`} {
		if !strings.Contains(string(got), part) {
			t.Errorf("status.objects lacks %s:\n%s", part, got)
		}
	}
}

// TestLastReturnedUpdateTimestamp: the copies' conditions as
// provider-kubernetes writes them (each with its own transition time and
// observed generation, times as the API server's RFC 3339 text) reach the
// Placement through the wire, and a collector over
// propagation.lastReturnedUpdateTimestamp sees each copy's latest
// transition, Synced's or Ready's.
func TestLastReturnedUpdateTimestamp(t *testing.T) {
	p := xr(t, `{objects: [{apiVersion: apps/v1, kind: Deployment, names: [web]}], clusters: {matchLabels: {env: prod}}}`)
	p.Spec.StatusCollectors = []string{"when"}
	req := workloads(t)
	req["collector-when"] = []runtime.Object{collectorObject(t, "when", `
select:
   - name: wec
     def: {op: Path, path: "$.inventory.name"}
   - name: at
     def: {op: Path, path: "$.propagation.lastReturnedUpdateTimestamp"}
`)}
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "status": map[string]any{"replicas": 2}}
	observed := delivered(t, map[string]map[string]any{"wec1/Deployment.apps/web": deploy, "wec2/Deployment.apps/web": deploy})
	written := func(ready, synced string) []any {
		return []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": ready, "observedGeneration": 2},
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": synced, "observedGeneration": 2},
		}
	}
	observed["wec1/Deployment.apps/web"].Set("status.conditions", written("2026-11-26T06:05:00Z", "2026-11-26T06:00:00Z"))
	observed["wec2/Deployment.apps/web"].Set("status.conditions", written("2026-11-26T06:01:00Z", "2026-11-26T06:07:30Z"))
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})

	got, _ := json.Marshal(rsp.Value("", "status.objects"))
	want := `"rows":[{"at":"2026-11-26T06:05:00Z","wec":"wec1"},{"at":"2026-11-26T06:07:30Z","wec":"wec2"}]`
	if !strings.Contains(string(got), want) {
		t.Errorf("status.objects =\n%s\nwant the rows %s", got, want)
	}
}

func TestSingletonReportedState(t *testing.T) {
	p := xr(t, spec)
	p.Spec.WantSingletonReportedState = true
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "status": map[string]any{"replicas": 2, "availableReplicas": 2}}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "status": map[string]any{"active": 1}}
	settings := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}}
	reported := map[string]map[string]any{
		"wec1/Deployment.apps/web": deployment, "wec2/Deployment.apps/web": deployment,
		"wec1/Job.batch/migrate": job, "wec1/ConfigMap/settings": settings,
	}

	// Two clusters: nothing is written.
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: workloads(t), Observed: delivered(t, reported)})
	rsp.WantCondition(v1alpha1.ConditionReportedState, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotSingleton, "placed on 2 clusters", "nothing is written")
	for _, n := range rsp.Names() {
		if strings.HasPrefix(n, "reported-state/") {
			t.Errorf("%s composed for two clusters", n)
		}
	}

	// One cluster: a ReportedState per object whose copy reports a status.
	req := workloads(t)
	req["inventory"] = req["inventory"][1:] // wec1
	observed := delivered(t, reported)
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider", map[string]any{
		"placement": "web", "cluster": "wec1", "executingCount": 1,
		"object": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1"},
		"status": map[string]any{"replicas": 2, "availableReplicas": 2},
	})
	rsp.Want("reported-state/Deployment.apps/web", "apiVersion", "placement.m.fleetplane.io/v1alpha1")
	rsp.Want("reported-state/Deployment.apps/web", "spec.providerConfigRef", map[string]any{"kind": "ClusterProviderConfig", "name": "default"})

	// A policy that lets only Jobs' status come back: the Deployment's
	// ReportedState is not composed (one composed before goes, clearing
	// what it wrote), and the condition says which grant is missing.
	jobsOnly := ct.Permissive()
	jobsOnly.Spec.Placement.ReportedStateKinds = []string{"batch/Job"}
	refused := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed, Policy: jobsOnly})
	if refused.Has("reported-state/Deployment.apps/web") || !refused.Has("reported-state/Job.batch/migrate") {
		t.Errorf("reported states with only Jobs granted: %v", refused.Names())
	}
	refused.WantCondition(v1alpha1.ConditionReportedState, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonNotGranted,
		"ClusterProviderConfig default does not let this namespace have the status of Deployment.apps written back (spec.placement.reportedStateKinds)")
	rsp.Want("reported-state/Job.batch/migrate", "spec.forProvider.status", map[string]any{"active": 1})
	for _, n := range []string{"reported-state/ConfigMap/settings", "reported-state/Service/web"} {
		if rsp.Has(n) {
			t.Errorf("%s composed for a copy that reports no status", n)
		}
	}
	rsp.WantCondition(v1alpha1.ConditionReportedState, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonReporting,
		"written into 0 of 2 objects", "2 report no status: ConfigMap/settings, Service/web")

	// Written: the condition turns true. A copy that stops reporting keeps
	// its ReportedState as it was rather than clear the status in between.
	observed["reported-state/Deployment.apps/web"] = ct.Observed("placement.m.fleetplane.io/v1alpha1", "ReportedState", "d").Ready().
		Set("spec.forProvider.status", map[string]any{"replicas": 1})
	observed["reported-state/Job.batch/migrate"] = ct.Observed("placement.m.fleetplane.io/v1alpha1", "ReportedState", "j").Ready()
	observed["wec1/Deployment.apps/web"] = ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "wec1-web").Ready()
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	rsp.WantCondition(v1alpha1.ConditionReportedState, fnv1.Status_STATUS_CONDITION_TRUE, placement.ReasonReported, "cluster wec1 reports is written into 2 objects")
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.status", map[string]any{"replicas": 1})

	// A status too large to write is named, not composed.
	big := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "status": map[string]any{"x": strings.Repeat("a", 70<<10)}}
	observed["wec1/Job.batch/migrate"] = observed["wec1/Job.batch/migrate"].AtProvider("manifest", big)
	delete(observed, "reported-state/Job.batch/migrate")
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	if rsp.Has("reported-state/Job.batch/migrate") {
		t.Error("a status over the limit was composed")
	}
	rsp.WantCondition(v1alpha1.ConditionReportedState, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonReporting, "more than 65536 bytes is not written: Job.batch/migrate")
}

// TestMultiClusterReportedState: what both clusters report, aggregated,
// is written into the Deployment and the Job on the control plane; kinds
// without an aggregate are named, not written.
func TestMultiClusterReportedState(t *testing.T) {
	p := xr(t, spec)
	p.Spec.WantMultiClusterReportedState = true
	deploy := func(available int64, reason string) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "status": map[string]any{
			"replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": available, "availableReplicas": available,
			"conditions": []any{map[string]any{"type": "Progressing", "status": "True", "reason": reason}},
		}}
	}
	reported := map[string]map[string]any{
		"wec1/Deployment.apps/web": deploy(2, "NewReplicaSetAvailable"), "wec2/Deployment.apps/web": deploy(1, "ReplicaSetUpdated"),
		"wec1/Job.batch/migrate": {"apiVersion": "batch/v1", "kind": "Job", "status": map[string]any{"active": int64(1)}},
		"wec2/Job.batch/migrate": {"apiVersion": "batch/v1", "kind": "Job", "status": map[string]any{"active": int64(1), "ready": int64(1)}},
	}
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: workloads(t), Observed: delivered(t, reported)})
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.clusters", []any{"wec1", "wec2"})
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.executingCount", 2)
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.cluster", nil)
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.status.availableReplicas", 1)
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.status.observedGeneration", 2)
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.status.conditions", []any{
		map[string]any{"type": "Available", "status": "False", "reason": "NotReported", "message": "cluster wec1 has not reported"},
		map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "message": "rolling out on wec2"},
	})
	rsp.Want("reported-state/Job.batch/migrate", "spec.forProvider.status", map[string]any{"active": 2, "ready": 1, "succeeded": 0, "failed": 0, "terminating": 0})
	for _, n := range []string{"reported-state/ConfigMap/settings", "reported-state/Service/web"} {
		if rsp.Has(n) {
			t.Errorf("%s composed, though its kind has no aggregate", n)
		}
	}
	rsp.WantCondition(v1alpha1.ConditionReportedState, fnv1.Status_STATUS_CONDITION_FALSE, placement.ReasonReporting,
		"its 2 clusters report, aggregated, is written into 0 of 2 objects", "not aggregated across clusters", "ConfigMap/settings, Service/web")

	// The executing count is the copies there and ready: one cluster's
	// copy no longer ready makes it 1, whatever that cluster reported.
	observed := delivered(t, reported)
	observed["wec2/Deployment.apps/web"] = made(ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "wec2-web")).AtProvider("manifest", reported["wec2/Deployment.apps/web"])
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: workloads(t), Observed: observed})
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.executingCount", 1)

	// On one cluster with wantSingletonReportedState too, that cluster's
	// status is written as it is.
	p.Spec.WantSingletonReportedState = true
	req := workloads(t)
	req["inventory"] = req["inventory"][1:] // wec1
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: delivered(t, reported)})
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.cluster", "wec1")
	rsp.Want("reported-state/Deployment.apps/web", "spec.forProvider.status", reported["wec1/Deployment.apps/web"]["status"])
}

// TestTenantInput: what a tenant writes in spec.objects cannot make two
// copies collide, make an Object invalid, flood a condition, or steer an
// object past the admin's CustomTransform.
func TestTenantInput(t *testing.T) {
	long := strings.Repeat("a", 70)
	p := xr(t, `
objects:
- {apiVersion: apps/v1, kind: Deployment, names: [web]}
- {apiVersion: apps/v1beta1, kind: Deployment, names: [web], resource: notdeployments}
- {apiVersion: v1, kind: ConfigMap, names: [`+long+`]}
clusters: {}
`)
	req := workloads(t)
	req["object-1-web"] = req["object-0-web"]
	req["object-2-"+long] = []runtime.Object{obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+long+`, namespace: team-a, annotations: {control.kubestellar.io/expand-templates: "true"}}, data: {a: "{{.clusterName}}"}}`)}
	req["inventory"] = req["inventory"][1:] // wec1
	observed := map[string]*ct.Resource{"wec1/Namespace": ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "ns").Ready()}
	rsp := ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	rsp.WantNames("wec1/Namespace", "wec1/Deployment.apps/web", "wec1/ConfigMap/"+long)
	if objs, _ := rsp.Value("", "status.objects").([]any); len(objs) != 2 {
		t.Errorf("status.objects lists %d objects, want 2", len(objs))
	}
	// The first selector's version; the admin's transform for deployments
	// applies although the tenant declared another plural.
	rsp.Want("wec1/Deployment.apps/web", "spec.forProvider.manifest.spec.replicas", nil)
	rsp.Want("wec1/ConfigMap/"+long, "metadata.labels", map[string]any{"placement.fleetplane.io/cluster": "wec1", "placement.fleetplane.io/kind": "configmap"})

	// A template error quoting a long template is bounded.
	req["object-2-"+long] = []runtime.Object{obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+long+`, namespace: team-a, annotations: {control.kubestellar.io/expand-templates: "true"}}, data: {a: "{{.`+strings.Repeat("x", 2000)+`}}"}}`)}
	rsp = ct.Run(t, placement.Composer, ct.Call{XR: p, Required: req, Observed: observed})
	if c := rsp.Condition(v1alpha1.ConditionDelivered); c == nil || c.GetReason() != placement.ReasonExpansionFailed || len(c.GetMessage()) > 512 {
		t.Errorf("Delivered = %v, want ExpansionFailed with a bounded message", c)
	}
}
