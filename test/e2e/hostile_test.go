package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/support"
)

// rawHeartbeat is a heartbeat row as anyone with ingest rights on a hub's
// heartbeat table can write it, whatever its schema.
type rawHeartbeat struct{ endpoint, schema string }

func (r rawHeartbeat) Record() (string, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write([]string{time.Now().UTC().Format(time.RFC3339Nano), r.endpoint, r.schema, "{}"}); err != nil {
		return "", err
	}
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// hostileKusto answers like a Kusto cluster whose .show databases lists
// two million databases (22 MiB), streamed.
func hostileKusto(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/rest/auth/metadata" {
			fmt.Fprint(w, `{"AzureAD":{"LoginEndpoint":"https://login.microsoftonline.com","KustoServiceResourceId":"https://kusto.kusto.windows.net"}}`)
			return
		}
		bw := bufio.NewWriter(w)
		fmt.Fprint(bw, `{"Tables":[{"TableName":"Table_0","Columns":[{"ColumnName":"DatabaseName","DataType":"String","ColumnType":"string"}],"Rows":[`)
		for i := range 2_000_000 {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			fmt.Fprintf(bw, `["db%07d"]`, i)
		}
		fmt.Fprint(bw, `]}]}`)
		_ = bw.Flush()
	}))
	// Where the provider's pod reaches it, as every Kusto server here.
	l, err := net.Listen("tcp", net.JoinHostPort(env.PodHost(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestHostileTenant: while one tenant's fleet federates, its experiment
// runs and its Placement delivers, another applies inputs made to exhaust what every
// tenant shares: a template that doubles a variable sixty times,
// partitions whose cluster answers 22 MiB to .show databases, one
// pointed at the cloud metadata address, and an 8 MiB heartbeat row of
// empty databases, and one with credentials in its endpoint, written
// straight into the first tenant's hub, and ingestor pods that dribble
// their metrics to an Autoscaler. The function and the provider stay up,
// each hostile input is refused with its reason, no secret shows, the
// experiment completes, the copy arrives, and the first tenant's new
// table reaches its hub as fast as before.
func TestHostileTenant(t *testing.T) {
	calm := support.NamespaceNamed(t, env.Kube, "hostile-victim")
	hostile := support.NamespaceNamed(t, env.Kube, "hostile-attacker")
	hub := kusto(t, "FleetDiscovery", "Metrics")
	part := kusto(t, "Metrics")
	support.KustoExec(t, part, "Metrics", ".create table ['cpu'] (['v']:real)")
	apply(t, xr(t, hubXR(calm, "hub", hub.URL)), xr(t, partitionXR(calm, "partition", part.URL, hub.URL)))
	eventually(t, 3*time.Minute, "the calm tenant's fleet federated", func() (bool, string) {
		_, ok := hub.Functions("Metrics")["cpu"]
		return ok, "no function cpu yet"
	})
	newTable := func(name string) time.Duration {
		t.Helper()
		start := time.Now()
		support.KustoExec(t, part, "Metrics", ".create table ['"+name+"'] (['v']:real)")
		var seen []string
		eventually(t, time.Minute, "function "+name+" on the hub", func() (bool, string) {
			_, ok := hub.Functions("Metrics")[name]
			if !ok {
				seen = appendNew(seen, federationState(t, calm))
			}
			return ok, "not yet"
		})
		took := time.Since(start)
		t.Logf("while %s waited (%s) the calm Federation said: %s", name, took.Round(100*time.Millisecond), strings.Join(seen, " | "))
		return took
	}
	before := newTable("before")

	// The calm tenant's experiment runs, and its Placement delivers, while
	// the hostile inputs arrive.
	wec, err := env.StartWEC(t.Context(), "hostile-victim", map[string]string{"victim": "yes"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wec.Stop)
	placed := xr(t, fmt.Sprintf(`
apiVersion: placement.fleetplane.io/v1alpha1
kind: Placement
metadata: {name: settings, namespace: %s}
spec:
  objects: [{apiVersion: v1, kind: ConfigMap, names: [settings]}]
  clusters: {matchLabels: {victim: "yes"}}
`, calm))
	apply(t, xr(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %s}
data: {tier: gold}
`, calm)), placed)
	// Before the cluster stops (cleanups run last first): the copy goes
	// while provider-kubernetes can still reach it.
	t.Cleanup(func() { _ = env.Kube.Delete(context.Background(), placed) })
	applyComponents(t)
	workflowTemplate(t, "hostile-calm-validation", "Succeeded")
	experimentStart := time.Now()
	apply(t, xr(t, fmt.Sprintf(`
apiVersion: experiments.fleetplane.io/v1alpha1
kind: Experiment
metadata: {name: steady, namespace: %s}
spec:
  targets:
  - name: hub
    cluster: {type: hub}
    components: [{app: gateway-demo, params: {route.hostname: steady.example.com}}]
  workflow: {template: hostile-calm-validation, completion: {mode: workflow}}
`, calm)))

	// The hostile tenant's inputs. A cluster of the inventory it may
	// place on (no cluster answers behind it: templates expand in the
	// function before anything is delivered), and a ConfigMap whose
	// template doubles a variable sixty times.
	nowhere := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
		"metadata": map[string]any{"name": "hostile-nowhere", "labels": map[string]any{"placement.fleetplane.io/inventory": "true", "hostile": "yes"}},
		"spec":     map[string]any{"credentials": map[string]any{"source": "Secret", "secretRef": map[string]any{"namespace": "crossplane-system", "name": "nowhere", "key": "kubeconfig"}}},
	}}
	apply(t, nowhere)
	t.Cleanup(func() { _ = env.Kube.Delete(context.Background(), nowhere) })
	apply(t,
		xr(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: doubling, namespace: hostile-attacker, annotations: {control.kubestellar.io/expand-templates: "true"}}
data: {x: '{{$x := .clusterName}}`+strings.Repeat(`{{$x = print $x $x}}`, 60)+`{{len $x}}'}
`),
		xr(t, `
apiVersion: placement.fleetplane.io/v1alpha1
kind: Placement
metadata: {name: doubling, namespace: hostile-attacker}
spec:
  objects: [{apiVersion: v1, kind: ConfigMap, names: [doubling]}]
  clusters: {matchLabels: {hostile: "yes"}}
`))
	// Ingestor pods that dribble their metrics, measured by an Autoscaler:
	// real pods on the control plane's nodes, of an image that answers a
	// scrape a byte every 100 ms and never ends (hack/teamapp dribble).
	dribbler, _, err := env.Cluster.PushCommand(t.Context(), support.Root(), "./hack/teamapp", "/teamapp", "hostile/dribbler", "1")
	if err != nil {
		t.Fatal(err)
	}
	apply(t,
		xr(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: slow, namespace: hostile-attacker}
spec:
  replicas: 4
  podManagementPolicy: Parallel
  serviceName: slow
  selector: {matchLabels: {app: slow}}
  template:
    metadata: {labels: {app: slow}}
    spec: {containers: [{name: ingestor, image: `+dribbler+`, command: [/teamapp, dribble], ports: [{name: metrics, containerPort: 9091}]}]}
`),
		xr(t, `
apiVersion: v1
kind: Service
metadata: {name: slow, namespace: hostile-attacker}
spec: {selector: {app: slow}, ports: [{port: 9091}]}
`),
		xr(t, `
apiVersion: scaling.m.fleetplane.io/v1alpha1
kind: Autoscaler
metadata: {name: slow, namespace: hostile-attacker}
spec:
  providerConfigRef: {kind: ClusterProviderConfig, name: default}
  forProvider:
    schedule: "* * * * *"
    ingestor: {statefulSet: slow, service: slow}
    metrics: [{type: QueueLength, scaleUpThreshold: 1000, scaleDownThreshold: 100, weight: 1}]
    min: 1
    max: 5
`))
	evil := hostileKusto(t)
	apply(t,
		xr(t, partitionXR(hostile, "huge-answers", evil.URL, hub.URL)),
		xr(t, partitionXR(hostile, "metadata", "http://169.254.169.254", hub.URL)),
	)
	support.IngestHeartbeat(t, hub, "FleetDiscovery", rawHeartbeat{
		endpoint: "https://huge.kusto.windows.net",
		schema:   "[" + strings.Repeat("{},", (8<<20-10)/3) + "{}]",
	})
	support.IngestHeartbeat(t, hub, "FleetDiscovery", rawHeartbeat{endpoint: "https://user:s3cret@evil.kusto.windows.net", schema: "[]"})
	heartbeatRefused := func(name, want string) {
		t.Helper()
		eventually(t, 2*time.Minute, name+" refused: "+want, func() (bool, string) {
			for _, hb := range listIn(t, "kusto.m.fleetplane.io/v1alpha1", "Heartbeat", hostile) {
				if hb.GetLabels()["crossplane.io/composite"] != name {
					continue
				}
				s, _, msg := condition(&hb, "Synced")
				return s == "False" && strings.Contains(msg, want), s + ": " + msg
			}
			return false, "no Heartbeat"
		})
	}
	heartbeatRefused("huge-answers", "the answer is larger than fleetplane reads")
	heartbeatRefused("metadata", "credentials None may not connect there")
	eventually(t, time.Minute, "the hostile row refused in the hub's status, without its secret", func() (bool, string) {
		feds := listIn(t, "kusto.m.fleetplane.io/v1alpha1", "Federation", calm)
		if len(feds) != 1 {
			return false, fmt.Sprintf("%d Federations", len(feds))
		}
		warnings, _, _ := unstructured.NestedSlice(feds[0].Object, "status", "atProvider", "warnings")
		s := fmt.Sprint(warnings)
		if strings.Contains(s, "s3cret") {
			t.Fatalf("the Federation's status shows the secret: %s", s)
		}
		return strings.Contains(s, "lists more than 1000 databases") && strings.Contains(s, "REDACTED"), s
	})

	eventually(t, 2*time.Minute, "the doubling template stopped at its Placement's budget", func() (bool, string) {
		s, r, msg := condition(get(t, placementAPI, "Placement", hostile, "doubling"), "Delivered")
		return s == "False" && r == "ExpansionFailed" && strings.Contains(msg, "more than their budget"), r + ": " + msg
	})
	eventually(t, 2*time.Minute, "the dribbling pods cost their evaluation its deadline, once", func() (bool, string) {
		a := get(t, "scaling.m.fleetplane.io/v1alpha1", "Autoscaler", hostile, "slow")
		ms, _, _ := unstructured.NestedSlice(a.Object, "status", "atProvider", "metrics")
		s := fmt.Sprint(ms)
		return strings.Contains(s, "4 of 4 pods"), s
	})
	eventually(t, 3*time.Minute, "the calm tenant's experiment Complete", func() (bool, string) {
		p, msg := phaseOf(get(t, experimentAPI, "Experiment", calm, "steady"))
		return p == "Complete", p + ": " + msg
	})
	// When each finished, from their own status, not from when this test
	// looked.
	x := get(t, experimentAPI, "Experiment", calm, "steady")
	done, _, _ := unstructured.NestedString(x.Object, "status", "completedAt")
	completed, _ := time.Parse(time.RFC3339, done)
	eventually(t, time.Minute, "the calm tenant's ConfigMap on its cluster", func() (bool, string) {
		return getIn(wec.Kube, "v1", "ConfigMap", calm, "settings") != nil, "not there"
	})
	delivered := conditionTime(get(t, placementAPI, "Placement", calm, "settings"), "Delivered")
	t.Logf("beside the hostile inputs, the calm tenant's experiment was Complete %s after it was applied (its workflow alone runs 8 s) and its Placement delivered %s after it",
		completed.Sub(x.GetCreationTimestamp().Time).Round(time.Second), delivered.Sub(experimentStart).Round(time.Second))
	if completed.Sub(x.GetCreationTimestamp().Time) > time.Minute {
		t.Errorf("the calm tenant's experiment took %s", completed.Sub(x.GetCreationTimestamp().Time))
	}
	after := newTable("after")
	t.Logf("the calm tenant's new table reached its hub in %s before the hostile inputs, %s with them", before.Round(100*time.Millisecond), after.Round(100*time.Millisecond))
	if after > 2*before+10*time.Second {
		t.Errorf("a new table took %s with the hostile inputs, %s without", after, before)
	}
	if err := env.Alive(); err != nil {
		t.Fatal(err)
	}
}

// federationState is the conditions of the namespace's Federation, for a
// log that says why a cycle waited.
func federationState(t *testing.T, ns string) string {
	t.Helper()
	var parts []string
	for _, f := range listIn(t, "kusto.m.fleetplane.io/v1alpha1", "Federation", ns) {
		for _, typ := range []string{"Synced", "CycleScheduled"} {
			s, r, msg := condition(&f, typ)
			parts = append(parts, typ+"="+s+" "+r+" "+msg)
		}
	}
	return strings.Join(parts, "; ")
}

// appendNew appends s unless it is the last element.
func appendNew(l []string, s string) []string {
	if len(l) > 0 && l[len(l)-1] == s {
		return l
	}
	return append(l, s)
}

// listIn lists a kind's objects in a namespace.
func listIn(t *testing.T, apiVersion, kind, ns string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	if err := env.Kube.List(t.Context(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return l.Items
}
