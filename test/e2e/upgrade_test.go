package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/environment"
)

// TestUpgrade releases v0.2.0 (a new function package; fleetplane-adx
// requiring it; fleetplane requiring that), updates the installed
// Configuration with `crossplane xpkg update`, and checks that the package
// manager rolls the function to a new revision while an existing XR keeps
// every composed resource it had and stays Ready, composed by the new
// revision.
func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	hub := kusto(t, "FleetDiscovery")
	apply(t, xr(t, hubXR(ns, "hub", hub.URL)))
	eventually(t, 2*time.Minute, "hub Ready before the upgrade", func() (bool, string) {
		s, r, m := condition(getXR(t, ns, "hub"), "Ready")
		return s == "True", r + ": " + m
	})
	before := composedUIDs(t, ns, "hub")
	if len(before) == 0 {
		t.Fatal("the hub composed nothing")
	}
	fn := &pkgv1.Function{}
	if err := env.Kube.Get(ctx, client.ObjectKey{Name: environment.FunctionName}, fn); err != nil {
		t.Fatal(err)
	}
	oldRevision := fn.Status.CurrentRevision

	const next = "v0.2.0"
	if err := env.Release(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := env.CrossplaneCLI(ctx, "xpkg", "update", "configuration", environment.ConfigurationSource+":"+next, environment.ConfigurationName); err != nil {
		t.Fatal(err)
	}
	if err := env.WaitFunctionRevision(ctx, environment.FunctionSource+":"+next, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the function rolled to "+next+" and healthy", func() (bool, string) {
		if err := env.Kube.Get(ctx, client.ObjectKey{Name: environment.FunctionName}, fn); err != nil {
			return false, err.Error()
		}
		h := fn.GetCondition(pkgv1.TypeHealthy)
		return fn.Status.CurrentRevision != oldRevision && h.Status == "True",
			fmt.Sprintf("package %s, revision %s (was %s), healthy %s: %s", fn.Spec.Package, fn.Status.CurrentRevision, oldRevision, h.Status, h.Message)
	})
	eventually(t, time.Minute, "the Lock lists the new versions", func() (bool, string) {
		have, resolved, err := env.Locked(ctx)
		if err != nil {
			return false, err.Error()
		}
		return resolved && have[environment.FunctionSource] == next && have["ghcr.io/fleetplane/fleetplane-adx"] == next,
			fmt.Sprintf("resolved %t, %v", resolved, have)
	})
	old := &pkgv1.FunctionRevision{}
	if err := env.Kube.Get(ctx, client.ObjectKey{Name: oldRevision}, old); err != nil {
		t.Fatal(err)
	}
	if old.Spec.DesiredState != pkgv1.PackageRevisionInactive {
		t.Errorf("old revision %s is %s, want Inactive", oldRevision, old.Spec.DesiredState)
	}

	// The XR is composed again, by the new revision: an edit of its
	// spec reaches its composed resources, which are the same objects.
	// A merge patch, as kubectl edit sends: Crossplane writes the XR
	// too, and an update of a copy read before it would conflict.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"federation":{"heartbeatTTL":"2h"}}}`))
	if err := env.Kube.Patch(ctx, getXR(t, ns, "hub"), patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the hub Ready with the edit applied after the upgrade", func() (bool, string) {
		x := getXR(t, ns, "hub")
		s, r, m := condition(x, "Ready")
		synced, _, _ := condition(x, "Synced")
		gen, obs := x.GetGeneration(), observedGeneration(x, "Synced")
		ttl := ""
		for ref := range composedUIDs(t, ns, "hub") {
			if kind, n, _ := strings.Cut(ref, "/"); kind == "Federation" {
				ttl, _, _ = unstructured.NestedString(get(t, "kusto.m.fleetplane.io/v1alpha1", kind, ns, n).Object, "spec", "forProvider", "heartbeatTTL")
			}
		}
		return s == "True" && synced == "True" && obs == gen && ttl == "2h",
			fmt.Sprintf("Ready %s %s: %s; Synced %s at generation %d of %d; Federation's heartbeatTTL %q", s, r, m, synced, obs, gen, ttl)
	})
	after := composedUIDs(t, ns, "hub")
	for ref, uid := range before {
		if after[ref] != uid {
			t.Errorf("composed %s: uid %s before the upgrade, %q after", ref, uid, after[ref])
		}
	}
}

// composedUIDs maps each composed resource of an ADXCluster to its UID.
func composedUIDs(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	refs, _, _ := unstructured.NestedSlice(getXR(t, ns, name).Object, "spec", "crossplane", "resourceRefs")
	for _, r := range refs {
		m, _ := r.(map[string]any)
		api, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		n, _ := m["name"].(string)
		if o := get(t, api, kind, ns, n); o != nil {
			out[kind+"/"+n] = string(o.GetUID())
		}
	}
	return out
}

// observedGeneration is a condition's observedGeneration, -1 when absent.
func observedGeneration(u *unstructured.Unstructured, typ string) int64 {
	m := conditionOf(u, typ)
	if m == nil {
		return -1
	}
	g, _ := m["observedGeneration"].(int64)
	return g
}
