// Package standin plays the controllers that cannot run here and writes
// the status the real ones would: the upjet Azure provider (ResourceGroup,
// Kusto Cluster and Database, each Cluster backed by a local Kusto server),
// the upjet GCP provider (GKE Cluster and NodePool, with the kubeconfig
// connection Secret), Argo CD's application controller and Argo Workflows'
// workflow controller. Each keeps an inventory so that tests can tell an
// orphaned resource from a deleted one, and the order things went in.
//
// It is test and demo code, installed with the real upjet Azure, Argo CD
// and Argo Workflows CRDs, and with stand-in GKE CRDs (test/harness/standin/crds)
// because provider-upjet-gcp's module is not on the Go module proxy.
package standin

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

// finalizer is what a real provider's finalizer stands for: the MR may not
// go before its external resource is dealt with.
const finalizer = "finalizer.managedresource.crossplane.io"

// Kinds the stand-in serves.
var (
	ResourceGroup = schema.GroupVersionKind{Group: "azure.m.upbound.io", Version: "v1beta1", Kind: "ResourceGroup"}
	Cluster       = schema.GroupVersionKind{Group: "kusto.azure.m.upbound.io", Version: "v1beta1", Kind: "Cluster"}
	Database      = schema.GroupVersionKind{Group: "kusto.azure.m.upbound.io", Version: "v1beta1", Kind: "Database"}
	Principal     = schema.GroupVersionKind{Group: "kusto.azure.m.upbound.io", Version: "v1beta1", Kind: "DatabasePrincipalAssignment"}
)

// annotationCreated is crossplane-runtime's record, on the MR, that its
// Create succeeded; it is never written for what Observe found.
const annotationCreated = "crossplane.io/external-create-succeeded"

// Azure is the stand-in provider and its inventory of external resources.
type Azure struct {
	kube client.Client
	// ProvisionDelay is how long a Cluster takes to become Ready, so that
	// the Waiting state can be seen.
	ProvisionDelay time.Duration
	// Forbidden lists subscriptions (by ProviderConfig name) that refuse
	// every request with 403, as Azure does for an identity without rights.
	Forbidden map[string]bool
	// Host is where provisioned clusters' Kusto servers listen unless
	// ServeOn says otherwise; loopback when empty.
	Host string

	mu       sync.Mutex
	external map[string]string // kind/name -> "exists" | "deleted"
	clusters map[string]*kustoserver.Server
	first    map[string]time.Time
	slow     map[string]time.Duration // cluster name -> its provisioning time
	hosts    map[string]string        // cluster name -> where its Kusto server listens
	capacity map[string]int32         // cluster name -> its instance count
	// applied is what Azure holds of each resource's spec: forProvider
	// over initProvider at its creation, forProvider again at each update
	// an MR may make (managementPolicies Update).
	applied map[string]map[string]any
	// updates counts, per resource, the reconciles that could have
	// updated it (its MR had Update), so a test can wait for a few.
	updates map[string]int
}

// ChangeSKUInAzure changes a provisioned cluster's SKU in Azure, as
// someone in the portal would, without its MR.
func (a *Azure) ChangeSKUInAzure(cluster, sku string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	held := a.applied[Cluster.Kind+"/"+cluster]
	if held == nil {
		return
	}
	m, _ := held["sku"].(map[string]any)
	m = maps.Clone(m)
	if m == nil {
		m = map[string]any{}
	}
	m["name"] = sku
	held["sku"] = m
}

// Updates is how many times the resource's MR was reconciled with Update
// among its management policies: each time, a real provider would have
// set Azure back to the MR's forProvider.
func (a *Azure) Updates(kind, externalName string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.updates[kind+"/"+externalName]
}

// Applied is what Azure holds of a resource's spec (nil when the
// stand-in never created or updated it), for tests that check nothing
// changed it.
func (a *Azure) Applied(kind, externalName string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return runtime.DeepCopyJSON(a.applied[kind+"/"+externalName])
}

// Capacity is a provisioned cluster's instance count in Azure; false
// when there is no such cluster.
func (a *Azure) Capacity(name string) (int32, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.capacity[name]
	return n, ok && a.external[Cluster.Kind+"/"+name] == "exists"
}

// ProvisionSlowly makes the cluster named name take d to provision, as a
// real one takes minutes, where a test needs the time that goes by.
func (a *Azure) ProvisionSlowly(name string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.slow[name] = d
}

// ServeOn makes the Kusto server of the cluster named name listen on
// host instead of loopback: a real node's Network.HostIP, where pods
// (adx-mon's ingestor) reach it.
func (a *Azure) ServeOn(name, host string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hosts[name] = host
}

// New returns a stand-in using kube.
func New(kube client.Client) *Azure {
	return &Azure{kube: kube, ProvisionDelay: 2 * time.Second, Forbidden: map[string]bool{},
		external: map[string]string{}, clusters: map[string]*kustoserver.Server{}, first: map[string]time.Time{}, slow: map[string]time.Duration{}, hosts: map[string]string{},
		capacity: map[string]int32{}, applied: map[string]map[string]any{}, updates: map[string]int{}}
}

// Exists records an external resource that is in Azure before any MR
// names it, as a resource group a team made by hand. A database is named
// cluster/database, a principal assignment cluster/database/name.
func (a *Azure) Exists(kind, externalName string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.external[kind+"/"+externalName] = "exists"
}

// State is "exists", "creating", "deleted" or "" (never created) for a
// kind's external resource.
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
	every(ctx, func() {
		for _, gvk := range []schema.GroupVersionKind{ResourceGroup, Cluster, Database, Principal} {
			a.reconcileAll(ctx, gvk)
		}
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.clusters {
		_ = s.Close()
	}
}

func (a *Azure) reconcileAll(ctx context.Context, gvk schema.GroupVersionKind) {
	items := list(ctx, a.kube, gvk, "")
	for i := range items {
		a.reconcile(ctx, &items[i])
	}
}

func (a *Azure) reconcile(ctx context.Context, mr *unstructured.Unstructured) {
	kind := mr.GetKind()
	ext := mr.GetAnnotations()["crossplane.io/external-name"]
	if ext == "" {
		ext = mr.GetName()
	}
	key := kind + "/" + qualified(mr, ext)
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
		removeFinalizer(ctx, a.kube, mr, finalizer)
		return
	}
	if !ensureFinalizer(ctx, a.kube, mr, finalizer) {
		return
	}

	if a.Forbidden[pc] {
		setStatus(ctx, a.kube, mr, nil, false, fmt.Sprintf("create failed: async create failed: failed to create the resource: [{0 creating %s (Subscription: %q): unexpected status 403 (403 Forbidden) with error: AuthorizationFailed: The client does not have authorization to perform action  []}]", kind, pc))
		return
	}

	// Create what is not there, and record it on the MR as
	// crossplane-runtime does; what exists is observed only, and changed
	// only by an MR whose policies include Update, as upjet does.
	policies, found, _ := unstructured.NestedStringSlice(mr.Object, "spec", "managementPolicies")
	if !found {
		policies = []string{"*"}
	}
	may := func(action string) bool { return slices.Contains(policies, "*") || slices.Contains(policies, action) }
	forProvider, _, _ := unstructured.NestedMap(mr.Object, "spec", "forProvider")
	a.mu.Lock()
	state := a.external[key]
	switch {
	case (state == "" || state == "deleted") && !may("Create"):
		a.mu.Unlock()
		setStatus(ctx, a.kube, mr, nil, false, fmt.Sprintf("cannot observe external resource: %s %s does not exist, and the management policies do not let this MR create it", kind, ext))
		return
	case state == "" || state == "deleted":
		state = "creating"
		a.external[key] = state
		initProvider, _, _ := unstructured.NestedMap(mr.Object, "spec", "initProvider")
		applied := runtime.DeepCopyJSON(initProvider)
		if applied == nil {
			applied = map[string]any{}
		}
		maps.Copy(applied, runtime.DeepCopyJSON(forProvider))
		a.applied[key] = applied
	case may("Update") && a.applied[key] != nil:
		maps.Copy(a.applied[key], runtime.DeepCopyJSON(forProvider))
		a.updates[key]++
	}
	a.mu.Unlock()
	if state == "creating" && mr.GetAnnotations()[annotationCreated] == "" {
		ann := mr.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[annotationCreated] = time.Now().UTC().Format(time.RFC3339)
		mr.SetAnnotations(ann)
		if err := a.kube.Update(ctx, mr); err != nil {
			return
		}
	}

	atProvider := map[string]any{"id": "/subscriptions/" + pc + "/" + strings.ToLower(kind) + "/" + ext}
	ready := true
	switch kind {
	case Cluster.Kind:
		a.mu.Lock()
		if _, ok := a.first[key]; !ok {
			a.first[key] = time.Now()
		}
		delay := a.ProvisionDelay
		if d, ok := a.slow[ext]; ok {
			delay = d
		}
		ready = time.Since(a.first[key]) >= delay
		s := a.clusters[ext]
		a.mu.Unlock()
		if !ready {
			break
		}
		if s == nil {
			s = kustoserver.New()
			a.mu.Lock()
			host, ok := a.hosts[ext]
			a.mu.Unlock()
			if !ok {
				host = cmp.Or(a.Host, "127.0.0.1")
			}
			if err := s.Start(host + ":0"); err != nil {
				return
			}
			a.mu.Lock()
			a.clusters[ext] = s
			a.mu.Unlock()
		}
		// upjet creates from forProvider merged over initProvider, then
		// updates what forProvider sets: a capacity there scales the
		// cluster, one only in initProvider is its size at creation.
		sku, _, _ := unstructured.NestedMap(mr.Object, "spec", "forProvider", "sku")
		initSKU, _, _ := unstructured.NestedMap(mr.Object, "spec", "initProvider", "sku")
		if sku == nil {
			sku = map[string]any{}
		}
		for k, v := range initSKU {
			if _, ok := sku[k]; !ok {
				sku[k] = v
			}
		}
		a.mu.Lock()
		n, has := sku["capacity"].(int64)
		if _, created := a.capacity[ext]; has && (!created || forProviderSets(mr, "capacity") && may("Update")) {
			a.capacity[ext] = int32(n)
		}
		if c, ok := a.capacity[ext]; ok {
			sku["capacity"] = int64(c)
		}
		// What Azure holds, not what this MR asks: an MR that found the
		// cluster sees its owner's identities, and a SKU changed in Azure
		// (ChangeSKUInAzure) shows.
		identity, _, _ := unstructured.NestedMap(a.applied[key], "identity")
		if name, ok, _ := unstructured.NestedString(a.applied[key], "sku", "name"); ok {
			sku["name"] = name
		}
		a.mu.Unlock()
		atProvider["uri"] = s.URL
		atProvider["sku"] = sku
		atProvider["identity"] = identity
	case Database.Kind:
		cluster, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "clusterName")
		s := a.ClusterServer(cluster)
		if s == nil {
			setStatus(ctx, a.kube, mr, nil, false, fmt.Sprintf("create failed: cluster %s not found", cluster))
			return
		}
		s.CreateDatabase(ext)
	}
	if ready {
		a.mu.Lock()
		a.external[key] = "exists"
		a.mu.Unlock()
	}
	setStatus(ctx, a.kube, mr, atProvider, ready, "")
}

// qualified is a resource's name as Azure scopes it: a database within
// its cluster, a principal assignment within its database; clusters and
// resource groups by name alone. Two clusters' Metrics databases are two
// databases.
func qualified(mr *unstructured.Unstructured, ext string) string {
	cluster, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "clusterName")
	switch mr.GetKind() {
	case Database.Kind:
		return cluster + "/" + ext
	case Principal.Kind:
		db, _, _ := unstructured.NestedString(mr.Object, "spec", "forProvider", "databaseName")
		return cluster + "/" + db + "/" + ext
	}
	return ext
}

// forProviderSets reports whether the MR's forProvider.sku sets field.
func forProviderSets(mr *unstructured.Unstructured, field string) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(mr.Object, "spec", "forProvider", "sku", field)
	return ok
}
