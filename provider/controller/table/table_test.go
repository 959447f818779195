package table

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

func table(columns ...v1alpha1.Column) *v1alpha1.Table {
	return &v1alpha1.Table{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "heartbeats", UID: "uid-1"},
		Spec: v1alpha1.TableSpec{ForProvider: v1alpha1.TableParameters{
			Endpoint: "http://ignored", Database: "FleetDiscovery", Table: "Heartbeats", Columns: columns,
		}},
	}
}

var (
	ts  = v1alpha1.Column{Name: "Timestamp", Type: "datetime"}
	ep  = v1alpha1.Column{Name: "ClusterEndpoint", Type: "string"}
	raw = v1alpha1.Column{Name: "Schema", Type: "dynamic"}
)

func deleted(t *v1alpha1.Table) *v1alpha1.Table {
	now := metav1.Now()
	t.DeletionTimestamp = &now
	return t
}

// ours is the docstring clause a table created by table() carries.
const ours = " with (docstring = 'Created by fleetplane for Table team-a/heartbeats; fleetplane-table-uid=uid-1')"

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		existing  []string
		mg        *v1alpha1.Table
		want      managed.ExternalObservation
		available corev1.ConditionStatus
		message   string
	}{
		"missing": {
			mg:        table(ts, ep),
			want:      managed.ExternalObservation{ResourceExists: false},
			available: corev1.ConditionFalse, message: "table Heartbeats does not exist in database FleetDiscovery",
		},
		"missing while deleting": {
			mg:   deleted(table(ts, ep)),
			want: managed.ExternalObservation{ResourceExists: false},
		},
		"as desired": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string)" + ours},
			mg:        table(ts, ep),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionTrue,
		},
		"more columns than desired are fine": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string, ['Extra']:long)" + ours},
			mg:        table(ts, ep),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionTrue,
		},
		"a column missing": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:datetime)" + ours},
			mg:        table(ts, ep, raw),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: "missing columns: ClusterEndpoint, Schema"},
			available: corev1.ConditionFalse, message: "missing columns: ClusterEndpoint, Schema",
		},
		"a column of another type is reported, never changed": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:string, ['ClusterEndpoint']:string)" + ours},
			mg:        table(ts, ep),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionFalse, message: "Timestamp is string, not datetime",
		},
		"a table that was there, with every column, is ready and left alone": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:datetime, ['ClusterEndpoint']:string)"},
			mg:        table(ts, ep),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionTrue, message: "was not created by this Table",
		},
		"a table that was there, lacking columns, is reported, never merged into": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:datetime)"},
			mg:        table(ts, ep, raw),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionFalse, message: "it lacks the columns ClusterEndpoint, Schema",
		},
		"another Table's table": {
			existing:  []string{".create table ['Heartbeats'] (['Timestamp']:datetime) with (docstring = 'fleetplane-table-uid=uid-2')"},
			mg:        table(ts),
			want:      managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
			available: corev1.ConditionTrue, message: "was not created by this Table",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := support.KustoServer(t, "FleetDiscovery")
			support.KustoExec(t, s, "FleetDiscovery", tc.existing...)
			e := &external{k: support.KustoClient(t, s)}
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
			if tc.mg.Status.AtProvider.Exists != got.ResourceExists {
				t.Errorf("atProvider.exists = %v, want %v", tc.mg.Status.AtProvider.Exists, got.ResourceExists)
			}
		})
	}
}

func TestObserveErrors(t *testing.T) {
	s := support.KustoServer(t, "FleetDiscovery")
	if err := s.InjectFault(kustoserver.Fault{Match: "show table", Status: 403}); err != nil {
		t.Fatal(err)
	}
	e := &external{k: support.KustoClient(t, s)}
	if _, err := e.Observe(context.Background(), table(ts)); err == nil {
		t.Error("a refused read must be an error, not a missing table: creating would fail the same way")
	}
}

func TestCreateUpdateDelete(t *testing.T) {
	ctx := context.Background()
	s := support.KustoServer(t, "FleetDiscovery")
	e := &external{k: support.KustoClient(t, s)}

	mg := table(ts, ep)
	if _, err := e.Create(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if got := s.Tables("FleetDiscovery")["Heartbeats"]; got != "Timestamp:datetime,ClusterEndpoint:string" {
		t.Errorf("created schema %q", got)
	}
	if _, err := e.Observe(ctx, mg); err != nil || !mg.Status.AtProvider.Created {
		t.Errorf("atProvider %+v, %v: the creation must be proven by the table itself", mg.Status.AtProvider, err)
	}
	// A column is added; the others, and any data, stay.
	mg.Spec.ForProvider.Columns = append(mg.Spec.ForProvider.Columns, raw)
	if _, err := e.Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if got := s.Tables("FleetDiscovery")["Heartbeats"]; got != "Timestamp:datetime,ClusterEndpoint:string,Schema:dynamic" {
		t.Errorf("merged schema %q", got)
	}
	if _, err := e.Observe(ctx, mg); err != nil || !mg.Status.AtProvider.Created {
		t.Errorf("atProvider %+v, %v: want created", mg.Status.AtProvider, err)
	}
	if _, err := e.Delete(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Tables("FleetDiscovery")["Heartbeats"]; ok {
		t.Error("the table this resource created is still there after Delete")
	}
}

// A tenant writes every field its role allows on its Table (spec,
// metadata, annotations an earlier release trusted, even a status claiming
// the creation): none of it makes a table the Table did not create its
// own. It fails on the release that trusted an annotation.
func TestATableItDidNotCreateIsNeverTouched(t *testing.T) {
	ctx := context.Background()
	for name, existing := range map[string]string{
		"made before":           ".create table ['Heartbeats'] (['Timestamp']:datetime) with (docstring = 'team-b heartbeats')",
		"made by another Table": ".create table ['Heartbeats'] (['Timestamp']:datetime) with (docstring = 'Created by fleetplane for Table team-b/heartbeats; fleetplane-table-uid=uid-b')",
	} {
		t.Run(name, func(t *testing.T) {
			s := support.KustoServer(t, "FleetDiscovery")
			support.KustoExec(t, s, "FleetDiscovery", existing)
			e := &external{k: support.KustoClient(t, s)}
			mg := table(ts, ep, raw)
			mg.SetAnnotations(map[string]string{"kusto.fleetplane.io/created-table": "FleetDiscovery.Heartbeats", "crossplane.io/external-create-succeeded": "2026-01-01T00:00:00Z"})
			mg.Status.AtProvider.Created = true

			o, err := e.Observe(ctx, mg)
			if err != nil || !o.ResourceExists || !o.ResourceUpToDate {
				t.Fatalf("Observe %+v, %v: want it found and nothing to change", o, err)
			}
			if at := mg.Status.AtProvider; at.Created || at.Schema != "" {
				t.Errorf("atProvider %+v: a table it did not create is neither claimed nor described", at)
			}
			// Even asked directly, the Table neither merges nor drops.
			if _, err := e.Update(ctx, mg); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Delete(ctx, mg); err != nil {
				t.Fatal(err)
			}
			if got := s.Tables("FleetDiscovery")["Heartbeats"]; got != "Timestamp:datetime" {
				t.Errorf("the table is %q after Update and Delete, want it untouched", got)
			}
			now := metav1.Now()
			mg.DeletionTimestamp = &now
			if o, err := e.Observe(ctx, mg); err != nil || o.ResourceExists {
				t.Errorf("Observe while deleting %+v, %v: want nothing to delete, so that the Table goes and the table stays", o, err)
			}
		})
	}
}

// A table someone makes between Observe and Create stays theirs: Kusto's
// .create table leaves it as it is, marker and all.
func TestATableMadeMeanwhileIsNotClaimed(t *testing.T) {
	ctx := context.Background()
	s := support.KustoServer(t, "FleetDiscovery")
	e := &external{k: support.KustoClient(t, s)}
	mg := table(ts, ep)
	if o, err := e.Observe(ctx, mg); err != nil || o.ResourceExists {
		t.Fatalf("Observe %+v, %v", o, err)
	}
	support.KustoExec(t, s, "FleetDiscovery", ".create table ['Heartbeats'] (['Timestamp']:datetime)")
	if _, err := e.Create(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Observe(ctx, mg); err != nil || mg.Status.AtProvider.Created {
		t.Errorf("atProvider %+v, %v: a table this Table's create did not make is not its own", mg.Status.AtProvider, err)
	}
	if got := s.Tables("FleetDiscovery")["Heartbeats"]; got != "Timestamp:datetime" {
		t.Errorf("the table is %q, want it as its maker left it", got)
	}
}
