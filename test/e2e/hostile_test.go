package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/support"
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
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	t.Cleanup(s.Close)
	return s
}

// TestHostileTenant: while one tenant's fleet federates, another applies
// inputs made to exhaust what every tenant shares: partitions whose
// cluster answers 22 MiB to .show databases, one pointed at the cloud
// metadata address, and an 8 MiB heartbeat row of empty databases, with
// credentials in its endpoint, written straight into the first tenant's
// hub. The function and the provider stay up, each hostile input is
// refused with its reason, no secret shows, and the first tenant's new
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
		eventually(t, time.Minute, "function "+name+" on the hub", func() (bool, string) {
			_, ok := hub.Functions("Metrics")[name]
			return ok, "not yet"
		})
		return time.Since(start)
	}
	before := newTable("before")

	// The hostile tenant's inputs.
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

	after := newTable("after")
	t.Logf("the calm tenant's new table reached its hub in %s before the hostile inputs, %s with them", before.Round(100*time.Millisecond), after.Round(100*time.Millisecond))
	if after > 2*before+10*time.Second {
		t.Errorf("a new table took %s with the hostile inputs, %s without", after, before)
	}
	if err := env.Alive(); err != nil {
		t.Fatal(err)
	}
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
