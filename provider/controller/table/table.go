// Package table reconciles Kusto Table managed resources: a table exists
// with at least the desired columns. Columns are only ever added
// (.create-merge); existing columns and data are left alone.
//
// A Table that found its table already there adopts it; only a table it
// created is dropped on delete. Which it was is recorded in an annotation,
// which crossplane-runtime persists with the others right after Create:
// status alone could be lost.
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

// AnnotationCreated records the table a Table created, as database.table.
const AnnotationCreated = "kusto.fleetplane.io/created-table"

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
	k, err := s.Client(mg.Spec.ForProvider.Endpoint, "")
	if err != nil {
		return nil, err
	}
	return &external{k: k}, nil
}

// kustoClient is what a Table needs of its cluster.
type kustoClient interface {
	Mgmt(ctx context.Context, db, command string) ([]query.Row, error)
	Close() error
}

type external struct{ k kustoClient }

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
	if meta.WasDeleted(mg) && !createdHere(mg) {
		// An adopted table stays: as far as deleting this resource goes,
		// there is nothing left to delete.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	p := mg.Spec.ForProvider
	cmd, err := kql.ShowTableSchema(p.Table)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	rows, err := e.k.Mgmt(ctx, p.Database, cmd)
	if kusto.ClassOf(err) == kusto.NotFound {
		mg.Status.AtProvider = v1alpha1.TableObservation{}
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("table %s does not exist in database %s", p.Table, p.Database)))
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
	mg.Status.AtProvider = v1alpha1.TableObservation{Exists: true, Schema: schema, Created: createdHere(mg)}

	live := parseSchema(schema)
	var missing, mismatched []string
	for _, c := range p.Columns {
		t, ok := live[c.Name]
		switch {
		case !ok:
			missing = append(missing, c.Name)
		case t != c.Type:
			mismatched = append(mismatched, fmt.Sprintf("%s is %s, not %s", c.Name, t, c.Type))
		}
	}
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

func (e *external) merge(ctx context.Context, mg *v1alpha1.Table) error {
	cmd, err := kql.CreateMergeTable(mg.Spec.ForProvider.Table, columns(mg.Spec.ForProvider))
	if err != nil {
		return err
	}
	_, err = e.k.Mgmt(ctx, mg.Spec.ForProvider.Database, cmd)
	return err
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalCreation, error) {
	if err := e.merge(ctx, mg); err != nil {
		return managed.ExternalCreation{}, err
	}
	meta.AddAnnotations(mg, map[string]string{AnnotationCreated: tableID(mg)})
	return managed.ExternalCreation{}, nil
}

func tableID(mg *v1alpha1.Table) string {
	return mg.Spec.ForProvider.Database + "." + mg.Spec.ForProvider.Table
}

// createdHere reports whether this resource created the table it names.
func createdHere(mg *v1alpha1.Table) bool {
	return mg.GetAnnotations()[AnnotationCreated] == tableID(mg)
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, e.merge(ctx, mg)
}

// Delete drops the table when this resource created it. It runs only when
// the management policies allow deletion; fleetplane's compositions leave
// heartbeat tables in place unless the XR asks otherwise. A table this
// resource adopted held data before it came, and someone else's.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.Table) (managed.ExternalDelete, error) {
	if !createdHere(mg) {
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
