package environment

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/node"
)

// WEC is a workload execution cluster: a kube-apiserver, etcd and
// kube-controller-manager of its own, which provider-kubernetes reaches
// through an inventory ClusterProviderConfig named after it.
type WEC struct {
	Name string
	CP   *controlplane.ControlPlane
	// Kube is an admin client of the WEC.
	Kube client.Client
	// Cluster is the WEC's node, registry, DNS and Services when it has
	// a node (StartWECWithNode), else nil: its pods wait unscheduled.
	Cluster *node.Cluster
}

// Stop stops the WEC's processes.
func (w *WEC) Stop() {
	if w.Cluster != nil {
		w.Cluster.Stop()
		return
	}
	w.CP.Stop()
}

// StartWEC starts a WEC and adds it to the inventory: a Secret with its
// kubeconfig and a ClusterProviderConfig labelled
// placement.fleetplane.io/inventory: "true" with labels and annotations,
// the cluster's properties. Needs Options.Experiments (provider-kubernetes).
func (e *Env) StartWEC(ctx context.Context, name string, labels, annotations map[string]string) (*WEC, error) {
	dir := filepath.Join(e.Dir, "wec-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// A WEC runs Jobs as a real cluster does; the control plane, like
	// KubeStellar's WDS, does not, so a Job's status there is only what
	// its one cluster reports (wantSingletonReportedState).
	// Its API server listens where provider-kubernetes' pod reaches it,
	// on real nodes.
	o := controlplane.Options{Controllers: []string{"job-controller"}}
	if e.Cluster != nil {
		o.BindAddress = e.PodHost()
	}
	cp, err := controlplane.StartWith(ctx, e.Root, dir, o)
	if err != nil {
		return nil, fmt.Errorf("cannot start WEC %s: %w", name, err)
	}
	return e.addWEC(ctx, &WEC{Name: name, CP: cp}, labels, annotations)
}

// StartWECWithNode is StartWEC of a cluster with a real node
// (node.StartCluster, which needs root): the pods of what is placed there
// run, pulling their images from the WEC's own registry
// (WEC.Cluster.Registry), resolving Services through its cluster DNS.
func (e *Env) StartWECWithNode(ctx context.Context, name string, labels, annotations map[string]string) (*WEC, error) {
	c, err := node.StartCluster(ctx, e.Root, filepath.Join(e.Dir, "wec-"+name), e.nodeName(name), controlplane.Options{Controllers: []string{"job-controller"}})
	if err != nil {
		return nil, fmt.Errorf("cannot start WEC %s with a node: %w", name, err)
	}
	e.logf("WEC %s: control plane, registry and a Ready node in %s", name, c.Started.Round(100*time.Millisecond))
	return e.addWEC(ctx, &WEC{Name: name, CP: c.CP, Cluster: c}, labels, annotations)
}

// addWEC gives a started WEC its client and adds it to the inventory; it
// stops the WEC when it cannot.
func (e *Env) addWEC(ctx context.Context, w *WEC, labels, annotations map[string]string) (_ *WEC, err error) {
	defer func() {
		if err != nil {
			w.Stop()
		}
	}()
	name, cp := w.Name, w.CP
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if w.Kube, err = client.New(cp.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	kc, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controlplane.CrossplaneNamespace, Name: name + "-kubeconfig"}, Data: map[string][]byte{"kubeconfig": kc}}
	if err := e.Kube.Create(ctx, secret); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, err
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
		"kind":       "ClusterProviderConfig",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{"credentials": map[string]any{
			"source":    "Secret",
			"secretRef": map[string]any{"namespace": controlplane.CrossplaneNamespace, "name": secret.Name, "key": "kubeconfig"},
		}},
	}}
	all := map[string]string{}
	maps.Copy(all, labels)
	all[v1alpha1.InventoryLabel] = "true"
	pc.SetLabels(all)
	pc.SetAnnotations(annotations)
	if err := e.Kube.Create(ctx, pc); err != nil {
		return nil, fmt.Errorf("cannot add WEC %s to the inventory: %w", name, err)
	}
	return w, nil
}

// TeamAppImage builds hack/teamapp into an image in a WEC's registry and
// returns its reference: the team's application of the Placement journeys
// (RunTeamApp).
func (w *WEC) TeamAppImage(ctx context.Context, root string) (string, error) {
	if w.Cluster == nil {
		return "", fmt.Errorf("WEC %s has no node, nor a registry to push to", w.Name)
	}
	ref, _, err := w.Cluster.PushCommand(ctx, root, "./hack/teamapp", "/teamapp", "team-a/app", "1")
	return ref, err
}

// RunTeamApp gives a workload of examples/placement/required the team's
// image (hack/teamapp) in place of the nginx and busybox images it names,
// which cannot be pulled here, doing what they do there: web serves on
// its Service's target port, migrate prints and ends, and smoke fetches
// web through its Service, ready once it has (a readiness probe), and
// keeps fetching, so that it runs while a journey watches it. Objects
// without a pod template are left as they are.
func RunTeamApp(u *unstructured.Unstructured, image string) error {
	path := []string{"spec", "template", "spec", "containers"}
	containers, found, _ := unstructured.NestedSlice(u.Object, path...)
	if !found || len(containers) == 0 {
		return nil
	}
	c := containers[0].(map[string]any)
	c["image"] = image
	switch u.GetName() {
	case "web":
		c["command"] = []any{"/teamapp", "serve"}
		c["ports"] = []any{map[string]any{"name": "http", "containerPort": int64(8080)}}
	case "migrate":
		c["command"] = []any{"/teamapp", "say", "migrated"}
	case "smoke":
		c["command"] = []any{"/teamapp", "probe", "http://web"}
		c["readinessProbe"] = map[string]any{"periodSeconds": int64(1), "httpGet": map[string]any{"path": "/ready", "port": int64(8081)}}
	default:
		return fmt.Errorf("%s %s: the team's app has no part for it", u.GetKind(), u.GetName())
	}
	return unstructured.SetNestedSlice(u.Object, containers, path...)
}
