package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// InstallCRDs creates or updates the CRDs in the given files and waits
// until every one is established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, files ...string) error {
	cs, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		existing, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case kerrors.IsNotFound(err):
			_, err = cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		case err == nil:
			crd.ResourceVersion = existing.ResourceVersion
			_, err = cs.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("cannot install %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	// Three minutes: an API server busy on two cores takes its time
	// establishing large CRDs (Argo's, the providers').
	var waiting []string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		waiting = waiting[:0]
		for _, n := range names {
			crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{})
			if err != nil || !crdEstablished(crd) {
				waiting = append(waiting, n)
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs not established: %v: %w", waiting, err)
	}
	return nil
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
