// Package table reconciles Kusto Table managed resources: a table exists
// with at least the desired columns. Columns are only ever added
// (.create-merge); existing columns and data are left alone.
//
// A Table alters, describes in its status and drops only a table it
// created. The proof is in Kusto, where a tenant cannot write it: the
// table is created with a docstring naming the Table's UID, in the one
// command that creates it, and Kusto's .create table leaves a table that
// already exists as it is, docstring included. Nothing on the Table
// itself (an annotation, a spec field, a status a tenant might restore)
// is taken as proof. A table that was there before is checked, never
// changed: the Table is Ready when it has the columns asked for.
package table

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-kusto-go/azkustodata/query"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/apis/kusto/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
	"github.com/fleetplane/fleetplane/provider/kusto"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// MarkerKey is what a table's docstring carries, followed by the UID of
// the Table that created it.
const MarkerKey = "fleetplane-table-uid="

// Marker is the docstring of a table mg creates.
func Marker(mg *v1alpha1.Table) string {
	return "Created by fleetplane for Table " + mg.Namespace + "/" + mg.Name + "; " + MarkerKey + string(mg.UID)
}

// createdBy reports whether docstring is the proof that mg created the
// table: the marker of mg's UID, which the API server assigned.
func createdBy(mg *v1alpha1.Table, docstring string) bool {
	_, uid, ok := strings.Cut(docstring, MarkerKey)
	return ok && mg.UID != "" && uid == string(mg.UID)
}

// ReconcileTimeout bounds one reconcile of a Table: it makes up to three
// Kusto calls (read, then create or alter, or drop), each within the
// client's own deadline (--kusto-timeout, a minute), so the reconcile's
// is longer than their sum rather than crossplane-runtime's default
// minute, which one slow call would spend.
const ReconcileTimeout = 4 * time.Minute

// Setup adds the Table controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options, c *shared.KustoConnector) error {
	return shared.Managed(mgr, o, v1alpha1.TableGroupVersionKind, &v1alpha1.Table{}, &connector{c: c}, shared.Options{
		Reconciler: []managed.ReconcilerOption{managed.WithTimeout(ReconcileTimeout)},
	})
}

type connector struct{ c *shared.KustoConnector }

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.Table) (managed.TypedExternalClient[*v1alpha1.Table], error) {
	s, err := c.c.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	p := mg.Spec.ForProvider
	if err := s.Grant().KustoDatabase("spec.forProvider.endpoint and database", p.Endpoint, p.Database); err != nil {
		if meta.WasDeleted(mg) {
			// Not reached, so not dropped: the table stays as it is, and
			// the Table goes.
			return gone{}, nil
		}
		return nil, err
	}
	k, err := s.Client(p.Endpoint, "")
	if err != nil {
		return nil, err
	}
	return &external{k: k}, nil
}

// gone is a deleted Table whose table the namespace may no longer reach:
// there is nothing it may delete.
type gone struct{}

func (gone) Observe(context.Context, *v1alpha1.Table) (managed.ExternalObservation, error) {
	return managed.ExternalObservation{ResourceExists: false}, nil
}
func (gone) Create(context.Context, *v1alpha1.Table) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}
func (gone) Update(context.Context, *v1alpha1.Table) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}
func (gone) Delete(context.Context, *v1alpha1.Table) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}
func (gone) Disconnect(context.Context) error { return nil }

// kustoClient is what a Table needs of its cluster.
type kustoClient interface {
	Mgmt(ctx context.Context, db, command string) ([]query.Row, error)
	Close() error
}

type external struct {
	k kustoClient
	// created is what Observe found: the table exists and this Table
	// created it. Update and Delete act only then.
	created bool
}

func columns(p v1alpha1.TableParameters) []kql.Column {
	out := make([]kql.Column, len(p.Columns))
	for i, c := range p.Columns {
		out[i] = kql.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// parseSchema reads Kusto's cslschema, "a:string,b:int", into a map.
func parseSchema(s string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(s, ",") {
		name, typ, ok := strings.Cut(strings.TrimSpace(part), ":")
		if ok {
			out[strings.Trim(name, "['\"]")] = typ
		}
	}
	return out
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	cmd, err := kql.ShowTableSchema(p.Table)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	rows, err := e.k.Mgmt(ctx, p.Database, cmd)
	if kusto.ClassOf(err) == kusto.NotFound {
		mg.Status.AtProvider = v1alpha1.TableObservation{}
		if !meta.WasDeleted(mg) {
			mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("table %s does not exist in database %s", p.Table, p.Database)))
		}
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if len(rows) != 1 {
		return managed.ExternalObservation{}, fmt.Errorf("show table schema returned %d rows", len(rows))
	}
	schema, err := rows[0].StringByName("Schema")
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	doc, err := rows[0].StringByName("DocString")
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	e.created = createdBy(mg, doc)
	if meta.WasDeleted(mg) {
		// A table this Table did not create held data before it came,
		// and someone else's: as far as deleting the Table goes, there
		// is nothing to delete.
		return managed.ExternalObservation{ResourceExists: e.created}, nil
	}
	missing, mismatched := compare(p.Columns, parseSchema(schema))
	if !e.created {
		// Only what the Table asked for is told: the table's schema is
		// whoever made it's.
		mg.Status.AtProvider = v1alpha1.TableObservation{Exists: true}
		notOurs := fmt.Sprintf("table %s of database %s was not created by this Table, so fleetplane neither alters nor drops it (a table it creates carries %s<uid> in its docstring)", p.Table, p.Database, MarkerKey)
		switch {
		case len(mismatched) > 0:
			mg.SetConditions(xpv2.Unavailable().WithMessage(notOurs + "; column types differ: " + strings.Join(mismatched, "; ")))
		case len(missing) > 0:
			mg.SetConditions(xpv2.Unavailable().WithMessage(notOurs + "; it lacks the columns " + strings.Join(missing, ", ")))
		default:
			mg.SetConditions(xpv2.Available().WithMessage(notOurs + "; it has every column asked for"))
		}
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	mg.Status.AtProvider = v1alpha1.TableObservation{Exists: true, Schema: schema, Created: true}
	switch {
	case len(mismatched) > 0:
		// Kusto cannot change a column's type in place and fleetplane will
		// not drop data to do it: report and leave it.
		mg.SetConditions(xpv2.Unavailable().WithMessage("column types differ: " + strings.Join(mismatched, "; ")))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case len(missing) > 0:
		mg.SetConditions(xpv2.Unavailable().WithMessage("missing columns: " + strings.Join(missing, ", ")))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: "missing columns: " + strings.Join(missing, ", ")}, nil
	}
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// compare names the columns asked for that the live schema lacks, and
// those it holds with another type.
func compare(want []v1alpha1.Column, live map[string]string) (missing, mismatched []string) {
	for _, c := range want {
		t, ok := live[c.Name]
		switch {
		case !ok:
			missing = append(missing, c.Name)
		case t != c.Type:
			mismatched = append(mismatched, fmt.Sprintf("%s is %s, not %s", c.Name, t, c.Type))
		}
	}
	return missing, mismatched
}

func (e *external) merge(ctx context.Context, mg *v1alpha1.Table) error {
	cmd, err := kql.CreateMergeTable(mg.Spec.ForProvider.Table, columns(mg.Spec.ForProvider))
	if err != nil {
		return err
	}
	_, err = e.k.Mgmt(ctx, mg.Spec.ForProvider.Database, cmd)
	return err
}

// Create creates the table with the marker in its docstring. A table
// someone made since Observe looked is left as Kusto leaves it, without
// the marker, and the next Observe finds it is not this Table's.
func (e *external) Create(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalCreation, error) {
	cmd, err := kql.CreateTableDocumented(mg.Spec.ForProvider.Table, columns(mg.Spec.ForProvider), Marker(mg))
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	_, err = e.k.Mgmt(ctx, mg.Spec.ForProvider.Database, cmd)
	return managed.ExternalCreation{}, err
}

// Update adds the columns a table this Table created lacks.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalUpdate, error) {
	if !e.created {
		return managed.ExternalUpdate{}, nil
	}
	return managed.ExternalUpdate{}, e.merge(ctx, mg)
}

// Delete drops the table when this resource created it. It runs only when
// the management policies allow deletion; fleetplane's compositions leave
// heartbeat tables in place unless the XR asks otherwise.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalDelete, error) {
	if !e.created {
		return managed.ExternalDelete{}, nil
	}
	cmd, err := kql.DropTable(mg.Spec.ForProvider.Table)
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	_, err = e.k.Mgmt(ctx, mg.Spec.ForProvider.Database, cmd)
	return managed.ExternalDelete{}, err
}

func (e *external) Disconnect(context.Context) error { return e.k.Close() }
