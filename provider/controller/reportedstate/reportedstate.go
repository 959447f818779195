// Package reportedstate reconciles ReportedStates: the status the one
// cluster a Placement delivers an object to reports, written into that
// workload object's own status, as KubeStellar's
// wantSingletonReportedState does.
//
// Writing a status is power a tenant does not otherwise have, and what
// drives controllers on the control plane (a PodDisruptionBudget's status
// allows evictions), so a ReportedState writes only the kinds the
// namespace's policy lists (spec.placement.reportedStateKinds of the
// ClusterProviderConfig it names, which the cluster admin writes; the
// function names the one that governs the namespace), only when the
// Placement named in it is its controller, lists it among the resources
// it composes, wants singleton reported state and selects the object; the
// object must be namespaced and in the ReportedState's own namespace. It
// never fights another writer: a status someone rewrote after it wrote
// its own is reported, not overwritten, until the cluster reports
// something new. It also keeps the object's kubestellar.io/executing-count
// label at the number of clusters the function counts it executing on,
// patching that one key (decision 0013). Removing a ReportedState clears
// the status and the label it wrote, and only those, whatever the policy
// says by then.
//
// It acts on the control plane the provider runs on.
package reportedstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/placement/m/v1alpha1"
	placementv1alpha1 "github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/internal/tenancy"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
)

// FieldOwner is the field manager of the statuses written, as the
// object's managedFields show it.
const FieldOwner = "provider-fleetplane-reported-state"

// Setup adds the ReportedState controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	// Workload objects are read straight from the API server: caching
	// every object of every kind a Placement may select would cost a
	// watch per kind and memory for all of them.
	c := &connector{read: mgr.GetAPIReader(), write: mgr.GetClient(), mapper: mgr.GetRESTMapper(), now: time.Now, grants: shared.NewGrants(mgr.GetClient())}
	return shared.Managed(mgr, o, v1alpha1.ReportedStateGroupVersionKind, &v1alpha1.ReportedState{}, c, shared.Options{
		Reconciler: []managed.ReconcilerOption{managed.WithInitializers(), managed.WithCreationGracePeriod(0)},
	})
}

type connector struct {
	read   client.Reader
	write  client.Client
	mapper apimeta.RESTMapper
	now    func() time.Time
	grants *shared.Grants
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.ReportedState) (managed.TypedExternalClient[*v1alpha1.ReportedState], error) {
	if meta.WasDeleted(mg) {
		// Clearing what it wrote needs no grant: a revoked policy must
		// not leave a status written under it.
		return &external{connector: c}, nil
	}
	g, err := c.grants.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	p, err := g.PlacementPolicy()
	if err != nil {
		return nil, err
	}
	return &external{connector: c, policy: &p}, nil
}

type external struct {
	*connector
	// policy is what the namespace's policy lets Placements do; nil
	// while the ReportedState is deleted.
	policy *tenancy.Placement
	// live is the workload object Observe read, for Update and Delete of
	// the same reconcile; want the status to write.
	live *unstructured.Unstructured
	want map[string]any
	// reported is want's digest.
	reported string
	// count is the executing-count label to write, nil when it is as
	// wanted.
	count *string
	// clearStatus and clearCount: what Delete clears, as observeDeleted
	// found it still as written.
	clearStatus, clearCount bool
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.ReportedState) (managed.ExternalObservation, error) {
	ref := mg.Spec.ForProvider.Object
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	// What Update or Delete is to do is this observation's alone.
	e.live, e.want, e.reported, e.count, e.clearStatus, e.clearCount = nil, nil, "", nil, false, false
	if meta.WasDeleted(mg) {
		return e.observeDeleted(ctx, mg, gvk)
	}
	if err := e.namespaced(gvk); err != nil {
		return managed.ExternalObservation{}, err
	}
	want, reported, err := desired(mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if err := authorized(mg); err != nil {
		return managed.ExternalObservation{}, err
	}
	if e.policy == nil || !e.policy.ReportedState(gvk.Group, gvk.Kind) {
		return managed.ExternalObservation{}, fmt.Errorf("the policy does not let namespace %s have the status of %s written back (spec.placement.reportedStateKinds of the ClusterProviderConfig it names)", mg.Namespace, gvk.GroupKind())
	}
	// Nothing is ever created: the status is written into an object that
	// exists, or not at all.
	done := managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}
	live, found, err := e.get(ctx, mg, gvk)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if !found {
		mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("%s %s does not exist; nothing is written", ref.Kind, ref.Name)))
		return done, nil
	}
	p, err := e.placement(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if !p.Selects(gvk.GroupKind(), live.GetName(), live.GetLabels()) {
		return managed.ExternalObservation{}, fmt.Errorf("Placement %s does not select %s %s (spec.objects); a ReportedState writes only into objects its Placement placed", mg.Spec.ForProvider.Placement, ref.Kind, ref.Name) //nolint:staticcheck // Placement is a kind
	}
	if ref.UID != "" && string(live.GetUID()) != ref.UID {
		mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("%s %s is a newer object than the one placed; it is left alone", ref.Kind, ref.Name)))
		return done, nil
	}

	have := digestOf(live.Object["status"])
	obs := &mg.Status.AtProvider
	ours := obs.UID == string(live.GetUID()) && obs.Reported == reported
	statusDue := false
	switch {
	case have == reported || (ours && have == obs.Digest):
		// Written, as reported or as the API server normalised it.
		obs.UID, obs.Reported, obs.Digest = string(live.GetUID()), reported, have
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("%s %s holds the status %s", ref.Kind, ref.Name, reports(mg))))
	case ours:
		// What the cluster reports has not changed since it was written,
		// yet the status has: someone else writes it. Writing it back
		// each poll would make the two writers take turns forever.
		mg.SetConditions(xpv2.Unavailable().WithMessage(observe.Bound(fmt.Sprintf(
			"the status of %s %s was rewritten after fleetplane wrote it (status written by %s); it is not overwritten until what %s changes: does a controller for this kind run on this control plane?",
			ref.Kind, ref.Name, statusWriters(live), reports(mg)))))
	default:
		statusDue = true
	}
	count, countDue := executingCount(mg, live)
	if !statusDue && !countDue {
		return done, nil
	}
	e.live = live
	if statusDue {
		e.want, e.reported = want, reported
	}
	if countDue {
		e.count = &count
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: diff(statusDue, countDue, mg)}, nil
}

// executingCount is the executing-count label the spec asks for, and
// whether live lacks it. An annotation of the key holding what this
// resource last wrote is one it wrote before the count became a label
// (decision 0013): it is due to move too.
func executingCount(mg *v1alpha1.ReportedState, live *unstructured.Unstructured) (string, bool) {
	n := mg.Spec.ForProvider.ExecutingCount
	if n == nil {
		return "", false
	}
	want := strconv.Itoa(int(*n))
	return want, live.GetLabels()[placementv1alpha1.ExecutingCountLabel] != want || oldCount(mg, live)
}

// oldCount says whether live still carries the executing count this
// resource wrote as an annotation, before it was a label.
func oldCount(mg *v1alpha1.ReportedState, live *unstructured.Unstructured) bool {
	written := mg.Status.AtProvider.ExecutingCount
	return written != "" && live.GetAnnotations()[placementv1alpha1.ExecutingCountLabel] == written
}

// diff says what Update is to write.
func diff(status, count bool, mg *v1alpha1.ReportedState) string {
	var out []string
	if status {
		out = append(out, "status differs from what "+reports(mg))
	}
	if count {
		out = append(out, fmt.Sprintf("label %s is not %d", placementv1alpha1.ExecutingCountLabel, *mg.Spec.ForProvider.ExecutingCount))
	}
	return strings.Join(out, "; ")
}

// observeDeleted says whether a status or an executing count this
// resource wrote is still there to be cleared.
func (e *external) observeDeleted(ctx context.Context, mg *v1alpha1.ReportedState, gvk schema.GroupVersionKind) (managed.ExternalObservation, error) {
	obs := mg.Status.AtProvider
	// A kind no longer served or namespaced holds nothing to clear.
	if (obs.Digest == "" && obs.ExecutingCount == "") || !e.servesNamespaced(gvk) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	live, found, err := e.get(ctx, mg, gvk)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if !found || string(live.GetUID()) != obs.UID {
		// Gone or replaced: not ours to clear.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	// Each only while it is as written: a status or a label rewritten
	// since is someone else's.
	e.clearStatus = obs.Digest != "" && digestOf(live.Object["status"]) == obs.Digest
	e.clearCount = obs.ExecutingCount != "" && (live.GetLabels()[placementv1alpha1.ExecutingCountLabel] == obs.ExecutingCount || oldCount(mg, live))
	if !e.clearStatus && !e.clearCount {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.live = live
	return managed.ExternalObservation{ResourceExists: true}, nil
}

func (e *external) servesNamespaced(gvk schema.GroupVersionKind) bool {
	return e.namespaced(gvk) == nil
}

// namespaced refuses kinds that are not served or not namespaced.
func (e *external) namespaced(gvk schema.GroupVersionKind) error {
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if apimeta.IsNoMatchError(err) {
			return fmt.Errorf("kind %s of %s is not served", gvk.Kind, gvk.GroupVersion())
		}
		return fmt.Errorf("cannot map kind %s of %s: %w", gvk.Kind, gvk.GroupVersion(), err)
	}
	if m.Scope.Name() != apimeta.RESTScopeNameNamespace {
		return fmt.Errorf("%s is cluster-scoped; a ReportedState writes only into objects of its own namespace", gvk.GroupKind())
	}
	return nil
}

// desired is the status to write, decoded as the API server returns
// objects (integers as int64), and its digest. The spec is untrusted: its
// size is bounded here as well as by the composer.
func desired(mg *v1alpha1.ReportedState) (map[string]any, string, error) {
	raw := mg.Spec.ForProvider.Status.Raw
	if len(raw) > v1alpha1.MaxStatusBytes {
		return nil, "", fmt.Errorf("spec.forProvider.status is %d bytes, more than the %d a ReportedState writes", len(raw), v1alpha1.MaxStatusBytes)
	}
	var want map[string]any
	if err := utiljson.Unmarshal(raw, &want); err != nil || want == nil {
		return nil, "", errors.New("spec.forProvider.status is not a JSON object")
	}
	return want, digestOf(want), nil
}

// authorized checks that the Placement named is the ReportedState's
// controller; placement then checks the Placement's own record of it.
func authorized(mg *v1alpha1.ReportedState) error {
	name := mg.Spec.ForProvider.Placement
	owner := metav1.GetControllerOf(mg)
	if owner == nil || owner.APIVersion != placementv1alpha1.SchemeGroupVersion.String() || owner.Kind != placementv1alpha1.PlacementKind || owner.Name != name {
		return fmt.Errorf("a ReportedState writes only for the Placement that composed it; Placement %s is not its controller", name)
	}
	return nil
}

// placement reads the Placement and checks it composed mg and wants its
// singleton reported state; it returns the Placement's spec.
func (e *external) placement(ctx context.Context, mg *v1alpha1.ReportedState) (placementv1alpha1.PlacementSpec, error) {
	name := mg.Spec.ForProvider.Placement
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(placementv1alpha1.SchemeGroupVersion.WithKind(placementv1alpha1.PlacementKind))
	if err := e.read.Get(ctx, types.NamespacedName{Namespace: mg.Namespace, Name: name}, u); err != nil {
		if kerrors.IsNotFound(err) {
			return placementv1alpha1.PlacementSpec{}, fmt.Errorf("Placement %s does not exist", name) //nolint:staticcheck // Placement is a kind
		}
		return placementv1alpha1.PlacementSpec{}, fmt.Errorf("cannot read Placement %s: %w", name, err)
	}
	if owner := metav1.GetControllerOf(mg); u.GetUID() != owner.UID {
		return placementv1alpha1.PlacementSpec{}, fmt.Errorf("Placement %s is a newer object than the one that composed this ReportedState", name) //nolint:staticcheck // Placement is a kind
	}
	if !shared.ComposedBy(u, v1alpha1.ReportedStateGroupVersionKind, mg.Namespace, mg.Name) {
		return placementv1alpha1.PlacementSpec{}, fmt.Errorf("Placement %s does not compose this ReportedState (its spec.crossplane.resourceRefs do not name it)", name) //nolint:staticcheck // Placement is a kind
	}
	var spec placementv1alpha1.PlacementSpec
	m, _, _ := unstructured.NestedMap(u.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
		return placementv1alpha1.PlacementSpec{}, fmt.Errorf("cannot decode the spec of Placement %s: %w", name, err)
	}
	switch {
	case len(mg.Spec.ForProvider.Clusters) > 0 && !spec.WantMultiClusterReportedState:
		return placementv1alpha1.PlacementSpec{}, fmt.Errorf("Placement %s does not set spec.wantMultiClusterReportedState", name) //nolint:staticcheck // Placement is a kind
	case len(mg.Spec.ForProvider.Clusters) == 0 && !spec.WantSingletonReportedState:
		return placementv1alpha1.PlacementSpec{}, fmt.Errorf("Placement %s does not set spec.wantSingletonReportedState", name) //nolint:staticcheck // Placement is a kind
	}
	return spec, nil
}

// reports says where the status comes from, for messages: "cluster wec1
// reports", "its 3 clusters report, aggregated".
func reports(mg *v1alpha1.ReportedState) string {
	if n := len(mg.Spec.ForProvider.Clusters); n > 0 {
		return fmt.Sprintf("its %d clusters report, aggregated", n)
	}
	return "cluster " + mg.Spec.ForProvider.Cluster + " reports"
}

// get reads the workload object, and whether it exists.
func (e *external) get(ctx context.Context, mg *v1alpha1.ReportedState, gvk schema.GroupVersionKind) (*unstructured.Unstructured, bool, error) {
	ref := mg.Spec.ForProvider.Object
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := e.read.Get(ctx, types.NamespacedName{Namespace: mg.Namespace, Name: ref.Name}, u)
	switch {
	case kerrors.IsNotFound(err):
		return nil, false, nil
	case kerrors.IsForbidden(err):
		return nil, false, fmt.Errorf("provider-fleetplane may not read %s: grant it get and patch on %s and update on its status (package/rbac/provider-fleetplane.yaml)", gvk.GroupKind(), strings.ToLower(gvk.Kind))
	case err != nil:
		return nil, false, fmt.Errorf("cannot read %s %s: %w", ref.Kind, ref.Name, err)
	}
	return u, true, nil
}

// Create is never called: Observe always reports the object exists.
func (e *external) Create(context.Context, *v1alpha1.ReportedState) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Update writes the status and the executing count, as Observe found
// them due. The status write carries the resourceVersion read, so a
// status another writer changed in between is not overwritten unseen.
func (e *external) Update(ctx context.Context, mg *v1alpha1.ReportedState) (managed.ExternalUpdate, error) {
	ref := mg.Spec.ForProvider.Object
	if e.want != nil {
		if err := e.writeStatus(ctx, e.want); err != nil {
			if kerrors.IsForbidden(err) {
				return managed.ExternalUpdate{}, fmt.Errorf("provider-fleetplane may not write the status of %s: grant it update on %s/status (package/rbac/provider-fleetplane.yaml)", e.live.GroupVersionKind().GroupKind(), strings.ToLower(ref.Kind))
			}
			return managed.ExternalUpdate{}, fmt.Errorf("cannot write the status of %s %s: %w", ref.Kind, ref.Name, err)
		}
		// The write returned the object as stored, which may differ from
		// what was sent by what the API server prunes or defaults.
		now := metav1.NewTime(e.now())
		mg.Status.AtProvider = v1alpha1.ReportedStateObservation{
			UID: string(e.live.GetUID()), Reported: e.reported, Digest: digestOf(e.live.Object["status"]), WrittenAt: &now,
			ExecutingCount: mg.Status.AtProvider.ExecutingCount,
		}
		mg.SetConditions(xpv2.Available().WithMessage(fmt.Sprintf("%s %s holds the status %s", ref.Kind, ref.Name, reports(mg))))
	}
	if e.count != nil {
		annotated := oldCount(mg, e.live)
		if err := e.record(ctx, mg, *e.count); err != nil {
			return managed.ExternalUpdate{}, err
		}
		var v any = *e.count
		if err := e.label(ctx, v, annotated); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	return managed.ExternalUpdate{}, nil
}

// record stores, in the ReportedState's status and before the label is
// written, the count it is about to write: what proves, at deletion, that
// the label is its to clear. Recorded only after, as crossplane-runtime
// stores the status once Update returns, a ReportedState deleted in
// between (its Placement spreading to a second cluster) never learnt it
// had written the label, and left it behind. A record the label write
// then misses is harmless: deletion clears only a label that holds it.
func (e *external) record(ctx context.Context, mg *v1alpha1.ReportedState, count string) error {
	at := &mg.Status.AtProvider
	uid := string(e.live.GetUID())
	if at.UID == uid && at.ExecutingCount == count {
		return nil
	}
	at.UID, at.ExecutingCount = uid, count
	if err := e.write.Status().Update(ctx, mg); err != nil {
		return fmt.Errorf("cannot record the executing count before writing it: %w", err)
	}
	return nil
}

// label sets the executing-count label to v, or removes it when v is
// nil, by a merge patch of that one key: the rest of the object is not
// this controller's. With annotated it removes too the annotation of the
// key this resource wrote before the count was a label (oldCount). The patch carries the UID read, which the API server refuses to
// change, so a newer object of the same name is never labelled. An object
// gone meanwhile has nothing to label.
func (e *external) label(ctx context.Context, v any, annotated bool) error {
	ref := e.live.GroupVersionKind()
	md := map[string]any{
		"uid":    e.live.GetUID(),
		"labels": map[string]any{placementv1alpha1.ExecutingCountLabel: v},
	}
	if annotated {
		md["annotations"] = map[string]any{placementv1alpha1.ExecutingCountLabel: nil}
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	u := e.live.DeepCopy()
	err = e.write.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner))
	switch {
	case kerrors.IsNotFound(err):
		return nil
	case kerrors.IsForbidden(err):
		return fmt.Errorf("provider-fleetplane may not label %s with the executing count: grant it patch on %s (package/rbac/provider-fleetplane.yaml)", ref.GroupKind(), strings.ToLower(ref.Kind))
	case err != nil:
		return fmt.Errorf("cannot label %s %s with the executing count: %w", ref.Kind, e.live.GetName(), err)
	}
	e.live = u
	return nil
}

// Delete clears the status this resource wrote: with no single cluster
// reporting, it would claim a state nobody reports. Some kinds keep
// fields once set (a Job its startTime): when the API server refuses the
// empty status and names such fields, those alone stay. A status the API
// server will not clear at all is left as it is, and the deletion goes
// on. The executing-count label it wrote goes too.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.ReportedState) (managed.ExternalDelete, error) {
	if e.clearStatus {
		if err := e.clearWritten(ctx, mg); err != nil {
			return managed.ExternalDelete{}, err
		}
	}
	if e.clearCount {
		if err := e.label(ctx, nil, oldCount(mg, e.live)); err != nil {
			return managed.ExternalDelete{}, err
		}
		mg.Status.AtProvider.ExecutingCount = ""
	}
	return managed.ExternalDelete{}, nil
}

// clearWritten clears the status this resource wrote.
func (e *external) clearWritten(ctx context.Context, mg *v1alpha1.ReportedState) error {
	ref := mg.Spec.ForProvider.Object
	written, _ := e.live.Object["status"].(map[string]any)
	err := e.writeStatus(ctx, map[string]any{})
	if kerrors.IsInvalid(err) {
		if kept := kept(err, written); len(kept) > 0 {
			err = e.writeStatus(ctx, kept)
		}
	}
	switch {
	case err == nil, kerrors.IsNotFound(err), kerrors.IsInvalid(err):
		// Either way this resource has nothing left to clear.
		mg.Status.AtProvider.Digest, mg.Status.AtProvider.Reported = "", ""
		return nil
	default:
		return fmt.Errorf("cannot clear the status of %s %s: %w", ref.Kind, ref.Name, err)
	}
}

// writeStatus replaces the live object's status. A refused write leaves
// e.live as it was read.
func (e *external) writeStatus(ctx context.Context, status map[string]any) error {
	u := e.live.DeepCopy()
	u.Object["status"] = status
	if err := e.write.Status().Update(ctx, u, client.FieldOwner(FieldOwner)); err != nil {
		return err
	}
	e.live = u
	return nil
}

// kept is the part of status made of the top-level fields an Invalid
// error names (status.startTime: the field cannot be removed).
func kept(err error, status map[string]any) map[string]any {
	var se kerrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return nil
	}
	out := map[string]any{}
	for _, c := range se.Status().Details.Causes {
		f, ok := strings.CutPrefix(c.Field, "status.")
		if !ok {
			continue
		}
		f, _, _ = strings.Cut(f, ".")
		f, _, _ = strings.Cut(f, "[")
		if v, ok := status[f]; ok {
			out[f] = v
		}
	}
	return out
}

func (e *external) Disconnect(context.Context) error { return nil }

// digestOf is the SHA-256 of v as JSON; encoding/json sorts map keys, so
// equal values have equal digests.
func digestOf(v any) string {
	if v == nil {
		v = map[string]any{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// statusWriters are the field managers of the object's status other than
// this controller, as its managedFields record them.
func statusWriters(u *unstructured.Unstructured) string {
	var out []string
	for _, f := range u.GetManagedFields() {
		if f.Subresource == "status" && f.Manager != FieldOwner && !slices.Contains(out, f.Manager) {
			out = append(out, f.Manager)
		}
	}
	if len(out) == 0 {
		return "an unknown writer"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
