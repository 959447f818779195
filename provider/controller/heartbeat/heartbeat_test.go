package heartbeat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

func ago(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }

func heartbeatTo(partition string, hubs ...string) *v1alpha1.Heartbeat {
	mg := &v1alpha1.Heartbeat{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "eu"},
		Spec: v1alpha1.HeartbeatSpec{ForProvider: v1alpha1.HeartbeatParameters{
			Endpoint: partition, Interval: &metav1.Duration{Duration: time.Minute}, Partitioning: v1alpha1.Partitioning{"geo": "EU"},
		}},
	}
	for _, h := range hubs {
		mg.Spec.ForProvider.Targets = append(mg.Spec.ForProvider.Targets, v1alpha1.HeartbeatTarget{Endpoint: h, HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats"})
	}
	return mg
}

// beat records a past heartbeat to every target in status, succeeded
// at success (nil: never).
func beat(mg *v1alpha1.Heartbeat, at, success *metav1.Time, lastError string) *v1alpha1.Heartbeat {
	mg.Status.AtProvider.LastHeartbeatTime = at
	for _, t := range mg.Spec.ForProvider.Targets {
		mg.Status.AtProvider.Targets = append(mg.Status.AtProvider.Targets, v1alpha1.HeartbeatTargetStatus{
			Endpoint: t.Endpoint, HeartbeatDatabase: t.HeartbeatDatabase, HeartbeatTable: t.HeartbeatTable,
			LastAttemptTime: at, LastSuccessTime: success, LastError: lastError,
		})
	}
	return mg
}

func TestObserve(t *testing.T) {
	deleting := heartbeatTo("https://p", "https://hub")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	newTarget := beat(heartbeatTo("https://p", "https://hub"), ago(10*time.Second), ago(10*time.Second), "")
	newTarget.Spec.ForProvider.Targets = append(newTarget.Spec.ForProvider.Targets, v1alpha1.HeartbeatTarget{Endpoint: "https://hub2", HeartbeatDatabase: "FleetDiscovery", HeartbeatTable: "Heartbeats"})

	cases := map[string]struct {
		mg        *v1alpha1.Heartbeat
		want      managed.ExternalObservation
		available corev1.ConditionStatus
		message   string
	}{
		"deleting: nothing to remove, hubs forget by TTL": {
			mg:   deleting,
			want: managed.ExternalObservation{ResourceExists: false},
		},
		"never sent: due": {
			mg:        heartbeatTo("https://p", "https://hub"),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false},
			available: corev1.ConditionFalse, message: "https://hub (FleetDiscovery.Heartbeats): no heartbeat yet",
		},
		"sent within the interval: not due, available": {
			mg:        beat(heartbeatTo("https://p", "https://hub"), ago(10*time.Second), ago(10*time.Second), ""),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionTrue,
		},
		"an interval ago: due": {
			mg:        beat(heartbeatTo("https://p", "https://hub"), ago(time.Minute), ago(time.Minute), ""),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false},
			available: corev1.ConditionTrue,
		},
		"a target that failed: not due, unavailable with its error": {
			mg:        beat(heartbeatTo("https://p", "https://hub"), ago(10*time.Second), ago(5*time.Minute), "hub refused"),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionFalse, message: "https://hub (FleetDiscovery.Heartbeats): hub refused",
		},
		"a target added to the spec: sent at once": {
			mg:        newTarget,
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false},
			available: corev1.ConditionFalse, message: "https://hub2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newExternal(nil, clock)
			got, err := e.Observe(context.Background(), tc.mg)
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

// fleet is a partition with a table and a view, and hubs with a heartbeat
// table.
type fleet struct {
	partition *kustoserver.Server
	hubs      []*kustoserver.Server
}

func newFleet(t *testing.T, hubs int) fleet {
	t.Helper()
	f := fleet{partition: support.KustoServer(t, "Metrics")}
	support.KustoExec(t, f.partition, "Metrics", ".create table ['cpu'] (['v']:real)", ".create-or-alter function with (view=true) ['hot']() { ['cpu'] }")
	for range hubs {
		h := support.KustoServer(t, "FleetDiscovery")
		support.KustoExec(t, h, "FleetDiscovery", ".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Schema']:dynamic, ['PartitionMetadata']:dynamic)")
		f.hubs = append(f.hubs, h)
	}
	return f
}

// open serves the fleet's endpoints with real clients, and counts them.
func (f fleet) open(*testing.T) opener {
	return func(endpoint, _ string) (kustoClient, error) {
		return kusto.New(endpoint, nil, kusto.Options{Timeout: 5 * time.Second, Attempts: 1})
	}
}

func (f fleet) urls() []string {
	var out []string
	for _, h := range f.hubs {
		out = append(out, h.URL)
	}
	return out
}

func TestUpdateSendsToEveryTarget(t *testing.T) {
	f := newFleet(t, 2)
	mg := heartbeatTo(f.partition.URL, f.urls()...)
	if _, err := newExternal(f.open(t), clock).Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	at := mg.Status.AtProvider
	if !at.LastHeartbeatTime.Equal(&metav1.Time{Time: now}) || at.Databases != 1 || at.Tables != 1 || at.Views != 1 {
		t.Errorf("atProvider = %+v, want the time of the beat and 1 database, 1 table, 1 view", at)
	}
	for _, h := range f.hubs {
		rows := h.Rows("FleetDiscovery", "Heartbeats")
		if len(rows) != 1 {
			t.Fatalf("hub %s has %d heartbeat rows, want 1", h.URL, len(rows))
		}
		if got := fmt.Sprint(rows[0][1]); got != f.partition.URL {
			t.Errorf("ClusterEndpoint = %s, want the partition's", got)
		}
		if got := fmt.Sprintf("%s", rows[0][3]); !strings.Contains(got, "EU") {
			t.Errorf("PartitionMetadata = %s, want the partitioning", got)
		}
	}
	for _, ts := range at.Targets {
		if ts.LastError != "" || ts.LastSuccessTime == nil {
			t.Errorf("target %s: %+v", ts.Endpoint, ts)
		}
	}
	if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %s %q", c.Status, c.Message)
	}
}

func TestUpdateFailures(t *testing.T) {
	t.Run("one failing target leaves the others beating", func(t *testing.T) {
		f := newFleet(t, 2)
		if err := f.hubs[0].InjectFault(kustoserver.Fault{Match: "ingest", Status: 403}); err != nil {
			t.Fatal(err)
		}
		mg := beat(heartbeatTo(f.partition.URL, f.urls()...), ago(time.Hour), ago(time.Hour), "")
		if _, err := newExternal(f.open(t), clock).Update(context.Background(), mg); err != nil {
			t.Fatalf("a partial failure is reported in status, not as an error: %v", err)
		}
		byEndpoint := map[string]v1alpha1.HeartbeatTargetStatus{}
		for _, ts := range mg.Status.AtProvider.Targets {
			byEndpoint[ts.Endpoint] = ts
		}
		failed, ok := byEndpoint[f.hubs[0].URL], byEndpoint[f.hubs[1].URL]
		if failed.LastError == "" || !failed.LastSuccessTime.Equal(ago(time.Hour)) {
			t.Errorf("failing target: %+v, want its error and its previous success kept", failed)
		}
		if ok.LastError != "" || !ok.LastSuccessTime.Equal(&metav1.Time{Time: now}) {
			t.Errorf("healthy target: %+v", ok)
		}
		if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, f.hubs[0].URL) {
			t.Errorf("Ready = %s %q, want False naming the failing hub", c.Status, c.Message)
		}
	})
	t.Run("every target failing is an error", func(t *testing.T) {
		f := newFleet(t, 1)
		if err := f.hubs[0].InjectFault(kustoserver.Fault{Match: "ingest", Status: 500}); err != nil {
			t.Fatal(err)
		}
		_, err := newExternal(f.open(t), clock).Update(context.Background(), heartbeatTo(f.partition.URL, f.urls()...))
		if err == nil || !strings.Contains(err.Error(), "no target took the heartbeat") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("a partition that cannot be read sends nothing", func(t *testing.T) {
		f := newFleet(t, 1)
		if err := f.partition.InjectFault(kustoserver.Fault{Match: "show databases", Status: 403}); err != nil {
			t.Fatal(err)
		}
		_, err := newExternal(f.open(t), clock).Update(context.Background(), heartbeatTo(f.partition.URL, f.urls()...))
		if err == nil || !strings.Contains(err.Error(), "cannot read the partition's schema") {
			t.Errorf("error = %v", err)
		}
		if n := len(f.hubs[0].Rows("FleetDiscovery", "Heartbeats")); n != 0 {
			t.Errorf("hub got %d rows from a partition whose schema was not read", n)
		}
	})
}

func TestSchemaCheck(t *testing.T) {
	f := newFleet(t, 1)
	checked := func() *v1alpha1.Heartbeat {
		mg := heartbeatTo(f.partition.URL, f.urls()...)
		mg.Spec.ForProvider.Interval = &metav1.Duration{Duration: time.Hour}
		mg.Spec.ForProvider.SchemaCheckInterval = &metav1.Duration{Duration: 5 * time.Second}
		return mg
	}
	e := newExternal(f.open(t), clock)
	mg := checked()
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if len(mg.Status.AtProvider.SchemaDigest) != 64 {
		t.Fatalf("a heartbeat records the digest of what it sent: %q", mg.Status.AtProvider.SchemaDigest)
	}
	upToDate := func(mg *v1alpha1.Heartbeat) bool {
		t.Helper()
		o, err := e.Observe(context.Background(), mg)
		if err != nil {
			t.Fatal(err)
		}
		return o.ResourceUpToDate
	}
	if !upToDate(mg) {
		t.Error("the schema as sent: up to date until the interval")
	}
	if got := periodic(clock).PollHook(mg, time.Minute); got != 5*time.Second {
		t.Errorf("comes back in %s, want the check's 5s, not the hour's interval", got)
	}

	support.KustoExec(t, f.partition, "Metrics", ".create table ['disk'] (['v']:real)")
	before := mg.Status.AtProvider.SchemaDigest
	if upToDate(mg) {
		t.Error("a table created since the last heartbeat: sent at once")
	}
	// The Update of the same reconcile sends what the check read: the
	// partition is not read twice (here it could not be).
	if err := f.partition.InjectFault(kustoserver.Fault{Match: "show databases", Status: 503}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(context.Background(), mg); err != nil {
		t.Fatalf("Update after a check that found a change: %v", err)
	}
	if at := mg.Status.AtProvider; at.SchemaDigest == before || at.Tables != 2 {
		t.Errorf("sent digest %s with %d tables, want the new schema's (2 tables)", at.SchemaDigest, at.Tables)
	}
	f.partition.ClearFaults()
	e = newExternal(f.open(t), clock)

	unchecked := mg.DeepCopy()
	unchecked.Spec.ForProvider.SchemaCheckInterval = nil
	if !upToDate(unchecked) {
		t.Error("without a schema check the schema is read at the interval only")
	}
	legacy := mg.DeepCopy()
	legacy.Status.AtProvider.SchemaDigest = ""
	if !upToDate(legacy) {
		t.Error("a heartbeat recorded without a digest: the next one records it; no check before")
	}
	if err := f.partition.InjectFault(kustoserver.Fault{Match: "show databases", Status: 503}); err != nil {
		t.Fatal(err)
	}
	if !upToDate(mg) {
		t.Error("a check that cannot read the partition is no change: the heartbeat at the interval reports the failure")
	}
}
