// Package standin plays the controllers that cannot run here: the upjet
// Azure provider's, for ResourceGroup, Kusto Cluster and Kusto Database
// managed resources. It writes the status a real provider would, backs each
// Cluster with a local Kusto server, keeps an "Azure" inventory so tests
// can tell an orphaned resource from a deleted one, and honours management
// policies on deletion the way crossplane-runtime does.
//
// It is test and demo code, installed with the real upjet CRDs.
package standin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/kustoserver"
)

// finalizer is what a real provider's finalizer stands for: the MR may not
// go before its external resource is dealt with.
const finalizer = "finalizer.managedresource.crossplane.io"

// Kinds the stand-in serves.
var (
	ResourceGroup = schema.GroupVersionKind{Group: "azure.m.upbound.io", Version: "v1beta1", Kind: "ResourceGroup"}
	Cluster       = schema.GroupVersionKind{Group: "kusto.azure.m.upbound.io", Version: "v1beta1", Kind: "Cluster"}
	Database      = schema.GroupVersionKind{Group: "kusto.azure.m.upbound.io", Version: "v1beta1", Kind: "Database"}
)

// Azure is the stand-in provider and its inventory of external resources.
type Azure struct {
	kube client.Client
	// ProvisionDelay is how long a Cluster takes to become Ready, so that
	// the Waiting state can be seen.
	ProvisionDelay time.Duration
	// Forbidden lists subscriptions (by ProviderConfig name) that refuse
	// every request with 403, as Azure does for an identity without rights.
	Forbidden map[string]bool

	mu       sync.Mutex
	external map[string]string // kind/name -> "exists" | "deleted"
	clusters map[string]*kustoserver.Server
	first    map[string]time.Time
}

// New returns a stand-in using kube.
func New(kube client.Client) *Azure {
	return &Azure{kube: kube, ProvisionDelay: 2 * time.Second, Forbidden: map[string]bool{},
		external: map[string]string{}, clusters: map[string]*kustoserver.Server{}, first: map[string]time.Time{}}
}

// State is "exists", "deleted" or "" (never created) for a kind's
// external resource.
func (a *Azure) State(kind, externalName string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.external[kind+"/"+externalName]
}

// ClusterServer is the Kusto server backing a provisioned cluster.
func (a *Azure) ClusterServer(name string) *kustoserver.Server {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.clusters[name]
}

// Run reconciles until ctx is done.
func (a *Azure) Run(ctx context.Context) {
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for {
		for _, gvk := range []schema.GroupVersionKind{ResourceGroup, Cluster, Database} {
			a.reconcileAll(ctx, gvk)
		}
		select {
		case <-ctx.Done():
			a.mu.Lock()
			for _, s := range a.clusters {
				_ = s.Close()
			}
			a.mu.Unlock()
			return
		case <-t.C:
		}
	}
}

func (a *Azure) reconcileAll(ctx context.Context, gvk schema.GroupVersionKind) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := a.kube.List(ctx, l); err != nil {
		return
	}
	for i := range l.Items {
		a.reconcile(ctx, &l.Items[i])
	}
}

func (a *Azure) reconcile(ctx context.Context, mr *unstructured.Unstructured) {
	kind := mr.GetKind()
	ext := mr.GetAnnotations()["crossplane.io/external-name"]
	if ext == "" {
		ext = mr.GetName()
	}
	key := kind + "/" + ext
	pc, _, _ := unstructured.NestedString(mr.Object, "spec", "providerConfigRef", "name")

	if mr.GetDeletionTimestamp() != nil {
		if a.Forbidden[pc] {
			return // a real provider cannot delete either; the MR stays
		}
		policies, _, _ := unstructured.NestedStringSlice(mr.Object, "spec", "managementPolicies")
		a.mu.Lock()
		if slices.Contains(policies, "*") || slices.Contains(policies, "Delete") {
			a.external[key] = "deleted"
			if s := a.clusters[ext]; s != nil && kind == Cluster.Kind {
				_ = s.Close()
				delete(a.clusters, ext)
			}
		}
		a.mu.Unlock()
		mr.SetFinalizers(slices.DeleteFunc(mr.GetFinalizers(), func(f string) bool { return f == finalizer }))
		_ = a.kube.Update(ctx, mr)
		return
	}
	if !slices.Contains(mr.GetFinalizers(), finalizer) {
		mr.SetFinalizers(append(mr.GetFinalizers(), finalizer))
		if err := a.kube.Update(ctx, mr); err != nil {
			return
		}
	}

	if a.Forbidden[pc] {
		a.setStatus(ctx, mr, nil, false, fmt.Sprintf("create failed: async create failed: failed to create the resource: [{0 creating %s (Subscription: %q): unexpected status 403 (403 Forbidden) with error: AuthorizationFailed: The client does not have authorization to perform action  []}]", kind, pc))
		return
	}

	atProvider := map[string]any{"id": "/subscriptions/" + pc + "/" + strings.ToLower(kind) + "/" + ext}
	ready := true
	switch kind {
	case Cluster.Kind:
		a.mu.Lock()
		if _, ok := a.first[key]; !ok {
			a.first[key] = time.Now()
		}
		ready = time.Since(a.first[key]) >= a.ProvisionDelay
		s := a.clusters[ext]
		a.mu.Unlock()
		if !ready {
			break
		}
		if s == nil {
			s = kustoserver.New()
			if err := s.Start("127.0.0.1:0"); err != nil {
				return
			}
			a.mu.Lock()
			a.clusters[ext] = s
			a.mu.Unlock()
		}
		sku, _, _ := unstructured.NestedMap(mr.Object, "spec", "forProvider", "sku")
		identity, _, _ := unstructured.NestedMap(mr.Object, "spec", "forProvider", "identity")
		atProvider["uri"] = s.URL
		atProvider["sku"] = sku
		atProvider["identity"] = identity
	case Database.Kind:
		cluster, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "clusterName")
		s := a.ClusterServer(cluster)
		if s == nil {
			a.setStatus(ctx, mr, nil, false, fmt.Sprintf("create failed: cluster %s not found", cluster))
			return
		}
		s.CreateDatabase(ext)
	}
	if ready {
		a.mu.Lock()
		a.external[key] = "exists"
		a.mu.Unlock()
	}
	a.setStatus(ctx, mr, atProvider, ready, "")
}

// setStatus writes Ready and Synced as crossplane-runtime would.
func (a *Azure) setStatus(ctx context.Context, mr *unstructured.Unstructured, atProvider map[string]any, ready bool, syncErr string) {
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
	// Write only changes: every write wakes Crossplane's watches.
	// Maps marshal with sorted keys, so equal statuses marshal alike.
	b, _ := json.Marshal(status)
	if old, _ := json.Marshal(mr.Object["status"]); bytes.Equal(old, b) {
		return
	}
	mr.Object["status"] = status
	_ = a.kube.Status().Update(ctx, mr)
}
