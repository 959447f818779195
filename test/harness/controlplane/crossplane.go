package controlplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CrossplaneNamespace is where Crossplane runs and keeps its secrets.
const CrossplaneNamespace = "crossplane-system"

// Crossplane is Crossplane core as the pods of its Helm chart on a real
// node, with the Deployment package runtime (InstallCrossplaneChart).
type Crossplane struct {
	kube client.Client
}

// Kube is a client with Crossplane's package types registered.
func (x *Crossplane) Kube() client.Client { return x.kube }

// newCrossplane is a client of Crossplane core's package types on cp and
// Crossplane's namespace.
func newCrossplane(ctx context.Context, cp *ControlPlane) (*Crossplane, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := pkgv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	kube, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CrossplaneNamespace}}); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, err
	}
	return &Crossplane{kube: kube}, nil
}

// WaitXRDsEstablished waits until every XRD is established: a healthy
// Configuration has created its XRDs, but Crossplane makes their CRDs a
// moment later, and an XR applied before then is refused.
func (x *Crossplane) WaitXRDsEstablished(ctx context.Context, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("apiextensions.crossplane.io/v2")
		l.SetKind("CompositeResourceDefinitionList")
		if err := x.kube.List(ctx, l); err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // retry
		}
		var waiting []string
		for i := range l.Items {
			if !established(&l.Items[i]) {
				waiting = append(waiting, l.Items[i].GetName())
			}
		}
		last = fmt.Sprintf("%d XRDs, not established: %v", len(l.Items), waiting)
		return len(l.Items) > 0 && len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("XRDs: %s: %w", last, err)
	}
	return nil
}

// established reports an object's Established condition True: a CRD's,
// or an XRD's.
func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// WaitHealthy waits until a package object reports Installed and Healthy.
func (x *Crossplane) WaitHealthy(ctx context.Context, obj client.Object, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := x.kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil //nolint:nilerr // retry
		}
		pkg, ok := obj.(pkgv1.Package)
		if !ok {
			return false, fmt.Errorf("%T is not a package", obj)
		}
		installed := pkg.GetCondition(pkgv1.TypeInstalled)
		healthy := pkg.GetCondition(pkgv1.TypeHealthy)
		last = fmt.Sprintf("installed=%s (%s) healthy=%s (%s)", installed.Status, installed.Message, healthy.Status, healthy.Message)
		return installed.Status == corev1.ConditionTrue && healthy.Status == corev1.ConditionTrue, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s: %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), strings.TrimSpace(last), err)
	}
	return nil
}
