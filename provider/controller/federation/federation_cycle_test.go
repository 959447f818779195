package federation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetplane/fleetplane/apis"
	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/controller/fairshare"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	"github.com/fleetplane/fleetplane/provider/kusto"
	fed "github.com/fleetplane/fleetplane/provider/kusto/federation"
	"github.com/fleetplane/fleetplane/provider/kusto/heartbeat"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

func federationOf(hub string) *v1alpha1.Federation {
	return &v1alpha1.Federation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "hub"},
		Spec: v1alpha1.FederationSpec{ForProvider: v1alpha1.FederationParameters{
			Endpoint: hub, HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats", HeartbeatTTL: "1h",
			Interval: &metav1.Duration{Duration: time.Minute}, AllowInsecureEndpoints: true,
		}},
	}
}

func TestObserve(t *testing.T) {
	synced := func(ago time.Duration, errs ...string) *v1alpha1.Federation {
		f := federationOf("https://hub")
		f.Status.AtProvider.LastSyncTime = &metav1.Time{Time: now.Add(-ago)}
		f.Status.AtProvider.Errors = errs
		return f
	}
	deleting := federationOf("https://hub")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	cases := map[string]struct {
		mg        *v1alpha1.Federation
		want      managed.ExternalObservation
		available corev1.ConditionStatus
		message   string
	}{
		"deleting: the hub's functions stay": {mg: deleting, want: managed.ExternalObservation{}},
		"never synced: due": {
			mg: federationOf("https://hub"), want: managed.ExternalObservation{ResourceExists: true},
			available: corev1.ConditionFalse, message: "no federation cycle has completed yet",
		},
		"synced within the interval": {
			mg: synced(10 * time.Second), want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionTrue,
		},
		"synced an interval ago: due": {
			mg: synced(time.Minute), want: managed.ExternalObservation{ResourceExists: true},
			available: corev1.ConditionTrue,
		},
		"last cycle had errors": {
			mg: synced(10*time.Second, "command failed: boom"), want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionFalse, message: "boom",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := newExternal(nil, clock).Observe(context.Background(), tc.mg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
			c := tc.mg.GetCondition(xpv2.TypeReady)
			if tc.available != "" && (c.Status != tc.available || !strings.Contains(c.Message, tc.message)) {
				t.Errorf("Ready = %s %q, want %s mentioning %q", c.Status, c.Message, tc.available, tc.message)
			}
		})
	}
}

// hubWithHeartbeats is a hub whose heartbeat table holds one fresh row per
// partition endpoint, each with a Metrics database and a cpu table. The
// hub's clock is real: its TTL filter compares with the time it runs, so
// rows carry the real time, and the test's clock only stamps status.
func hubWithHeartbeats(t *testing.T, partitions ...string) *kustoserver.Server {
	t.Helper()
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	support.KustoExec(t, hub, "FleetDiscovery", support.HeartbeatTable)
	for _, p := range partitions {
		support.IngestHeartbeat(t, hub, "FleetDiscovery", heartbeat.Row{Timestamp: time.Now().UTC(), Endpoint: p, Schema: []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu"}}}})
	}
	return hub
}

func open(endpoint string) (hubClient, error) {
	return kusto.New(endpoint, nil, kusto.Options{Timeout: 5 * time.Second, Attempts: 1})
}

func TestUpdateRunsOneCycle(t *testing.T) {
	hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net", "https://p2.kusto.windows.net", "https://blocked.kusto.windows.net")
	mg := federationOf(hub.URL)
	mg.Spec.ForProvider.BlockedClusters = &v1alpha1.BlockedClusters{Static: []string{"https://blocked.kusto.windows.net"}}

	e := newExternal(open, clock)
	e.metrics = fleetmetrics.New()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e.metrics.Collectors()...)
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	at := mg.Status.AtProvider
	if at.PartitionCount != 2 || at.BlockedMatched != 1 || at.Functions != 1 || at.CommandsIssued == 0 || !at.LastSyncTime.Equal(&metav1.Time{Time: now}) || at.NewestHeartbeatTime == nil {
		t.Errorf("atProvider = %+v", at)
	}
	// What the cycle did is in the provider's metrics.
	s := support.Gather(t, reg)
	mine := map[string]string{"namespace": mg.Namespace, "name": mg.Name}
	for name, want := range map[string]float64{
		"fleetplane_federation_commands_total":                     float64(at.CommandsIssued),
		"fleetplane_federation_newest_heartbeat_timestamp_seconds": float64(at.NewestHeartbeatTime.Unix()),
		"fleetplane_federation_last_sync_timestamp_seconds":        float64(now.Unix()),
	} {
		if got, _ := s.Value(name, mine); int64(got) != int64(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for state, want := range map[string]float64{"federated": 2, "blocked": 1, "held_back": 0} {
		if got, ok := s.Value("fleetplane_federation_partitions", map[string]string{"name": mg.Name, "state": state}); !ok || got != want {
			t.Errorf("partitions %s = %v, want %v", state, got, want)
		}
	}
	if _, ok := hub.Functions("Metrics")["cpu"]; !ok {
		t.Errorf("no cpu function on the hub: %v", hub.Functions("Metrics"))
	}
	if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %s %q", c.Status, c.Message)
	}

	// A second cycle finds nothing to do.
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if n := mg.Status.AtProvider.CommandsIssued; n != 0 {
		t.Errorf("a steady cycle issued %d commands", n)
	}
	if got, _ := support.Gather(t, reg).Value("fleetplane_federation_cycles_total", map[string]string{"name": mg.Name, "result": "synced"}); got != 2 {
		t.Errorf("%v synced cycles counted, want 2", got)
	}
}

func TestUpdateFailures(t *testing.T) {
	cases := map[string]struct {
		mutate func(*v1alpha1.Federation)
		fault  *kustoserver.Fault
		want   string
	}{
		"a TTL that does not parse": {
			mutate: func(f *v1alpha1.Federation) { f.Spec.ForProvider.HeartbeatTTL = "soon" },
			want:   `heartbeatTTL "soon"`,
		},
		"heartbeats that cannot be read": {
			fault: &kustoserver.Fault{Match: "arg_max", Status: 403},
			want:  "cannot read heartbeats from FleetDiscovery.Heartbeats",
		},
		"a block list that cannot be read stops the cycle": {
			mutate: func(f *v1alpha1.Federation) {
				f.Spec.ForProvider.BlockedClusters = &v1alpha1.BlockedClusters{KustoFunction: &v1alpha1.KustoFunctionRef{Database: "FleetDiscovery", Name: "Blocked"}}
			},
			fault: &kustoserver.Fault{Match: "Blocked", Status: 403},
			want:  "cannot read the block list from FleetDiscovery.Blocked",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net")
			if tc.fault != nil {
				if err := hub.InjectFault(*tc.fault); err != nil {
					t.Fatal(err)
				}
			}
			mg := federationOf(hub.URL)
			if tc.mutate != nil {
				tc.mutate(mg)
			}
			hub.ResetCommands()
			e := newExternal(open, clock)
			e.metrics = fleetmetrics.New()
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(e.metrics.Collectors()...)
			_, err := e.Update(context.Background(), mg)
			if got, _ := support.Gather(t, reg).Value("fleetplane_federation_cycles_total", map[string]string{"result": "error"}); got != 1 {
				t.Errorf("%v failed cycles counted, want 1", got)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tc.want)
			}
			if n := hub.ScriptCommands(); n != 0 {
				t.Errorf("a failed cycle ran %d commands on the hub", n)
			}
			if mg.Status.AtProvider.LastSyncTime != nil {
				t.Error("a failed cycle must not count as a sync")
			}
		})
	}
}

func TestACycleThatReadsNoHeartbeatDropsNothing(t *testing.T) {
	hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net", "https://p2.kusto.windows.net")
	e := newExternal(open, clock)
	mg := federationOf(hub.URL)
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	// The heartbeat path breaks: here the Federation is pointed at an
	// empty table; a lapsed TTL after an outage looks the same.
	support.KustoExec(t, hub, "FleetDiscovery", ".create table ['Empty'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic)")
	mg.Spec.ForProvider.HeartbeatTable = "Empty"
	hub.ResetCommands()
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if n := hub.ScriptCommands(); n != 0 {
		t.Errorf("a cycle that read no heartbeat ran %d commands", n)
	}
	if _, ok := hub.Functions("Metrics")["cpu"]; !ok {
		t.Error("the hub lost its federation")
	}
	at := mg.Status.AtProvider
	if len(at.HeldBack) != 2 || !strings.Contains(at.HeldBack[0], "no heartbeat was read") || at.PartitionCount != 2 {
		t.Errorf("atProvider = %+v, want both partitions held back, saying why", at)
	}
}

// TestNothingLeavesUntilTheHeartbeatPathSettles: after a cycle finds the
// heartbeat path down, the first partition heard from again does not make
// the others leave.
func TestNothingLeavesUntilTheHeartbeatPathSettles(t *testing.T) {
	hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net", "https://p2.kusto.windows.net")
	e := newExternal(open, time.Now)
	mg := federationOf(hub.URL)
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	heartbeats := "['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic"
	support.KustoExec(t, hub, "FleetDiscovery", ".create table ['Empty'] ("+heartbeats+")", ".create table ['OneBack'] ("+heartbeats+")")
	mg.Spec.ForProvider.HeartbeatTable = "Empty"
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	down := mg.Status.AtProvider.HeartbeatPathDownTime
	if down == nil {
		t.Fatal("a cycle that read no heartbeat did not record the heartbeat path down")
	}

	rec, err := heartbeat.Row{Timestamp: time.Now().UTC(), Endpoint: "https://p1.kusto.windows.net", Schema: []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu"}}}}.Record()
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := kql.IngestInline("OneBack", rec)
	if err != nil {
		t.Fatal(err)
	}
	support.KustoExec(t, hub, "FleetDiscovery", cmd)
	mg.Spec.ForProvider.HeartbeatTable = "OneBack"
	mg.Spec.ForProvider.Safety = &v1alpha1.FederationSafety{MaxLeavePercent: new(int32(100))}
	hub.ResetCommands()
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	at := mg.Status.AtProvider
	if len(at.HeldBack) != 1 || !strings.Contains(at.HeldBack[0], "https://p2.kusto.windows.net: the heartbeat path was down at") {
		t.Errorf("heldBack = %q, want p2 held while the path settles", at.HeldBack)
	}
	if !at.HeartbeatPathDownTime.Equal(down) {
		t.Errorf("heartbeatPathDownTime = %v, want %v kept", at.HeartbeatPathDownTime, down)
	}
	if n := hub.ScriptCommands(); n != 0 {
		t.Errorf("the cycle ran %d commands: nothing should change", n)
	}
}

func TestShortTTLsAreRetained(t *testing.T) {
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	support.KustoExec(t, hub, "FleetDiscovery", support.HeartbeatTable)
	for ep, age := range map[string]time.Duration{"https://fresh.kusto.windows.net": 0, "https://quiet.kusto.windows.net": 5 * time.Minute} {
		support.IngestHeartbeat(t, hub, "FleetDiscovery", heartbeat.Row{Timestamp: time.Now().UTC().Add(-age), Endpoint: ep, Schema: []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu"}}}})
	}
	mg := federationOf(hub.URL)
	mg.Spec.ForProvider.HeartbeatTTL = "1s" // a tenant's mistake, or a test's
	e := newExternal(open, time.Now)
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	at := mg.Status.AtProvider
	if at.PartitionCount != 2 || len(at.Retained) == 0 || !strings.Contains(strings.Join(at.Retained, ";"), "https://quiet.kusto.windows.net") {
		t.Errorf("atProvider = %+v, want the quiet partition retained for the default 15m", at)
	}
}

func TestPacingAndSyncTimes(t *testing.T) {
	t.Run("failed commands: the cycle is paced, not counted as a sync", func(t *testing.T) {
		hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net")
		if err := hub.InjectFault(kustoserver.Fault{Match: "create-or-alter function", Status: 400, InScript: true}); err != nil {
			t.Fatal(err)
		}
		mg := federationOf(hub.URL)
		if _, err := newExternal(open, clock).Update(context.Background(), mg); err != nil {
			t.Fatalf("failed commands are reported in status: %v", err)
		}
		at := mg.Status.AtProvider
		if at.LastSyncTime != nil || !at.LastCycleTime.Equal(&metav1.Time{Time: now}) || len(at.Errors) == 0 {
			t.Errorf("atProvider = %+v", at)
		}
		if got, _ := newExternal(open, clock).Observe(context.Background(), mg); !got.ResourceUpToDate {
			t.Error("a cycle whose commands failed must not run again before its interval")
		}
	})
	t.Run("a script that cannot run: retried, no time moves", func(t *testing.T) {
		hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net")
		if err := hub.InjectFault(kustoserver.Fault{Match: "execute database script", Status: 503}); err != nil {
			t.Fatal(err)
		}
		mg := federationOf(hub.URL)
		if _, err := newExternal(open, clock).Update(context.Background(), mg); err == nil {
			t.Fatal("a script that could not run is an error, so the reconciler retries with backoff")
		}
		if at := mg.Status.AtProvider; at.LastSyncTime != nil || at.LastCycleTime != nil {
			t.Errorf("atProvider = %+v", at)
		}
	})
}

// TestOneNamespacePerHub: a hub is federated by the namespace the policy
// grants it to, whatever the age of other namespaces' Federations on it
// (one made first used to own it); two namespaces granted it is the
// admin's error, reported on both, and within a namespace the oldest
// Federation runs.
func TestOneNamespacePerHub(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apis.AddToScheme, clientgoscheme.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	fedIn := func(ns, name string, age time.Duration) *v1alpha1.Federation {
		f := federationOf("https://hub.kusto.windows.net")
		f.Namespace, f.Name, f.UID = ns, name, types.UID(ns+"/"+name)
		f.CreationTimestamp = metav1.NewTime(now.Add(-age))
		if ns == "team-a" {
			f.Spec.ForProvider.Endpoint = "https://Hub.kusto.windows.net:443" // the same hub, spelt otherwise
		}
		return f
	}
	policy := func(team string, hub bool) *fpv1alpha1.ClusterProviderConfig {
		grant := fpv1alpha1.KustoEndpointGrant{Endpoint: "https://" + team + ".kusto.windows.net", Hub: &fpv1alpha1.KustoHubGrant{}}
		if hub {
			grant.Endpoint = "https://hub.kusto.windows.net"
		}
		return &fpv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: team}, Spec: fpv1alpha1.ClusterProviderConfigSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleetplane.io/policy": team}},
			Kusto:             &fpv1alpha1.KustoPolicy{Endpoints: []fpv1alpha1.KustoEndpointGrant{grant}},
		}}
	}
	ns := func(team string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team, Labels: map[string]string{"fleetplane.io/policy": team}}}
	}
	observe := func(t *testing.T, kube client.Client, f *v1alpha1.Federation) (bool, *v1alpha1.Federation) {
		t.Helper()
		e := newExternal(open, clock)
		e.kube = kube
		got, err := e.Observe(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		return !got.ResourceUpToDate, f
	}

	t.Run("another namespace's older Federation does not take a hub it is not granted", func(t *testing.T) {
		squat, own := fedIn("team-a", "squat", time.Hour), fedIn("team-b", "hub", 0)
		kube := fake.NewClientBuilder().WithScheme(s).WithObjects(ns("team-a"), ns("team-b"), policy("team-a", false), policy("team-b", true), squat, own).Build()
		if runs, f := observe(t, kube, own); !runs || f.Status.AtProvider.Owner != "" {
			t.Errorf("team-b's Federation: runs %v, owner %q; want it to run, owned by nobody else", runs, f.Status.AtProvider.Owner)
		}
	})
	t.Run("two namespaces granted one hub: neither runs, both say why", func(t *testing.T) {
		a, b := fedIn("team-a", "hub", time.Hour), fedIn("team-b", "hub", 0)
		kube := fake.NewClientBuilder().WithScheme(s).WithObjects(ns("team-a"), ns("team-b"), policy("team-a", true), policy("team-b", true), a, b).Build()
		for _, tc := range []struct {
			f     *v1alpha1.Federation
			other string
		}{{a, "team-b"}, {b, "team-a"}} {
			runs, f := observe(t, kube, tc.f)
			c := f.GetCondition(xpv2.TypeReady)
			if runs || c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "is granted to namespace "+f.Namespace+" and to "+tc.other) || !strings.Contains(c.Message, "spec.kusto.endpoints[].hub") {
				t.Errorf("%s: runs %v, Ready %s %q", f.Namespace, runs, c.Status, c.Message)
			}
		}
	})
	t.Run("in one namespace, the oldest Federation runs", func(t *testing.T) {
		first, second := fedIn("team-b", "first", time.Hour), fedIn("team-b", "second", 0)
		kube := fake.NewClientBuilder().WithScheme(s).WithObjects(ns("team-b"), policy("team-b", true), first, second).Build()
		if runs, f := observe(t, kube, second); runs || f.Status.AtProvider.Owner != "team-b/first" || !strings.Contains(f.GetCondition(xpv2.TypeReady).Message, "the oldest") {
			t.Errorf("second: runs %v, owner %q, %q", runs, f.Status.AtProvider.Owner, f.GetCondition(xpv2.TypeReady).Message)
		}
		if runs, f := observe(t, kube, first); !runs || f.Status.AtProvider.Owner != "" {
			t.Errorf("first: runs %v, owner %q", runs, f.Status.AtProvider.Owner)
		}
	})
}

// TestPartitionMetadataInStatus: the hub lists each partition's metadata
// as its heartbeat sent it, refuses metadata that is not a flat map without
// dropping the partition, and keeps the listed metadata within a budget.
func TestPartitionMetadataInStatus(t *testing.T) {
	hub := support.KustoServer(t, "FleetDiscovery", "Metrics")
	support.KustoExec(t, hub, "FleetDiscovery", support.HeartbeatTable)
	ingest := func(rec string) {
		t.Helper()
		cmd, err := kql.IngestInline("Heartbeats", rec)
		if err != nil {
			t.Fatal(err)
		}
		support.KustoExec(t, hub, "FleetDiscovery", cmd)
	}
	schema := []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu"}}}
	for ep, meta := range map[string]map[string]string{
		"https://eu.kusto.windows.net":   {"geo": "EU", "tenant": "contoso"},
		"https://bare.kusto.windows.net": nil,
	} {
		rec, err := heartbeat.Row{Timestamp: time.Now().UTC(), Endpoint: ep, Schema: schema, Metadata: meta}.Record()
		if err != nil {
			t.Fatal(err)
		}
		ingest(rec)
	}
	// Another writer's row: nested metadata, which the hub refuses.
	ingest(time.Now().UTC().Format(time.RFC3339Nano) + `,https://nested.kusto.windows.net,"[{""database"":""Metrics"",""tables"":[""cpu""]}]","{""geo"":{""region"":""US""}}"`)

	mg := federationOf(hub.URL)
	if _, err := newExternal(open, clock).Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	at := mg.Status.AtProvider
	got := map[string]map[string]string{}
	for _, p := range at.Partitions {
		got[p.Endpoint] = p.Metadata
	}
	want := map[string]map[string]string{
		"https://bare.kusto.windows.net":   nil,
		"https://eu.kusto.windows.net":     {"geo": "EU", "tenant": "contoso"},
		"https://nested.kusto.windows.net": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("partitions' metadata (-want +got):\n%s", diff)
	}
	if at.PartitionCount != 3 || at.MetadataOmitted != 0 {
		t.Errorf("atProvider = %+v, want three partitions, the refused metadata not counted as omitted", at)
	}
	if w := strings.Join(at.Warnings, "\n"); !strings.Contains(w, `https://nested.kusto.windows.net: partition metadata "geo" is an object or list`) {
		t.Errorf("warnings = %q, want the refused metadata explained", at.Warnings)
	}

	t.Run("a budget keeps the status small", func(t *testing.T) {
		big := map[string]string{}
		for i := range heartbeat.MaxMetadataEntries {
			big[fmt.Sprintf("key-%02d", i)] = strings.Repeat("v", heartbeat.MaxMetadataValueLength)
		}
		for i := range 20 {
			rec, err := heartbeat.Row{Timestamp: time.Now().UTC(), Endpoint: fmt.Sprintf("https://big%02d.kusto.windows.net", i), Schema: schema, Metadata: big}.Record()
			if err != nil {
				t.Fatal(err)
			}
			ingest(rec)
		}
		mg := federationOf(hub.URL)
		if _, err := newExternal(open, clock).Update(context.Background(), mg); err != nil {
			t.Fatal(err)
		}
		at := mg.Status.AtProvider
		listed, bytes := 0, 0
		for _, p := range at.Partitions {
			if p.Metadata != nil {
				listed++
				bytes += metadataBytes(p.Metadata)
			}
		}
		// 32 × (6 + 256) bytes each: three fit in 32 KiB.
		if listed != 4 || at.MetadataOmitted != 17 || bytes > maxMetadataBytesInStatus {
			t.Errorf("%d partitions listed with %d bytes of metadata, %d omitted; want the first 3 big ones and eu, 17 omitted, within %d bytes", listed, bytes, at.MetadataOmitted, maxMetadataBytesInStatus)
		}
	})
}

// TestObserveRunsACycleEarlyOnChange: between cycles Observe compares the
// hub's digests with the last cycle's, and a partition's new table makes
// the Federation due at once; a heartbeat with the same content does not.
func TestObserveRunsACycleEarlyOnChange(t *testing.T) {
	hub := hubWithHeartbeats(t)
	mg := federationOf(hub.URL)
	e := newExternal(open, clock)
	e.schemas = fed.NewSchemas()
	upToDate := func() bool {
		t.Helper()
		o, err := e.Observe(context.Background(), mg)
		if err != nil {
			t.Fatal(err)
		}
		return o.ResourceUpToDate
	}
	// A cycle that found no partition yet: the first heartbeat is a change.
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if !upToDate() {
		t.Fatal("just after a cycle, with nothing changed, the Federation must be up to date")
	}
	support.IngestHeartbeat(t, hub, "FleetDiscovery", heartbeat.Row{Timestamp: time.Now().UTC(), Endpoint: "https://p1.kusto.windows.net", Schema: []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: []string{"cpu"}}}})
	if upToDate() {
		t.Error("the first partition of an empty fleet must bring the cycle forward")
	}
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if !upToDate() {
		t.Fatal("just after a cycle, with nothing changed, the Federation must be up to date")
	}
	ingest := func(tables ...string) {
		support.IngestHeartbeat(t, hub, "FleetDiscovery", heartbeat.Row{Timestamp: time.Now().UTC(), Endpoint: "https://p1.kusto.windows.net", Schema: []heartbeat.DatabaseSchema{{Database: "Metrics", Tables: tables}}})
	}
	ingest("cpu")
	if !upToDate() {
		t.Error("a heartbeat with the same schema must not bring the cycle forward")
	}
	// A provider that restarts knows nothing decoded and waits for the
	// cycle that is due.
	restarted := newExternal(open, clock)
	restarted.schemas = fed.NewSchemas()
	if o, err := restarted.Observe(context.Background(), mg); err != nil || !o.ResourceUpToDate {
		t.Errorf("a restarted provider must not run a cycle before it is due: %+v, %v", o, err)
	}
	ingest("cpu", "disk")
	if upToDate() {
		t.Error("a new table on a partition must bring the cycle forward")
	}
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if _, ok := hub.Functions("Metrics")["disk"]; !ok || !upToDate() {
		t.Errorf("after the early cycle the hub has disk (%v) and the Federation is up to date", ok)
	}
}

// TestChangeCheckComesBackSooner: a Federation looks at its hub's digests
// every changeCheckInterval, whatever the provider's poll.
func TestChangeCheckComesBackSooner(t *testing.T) {
	mg := federationOf("https://hub.kusto.windows.net")
	mg.Spec.ForProvider.Interval = &metav1.Duration{Duration: 10 * time.Minute}
	mg.Status.AtProvider.LastCycleTime = &metav1.Time{Time: clock()}
	k := periodic(clock)
	if got := k.PollHook(mg, time.Minute); got != time.Minute {
		t.Errorf("without a change check: back at the poll, %s; got %s", time.Minute, got)
	}
	mg.Spec.ForProvider.ChangeCheckInterval = &metav1.Duration{Duration: 2 * time.Second}
	if got := k.PollHook(mg, time.Minute); got != 2*time.Second {
		t.Errorf("with a 2s change check: back in 2s, got %s", got)
	}
	if got := k.PollHook(mg, time.Second); got != time.Second {
		t.Errorf("a poll sooner than the check still applies: got %s", got)
	}
}

// TestNamespaceShare: a Federation whose namespace spent its share of
// cycle time runs no cycle (the hub is not even opened), says when its
// next one runs, and its poll hook comes back then; one of another
// namespace runs, and the first runs again once its share is repaid.
func TestNamespaceShare(t *testing.T) {
	hub := hubWithHeartbeats(t, "https://p1.kusto.windows.net")
	at := time.Now()
	tick := func() time.Time { return at }
	share := fairshare.New(fairshare.Config{PerMinute: 6 * time.Second, Now: tick})
	opened := 0
	counting := func(endpoint string) (hubClient, error) {
		opened++
		return open(endpoint)
	}
	// The noisy namespace's last cycle took 18 s: 12 s over its share.
	done, _ := share.Start("noisy", "Federation big")
	at = at.Add(18 * time.Second)
	done()

	noisy := federationOf(hub.URL)
	noisy.Namespace = "noisy"
	e := newExternal(counting, clock)
	e.share = share
	if _, err := e.Update(context.Background(), noisy); err != nil {
		t.Fatal(err)
	}
	if opened != 0 || noisy.Status.AtProvider.LastSyncTime != nil {
		t.Fatalf("a cycle ran over the namespace's share (%d hub connections)", opened)
	}
	c := noisy.GetCondition(TypeCycleScheduled)
	if c.Status != corev1.ConditionFalse || c.Reason != ReasonOverShare || !strings.Contains(c.Message, "namespace noisy's federation cycles took 12s more than its share of the provider's time (6s a minute") {
		t.Errorf("CycleScheduled = %s %s %q", c.Status, c.Reason, c.Message)
	}
	kind := periodic(clock)
	kind.Hold = func(f *v1alpha1.Federation) time.Duration { return share.Wait(f.Namespace) }
	if wait := kind.PollHook(noisy, time.Second); wait < 2*time.Minute {
		t.Errorf("the poll hook comes back in %s, before the debt is repaid", wait)
	}

	quiet := federationOf(hub.URL)
	quiet.Namespace = "quiet"
	if _, err := e.Update(context.Background(), quiet); err != nil || quiet.Status.AtProvider.LastSyncTime == nil {
		t.Fatalf("another namespace's cycle did not run: %v", err)
	}
	if c := quiet.GetCondition(TypeCycleScheduled); c.Status != corev1.ConditionTrue || c.Reason != ReasonWithinShare {
		t.Errorf("quiet CycleScheduled = %s %s %q", c.Status, c.Reason, c.Message)
	}

	at = at.Add(2*time.Minute + time.Second)
	if _, err := e.Update(context.Background(), noisy); err != nil || noisy.Status.AtProvider.LastSyncTime == nil {
		t.Fatalf("the cycle did not run once the share was repaid: %v", err)
	}
	if c := noisy.GetCondition(TypeCycleScheduled); c.Status != corev1.ConditionTrue {
		t.Errorf("CycleScheduled after repaying = %s %s", c.Status, c.Reason)
	}
}

// TestHeldBackAfterAFailure: a cycle held back by the namespace's share
// after one that failed keeps the Federation failing with that reason
// (crossplane-runtime would otherwise mark it Synced, the hub still down),
// and says the next cycle waits; the message does not grow each time.
func TestHeldBackAfterAFailure(t *testing.T) {
	at := time.Now()
	share := fairshare.New(fairshare.Config{PerMinute: 6 * time.Second, Now: func() time.Time { return at }})
	done, _ := share.Start("noisy", "Federation hub")
	at = at.Add(20 * time.Second)
	done()
	mg := federationOf("http://127.0.0.1:1")
	mg.Namespace = "noisy"
	// A cycle that fails, its hub down, records why in the status.
	e := newExternal(open, clock)
	if _, err := e.Update(context.Background(), mg); err == nil || !strings.HasPrefix(mg.Status.AtProvider.LastCycleError, "cannot read heartbeats from FleetDiscovery.Heartbeats: ") || !strings.Contains(mg.Status.AtProvider.LastCycleError, "connection refused") {
		t.Fatalf("a failed cycle: %v, status.atProvider.lastCycleError %q", err, mg.Status.AtProvider.LastCycleError)
	}
	failed := mg.Status.AtProvider.LastCycleError
	e.share = share
	for range 2 {
		_, err := e.Update(context.Background(), mg)
		if err == nil || err.Error() != failed+heldSuffix {
			t.Fatalf("held back after a failure: %v, want %q", err, failed+heldSuffix)
		}
		if mg.Status.AtProvider.LastCycleError != failed {
			t.Fatalf("held back, lastCycleError became %q", mg.Status.AtProvider.LastCycleError)
		}
	}
	// After a cycle that succeeded.
	mg.Status.AtProvider.LastCycleError = ""
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Errorf("held back after a success: %v", err)
	}
}
