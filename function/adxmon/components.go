package adxmon

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	scalingv1alpha1 "github.com/fleetplane/fleetplane/apis/scaling/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
	"github.com/fleetplane/fleetplane/internal/observe"
)

// crdFiles are adx-mon's CRDs the ingestor and alerter need, copied from
// the adx-mon module by `make generate`.
//
//go:embed crds/*.yaml
var crdFiles embed.FS

// crdManifests are those CRDs decoded, by file name, once: every
// RunFunction wraps them, and decoding them is most of the work.
var crdManifests = sync.OnceValues(func() (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, files := range crdsOf {
		for _, f := range files {
			raw, err := crdFiles.ReadFile("crds/" + f + ".yaml")
			if err != nil {
				return nil, err
			}
			m := map[string]any{}
			if err := yaml.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("cannot read adx-mon's CRD %s: %w", f, err)
			}
			// Only what the API server keeps: a status would be reported
			// as drift forever.
			delete(m, "status")
			out[f] = m
		}
	}
	return out, nil
})

// crdsOf lists the CRDs (by file name) a component needs.
var crdsOf = map[string][]string{
	"ingestor": {"functions", "managementcommands", "summaryrules"},
	"alerter":  {"alertrules"},
}

// crdObject wraps one of adx-mon's CRDs in a provider-kubernetes Object
// whose management policies leave out Delete: the CRDs outlive the
// ADXMon, since deleting a CRD deletes every object of its kind in the
// cluster (users' alert rules and functions among them), and another
// stack may rely on them. Ready once the API server serves the kind.
func (p *planner) crdObject(file string) *composed.Unstructured {
	all, err := crdManifests()
	if err != nil {
		p.set.Fail(err)
		return nil
	}
	// A copy: the response is built from it, and the next call needs the
	// original.
	manifest := runtime.DeepCopyJSON(all[file])
	o := composed.New()
	o.SetAPIVersion("kubernetes.m.crossplane.io/v1alpha1")
	o.SetKind("Object")
	o.SetNamespace(p.ns)
	o.SetLabels(p.labels("crds"))
	o.Object["spec"] = map[string]any{
		"forProvider":        map[string]any{"manifest": manifest},
		"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"},
		"readiness": map[string]any{
			"policy":   "DeriveFromCelQuery",
			"celQuery": "object.status.conditions.exists(c, c.type == 'Established' && c.status == 'True')",
		},
		"providerConfigRef": map[string]any{"kind": p.cfg.Kubernetes.Kind, "name": p.cfg.Kubernetes.Name},
	}
	return o
}

// rbac composes a component's ServiceAccount and its bindings to the
// component's shipped ClusterRoles (Roles), and its CRDs, and returns
// their names: the workload comes after them.
func (p *planner) rbac(ok bool, component string, automount bool) []resource.Name {
	roles := Roles[component]
	sa := resource.Name(component + "-serviceaccount")
	crb := resource.Name(component + "-clusterrolebinding")
	p.set.AddObjectWhen(ok, sa, serviceAccount(p.meta(component), automount))
	p.set.AddObjectWhen(ok, crb, clusterRoleBinding(p.clusterMeta(component), roles.Cluster, component, p.ns))
	names := []resource.Name{sa, crb}
	if roles.Namespaced != "" {
		rb := resource.Name(component + "-rolebinding")
		p.set.AddObjectWhen(ok, rb, roleBinding(p.meta(component), roles.Namespaced, component))
		names = append(names, rb)
	}
	for _, f := range crdsOf[component] {
		n := resource.Name("crd-" + f)
		if o := p.crdObject(f); o != nil {
			p.set.AddWhen(ok, n, o)
		}
		names = append(names, n)
	}
	return names
}

func (p *planner) ingestorPhase(ok bool, dbs []endpointDB) bool {
	in := p.xr.Spec.Ingestor
	after := p.rbac(ok, "ingestor", false)
	var exposure *v1alpha1.IngestorService
	if in != nil {
		exposure = in.Service
	}
	badService := checkService(exposure)
	if badService == nil {
		p.set.AddObjectWhen(ok, NameIngestorService, ingestorService(p.meta("ingestor"), exposure))
	} else {
		// Left as it is: a Service half applied could expose the
		// ingestor otherwise than asked (a load balancer without its
		// internal annotation is a public one).
		p.set.Keep(NameIngestorService)
	}
	after = append(after, NameIngestorService)
	replicas, owner, adopted := p.ingestorReplicas()
	sts := p.ingestor(in, dbs, replicas)
	p.set.AddObjectWhen(ok, NameIngestor, sts, after...)

	o := p.set.Observed(NameIngestor)
	ws := p.workloadStatus("StatefulSet", "ingestor", o)
	ws.Endpoint = p.ingestorURL()
	ws.ReplicasOwner, ws.DesiredReplicas = owner, replicas
	st := &v1alpha1.IngestorStatus{WorkloadStatus: *ws}
	if exposure != nil && exposure.Type == corev1.ServiceTypeLoadBalancer {
		st.ExternalEndpoint = loadBalancerURL(p.set.Observed(NameIngestorService))
	}
	p.status.Ingestor = st

	var drifts []v1alpha1.Drift
	if d, ok := p.replicasDrift(o, replicas); ok && !adopted {
		drifts = append(drifts, d)
	}
	drifts = append(drifts, p.imageDrift("StatefulSet", "ingestor", o, sts.Spec.Template.Spec.Containers[0].Image)...)
	ready := p.report(v1alpha1.ConditionIngestorReady, NameIngestor, "StatefulSet "+p.ns+"/ingestor", "waiting for the databases (DatabasesReady)", drifts)
	if badService != nil {
		p.setCondition(v1alpha1.ConditionIngestorReady, corev1.ConditionFalse, ReasonFailed, badService.Error()+"; the ingestor's Service is left as it is")
		return false
	}
	return ready
}

func (p *planner) collectorPhase(ok bool, dbs []endpointDB) bool {
	c := p.xr.Spec.Collector
	after := p.rbac(ok, "collector", true)
	endpoint, inCluster := c.IngestorEndpoint, p.ownIngestor(c.IngestorEndpoint)
	if endpoint == "" {
		endpoint, inCluster = p.ingestorURL(), true
	}
	if msg := p.misdirected(endpoint); msg != "" {
		// Collectors would buffer forever, reporting Installed: compose
		// nothing new for them, and say what to write instead.
		p.set.Keep(NameCollectorConfig, NameCollector)
		p.status.Collector = p.workloadStatus("DaemonSet", "collector", p.set.Observed(NameCollector))
		p.setCondition(v1alpha1.ConditionCollectorReady, corev1.ConditionFalse, ReasonEndpointInvalid, msg+"; nothing new is composed for the collectors")
		return false
	}
	metricsDB, logsDB := "Metrics", "Logs"
	// The first database of each type.
	for _, d := range slices.Backward(dbs) {
		switch d.Type {
		case v1alpha1.TelemetryMetrics:
			metricsDB = d.Name
		case v1alpha1.TelemetryLogs:
			logsDB = d.Name
		case v1alpha1.TelemetryTraces:
			// The collector sends no traces of its own.
		}
	}
	// adx-mon's ingestor serves TLS with its own certificate: collectors
	// skip verification for it, as adx-mon's manifests do, and only for
	// it, unless the stack names the CA to verify it with.
	toml := collectorConfigTOML(endpoint, p.region(), p.ns, metricsDB, logsDB, inCluster && c.IngestorCA == nil)
	cm := &corev1.ConfigMap{ObjectMeta: p.meta(collectorConfig), Data: map[string]string{"config.toml": toml}}
	cm.Labels[labelApp] = "collector"
	p.set.AddObjectWhen(ok, NameCollectorConfig, cm)
	after = append(after, NameCollectorConfig)
	sum := sha256.Sum256([]byte(toml))
	ds := p.collector(c, hex.EncodeToString(sum[:8]))
	p.set.AddObjectWhen(ok, NameCollector, ds, after...)
	o := p.set.Observed(NameCollector)
	ws := p.workloadStatus("DaemonSet", "collector", o)
	ws.Endpoint = endpoint
	p.status.Collector = ws
	drifts := p.imageDrift("DaemonSet", "collector", o, ds.Spec.Template.Spec.Containers[0].Image)

	ready := p.report(v1alpha1.ConditionCollectorReady, NameCollector, "DaemonSet "+p.ns+"/collector", p.waitingFor(), drifts)
	// A collector pointed at the default in-cluster ingestor of a stack
	// that runs none relies on another ADXMon's: say so when there is none.
	if inCluster && p.xr.Spec.Ingestor == nil && ok {
		items, resolved := p.r.Require("ingestor-service", compose.Selector{APIVersion: "v1", Kind: "Service", Namespace: p.ns, Name: "ingestor"})
		if resolved && len(items) == 0 {
			p.setCondition(v1alpha1.ConditionCollectorReady, corev1.ConditionFalse, ReasonIngestorMissing,
				fmt.Sprintf("collectors send to %s, but namespace %s has no ingestor Service: nothing answers there until an ADXMon with spec.ingestor runs in it; set spec.collector.ingestorEndpoint to send elsewhere (collectors buffer meanwhile)", endpoint, p.ns))
			return false
		}
	}
	return ready
}

func (p *planner) alerterPhase(ok bool, dbs []endpointDB) bool {
	a := p.xr.Spec.Alerter
	after := p.rbac(ok, "alerter", false)
	dep := p.alerter(a, dbs)
	p.set.AddObjectWhen(ok, NameAlerter, dep, after...)
	o := p.set.Observed(NameAlerter)
	p.status.Alerter = p.workloadStatus("Deployment", "alerter", o)
	drifts := p.imageDrift("Deployment", "alerter", o, dep.Spec.Template.Spec.Containers[0].Image)
	return p.report(v1alpha1.ConditionAlerterReady, NameAlerter, "Deployment "+p.ns+"/alerter", p.waitingFor(), drifts)
}

// replicasDrift reports a replica count on the StatefulSet that is
// neither what this ADXMon composes now nor what it composed before: the
// count it last reported composing, or the size the ingestor's Autoscaler
// just scaled from. The apply of a new count, after a spec change or a
// decision, is not drift; someone scaling the StatefulSet by hand is.
func (p *planner) replicasDrift(o *composed.Unstructured, want *int32) (v1alpha1.Drift, bool) {
	if want == nil || o == nil {
		return v1alpha1.Drift{}, false
	}
	found, has := observe.Int(o, "spec", "replicas")
	if !has || found == int64(*want) {
		return v1alpha1.Drift{}, false
	}
	if last := p.xr.Status.Ingestor; last != nil && last.DesiredReplicas != nil && found == int64(*last.DesiredReplicas) {
		return v1alpha1.Drift{}, false
	}
	// The size the Autoscaler scaled from, while its scale is applied. A
	// size it merely observed (a hold) proves nothing: it may be the hand
	// edit itself.
	if s := p.ingestorScale; s != nil {
		decision, _ := observe.String(s.observed, "status", "atProvider", "decision")
		from, ok := observe.Int(s.observed, "status", "atProvider", "observedSize")
		if ok && found == from && (decision == scalingv1alpha1.DecisionUp || decision == scalingv1alpha1.DecisionDown) {
			return v1alpha1.Drift{}, false
		}
	}
	return p.drift("StatefulSet", "ingestor", o, "spec.replicas", strconv.FormatInt(found, 10), strconv.Itoa(int(*want))), true
}

// waitingFor names the phase a held component waits for.
func (p *planner) waitingFor() string {
	for _, t := range []string{v1alpha1.ConditionDatabasesReady, v1alpha1.ConditionIngestorReady, v1alpha1.ConditionCollectorReady} {
		if c, ok := p.conds[t]; ok && c.Status != corev1.ConditionTrue {
			return "waiting for " + t
		}
	}
	return "waiting for the components before it"
}

// report sets a component's condition from its workload and records the
// drift it undid. It returns whether the component is ready.
func (p *planner) report(cond string, name resource.Name, what, waiting string, drifts []v1alpha1.Drift) bool {
	switch {
	case !p.set.Exists(name) && !p.set.Desired(name):
		p.setCondition(cond, corev1.ConditionFalse, ReasonNotInstalled, waiting)
		return false
	case !p.set.Exists(name):
		p.setCondition(cond, corev1.ConditionFalse, ReasonInstalling, what+" is being created")
		return false
	case len(drifts) > 0:
		p.recordDrift(drifts)
		d := drifts[0]
		p.setCondition(cond, corev1.ConditionFalse, ReasonDrifted, fmt.Sprintf("%s %s was changed by hand to %s; restoring %s, as the ADXMon's spec says", what, d.Field, d.Found, d.Restored))
		return false
	case p.set.Ready(name):
		p.setCondition(cond, corev1.ConditionTrue, ReasonInstalled, what+" is ready")
		return true
	}
	p.setCondition(cond, corev1.ConditionFalse, ReasonInstalling, what+" is not ready yet"+progress(p.set.Observed(name)))
	return false
}

func progress(o *composed.Unstructured) string {
	if o == nil {
		return ""
	}
	switch o.GetKind() {
	case "DaemonSet":
		ready, _ := observe.Int(o, "status", "numberReady")
		want, _ := observe.Int(o, "status", "desiredNumberScheduled")
		return fmt.Sprintf(": %d of %d pods ready", ready, want)
	default:
		ready, _ := observe.Int(o, "status", "readyReplicas")
		want, has := observe.Int(o, "spec", "replicas")
		if !has {
			want = 1
		}
		return fmt.Sprintf(": %d of %d replicas ready", ready, want)
	}
}

func (p *planner) workloadStatus(kind, name string, o *composed.Unstructured) *v1alpha1.WorkloadStatus {
	ws := &v1alpha1.WorkloadStatus{Resource: kind + " " + p.ns + "/" + name}
	if o == nil {
		return ws
	}
	if kind == "DaemonSet" {
		if n, ok := observe.Int(o, "status", "desiredNumberScheduled"); ok {
			ws.Replicas = ptrInt32(n)
		}
		n, _ := observe.Int(o, "status", "numberReady")
		ws.ReadyReplicas = int32(n) //nolint:gosec // a pod count
		return ws
	}
	if n, ok := observe.Int(o, "spec", "replicas"); ok {
		ws.Replicas = ptrInt32(n)
	}
	n, _ := observe.Int(o, "status", "readyReplicas")
	ws.ReadyReplicas = int32(n) //nolint:gosec // a replica count
	return ws
}

// loadBalancerURL is the address the cloud gave the ingestor's load
// balancer, as collectors elsewhere dial it (the Service listens on 443),
// or "" while it has none. The cloud controller writes it: what is
// neither an IP nor a DNS name is not repeated into status.
func loadBalancerURL(svc *composed.Unstructured) string {
	if svc == nil {
		return ""
	}
	ingress, _, _ := unstructured.NestedSlice(svc.Object, "status", "loadBalancer", "ingress")
	if len(ingress) == 0 {
		return ""
	}
	first, _ := ingress[0].(map[string]any)
	if ip, _ := first["ip"].(string); ip != "" {
		a, err := netip.ParseAddr(ip)
		switch {
		case err != nil:
			return ""
		case a.Is6():
			return "https://[" + a.String() + "]"
		default:
			return "https://" + a.String()
		}
	}
	if host, _ := first["hostname"].(string); host != "" && len(validation.IsDNS1123Subdomain(host)) == 0 {
		return "https://" + host
	}
	return ""
}

func ptrInt32(n int64) *int32 {
	v := int32(n) //nolint:gosec // replica counts fit
	return &v
}

func (p *planner) imageDrift(kind, name string, o *composed.Unstructured, want string) []v1alpha1.Drift {
	if o == nil {
		return nil
	}
	spec, _ := o.Object["spec"].(map[string]any)
	tpl, _ := spec["template"].(map[string]any)
	pod, _ := tpl["spec"].(map[string]any)
	cs, _ := pod["containers"].([]any)
	if len(cs) == 0 {
		return nil
	}
	c, _ := cs[0].(map[string]any)
	if got, _ := c["image"].(string); got != "" && got != want {
		return []v1alpha1.Drift{p.drift(kind, name, o, "spec.template.spec.containers[0].image", got, want)}
	}
	return nil
}

func (p *planner) drift(kind, name string, o *composed.Unstructured, field, found, restored string) v1alpha1.Drift {
	return v1alpha1.Drift{Resource: kind + " " + p.ns + "/" + name, Field: field, Found: observe.Bound(found), Restored: restored, Generation: generation(o)}
}

// recordDrift puts new drift first in status.drift.
func (p *planner) recordDrift(ds []v1alpha1.Drift) {
	p.status.Drift = append(p.status.Drift, ds...)
}

// keepDrift appends what earlier reconciles recorded: the record must
// outlive the fix, which the next apply makes. The same change seen twice
// (same resource, field and generation) is recorded once.
func (p *planner) keepDrift() {
	for _, old := range p.xr.Status.Drift {
		dup := false
		for _, d := range p.status.Drift {
			if d.Resource == old.Resource && d.Field == old.Field && d.Generation == old.Generation {
				dup = true
			}
		}
		if !dup {
			p.status.Drift = append(p.status.Drift, old)
		}
	}
	if len(p.status.Drift) > maxDrift {
		p.status.Drift = p.status.Drift[:maxDrift]
	}
}

// region of the collectors' telemetry: the first provisioned cluster's.
func (p *planner) region() string {
	if p.xr.Spec.ADX == nil {
		return ""
	}
	for i, c := range p.xr.Spec.ADX.Clusters {
		if c.Provision != nil {
			return strings.ToLower(strings.ReplaceAll(p.where(i).Location, " ", ""))
		}
	}
	return ""
}

// where is the i-th cluster's subscription, resource group and region:
// the spec's, and with provision.auto what its ADXCluster discovered for
// those the spec leaves out (empty until it reports them).
func (p *planner) where(i int) v1alpha1.AppliedProvisionState {
	pr := p.xr.Spec.ADX.Clusters[i].Provision
	w := v1alpha1.AppliedProvisionState{SubscriptionID: pr.SubscriptionID, ResourceGroup: pr.ResourceGroup, Location: pr.Region}
	if !pr.Auto {
		return w
	}
	o := p.set.Observed(resource.Name(adxPrefix + strings.ToLower(p.clusterName(i))))
	fill := func(v *string, field string) {
		if *v == "" {
			*v, _ = observe.String(o, "status", "appliedProvisionState", field)
		}
	}
	fill(&w.SubscriptionID, "subscriptionId")
	fill(&w.ResourceGroup, "resourceGroup")
	fill(&w.Location, "location")
	return w
}

func intstrPort(n int) intstr.IntOrString { return intstr.FromInt32(int32(n)) } //nolint:gosec // port constants

// ingestorURL is the in-cluster address of the ingestor Service of the
// stack's namespace.
func (p *planner) ingestorURL() string {
	return fmt.Sprintf("https://ingestor.%s.svc.cluster.local", p.ns)
}

// misdirected says why collectors sending to endpoint cannot reach an
// ingestor fleetplane runs, when endpoint names an in-cluster ingestor
// Service (ingestor.<namespace>.svc[.cluster.local]) but not as it
// serves: adx-mon's ingestor speaks only HTTPS, and its Service only port
// 443; and a stack that runs its own ingestor has it in its own
// namespace. adx-mon's own examples write http://…:8080 and namespace
// monitoring, which an ADXMon would otherwise compose verbatim, its
// collectors then retrying forever while every condition says Installed.
// "" when endpoint is fine or names anything else.
func (p *planner) misdirected(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	rest, ok := strings.CutPrefix(host, "ingestor.")
	if !ok {
		return ""
	}
	ns, ok := strings.CutSuffix(rest, ".svc.cluster.local")
	if !ok {
		if ns, ok = strings.CutSuffix(rest, ".svc"); !ok {
			return ""
		}
	}
	if strings.Contains(ns, ".") {
		return ""
	}
	want := fmt.Sprintf("https://ingestor.%s.svc.cluster.local", ns)
	if p.xr.Spec.Ingestor != nil && ns != p.ns {
		return fmt.Sprintf("spec.collector.ingestorEndpoint %s names the ingestor of namespace %s, but this ADXMon runs its ingestor in namespace %s (spec.namespace): leave ingestorEndpoint out to send to it (%s)", endpoint, ns, p.ns, p.ingestorURL())
	}
	switch {
	case !strings.EqualFold(u.Scheme, "https"):
		return fmt.Sprintf("spec.collector.ingestorEndpoint %s is %s, but adx-mon's ingestor serves only HTTPS: use %s", endpoint, u.Scheme, want)
	case u.Port() != "" && u.Port() != "443":
		return fmt.Sprintf("spec.collector.ingestorEndpoint %s names port %s, but the ingestor's Service serves port 443: use %s", endpoint, u.Port(), want)
	}
	return ""
}

// ownIngestor says whether endpoint names the ingestor Service of this
// stack's namespace, as adx-mon's complete example writes it, which is
// what an empty ingestorEndpoint means: the ingestor that serves adx-mon's
// own self-signed certificate. Collectors pointed at it must skip
// verification, or every transfer fails its handshake (test/node
// TestADXMonRunsAdxMon saw it with adx-mon's binaries).
func (p *planner) ownIngestor(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	if port := u.Port(); port != "" && port != "443" {
		return false
	}
	// Only the full name: a shorter one ("ingestor.<ns>",
	// "ingestor.<ns>.svc") goes through the pod's resolver search list and,
	// when no such Service answers, on to public DNS, where skipping
	// verification would hand the ingestor token to whoever answers.
	return strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), "ingestor."+p.ns+".svc.cluster.local")
}

func quantities(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse(cpu), corev1.ResourceMemory: apiresource.MustParse(mem)}
}

// generation reads metadata.generation, which arrives as a float64.
func generation(o *composed.Unstructured) int64 {
	g, _ := observe.Int(o, "metadata", "generation")
	return g
}
