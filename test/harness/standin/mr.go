package standin

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// setStatus writes Ready and Synced as crossplane-runtime would.
func setStatus(ctx context.Context, kube client.Client, mr *unstructured.Unstructured, atProvider map[string]any, ready bool, syncErr string) {
	now := time.Now().UTC().Format(time.RFC3339)
	readyCond := map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "lastTransitionTime": now}
	if ready {
		readyCond = map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now}
	}
	synced := map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": now}
	if syncErr != "" {
		synced = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": syncErr, "lastTransitionTime": now}
	}
	// Keep transition times stable when nothing changed, as a real provider
	// does, so watchers see no churn.
	old, _, _ := unstructured.NestedSlice(mr.Object, "status", "conditions")
	conds := []any{readyCond, synced}
	for i, c := range conds {
		cm := c.(map[string]any)
		for _, o := range old {
			om, _ := o.(map[string]any)
			if om["type"] == cm["type"] && om["status"] == cm["status"] && om["reason"] == cm["reason"] && om["message"] == cm["message"] {
				conds[i] = om
			}
		}
	}
	status := map[string]any{"conditions": conds}
	if atProvider != nil {
		status["atProvider"] = atProvider
	}
	writeStatus(ctx, kube, mr, status, true)
}

// writeStatus writes status only when it changed: every write wakes
// Crossplane's watches. Maps marshal with sorted keys, so equal statuses
// marshal alike. subresource says whether the kind has a status
// subresource (Argo's kinds do not).
func writeStatus(ctx context.Context, kube client.Client, o *unstructured.Unstructured, status map[string]any, subresource bool) {
	b, _ := json.Marshal(status)
	if old, _ := json.Marshal(o.Object["status"]); bytes.Equal(old, b) {
		return
	}
	o.Object["status"] = status
	if subresource {
		_ = kube.Status().Update(ctx, o)
		return
	}
	_ = kube.Update(ctx, o)
}

// ensureFinalizer adds f to o; false means o could not be updated and the
// caller should come back later.
func ensureFinalizer(ctx context.Context, kube client.Client, o *unstructured.Unstructured, f string) bool {
	if slices.Contains(o.GetFinalizers(), f) {
		return true
	}
	o.SetFinalizers(append(o.GetFinalizers(), f))
	return kube.Update(ctx, o) == nil
}

// removeFinalizer lets o go.
func removeFinalizer(ctx context.Context, kube client.Client, o *unstructured.Unstructured, f string) {
	if !slices.Contains(o.GetFinalizers(), f) {
		return
	}
	o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(s string) bool { return s == f }))
	_ = kube.Update(ctx, o)
}

// list lists a kind, in all namespaces unless ns is given.
func list(ctx context.Context, kube client.Client, gvk schema.GroupVersionKind, ns string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := kube.List(ctx, l, opts...); err != nil {
		return nil
	}
	return l.Items
}

// every runs pass, as a controller's resync would, every 300 ms until ctx
// is done.
func every(ctx context.Context, pass func()) {
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for {
		pass()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
