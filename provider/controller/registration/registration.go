// Package registration reconciles Argo CD ClusterRegistrations: the
// kubeconfig in a Secret beside the managed resource becomes the cluster
// Secret Argo CD reads, kept in step when the kubeconfig changes (cloud
// tokens rotate) and removed on delete.
//
// It acts on the control plane the provider runs on, within what the
// ClusterProviderConfig's spec.argocd grants the resource's namespace:
// the Argo CD namespace and project come from there, and so do the exec
// plugins, insecure and proxied clusters it accepts. A registration never
// takes over a cluster another registered: neither its Secret, nor its
// name, nor its server.
package registration

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/argocd"
	"github.com/fleetplane/fleetplane/provider/controller/shared"
)

// Setup adds the ClusterRegistration controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	registered, err := clusterSecrets(mgr)
	if err != nil {
		return err
	}
	// A registration's own Secrets (its kubeconfig, its Argo CD Secret)
	// are read straight from the API server: caching every Secret of the
	// cluster to read two per registration would cost memory and a watch.
	c := &connector{read: mgr.GetAPIReader(), registered: registered, write: mgr.GetClient(), grants: shared.NewGrants(mgr.GetClient())}
	// No creation grace period: reads of its own Secret go straight to
	// the API server, which is never behind a write.
	return shared.Managed(mgr, o, v1alpha1.ClusterRegistrationGroupVersionKind, &v1alpha1.ClusterRegistration{}, c, shared.Options{
		Reconciler: []managed.ReconcilerOption{managed.WithInitializers(), managed.WithCreationGracePeriod(0)},
	})
}

// clusterSecrets is a cache of Argo CD's cluster Secrets in every
// namespace, found by their label, holding only what the check that a
// server or name is not taken reads: every registration's poll lists
// them, which from the API server would cost registrations × Secrets
// decoded per poll (200 registrations: 40,000). Their credentials are
// dropped before they are stored.
func clusterSecrets(mgr ctrl.Manager) (client.Reader, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {
			Label:     labels.SelectorFromSet(labels.Set{argocd.LabelSecretType: argocd.SecretTypeCluster}),
			Transform: keepIdentity,
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot create the cache of Argo CD's cluster Secrets: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// maxKept bounds each value keepIdentity stores. The cache spans every
// namespace, where any tenant may label a Secret as an Argo CD cluster;
// without a bound, each could hold megabytes of the provider's memory.
// A cluster's server URL or name is far shorter.
const maxKept = 4 << 10

// keepIdentity strips a cluster Secret to what unclaimed reads: the
// secret-type label it is listed by, its owner annotation and the server
// and name it registers, each at most maxKept bytes.
func keepIdentity(o any) (any, error) {
	s, ok := o.(*corev1.Secret)
	if !ok {
		return o, nil
	}
	out := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: s.Namespace, Name: s.Name, UID: s.UID, ResourceVersion: s.ResourceVersion,
		Labels: map[string]string{argocd.LabelSecretType: s.Labels[argocd.LabelSecretType]},
	}}
	if owner, ok := s.Annotations[argocd.AnnotationOwner]; ok && len(owner) <= maxKept {
		out.Annotations = map[string]string{argocd.AnnotationOwner: owner}
	}
	for _, k := range []string{"server", "name"} {
		if v, ok := s.Data[k]; ok && len(v) <= maxKept {
			if out.Data == nil {
				out.Data = map[string][]byte{}
			}
			out.Data[k] = v
		}
	}
	return out, nil
}

type connector struct {
	read       client.Reader
	registered client.Reader
	write      client.Client
	grants     *shared.Grants
}

func (c *connector) Connect(ctx context.Context, mg *v1alpha1.ClusterRegistration) (managed.TypedExternalClient[*v1alpha1.ClusterRegistration], error) {
	g, err := c.grants.Connect(ctx, mg)
	if err != nil {
		return nil, err
	}
	p, err := g.ArgoCDPolicy()
	if err != nil {
		return nil, err
	}
	return &external{read: c.read, registered: c.registered, write: c.write, policy: p}, nil
}

type external struct {
	read client.Reader
	// registered lists Argo CD's cluster Secrets (clusterSecrets).
	registered client.Reader
	write      client.Client
	policy     fpv1alpha1.ArgoCDPolicy
	// want is the Secret Observe rendered, for Create and Update of the
	// same reconcile.
	want *corev1.Secret
	live *corev1.Secret
}

func owner(mg *v1alpha1.ClusterRegistration) string { return mg.Namespace + "/" + mg.Name }

func (e *external) secretKey(mg *v1alpha1.ClusterRegistration) types.NamespacedName {
	return types.NamespacedName{Namespace: e.policy.Namespace, Name: argocd.SecretName(mg.Spec.ForProvider.ClusterName)}
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.ClusterRegistration) (managed.ExternalObservation, error) {
	key := e.secretKey(mg)
	live := &corev1.Secret{}
	err := e.read.Get(ctx, key, live)
	found := err == nil
	if err != nil && !kerrors.IsNotFound(err) {
		return managed.ExternalObservation{}, fmt.Errorf("cannot read the Argo CD cluster Secret %s: %w", key, err)
	}
	if found && !argocd.OwnedBy(live, owner(mg)) {
		if meta.WasDeleted(mg) {
			// Someone else's Secret is not ours to delete.
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, fmt.Errorf("Secret %s exists and was not written by this ClusterRegistration; fleetplane does not overwrite it", key) //nolint:staticcheck // Secret is a kind
	}
	if found {
		e.live = live
	}
	if meta.WasDeleted(mg) {
		// The kubeconfig may be gone with its cluster; removing the
		// registration must not depend on it.
		return managed.ExternalObservation{ResourceExists: found}, nil
	}

	cluster, err := e.cluster(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if err := e.unclaimed(ctx, mg, cluster.Server); err != nil {
		return managed.ExternalObservation{}, err
	}
	reg := argocd.Registration{
		Owner: owner(mg), Namespace: key.Namespace, Name: mg.Spec.ForProvider.ClusterName,
		Project: e.policy.Project, Labels: mg.Spec.ForProvider.Labels, Cluster: *cluster,
	}
	if e.want, err = reg.Secret(); err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = v1alpha1.ClusterRegistrationObservation{Server: cluster.Server, Auth: cluster.Config.Auth(), Namespace: key.Namespace, Project: e.policy.Project}
	if !found {
		mg.SetConditions(xpv2.Unavailable().WithMessage("the Argo CD cluster Secret does not exist yet"))
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	mg.Status.AtProvider.SecretName = live.Name
	if !argocd.UpToDate(live, e.want) {
		mg.SetConditions(xpv2.Unavailable().WithMessage("the Argo CD cluster Secret differs from the kubeconfig"))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: "cluster Secret differs"}, nil
	}
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// unclaimed checks that no other cluster Secret in Argo CD's namespace
// registers the same server or name: Argo CD finds a cluster by its
// server, so a second Secret for it would let one namespace's credentials
// stand in for another's.
func (e *external) unclaimed(ctx context.Context, mg *v1alpha1.ClusterRegistration, server string) error {
	list := &corev1.SecretList{}
	if err := e.registered.List(ctx, list, client.InNamespace(e.policy.Namespace), client.MatchingLabels{argocd.LabelSecretType: argocd.SecretTypeCluster}); err != nil {
		return fmt.Errorf("cannot list Argo CD's cluster Secrets in %s: %w", e.policy.Namespace, err)
	}
	name := mg.Spec.ForProvider.ClusterName
	for i := range list.Items {
		s := &list.Items[i]
		if argocd.OwnedBy(s, owner(mg)) {
			continue
		}
		switch {
		case strings.TrimRight(string(s.Data["server"]), "/") == server:
			return fmt.Errorf("server %s is already registered with Argo CD by Secret %s/%s; a cluster is registered once", server, s.Namespace, s.Name)
		case string(s.Data["name"]) == name:
			return fmt.Errorf("cluster name %s is already taken in Argo CD by Secret %s/%s", name, s.Namespace, s.Name)
		}
	}
	return nil
}

// cluster reads and checks the kubeconfig, and what the registration
// makes of it, against the policy.
func (e *external) cluster(ctx context.Context, mg *v1alpha1.ClusterRegistration) (*argocd.Cluster, error) {
	ref := mg.Spec.ForProvider.KubeconfigSecretRef
	k := ref.Key
	if k == "" {
		k = "kubeconfig"
	}
	s := &corev1.Secret{}
	if err := e.read.Get(ctx, types.NamespacedName{Namespace: mg.Namespace, Name: ref.Name}, s); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, fmt.Errorf("kubeconfig Secret %s/%s does not exist (yet)", mg.Namespace, ref.Name)
		}
		return nil, fmt.Errorf("cannot read kubeconfig Secret %s/%s: %w", mg.Namespace, ref.Name, err)
	}
	data, ok := s.Data[k]
	if !ok {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s has no key %q", mg.Namespace, ref.Name, k)
	}
	read := argocd.FromKubeconfig
	if mg.Spec.ForProvider.ExecCredential != nil {
		// Its user does not matter: Argo CD authenticates otherwise.
		read = argocd.ServerFromKubeconfig
	}
	c, err := read(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s key %q: %w", mg.Namespace, ref.Name, k, err)
	}
	if x := mg.Spec.ForProvider.ExecCredential; x != nil {
		apiVersion := x.APIVersion
		if apiVersion == "" {
			apiVersion = "client.authentication.k8s.io/v1beta1"
		}
		c.UseExec(x.Command, x.Args, apiVersion)
	}
	policy := argocd.Policy{ExecCommands: e.policy.AllowedExecCommands, AllowInsecure: e.policy.AllowInsecureSkipTLSVerify, AllowProxy: e.policy.AllowProxyURL}
	if err := c.Check(policy); err != nil {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s: %w (ClusterProviderConfig spec.argocd decides)", mg.Namespace, ref.Name, err)
	}
	return c, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.ClusterRegistration) (managed.ExternalCreation, error) {
	if err := e.write.Create(ctx, e.want); err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("cannot create the Argo CD cluster Secret: %w", err)
	}
	mg.Status.AtProvider.SecretName = e.want.Name
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.ClusterRegistration) (managed.ExternalUpdate, error) {
	argocd.Apply(e.live, e.want)
	if err := e.write.Update(ctx, e.live); err != nil {
		return managed.ExternalUpdate{}, fmt.Errorf("cannot update the Argo CD cluster Secret: %w", err)
	}
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.ClusterRegistration) (managed.ExternalDelete, error) {
	if e.live == nil {
		return managed.ExternalDelete{}, nil
	}
	// Only the Secret whose owner Observe checked: one put in its place
	// since is somebody else's.
	uid := e.live.UID
	if err := e.write.Delete(ctx, e.live, client.Preconditions{UID: &uid}); err != nil && !kerrors.IsNotFound(err) {
		return managed.ExternalDelete{}, fmt.Errorf("cannot delete the Argo CD cluster Secret %s/%s: %w", e.live.Namespace, e.live.Name, err)
	}
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
