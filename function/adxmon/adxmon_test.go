package adxmon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/fn/v1beta1"
	ct "github.com/fleetplane/fleetplane/function/compose/composetest"
)

const endpoint = "https://prodmetrics.eastus2.kusto.windows.net"

func xr(spec v1alpha1.ADXMonSpec) *v1alpha1.ADXMon {
	return &v1alpha1.ADXMon{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ADXMonKind},
		ObjectMeta: metav1.ObjectMeta{Name: "complete", UID: "6d6f6e00-1111-2222-3333-444444444444", Generation: 1},
		Spec:       spec,
	}
}

// complete is the seed's complete example: one provisioned cluster with
// three databases, three ingestors, a collector and an alerter.
func complete() *v1alpha1.ADXMon {
	return xr(v1alpha1.ADXMonSpec{
		ADX: &v1alpha1.ADXMonADX{Clusters: []v1alpha1.ADXMonCluster{{
			Name:     "prodmetrics",
			Endpoint: endpoint,
			Databases: []v1alpha1.ADXMonDatabase{
				{Name: "Metrics", TelemetryType: v1alpha1.TelemetryMetrics},
				{Name: "Logs", TelemetryType: v1alpha1.TelemetryLogs},
				{Name: "Traces", TelemetryType: v1alpha1.TelemetryTraces},
			},
			Provision: &v1alpha1.ADXMonProvision{
				SubscriptionID: "00000000-0000-0000-0000-000000000000", ResourceGroup: "adx-monitor-prod", Region: "eastus2",
				Sku: "Standard_L8as_v3", Tier: v1alpha1.TierStandard, ManagedIdentityClientID: "11111111-1111-1111-1111-111111111111",
			},
		}}},
		Ingestor:  &v1alpha1.Ingestor{Workload: v1alpha1.Workload{Image: "ghcr.io/azure/adx-mon/ingestor:v1.0.0"}, Replicas: ptr.To[int32](3)},
		Collector: &v1alpha1.Collector{Workload: v1alpha1.Workload{Image: "ghcr.io/azure/adx-mon/collector:v1.0.0"}},
		Alerter:   &v1alpha1.Alerter{Workload: v1alpha1.Workload{Image: "ghcr.io/azure/adx-mon/alerter:v1.0.0"}},
	})
}

// noNamespace is Crossplane's answer that the namespace does not exist.
var noNamespace = map[string][]runtime.Object{"namespace": {}}

func namespace() *ct.Resource {
	return ct.Observed("v1", "Namespace", "adx-mon").Set("status.phase", "Active")
}

func adxCluster(ep string) *ct.Resource {
	r := ct.Observed("adx.fleetplane.io/v1alpha1", "ADXCluster", "complete-prodmetrics")
	if ep != "" {
		r.Set("status.endpoint", ep)
	}
	return r
}

func exists(kind string) *ct.Resource {
	api := "v1"
	if strings.HasPrefix(kind, "Cluster") || strings.HasSuffix(kind, "Binding") {
		api = "rbac.authorization.k8s.io/v1"
	}
	return ct.Observed(api, kind, "x")
}

func crd() *ct.Resource {
	return ct.Observed("kubernetes.m.crossplane.io/v1alpha1", "Object", "crd").Ready()
}

// workload is an observed workload whose controller has seen generation
// 1 with ready pods.
func workload(kind string, replicas, ready int64) *ct.Resource {
	r := ct.Observed("apps/v1", kind, strings.ToLower(kind)).Set("metadata.generation", 1).Set("status.observedGeneration", 1)
	switch kind {
	case "DaemonSet":
		r.Set("status.desiredNumberScheduled", replicas).Set("status.numberReady", ready).Set("status.updatedNumberScheduled", ready)
	case "Deployment":
		r.Set("spec.replicas", replicas).Set("status.availableReplicas", ready).Set("status.updatedReplicas", ready).Set("status.readyReplicas", ready)
	default:
		r.Set("spec.replicas", replicas).Set("status.readyReplicas", ready)
	}
	return r
}

func rbacOf(c string, obs map[string]*ct.Resource) {
	obs[c+"-serviceaccount"] = exists("ServiceAccount")
	obs[c+"-clusterrolebinding"] = exists("ClusterRoleBinding")
	if Roles[c].Namespaced != "" {
		obs[c+"-rolebinding"] = exists("RoleBinding")
	}
	for _, f := range crdsOf[c] {
		obs["crd-"+f] = crd()
	}
}

// through builds the observed state of the complete stack up to a step,
// everything before it ready.
func through(step string) map[string]*ct.Resource {
	obs := map[string]*ct.Resource{"namespace": namespace()}
	if step == "namespace" {
		return obs
	}
	obs["adx-prodmetrics"] = adxCluster(endpoint).Ready()
	if step == "adx" {
		return obs
	}
	rbacOf("ingestor", obs)
	obs["ingestor-service"] = exists("Service")
	obs["ingestor"] = workload("StatefulSet", 3, 3)
	if step == "ingestor" {
		return obs
	}
	rbacOf("collector", obs)
	obs["collector-config"] = exists("ConfigMap")
	obs["collector"] = workload("DaemonSet", 2, 2)
	if step == "collector" {
		return obs
	}
	rbacOf("alerter", obs)
	obs["alerter"] = workload("Deployment", 1, 1)
	return obs
}

var (
	ingestorRBAC  = []string{"ingestor-serviceaccount", "ingestor-clusterrolebinding", "ingestor-rolebinding", "crd-functions", "crd-managementcommands", "crd-summaryrules", "ingestor-service"}
	collectorRBAC = []string{"collector-serviceaccount", "collector-clusterrolebinding", "collector-config"}
	alerterRBAC   = []string{"alerter-serviceaccount", "alerter-clusterrolebinding", "crd-alertrules"}
)

func names(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// TestPhases walks the complete example through every gate: each step is
// created only once the one before is ready, and the conditions and phase
// say where it stands.
func TestPhases(t *testing.T) {
	cases := map[string]struct {
		observed map[string]*ct.Resource
		required map[string][]runtime.Object
		want     []string
		phase    string
		conds    map[string]string
	}{
		"Crossplane has not said whether the namespace exists": {
			want:  nil,
			phase: PhaseADX,
			conds: map[string]string{v1alpha1.ConditionADXReady: ReasonNotInstalled, v1alpha1.ConditionIngestorReady: ReasonNotInstalled},
		},
		"the namespace comes first": {
			required: noNamespace,
			want:     []string{"namespace"},
			phase:    PhaseADX,
			conds:    map[string]string{v1alpha1.ConditionADXReady: ReasonNotInstalled},
		},
		"ADX once the namespace is active": {
			observed: through("namespace"),
			want:     []string{"namespace", "adx-prodmetrics"},
			phase:    PhaseADX,
			conds:    map[string]string{v1alpha1.ConditionADXReady: ReasonInstalling, v1alpha1.ConditionDatabasesReady: ReasonNotInstalled},
		},
		"an endpoint is known but the databases are not ready": {
			observed: map[string]*ct.Resource{"namespace": namespace(), "adx-prodmetrics": adxCluster(endpoint)},
			want:     []string{"namespace", "adx-prodmetrics"},
			phase:    PhaseDatabases,
			conds:    map[string]string{v1alpha1.ConditionADXReady: ReasonInstalled, v1alpha1.ConditionDatabasesReady: ReasonInstalling, v1alpha1.ConditionIngestorReady: ReasonNotInstalled},
		},
		"the ingestor's RBAC, CRDs and Service once the databases are ready; its StatefulSet after them": {
			observed: through("adx"),
			want:     names([]string{"namespace", "adx-prodmetrics"}, ingestorRBAC),
			phase:    PhaseIngestor,
			conds:    map[string]string{v1alpha1.ConditionDatabasesReady: ReasonInstalled, v1alpha1.ConditionIngestorReady: ReasonNotInstalled, v1alpha1.ConditionCollectorReady: ReasonNotInstalled},
		},
		"the collector once the ingestor is ready": {
			observed: through("ingestor"),
			want:     names([]string{"namespace", "adx-prodmetrics", "ingestor"}, ingestorRBAC, collectorRBAC),
			phase:    PhaseCollector,
			conds:    map[string]string{v1alpha1.ConditionIngestorReady: ReasonInstalled, v1alpha1.ConditionCollectorReady: ReasonNotInstalled, v1alpha1.ConditionAlerterReady: ReasonNotInstalled},
		},
		"the alerter once the collector is ready": {
			observed: through("collector"),
			want:     names([]string{"namespace", "adx-prodmetrics", "ingestor", "collector"}, ingestorRBAC, collectorRBAC, alerterRBAC),
			phase:    PhaseAlerter,
			conds:    map[string]string{v1alpha1.ConditionCollectorReady: ReasonInstalled, v1alpha1.ConditionAlerterReady: ReasonNotInstalled},
		},
		"installed": {
			observed: through("alerter"),
			want:     names([]string{"namespace", "adx-prodmetrics", "ingestor", "collector", "alerter"}, ingestorRBAC, collectorRBAC, alerterRBAC),
			phase:    PhaseInstalled,
			conds: map[string]string{v1alpha1.ConditionADXReady: ReasonInstalled, v1alpha1.ConditionDatabasesReady: ReasonInstalled,
				v1alpha1.ConditionIngestorReady: ReasonInstalled, v1alpha1.ConditionCollectorReady: ReasonInstalled, v1alpha1.ConditionAlerterReady: ReasonInstalled},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: tc.observed, Required: tc.required})
			rsp.WantNames(tc.want...)
			rsp.Want("", "status.phase", tc.phase)
			for typ, reason := range tc.conds {
				c := rsp.Condition(typ)
				if c == nil || c.GetReason() != reason {
					t.Errorf("%s = %v, want reason %s", typ, c, reason)
				}
			}
			if tc.phase != PhaseInstalled {
				rsp.WantNotReady()
			}
		})
	}
}

// TestEditsReachWhatExists: a component whose predecessor turned unready
// is still composed from the current spec (the Set's rule), never dropped.
func TestEditsReachWhatExists(t *testing.T) {
	obs := through("alerter")
	obs["adx-prodmetrics"] = adxCluster(endpoint) // databases no longer ready
	x := complete()
	x.Spec.Collector.Image = "ghcr.io/azure/adx-mon/collector:v1.1.0"
	rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
	rsp.WantNames(names([]string{"namespace", "adx-prodmetrics", "ingestor", "collector", "alerter"}, ingestorRBAC, collectorRBAC, alerterRBAC)...)
	img := rsp.Value("collector", "spec.template.spec.containers").([]any)[0].(map[string]any)["image"]
	if img != "ghcr.io/azure/adx-mon/collector:v1.1.0" {
		t.Errorf("collector image %v: the edit must reach the existing DaemonSet", img)
	}
	rsp.Want("", "status.phase", PhaseDatabases)
}

func TestIngestor(t *testing.T) {
	rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: through("ingestor")})
	rsp.Want("ingestor", "spec.replicas", 3)
	c := rsp.Value("ingestor", "spec.template.spec.containers").([]any)[0].(map[string]any)
	args := strings.Join(toStrings(c["args"]), " ")
	for _, want := range []string{"--metrics-kusto-endpoints=Metrics=" + endpoint, "--logs-kusto-endpoints=Logs=" + endpoint} {
		if !strings.Contains(args, want) {
			t.Errorf("ingestor args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "Traces") {
		t.Errorf("ingestor args %q: adx-mon's ingestor has no traces endpoint flag", args)
	}
	env := map[string]string{}
	for _, e := range c["env"].([]any) {
		m := e.(map[string]any)
		v, _ := m["value"].(string)
		env[m["name"].(string)] = v
	}
	if env["AZURE_CLIENT_ID"] != "11111111-1111-1111-1111-111111111111" || env["AZURE_RESOURCE"] != endpoint {
		t.Errorf("ingestor env %v: the identity and ADX resource must be filled in", env)
	}
	// Bindings to the shipped roles only: the stack composes no role.
	rsp.Want("ingestor-clusterrolebinding", "metadata.name", "adx-mon:ingestor")
	rsp.Want("ingestor-clusterrolebinding", "roleRef", map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleetplane:adxmon:ingestor"})
	rsp.Want("ingestor-clusterrolebinding", "subjects", []any{map[string]any{"kind": "ServiceAccount", "name": "ingestor", "namespace": "adx-mon"}})
	rsp.Want("ingestor-rolebinding", "metadata.namespace", "adx-mon")
	rsp.Want("ingestor-rolebinding", "roleRef", map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleetplane:adxmon:ingestor-pods"})
	rsp.Want("crd-functions", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})
	rsp.Want("crd-functions", "spec.forProvider.manifest.metadata.name", "functions.adx-mon.azure.com")
	rsp.Want("", "status.ingestor.replicasOwner", "ADXMon")
	rsp.Want("", "status.ingestor.readyReplicas", 3)
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// TestReplicasDrift: with spec.ingestor.replicas set, a hand-made scale is
// undone and recorded; unset, it is the cluster's to decide and only
// reported.
func TestReplicasDrift(t *testing.T) {
	t.Run("owned: restored and recorded", func(t *testing.T) {
		obs := through("alerter")
		obs["ingestor"] = workload("StatefulSet", 5, 3).Set("metadata.generation", 2).Set("status.observedGeneration", 2)
		rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: obs})
		rsp.Want("ingestor", "spec.replicas", 3)
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonDrifted, "spec.replicas", "5", "restoring 3")
		rsp.Want("", "status.drift", []any{map[string]any{"resource": "StatefulSet adx-mon/ingestor", "field": "spec.replicas", "found": "5", "restored": "3", "generation": 2}})
		rsp.Want("", "status.ingestor.replicas", 5)

		// The next reconcile sees the fix; the record stays, and the
		// condition returns to Installed: no flapping.
		x := complete()
		x.Status.Drift = []v1alpha1.Drift{{Resource: "StatefulSet adx-mon/ingestor", Field: "spec.replicas", Found: "5", Restored: "3", Generation: 2}}
		obs["ingestor"] = workload("StatefulSet", 3, 3).Set("metadata.generation", 3).Set("status.observedGeneration", 3)
		rsp = ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonInstalled)
		rsp.Want("", "status.drift", []any{map[string]any{"resource": "StatefulSet adx-mon/ingestor", "field": "spec.replicas", "found": "5", "restored": "3", "generation": 2}})
	})
	t.Run("not owned: left alone and reported", func(t *testing.T) {
		x := complete()
		x.Spec.Ingestor.Replicas = nil
		obs := through("alerter")
		obs["ingestor"] = workload("StatefulSet", 5, 5)
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
		rsp.Want("ingestor", "spec.replicas", nil)
		rsp.Want("", "status.ingestor.replicas", 5)
		rsp.Want("", "status.ingestor.replicasOwner", "Cluster")
		rsp.Want("", "status.drift", nil)
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonInstalled)
	})
	t.Run("an image changed by hand", func(t *testing.T) {
		obs := through("alerter")
		obs["alerter"] = workload("Deployment", 1, 1).Set("spec.template.spec.containers", []any{map[string]any{"name": "alerter", "image": "evil/alerter:1"}})
		rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: obs})
		rsp.WantCondition(v1alpha1.ConditionAlerterReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonDrifted, "evil/alerter:1", "ghcr.io/azure/adx-mon/alerter:v1.0.0")
	})
}

// TestSubsets: each of the seed's deployment modes composes only its part.
func TestSubsets(t *testing.T) {
	t.Run("collector only, the seed's minimal example", func(t *testing.T) {
		x := xr(v1alpha1.ADXMonSpec{Collector: &v1alpha1.Collector{}})
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: map[string]*ct.Resource{"namespace": namespace()},
			Required: map[string][]runtime.Object{"ingestor-service": {}}})
		// The DaemonSet follows once its RBAC and configuration exist.
		rsp.WantNames(names([]string{"namespace"}, collectorRBAC)...)
		rsp.WantCondition(v1alpha1.ConditionADXReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonNotRequested)
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonNotRequested)
		rsp.WantCondition(v1alpha1.ConditionCollectorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonIngestorMissing, "https://ingestor.adx-mon.svc.cluster.local", "spec.collector.ingestorEndpoint")
		rsp.Want("", "status.collector.endpoint", "https://ingestor.adx-mon.svc.cluster.local")
		cfg := config(rsp)
		if !strings.Contains(cfg, `endpoint = "https://ingestor.adx-mon.svc.cluster.local"`) || !strings.Contains(cfg, "insecure-skip-verify = true") {
			t.Errorf("collector config:\n%s", cfg)
		}
	})
	t.Run("collector only, another stack's ingestor answers", func(t *testing.T) {
		x := xr(v1alpha1.ADXMonSpec{Collector: &v1alpha1.Collector{}})
		obs := map[string]*ct.Resource{"namespace": namespace(), "collector": workload("DaemonSet", 2, 2)}
		rbacOf("collector", obs)
		obs["collector-config"] = exists("ConfigMap")
		svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "ingestor", Namespace: "adx-mon"}}
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs, Required: map[string][]runtime.Object{"ingestor-service": {svc}}})
		rsp.WantCondition(v1alpha1.ConditionCollectorReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonInstalled)
		rsp.Want("", "status.phase", PhaseInstalled)
	})
	t.Run("collector sending to a remote ingestor with a token", func(t *testing.T) {
		x := xr(v1alpha1.ADXMonSpec{Collector: &v1alpha1.Collector{
			IngestorEndpoint: "https://ingestor.central.example.com",
			IngestorAuth:     &v1alpha1.IngestorAuth{Type: "token", TokenSecretRef: &v1alpha1.SecretKeySelector{Name: "ingestor-auth", Key: "token"}},
		}})
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: map[string]*ct.Resource{"namespace": namespace()}})
		cfg := config(rsp)
		if !strings.Contains(cfg, `endpoint = "https://ingestor.central.example.com"`) || !strings.Contains(cfg, "insecure-skip-verify = false") {
			t.Errorf("collector config:\n%s", cfg)
		}
		if rsp.Condition(v1alpha1.ConditionCollectorReady).GetReason() == ReasonIngestorMissing {
			t.Error("an explicit endpoint is not checked for an in-cluster Service")
		}
	})
	t.Run("collectors verifying the ingestor with the platform's CA", func(t *testing.T) {
		ca := &v1alpha1.ConfigMapKeySelector{Name: "ingestor-ca", Key: "ca.pem"}
		for endpoint, what := range map[string]string{
			"https://10.10.0.4": "a load balancer elsewhere",
			"":                  "their own stack's ingestor, which then serves the CA's certificate",
		} {
			x := xr(v1alpha1.ADXMonSpec{Collector: &v1alpha1.Collector{IngestorEndpoint: endpoint, IngestorCA: ca,
				IngestorAuth: &v1alpha1.IngestorAuth{Type: "token", TokenSecretRef: &v1alpha1.SecretKeySelector{Name: "ingestor-auth", Key: "token"}}}})
			obs := map[string]*ct.Resource{"namespace": namespace()}
			rbacOf("collector", obs)
			obs["collector-config"] = exists("ConfigMap")
			rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs, Required: map[string][]runtime.Object{"ingestor-service": {}}})
			if cfg := config(rsp); !strings.Contains(cfg, "insecure-skip-verify = false") {
				t.Errorf("%s: collectors must verify:\n%s", what, cfg)
			}
			c := rsp.Value("collector", "spec.template.spec.containers.0").(map[string]any)
			if env := fmt.Sprint(c["env"]); !strings.Contains(env, "map[name:SSL_CERT_DIR value:/etc/adx-mon/ingestor-ca]") {
				t.Errorf("%s: env %s, want SSL_CERT_DIR at the CA's mount", what, env)
			}
			if m := fmt.Sprint(c["volumeMounts"]); !strings.Contains(m, "map[mountPath:/etc/adx-mon/ingestor-ca name:ingestor-ca readOnly:true]") || !strings.Contains(m, "mountPath:/etc/ssl/certs") {
				t.Errorf("%s: mounts %s, want the CA besides the node's bundle", what, m)
			}
			var caVolume any
			for _, v := range rsp.Value("collector", "spec.template.spec.volumes").([]any) {
				if v.(map[string]any)["name"] == "ingestor-ca" {
					caVolume = v.(map[string]any)["configMap"]
				}
			}
			if got := fmt.Sprint(caVolume); got != "map[items:[map[key:ca.pem path:ca.crt]] name:ingestor-ca]" {
				t.Errorf("%s: volume ingestor-ca's ConfigMap %s, want its key as ca.crt", what, got)
			}
		}
	})
	t.Run("collector sending to its own stack's ingestor by name", func(t *testing.T) {
		// adx-mon's complete example names the in-cluster ingestor; it
		// serves adx-mon's self-signed certificate as when unnamed.
		// own: skips verification of the self-signed certificate;
		// other: verifies; refused: cannot reach an ingestor's Service.
		const own, other, refused = "own", "other", "refused"
		for endpoint, want := range map[string]string{
			"https://ingestor.adx-mon.svc.cluster.local":        own,
			"https://INGESTOR.adx-mon.svc.cluster.local.:443/":  own,
			"https://ingestor.adx-mon.svc":                      other,
			"https://ingestor.adx-mon":                          other,
			"https://ingestor.other.svc.cluster.local":          other,
			"https://ingestor.adx-mon.svc.cluster.local:8443":   refused,
			"http://ingestor.adx-mon.svc.cluster.local":         refused,
			"http://ingestor.monitoring.svc.cluster.local:8080": refused,
			"https://ingestor.adx-mon.svc.cluster.local/x":      other,
			"https://ingestor.adx-mon.svc.cluster.local.evil":   other,
			"http://collector-proxy.example.com:8080":           other,
		} {
			x := xr(v1alpha1.ADXMonSpec{Collector: &v1alpha1.Collector{IngestorEndpoint: endpoint}})
			rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: map[string]*ct.Resource{"namespace": namespace()}, Required: map[string][]runtime.Object{"ingestor-service": {}}})
			if want == refused {
				if rsp.Has(string(NameCollectorConfig)) || rsp.Has(string(NameCollector)) {
					t.Errorf("%s: composed the collectors", endpoint)
				}
				rsp.WantCondition(v1alpha1.ConditionCollectorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonEndpointInvalid, "https://ingestor.", ".svc.cluster.local")
				continue
			}
			cfg := config(rsp)
			if got := strings.Contains(cfg, "insecure-skip-verify = true"); got != (want == own) {
				t.Errorf("%s: skips verification %t, want %s:\n%s", endpoint, got, want, cfg)
			}
		}
	})
	t.Run("the seed's collector endpoint beside its own ingestor", func(t *testing.T) {
		// adx-mon's complete example: its ingestor lands in spec.namespace
		// (adx-mon), its collectors are pointed at namespace monitoring.
		x := complete()
		x.Spec.Collector.IngestorEndpoint = "https://ingestor.monitoring.svc.cluster.local"
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: through("ingestor")})
		rsp.WantCondition(v1alpha1.ConditionCollectorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonEndpointInvalid,
			"names the ingestor of namespace monitoring, but this ADXMon runs its ingestor in namespace adx-mon (spec.namespace): leave ingestorEndpoint out to send to it (https://ingestor.adx-mon.svc.cluster.local)")
	})
	t.Run("ingestor only", func(t *testing.T) {
		x := complete()
		x.Spec.Collector, x.Spec.Alerter = nil, nil
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: through("ingestor")})
		rsp.WantNames(names([]string{"namespace", "adx-prodmetrics", "ingestor"}, ingestorRBAC)...)
		rsp.Want("", "status.phase", PhaseInstalled)
		rsp.WantCondition(v1alpha1.ConditionCollectorReady, fnv1.Status_STATUS_CONDITION_TRUE, ReasonNotRequested)
	})
}

// TestAutoProvision: only subscription, resource group and region; the
// rest is derived, deterministically.
func TestAutoProvision(t *testing.T) {
	x := xr(v1alpha1.ADXMonSpec{
		ADX:      &v1alpha1.ADXMonADX{Clusters: []v1alpha1.ADXMonCluster{{Provision: &v1alpha1.ADXMonProvision{SubscriptionID: "00000000-0000-0000-0000-000000000000", ResourceGroup: "adx-monitor-prod", Region: "eastus2"}}}},
		Ingestor: &v1alpha1.Ingestor{Replicas: ptr.To[int32](2)},
	})
	x.Name = "auto-provision-adx-monitor"
	rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: map[string]*ct.Resource{"namespace": namespace()}})
	var adx string
	for _, n := range rsp.Names() {
		if strings.HasPrefix(n, "adx-") {
			adx = n
		}
	}
	name, _ := rsp.Value(adx, "spec.clusterName").(string)
	if len(name) < 4 || len(name) > 22 || !strings.HasPrefix(name, "adxautoprovisi") {
		t.Errorf("generated cluster name %q: Azure wants 4-22 lowercase letters and digits, and it should read like the XR", name)
	}
	again := ct.Run(t, Composer, ct.Call{XR: x, Observed: map[string]*ct.Resource{"namespace": namespace()}})
	if n2, _ := again.Value(adx, "spec.clusterName").(string); n2 != name {
		t.Errorf("generated name %q then %q: it must be deterministic", name, n2)
	}
	rsp.Want(adx, "spec.provision", map[string]any{"subscriptionId": "00000000-0000-0000-0000-000000000000", "resourceGroup": "adx-monitor-prod", "location": "eastus2", "skuName": DefaultSku, "tier": "Standard"})
	rsp.Want(adx, "spec.databases", []any{
		map[string]any{"databaseName": "Metrics", "telemetryType": "Metrics"},
		map[string]any{"databaseName": "Logs", "telemetryType": "Logs"},
		map[string]any{"databaseName": "Traces", "telemetryType": "Traces"},
	})
	rsp.Want(adx, "spec.deletionPolicy", "Orphan")
	rsp.Want(adx, "metadata.namespace", "adx-mon")
	rsp.Want(adx, "spec.provision.databasePrincipals", nil)

	// With the identity's tenant, the identity administers the databases.
	x.Spec.ADX.Clusters[0].Connection = &v1alpha1.ADXConnection{ClientID: "11111111-1111-1111-1111-111111111111", TenantID: "33333333-3333-3333-3333-333333333333"}
	rsp = ct.Run(t, Composer, ct.Call{XR: x, Observed: map[string]*ct.Resource{"namespace": namespace()}})
	rsp.Want(adx, "spec.provision.databasePrincipals", []any{map[string]any{
		"clientId": "11111111-1111-1111-1111-111111111111", "tenantId": "33333333-3333-3333-3333-333333333333", "role": "Admin",
	}})

	// The seed's complete example names the identity in provision: with
	// its tenant (there or in connection) it administers the databases
	// too; without a tenant Azure cannot assign it, and nothing is.
	for name, tc := range map[string]struct {
		conn *v1alpha1.ADXConnection
		prov v1alpha1.ADXMonProvision
		want any
	}{
		"provision's identity and tenant": {prov: v1alpha1.ADXMonProvision{ManagedIdentityClientID: "22222222-2222-2222-2222-222222222222", TenantID: "33333333-3333-3333-3333-333333333333"},
			want: []any{map[string]any{"clientId": "22222222-2222-2222-2222-222222222222", "tenantId": "33333333-3333-3333-3333-333333333333", "role": "Admin"}}},
		"provision's identity, connection's tenant": {conn: &v1alpha1.ADXConnection{TenantID: "33333333-3333-3333-3333-333333333333"}, prov: v1alpha1.ADXMonProvision{ManagedIdentityClientID: "22222222-2222-2222-2222-222222222222"},
			want: []any{map[string]any{"clientId": "22222222-2222-2222-2222-222222222222", "tenantId": "33333333-3333-3333-3333-333333333333", "role": "Admin"}}},
		"connection's identity wins": {conn: &v1alpha1.ADXConnection{ClientID: "11111111-1111-1111-1111-111111111111"}, prov: v1alpha1.ADXMonProvision{ManagedIdentityClientID: "22222222-2222-2222-2222-222222222222", TenantID: "33333333-3333-3333-3333-333333333333"},
			want: []any{map[string]any{"clientId": "11111111-1111-1111-1111-111111111111", "tenantId": "33333333-3333-3333-3333-333333333333", "role": "Admin"}}},
		// The seed's complete example: the ADXCluster takes the tenant
		// from the policy, or refuses (TestPrincipalTenantFromPolicy).
		"an identity without a tenant": {prov: v1alpha1.ADXMonProvision{ManagedIdentityClientID: "22222222-2222-2222-2222-222222222222"},
			want: []any{map[string]any{"clientId": "22222222-2222-2222-2222-222222222222", "role": "Admin"}}},
	} {
		t.Run(name, func(t *testing.T) {
			y := x.DeepCopy()
			y.Spec.ADX.Clusters[0].Connection = tc.conn
			prov := tc.prov
			prov.SubscriptionID, prov.ResourceGroup, prov.Region = "00000000-0000-0000-0000-000000000000", "adx-monitor-prod", "eastus2"
			y.Spec.ADX.Clusters[0].Provision = &prov
			rsp := ct.Run(t, Composer, ct.Call{XR: y, Observed: map[string]*ct.Resource{"namespace": namespace()}})
			rsp.Want(adx, "spec.provision.databasePrincipals", tc.want)
		})
	}

	// User-assigned identities go to the cluster, for its policy to allow.
	y := x.DeepCopy()
	ids := []string{"/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ingest"}
	y.Spec.ADX.Clusters[0].Provision.UserAssignedIdentities = ids
	rsp = ct.Run(t, Composer, ct.Call{XR: y, Observed: map[string]*ct.Resource{"namespace": namespace()}})
	rsp.Want(adx, "spec.provision.userAssignedIdentities", ids)

	// The function input's SKU.
	in := &v1beta1.Input{ADXMon: &v1beta1.ADXMon{DefaultSku: "Standard_E8ads_v5"}}
	rsp = ct.Run(t, Composer, ct.Call{XR: x, Input: in, Observed: map[string]*ct.Resource{"namespace": namespace()}})
	rsp.Want(adx, "spec.provision.skuName", "Standard_E8ads_v5")
}

// TestNamespaceOwnership: a namespace that existed before is used, never
// composed, so deleting the ADXMon cannot delete it.
func TestNamespaceOwnership(t *testing.T) {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "adx-mon"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Required: map[string][]runtime.Object{"namespace": {ns}}})
	if rsp.Has("namespace") {
		t.Error("an existing namespace was composed: deleting the ADXMon would delete it")
	}
	if !rsp.Has("adx-prodmetrics") {
		t.Errorf("the stack waits for a namespace that exists: %v", rsp.Names())
	}
}

// TestFailures: an ADXCluster that cannot proceed fails the stack with
// its message.
func TestFailures(t *testing.T) {
	obs := through("namespace")
	obs["adx-prodmetrics"] = adxCluster("").Failing("cannot create cluster: 403 AuthorizationFailed on Microsoft.Kusto/clusters/write")
	rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: obs})
	rsp.WantCondition(v1alpha1.ConditionADXReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonFailed, "AuthorizationFailed", "complete-prodmetrics")
	rsp.Want("", "status.phase", PhaseFailed)
	rsp.WantEvent(fnv1.Severity_SEVERITY_WARNING, ReasonFailed)

	// The namespace's policy refusing what the cluster asks is a failure
	// the stack names, not a wait.
	obs["adx-prodmetrics"] = adxCluster("").Set("status.conditions", []any{map[string]any{
		"type": "adxcluster.fleetplane.io", "status": "False", "reason": "NotGranted",
		"message": "the policy does not let clusters in subscription 0 carry the user-assigned identities /x",
	}})
	rsp = ct.Run(t, Composer, ct.Call{XR: complete(), Observed: obs})
	rsp.WantCondition(v1alpha1.ConditionADXReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonFailed, "user-assigned identities", "complete-prodmetrics")

	// So is a cluster over its subscription's quota.
	obs["adx-prodmetrics"] = adxCluster("").Set("status.conditions", []any{map[string]any{
		"type": "adxcluster.fleetplane.io", "status": "False", "reason": "QuotaExceeded",
		"message": "SKU Standard_L32as_v3 is not one the policy allows here (spec.azure.provisioning[subscriptionId=0].quota.skus)",
	}})
	rsp = ct.Run(t, Composer, ct.Call{XR: complete(), Observed: obs})
	rsp.WantCondition(v1alpha1.ConditionADXReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonFailed, "quota.skus", "complete-prodmetrics")
}

// TestDeterministic: the same request composes byte-identical output.
func TestDeterministic(t *testing.T) {
	a := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: through("alerter")})
	b := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: through("alerter")})
	ja, _ := a.GetDesired().GetResources()["collector-config"].GetResource().MarshalJSON()
	jb, _ := b.GetDesired().GetResources()["collector-config"].GetResource().MarshalJSON()
	if string(ja) != string(jb) {
		t.Error("two renders differ")
	}
}

func TestTOMLQuoting(t *testing.T) {
	got := tomlString("a\"b\\c\nd")
	if got != `"a\"b\\c\u000Ad"` {
		t.Errorf("tomlString = %s", got)
	}
}

func config(rsp ct.Response) string {
	data, _ := rsp.Value("collector-config", "data").(map[string]any)
	s, _ := data["config.toml"].(string)
	return s
}

// TestShippedRoles: every ClusterRole an ADXMon binds ships in
// package/rbac/adxmon-roles.yaml, and Crossplane may bind exactly those;
// none of them lets a component change pods or namespaces beyond what
// adx-mon's code does (the ingestor patches its own pods, in its
// namespace only); Crossplane itself may not update or delete a
// namespace.
func TestShippedRoles(t *testing.T) {
	read := func(f string) []map[string]any {
		b, err := os.ReadFile(filepath.Join("..", "..", "package", "rbac", f))
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for doc := range strings.SplitSeq(string(b), "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, m)
		}
		return out
	}
	shipped := map[string][]any{}
	for _, r := range read("adxmon-roles.yaml") {
		shipped[r["metadata"].(map[string]any)["name"].(string)] = r["rules"].([]any)
	}
	var bound []string
	for c, roles := range Roles {
		for _, name := range []string{roles.Cluster, roles.Namespaced} {
			if name == "" {
				continue
			}
			bound = append(bound, name)
			rules, ok := shipped[name]
			if !ok {
				t.Errorf("%s is bound to ClusterRole %s, which adxmon-roles.yaml does not ship", c, name)
			}
			for _, r := range rules {
				rule := r.(map[string]any)
				res, _ := rule["resources"].([]any)
				verbs := fmt.Sprint(rule["verbs"])
				for _, x := range res {
					if (x == "namespaces" || (x == "pods" && name != RoleIngestorPods)) && (strings.Contains(verbs, "update") || strings.Contains(verbs, "patch")) {
						t.Errorf("%s may change %s: %v", name, x, verbs)
					}
				}
			}
		}
	}
	slices.Sort(bound)
	var bindable []string
	for _, r := range read("crossplane-adxmon.yaml")[0]["rules"].([]any) {
		rule := r.(map[string]any)
		if fmt.Sprint(rule["verbs"]) == "[bind]" {
			for _, n := range rule["resourceNames"].([]any) {
				bindable = append(bindable, n.(string))
			}
		}
		res, _ := rule["resources"].([]any)
		if slices.Contains(res, any("clusterroles")) && fmt.Sprint(rule["verbs"]) != "[bind]" {
			t.Errorf("Crossplane holds more than bind on ClusterRoles: %v", rule)
		}
		// The stack's namespace leaves with the ADXMon through Kubernetes'
		// garbage collector, never through Crossplane.
		if slices.Contains(res, any("namespaces")) && (slices.Contains(rule["verbs"].([]any), any("delete")) || slices.Contains(rule["verbs"].([]any), any("update"))) {
			t.Errorf("Crossplane may update or delete namespaces: %v", rule)
		}
	}
	slices.Sort(bindable)
	if !slices.Equal(bound, bindable) {
		t.Errorf("Crossplane may bind %v, ADXMon binds %v", bindable, bound)
	}
}

// TestImages: a stack that names no image runs adx-mon's release, never
// :latest; the input pins images (by digest) for every stack; a stack's
// own image wins.
func TestImages(t *testing.T) {
	stack := complete()
	stack.Spec.Ingestor.Image, stack.Spec.Alerter.Image = "", ""
	image := func(rsp ct.Response, name string) string {
		c := rsp.Value(name, "spec.template.spec.containers").([]any)[0].(map[string]any)
		return c["image"].(string)
	}
	rsp := ct.Run(t, Composer, ct.Call{XR: stack, Observed: through("alerter")})
	if got := image(rsp, "ingestor"); got != "ghcr.io/azure/adx-mon/ingestor:v0.3.0" {
		t.Errorf("default ingestor image %s", got)
	}
	pinned := "ghcr.io/azure/adx-mon/ingestor@sha256:" + strings.Repeat("a", 64)
	in := &v1beta1.Input{ADXMon: &v1beta1.ADXMon{Images: &v1beta1.ADXMonImages{Ingestor: pinned}}}
	rsp = ct.Run(t, Composer, ct.Call{XR: stack, Observed: through("alerter"), Input: in})
	if got := image(rsp, "ingestor"); got != pinned {
		t.Errorf("pinned ingestor image %s", got)
	}
	if got := image(rsp, "alerter"); got != "ghcr.io/azure/adx-mon/alerter:v0.3.0" {
		t.Errorf("alerter image %s", got)
	}
	if got := image(rsp, "collector"); got != "ghcr.io/azure/adx-mon/collector:v1.0.0" {
		t.Errorf("the stack's own collector image %s", got)
	}
}

// TestIngestorExposure: the ingestor's Service stays in the cluster unless
// spec.ingestor.service exposes it, for collectors of other clusters; an
// exposure that cannot be applied as asked leaves the Service as it is.
func TestIngestorExposure(t *testing.T) {
	t.Run("in this cluster by default", func(t *testing.T) {
		rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: through("adx")})
		rsp.Want("ingestor-service", "spec.type", "ClusterIP")
		rsp.Want("ingestor-service", "metadata.annotations", nil)
	})
	x := complete()
	x.Spec.Ingestor.Service = &v1alpha1.IngestorService{
		Type:                     corev1.ServiceTypeLoadBalancer,
		Annotations:              map[string]v1alpha1.AnnotationValue{"service.beta.kubernetes.io/azure-load-balancer-internal": "true"},
		LoadBalancerSourceRanges: []string{"10.2.0.0/16", "10.1.0.0/16"},
	}
	t.Run("an internal load balancer", func(t *testing.T) {
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: through("adx")})
		rsp.Want("ingestor-service", "spec.type", "LoadBalancer")
		rsp.Want("ingestor-service", "metadata.annotations", map[string]any{"service.beta.kubernetes.io/azure-load-balancer-internal": "true"})
		rsp.Want("ingestor-service", "spec.loadBalancerSourceRanges", []any{"10.1.0.0/16", "10.2.0.0/16"})
		rsp.Want("ingestor-service", "spec.ports", []any{map[string]any{"port": 443, "targetPort": 9090}})
	})
	t.Run("the ingestor serves the platform's certificate", func(t *testing.T) {
		args := func(rsp ct.Response) string {
			return fmt.Sprint(rsp.Value("ingestor", "spec.template.spec.containers.0.args"))
		}
		rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: through("ingestor")})
		if a := args(rsp); strings.Contains(a, "--ca-cert") || strings.Contains(a, "--key") {
			t.Errorf("without tls the ingestor makes its own certificate, args %s", a)
		}
		withTLS := x.DeepCopy()
		withTLS.Spec.Ingestor.TLS = &v1alpha1.IngestorTLS{SecretName: "ingestor-tls"}
		rsp = ct.Run(t, Composer, ct.Call{XR: withTLS, Observed: through("ingestor")})
		if a := args(rsp); !strings.Contains(a, "--ca-cert=/etc/adx-mon/tls/tls.crt --key=/etc/adx-mon/tls/tls.key") || !strings.Contains(a, "--insecure-skip-verify") {
			t.Errorf("args %s: want the mounted certificate and key, and peers still unverified", a)
		}
		rsp.Want("ingestor", "spec.template.spec.volumes.2", map[string]any{"name": "tls", "secret": map[string]any{
			"secretName": "ingestor-tls",
			"items":      []any{map[string]any{"key": "tls.crt", "path": "tls.crt"}, map[string]any{"key": "tls.key", "path": "tls.key"}},
		}})
		rsp.Want("ingestor", "spec.template.spec.containers.0.volumeMounts.3", map[string]any{"name": "tls", "mountPath": "/etc/adx-mon/tls", "readOnly": true})
	})
	t.Run("the load balancer's address in status, once the cloud gives one", func(t *testing.T) {
		for _, tc := range []struct {
			ingress any
			want    string
		}{
			{nil, ""},
			{[]any{map[string]any{"ip": "10.10.0.4"}}, "https://10.10.0.4"},
			{[]any{map[string]any{"ip": "fd00::4"}}, "https://[fd00::4]"},
			{[]any{map[string]any{"hostname": "ingestor.example.com"}}, "https://ingestor.example.com"},
			{[]any{map[string]any{"ip": "10.10.0.4/evil"}}, ""},
			{[]any{map[string]any{"hostname": "evil.com/path?x"}}, ""},
			{[]any{map[string]any{"hostname": strings.Repeat("a", 254)}}, ""},
		} {
			obs := through("ingestor")
			svc := exists("Service")
			if tc.ingress != nil {
				svc = svc.Set("status.loadBalancer.ingress", tc.ingress)
			}
			obs["ingestor-service"] = svc
			rsp := ct.Run(t, Composer, ct.Call{XR: x, Observed: obs})
			if got, _ := rsp.Value("", "status.ingestor.externalEndpoint").(string); got != tc.want {
				t.Errorf("ingress %v: externalEndpoint %q, want %q", tc.ingress, got, tc.want)
			}
		}
		// A ClusterIP Service has no address beyond the cluster, whatever
		// its status says.
		obs := through("ingestor")
		obs["ingestor-service"] = exists("Service").Set("status.loadBalancer.ingress", []any{map[string]any{"ip": "10.10.0.4"}})
		rsp := ct.Run(t, Composer, ct.Call{XR: complete(), Observed: obs})
		rsp.Want("", "status.ingestor.externalEndpoint", nil)
	})
	t.Run("an annotation key Kubernetes refuses: the Service left as it is", func(t *testing.T) {
		bad := x.DeepCopy()
		bad.Spec.Ingestor.Service.Annotations["not a key!"] = "x"
		obs := through("ingestor")
		obs["ingestor-service"] = exists("Service").Set("spec.type", "LoadBalancer").Set("metadata.annotations", map[string]any{"service.beta.kubernetes.io/azure-load-balancer-internal": "true"})
		rsp := ct.Run(t, Composer, ct.Call{XR: bad, Observed: obs})
		rsp.Want("ingestor-service", "spec.type", "LoadBalancer")
		rsp.Want("ingestor-service", "metadata.annotations", map[string]any{"service.beta.kubernetes.io/azure-load-balancer-internal": "true"})
		rsp.WantCondition(v1alpha1.ConditionIngestorReady, fnv1.Status_STATUS_CONDITION_FALSE, ReasonFailed, `key "not a key!"`, "left as it is")
	})
}
