package standin

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster API kinds the stand-in serves, with the real CRDs of Cluster
// API (v1.11), Sidero's Talos control plane provider and Cluster API's
// Docker infrastructure provider (CAPD), which tools/tools.sh fetches.
var (
	CAPICluster           = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}
	CAPIMachineDeployment = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}
	TalosControlPlane     = schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha3", Kind: "TalosControlPlane"}
	DockerCluster         = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "DockerCluster"}
)

// clusterFinalizer is the one Cluster API's cluster controller puts on a
// Cluster, and removes once the cluster's machines are gone.
const clusterFinalizer = "cluster.cluster.x-k8s.io"

// machineDeploymentFinalizer is the one on a MachineDeployment, removed
// once its machines are gone.
const machineDeploymentFinalizer = "cluster.x-k8s.io/machinedeployment"

// ClusterAPI plays, for Clusters referencing a DockerCluster and a
// TalosControlPlane, what Cluster API's core controllers, CAPD and
// Sidero's control plane provider do: the Cluster becomes the controller
// of both (and the cluster gets no further while another controller owns
// one, as Cluster API's does not); after ProvisionDelay the
// DockerCluster is provisioned with a control plane endpoint, the
// TalosControlPlane is ready, and the Cluster gets the endpoint, a
// kubeconfig Secret <cluster>-kubeconfig (key value, owned by the
// Cluster, a client certificate for the endpoint) and reports its
// infrastructure provisioned and control plane initialized. A
// MachineDeployment's machines are all ready once its Cluster is
// initialized. A Cluster being deleted keeps its finalizer while a
// MachineDeployment of it exists. It records the order Clusters and
// MachineDeployments were deleted in.
type ClusterAPI struct {
	kube client.Client
	// ProvisionDelay is how long a cluster's control plane takes.
	ProvisionDelay time.Duration

	mu      sync.Mutex
	first   map[string]time.Time
	deleted []string // kind/namespace/name, first deleted first
	next    int
}

// NewClusterAPI returns a Cluster API stand-in using kube.
func NewClusterAPI(kube client.Client) *ClusterAPI {
	return &ClusterAPI{kube: kube, ProvisionDelay: time.Second, first: map[string]time.Time{}}
}

// Deleted lists kind/namespace/name of deleted Clusters and
// MachineDeployments, first deleted first.
func (c *ClusterAPI) Deleted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.deleted)
}

// Run reconciles until ctx is done.
func (c *ClusterAPI) Run(ctx context.Context) {
	every(ctx, func() {
		for _, cl := range list(ctx, c.kube, CAPICluster, "") {
			c.cluster(ctx, &cl)
		}
		for _, md := range list(ctx, c.kube, CAPIMachineDeployment, "") {
			c.machineDeployment(ctx, &md)
		}
	})
}

func (c *ClusterAPI) gone(o *unstructured.Unstructured) {
	key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.deleted, key) {
		c.deleted = append(c.deleted, key)
	}
}

func (c *ClusterAPI) cluster(ctx context.Context, cl *unstructured.Unstructured) {
	ns, name := cl.GetNamespace(), cl.GetName()
	if cl.GetDeletionTimestamp() != nil {
		for _, md := range list(ctx, c.kube, CAPIMachineDeployment, ns) {
			if cn, _, _ := unstructured.NestedString(md.Object, "spec", "clusterName"); cn == name {
				return // Cluster API deletes the machines first.
			}
		}
		c.gone(cl)
		removeFinalizer(ctx, c.kube, cl, clusterFinalizer)
		return
	}
	if !ensureFinalizer(ctx, c.kube, cl, clusterFinalizer) {
		return
	}
	key := ns + "/" + name
	c.mu.Lock()
	if _, ok := c.first[key]; !ok {
		c.first[key] = time.Now()
	}
	up := time.Since(c.first[key]) >= c.ProvisionDelay
	c.mu.Unlock()
	provisioning := map[string]any{"phase": "Provisioning", "initialization": map[string]any{"infrastructureProvisioned": false, "controlPlaneInitialized": false}}
	infra, cp := c.ref(ctx, cl, "infrastructureRef", DockerCluster), c.ref(ctx, cl, "controlPlaneRef", TalosControlPlane)
	if !up || infra == nil || cp == nil {
		writeStatus(ctx, c.kube, cl, provisioning, true)
		return
	}
	// Cluster API makes the Cluster the controller of both, and gets no
	// further while another controller owns one.
	for _, o := range []*unstructured.Unstructured{infra, cp} {
		if err := c.own(ctx, cl, o); err != nil {
			provisioning["conditions"] = []any{map[string]any{
				"type": "InfrastructureReady", "status": "False", "reason": "InternalError",
				"message": err.Error(), "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
			}}
			writeStatus(ctx, c.kube, cl, provisioning, true)
			return
		}
	}

	// The infrastructure provider: a load balancer address for the
	// control plane.
	host, _, _ := unstructured.NestedString(infra.Object, "spec", "controlPlaneEndpoint", "host")
	if host == "" {
		c.mu.Lock()
		c.next++
		host = fmt.Sprintf("10.99.%d.%d", c.next/250, c.next%250+1)
		c.mu.Unlock()
		_ = unstructured.SetNestedMap(infra.Object, map[string]any{"host": host, "port": int64(6443)}, "spec", "controlPlaneEndpoint")
		if err := c.kube.Update(ctx, infra); err != nil {
			return
		}
	}
	writeStatus(ctx, c.kube, infra, map[string]any{"initialization": map[string]any{"provisioned": true}}, true)

	// The control plane provider: its machines are up, and it writes
	// the cluster's kubeconfig.
	writeStatus(ctx, c.kube, cp, map[string]any{"ready": true, "initialized": true, "bootstrapped": true, "replicas": int64(1), "readyReplicas": int64(1)}, true)
	if err := c.publishKubeconfig(ctx, cl, "https://"+host+":6443"); err != nil {
		return
	}

	// Cluster API's core: the endpoint, and the cluster initialized.
	if h, _, _ := unstructured.NestedString(cl.Object, "spec", "controlPlaneEndpoint", "host"); h != host {
		_ = unstructured.SetNestedMap(cl.Object, map[string]any{"host": host, "port": int64(6443)}, "spec", "controlPlaneEndpoint")
		if err := c.kube.Update(ctx, cl); err != nil {
			return
		}
	}
	writeStatus(ctx, c.kube, cl, map[string]any{"phase": "Provisioned", "initialization": map[string]any{"infrastructureProvisioned": true, "controlPlaneInitialized": true}}, true)
}

// own makes the Cluster o's controller, as controller-runtime's
// SetControllerReference does for Cluster API: an object another
// controller owns is refused.
func (c *ClusterAPI) own(ctx context.Context, cl, o *unstructured.Unstructured) error {
	refs := o.GetOwnerReferences()
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			if r.UID == cl.GetUID() {
				return nil
			}
			return fmt.Errorf("object %s/%s is already owned by another %s controller %s", o.GetNamespace(), o.GetName(), r.Kind, r.Name)
		}
	}
	yes := true
	o.SetOwnerReferences(append(refs, metav1.OwnerReference{APIVersion: cl.GetAPIVersion(), Kind: cl.GetKind(), Name: cl.GetName(), UID: cl.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}))
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["cluster.x-k8s.io/cluster-name"] = cl.GetName()
	o.SetLabels(labels)
	return c.kube.Update(ctx, o)
}

// ref is the object of kind want a Cluster references at field, nil when
// it names another kind or does not exist yet.
func (c *ClusterAPI) ref(ctx context.Context, cl *unstructured.Unstructured, field string, want schema.GroupVersionKind) *unstructured.Unstructured {
	r, _, _ := unstructured.NestedStringMap(cl.Object, "spec", field)
	if r["apiGroup"] != want.Group || r["kind"] != want.Kind {
		return nil
	}
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(want)
	if err := c.kube.Get(ctx, client.ObjectKey{Namespace: cl.GetNamespace(), Name: r["name"]}, o); err != nil {
		return nil
	}
	return o
}

// publishKubeconfig writes <cluster>-kubeconfig once, as Cluster API
// does: key value, owned by the Cluster, labelled with its name.
func (c *ClusterAPI) publishKubeconfig(ctx context.Context, cl *unstructured.Unstructured, server string) error {
	kc, err := kubeconfigFor(cl.GetName(), server)
	if err != nil {
		return err
	}
	yes := true
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cl.GetNamespace(), Name: cl.GetName() + "-kubeconfig",
			Labels: map[string]string{"cluster.x-k8s.io/cluster-name": cl.GetName()},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: cl.GetAPIVersion(), Kind: cl.GetKind(), Name: cl.GetName(), UID: cl.GetUID(), Controller: &yes,
			}},
		},
		Type: "cluster.x-k8s.io/secret",
		Data: map[string][]byte{"value": kc},
	}
	if err := c.kube.Create(ctx, s); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// machineDeployment makes all of a MachineDeployment's machines ready
// once its Cluster is initialized.
func (c *ClusterAPI) machineDeployment(ctx context.Context, md *unstructured.Unstructured) {
	if md.GetDeletionTimestamp() != nil {
		c.gone(md)
		removeFinalizer(ctx, c.kube, md, machineDeploymentFinalizer)
		return
	}
	if !ensureFinalizer(ctx, c.kube, md, machineDeploymentFinalizer) {
		return
	}
	cluster, _, _ := unstructured.NestedString(md.Object, "spec", "clusterName")
	cl := &unstructured.Unstructured{}
	cl.SetGroupVersionKind(CAPICluster)
	initialized := false
	if err := c.kube.Get(ctx, client.ObjectKey{Namespace: md.GetNamespace(), Name: cluster}, cl); err == nil {
		initialized, _, _ = unstructured.NestedBool(cl.Object, "status", "initialization", "controlPlaneInitialized")
	}
	replicas, ok, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
	if !ok {
		replicas = 1
	}
	ready := int64(0)
	if initialized {
		ready = replicas
	}
	writeStatus(ctx, c.kube, md, map[string]any{
		"observedGeneration": md.GetGeneration(), "phase": map[bool]string{true: "Running", false: "ScalingUp"}[initialized],
		"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready, "upToDateReplicas": replicas,
	}, true)
}
