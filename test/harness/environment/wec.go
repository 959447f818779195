package environment

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/placement/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
)

// WEC is a workload execution cluster: a kube-apiserver, etcd and
// kube-controller-manager of its own, which provider-kubernetes reaches
// through an inventory ClusterProviderConfig named after it.
type WEC struct {
	Name string
	CP   *controlplane.ControlPlane
	// Kube is an admin client of the WEC.
	Kube client.Client
}

// Stop stops the WEC's processes.
func (w *WEC) Stop() { w.CP.Stop() }

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
	cp, err := controlplane.StartWithControllers(ctx, e.Root, dir, "job-controller")
	if err != nil {
		return nil, fmt.Errorf("cannot start WEC %s: %w", name, err)
	}
	w := &WEC{Name: name, CP: cp}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		cp.Stop()
		return nil, err
	}
	if w.Kube, err = client.New(cp.Config, client.Options{Scheme: scheme}); err != nil {
		cp.Stop()
		return nil, err
	}
	kc, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		cp.Stop()
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controlplane.CrossplaneNamespace, Name: name + "-kubeconfig"}, Data: map[string][]byte{"kubeconfig": kc}}
	if err := e.Kube.Create(ctx, secret); err != nil && !kerrors.IsAlreadyExists(err) {
		cp.Stop()
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
		cp.Stop()
		return nil, fmt.Errorf("cannot add WEC %s to the inventory: %w", name, err)
	}
	return w, nil
}
