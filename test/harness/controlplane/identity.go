package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// tokenSeconds is how long a ServiceAccount token the harness issues
// lasts: longer than any test run, as a projected token is refreshed in a
// pod.
const tokenSeconds = 12 * 3600

// ServiceAccountKubeconfig creates the ServiceAccount namespace/name if it
// does not exist, issues it a token through the TokenRequest API, as the
// kubelet does for a pod, and writes a kubeconfig that authenticates as it.
// A process run with that kubeconfig has exactly the RBAC bound to the
// ServiceAccount.
func (cp *ControlPlane) ServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	token, err := cp.ServiceAccountToken(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cp.Dir, "kubeconfig-"+namespace+"-"+name)
	return path, os.WriteFile(path, []byte(kubeconfigText(cp.URL, token)), 0o600)
}

// ServiceAccountToken creates the ServiceAccount namespace/name if it does
// not exist and issues it a token through the TokenRequest API, as the
// kubelet does for a pod (and as a scraper's pod gets the token it sends).
func (cp *ControlPlane) ServiceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return "", err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(tokenSeconds))},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("cannot issue a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// MetricsScraper is the ServiceAccount monitoring/prometheus, bound to the
// shipped fleetplane:metrics-reader as docs/operations.md binds a
// scraper, and its token: what a scrape of fleetplane's secure metrics
// sends.
func (cp *ControlPlane) MetricsScraper(ctx context.Context) (string, error) {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return "", err
	}
	token, err := cp.ServiceAccountToken(ctx, "monitoring", "prometheus")
	if err != nil {
		return "", err
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-fleetplane-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleetplane:metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	return token, nil
}

// ApplyRBAC creates or replaces the ClusterRoles and ClusterRoleBindings of
// a YAML file of them, as an admin applying a package's RBAC would.
func (cp *ControlPlane) ApplyRBAC(ctx context.Context, file string) error {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		switch meta.Kind {
		case "ClusterRole":
			r := &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict([]byte(doc), r); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			_ = cs.RbacV1().ClusterRoles().Delete(ctx, r.Name, metav1.DeleteOptions{})
			if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
				return err
			}
		case "ClusterRoleBinding":
			rb := &rbacv1.ClusterRoleBinding{}
			if err := yaml.UnmarshalStrict([]byte(doc), rb); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, rb.Name, metav1.DeleteOptions{})
			if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, rb, metav1.CreateOptions{}); err != nil {
				return err
			}
		case "":
		default:
			return fmt.Errorf("%s: %s is not RBAC", file, meta.Kind)
		}
	}
	return nil
}

// GrantProviderSystemRole plays Crossplane's RBAC manager for a provider
// run without Crossplane (the provider tests): it binds to the
// ServiceAccount the rules the RBAC manager's system ClusterRole gives a
// provider revision (crossplane/v2 internal/controller/rbac/provider/roles):
// get, list, watch, create, update and patch on the CRDs the provider
// ships and their status, update on their finalizers, everything on
// Secrets, ConfigMaps, Events and Leases, and read access to
// CustomResourceDefinitions for safe-start. The end-to-end tests run the
// real RBAC manager instead.
func (cp *ControlPlane) GrantProviderSystemRole(ctx context.Context, name string, crdFiles []string, saNamespace, saName string) error {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	byGroup := map[string][]string{}
	var groups []string
	for _, f := range crdFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Plural string `json:"plural"`
				} `json:"names"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		g := crd.Spec.Group
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], crd.Spec.Names.Plural, crd.Spec.Names.Plural+"/status")
	}
	var rules []rbacv1.PolicyRule
	for _, g := range groups {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: byGroup[g], Verbs: []string{"get", "list", "watch", "update", "patch", "create"}})
	}
	rules = append(rules,
		rbacv1.PolicyRule{APIGroups: groups, Resources: []string{"*/finalizers"}, Verbs: []string{"update"}},
		rbacv1.PolicyRule{APIGroups: []string{"", "coordination.k8s.io"}, Resources: []string{"secrets", "configmaps", "events", "leases"}, Verbs: []string{"*"}},
		rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
	)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "crossplane:provider:" + name + ":system"}, Rules: rules}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: saNamespace, Name: saName}},
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}
