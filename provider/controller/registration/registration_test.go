package registration

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetplane/fleetplane/apis"
	"github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	fpv1alpha1 "github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/provider/argocd"
)

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func kubeconfig(token string) *corev1.Secret {
	kc := `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster: {server: "https://10.1.2.3", certificate-authority-data: Q0EK}
contexts:
- name: c
  context: {cluster: c, user: u}
users:
- name: u
  user: {token: "` + token + `"}
`
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "gke-kubeconfig"}, Data: map[string][]byte{"kubeconfig": []byte(kc)}}
}

// kubeconfigWith is the kubeconfig Secret with extra cluster and user
// fields.
func kubeconfigWith(clusterField, userField string) *corev1.Secret {
	return kubeconfigSecret("https://10.1.2.3", clusterField, userField)
}

func kubeconfigAt(server, userField string) *corev1.Secret {
	return kubeconfigSecret(server, "", userField)
}

func kubeconfigWithUser(userField string) *corev1.Secret {
	return kubeconfigSecret("https://10.1.2.3", "", userField)
}

func kubeconfigSecret(server, clusterField, userField string) *corev1.Secret {
	if clusterField != "" {
		clusterField = ", " + clusterField
	}
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster: {server: \"" + server + "\", certificate-authority-data: Q0EK" + clusterField + "}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {" + userField + "}\n"
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "gke-kubeconfig"}, Data: map[string][]byte{"kubeconfig": []byte(kc)}}
}

// otherRegistration is a cluster Secret someone else wrote.
func otherRegistration(secret, name, server string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: secret, Labels: map[string]string{argocd.LabelSecretType: argocd.SecretTypeCluster}},
		Data:       map[string][]byte{"name": []byte(name), "server": []byte(server)},
	}
}

func registration() *v1alpha1.ClusterRegistration {
	return &v1alpha1.ClusterRegistration{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "reg"},
		Spec: v1alpha1.ClusterRegistrationSpec{ForProvider: v1alpha1.ClusterRegistrationParameters{
			ClusterName: "gke", KubeconfigSecretRef: v1alpha1.SecretKeyRef{Name: "gke-kubeconfig", Key: "kubeconfig"},
			Labels: map[string]string{"team": "a"},
		}},
	}
}

// argoSecret is the cluster Secret the registration renders, as Argo CD
// would find it, for the kubeconfig with token.
func argoSecret(t *testing.T, token string) *corev1.Secret {
	t.Helper()
	c, err := argocd.FromKubeconfig(kubeconfig(token).Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	p := registration().Spec.ForProvider
	s, err := argocd.Registration{Owner: "team-a/reg", Namespace: "argocd", Name: "gke", Project: "experiments", Labels: p.Labels, Cluster: *c}.Secret()
	if err != nil {
		t.Fatal(err)
	}
	s.UID = "live-uid"
	return s
}

func foreign() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-gke", Annotations: map[string]string{argocd.AnnotationOwner: "team-b/other"}}}
}

// policy is the ClusterProviderConfig's spec.argocd these tests run under.
var policy = fpv1alpha1.ArgoCDPolicy{Namespace: "argocd", Project: "experiments", AllowedExecCommands: []string{"argocd-k8s-auth"}}

func newExternal(kube client.Client) *external {
	return &external{read: kube, registered: kube, write: kube, policy: policy}
}

func deleting(r *v1alpha1.ClusterRegistration) *v1alpha1.ClusterRegistration {
	now := metav1.Now()
	r.DeletionTimestamp = &now
	return r
}

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		objects []client.Object
		mg      *v1alpha1.ClusterRegistration
		want    managed.ExternalObservation
		err     string
	}{
		"no kubeconfig yet": {
			mg: registration(), err: "kubeconfig Secret team-a/gke-kubeconfig does not exist (yet)",
		},
		"a kubeconfig without the key": {
			objects: []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "gke-kubeconfig"}}},
			mg:      registration(), err: `has no key "kubeconfig"`,
		},
		"not registered yet": {
			objects: []client.Object{kubeconfig("t1")},
			mg:      registration(), want: managed.ExternalObservation{ResourceExists: false},
		},
		"registered as the kubeconfig says": {
			objects: []client.Object{kubeconfig("t1"), argoSecret(t, "t1")},
			mg:      registration(), want: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
		},
		"the kubeconfig rotated": {
			objects: []client.Object{kubeconfig("t2"), argoSecret(t, "t1")},
			mg:      registration(), want: managed.ExternalObservation{ResourceExists: true, Diff: "cluster Secret differs"},
		},
		"a Secret someone else wrote is never overwritten": {
			objects: []client.Object{kubeconfig("t1"), foreign()},
			mg:      registration(), err: "was not written by this ClusterRegistration",
		},
		"nor deleted": {
			objects: []client.Object{foreign()},
			mg:      deleting(registration()), want: managed.ExternalObservation{ResourceExists: false},
		},
		"an exec plugin the admin did not allow": {
			objects: []client.Object{kubeconfigWithUser("exec: {command: /bin/sh, args: [-c, id], apiVersion: client.authentication.k8s.io/v1beta1}")},
			mg:      registration(), err: `plugin "/bin/sh" is not one Argo CD may run`,
		},
		"TLS verification off": {
			objects: []client.Object{kubeconfigWith("insecure-skip-tls-verify: true", "token: t")},
			mg:      registration(), err: "turns TLS verification off",
		},
		"a proxy": {
			objects: []client.Object{kubeconfigWith("proxy-url: http://evil:3128", "token: t")},
			mg:      registration(), err: "names a proxy",
		},
		"the cluster Argo CD runs on": {
			objects: []client.Object{kubeconfigAt("https://kubernetes.default.svc", "token: t")},
			mg:      registration(), err: "in-cluster",
		},
		"a server another namespace registered": {
			objects: []client.Object{kubeconfig("t1"), otherRegistration("cluster-prod", "prod", "https://10.1.2.3")},
			mg:      registration(), err: "server https://10.1.2.3 is already registered with Argo CD by Secret argocd/cluster-prod",
		},
		"a name another registered": {
			objects: []client.Object{kubeconfigAt("https://10.9.9.9", "token: t"), otherRegistration("cluster-x", "gke", "https://10.7.7.7")},
			mg:      registration(), err: "cluster name gke is already taken",
		},
		"deleting needs no kubeconfig": {
			objects: []client.Object{argoSecret(t, "t1")},
			mg:      deleting(registration()), want: managed.ExternalObservation{ResourceExists: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(tc.objects...).Build()
			e := newExternal(kube)
			got, err := e.Observe(context.Background(), tc.mg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error = %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGKEWithWorkloadIdentity is the Secret Argo CD gets for a GKE
// cluster registered the way Argo CD documents it: its own argocd-k8s-auth
// plugin with args [gcp], the cluster's CA, no client certificate.
func TestGKEWithWorkloadIdentity(t *testing.T) {
	ctx := context.Background()
	// GKE without client certificates: the kubeconfig has no usable user.
	kube := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(kubeconfigWithUser("")).Build()
	mg := registration()
	mg.Spec.ForProvider.ExecCredential = &v1alpha1.ExecCredential{Command: "argocd-k8s-auth", Args: []string{"gcp"}}
	e := newExternal(kube)
	if _, err := e.Observe(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(ctx, mg); err != nil {
		t.Fatal(err)
	}
	live := &corev1.Secret{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "cluster-gke"}, live); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"name":    "gke",
		"server":  "https://10.1.2.3",
		"project": "experiments",
		"config":  `{"tlsClientConfig":{"insecure":false,"caData":"Q0EK"},"execProviderConfig":{"command":"argocd-k8s-auth","args":["gcp"],"apiVersion":"client.authentication.k8s.io/v1beta1"}}`,
	}
	got := map[string]string{}
	for k, v := range live.Data {
		got[k] = string(v)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Argo CD cluster Secret (-want +got):\n%s", diff)
	}
	if mg.Status.AtProvider.Auth != argocd.AuthExec {
		t.Errorf("status says %q", mg.Status.AtProvider.Auth)
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(kubeconfig("t1")).Build()
	mg := registration()
	e := newExternal(kube)
	if _, err := e.Observe(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(ctx, mg); err != nil {
		t.Fatal(err)
	}
	live := &corev1.Secret{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "cluster-gke"}, live); err != nil {
		t.Fatal(err)
	}
	if live.Labels["argocd.argoproj.io/secret-type"] != "cluster" || string(live.Data["server"]) != "https://10.1.2.3" || mg.Status.AtProvider.SecretName != "cluster-gke" {
		t.Errorf("created Secret %v / %s, status %+v", live.Labels, live.Data["server"], mg.Status.AtProvider)
	}

	// The token rotates: Update follows.
	rotated := kubeconfig("t2")
	existing := &corev1.Secret{}
	_ = kube.Get(ctx, client.ObjectKeyFromObject(rotated), existing)
	existing.Data = rotated.Data
	if err := kube.Update(ctx, existing); err != nil {
		t.Fatal(err)
	}
	e = newExternal(kube)
	if o, err := e.Observe(ctx, mg); err != nil || o.ResourceUpToDate {
		t.Fatalf("Observe after rotation = %+v, %v", o, err)
	}
	if _, err := e.Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	_ = kube.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "cluster-gke"}, live)
	if !strings.Contains(string(live.Data["config"]), "t2") {
		t.Error("the rotated token did not reach Argo CD's Secret")
	}

	// Delete removes only the Secret Observe saw as its own.
	e = newExternal(kube)
	mg = deleting(registration())
	if _, err := e.Observe(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delete(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "cluster-gke"}, live); !kerrors.IsNotFound(err) {
		t.Errorf("Secret still there after Delete: %v", err)
	}
}

// TestKeepIdentity checks what the cache of Argo CD's cluster Secrets
// holds: what unclaimed reads, never the credentials.
func TestKeepIdentity(t *testing.T) {
	in := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "argocd", Name: "cluster-edge", ResourceVersion: "7",
			Labels:      map[string]string{argocd.LabelSecretType: argocd.SecretTypeCluster},
			Annotations: map[string]string{argocd.AnnotationOwner: "team-a/edge", "kubectl.kubernetes.io/last-applied-configuration": "{...}"},
		},
		Data: map[string][]byte{"server": []byte("https://edge"), "name": []byte("edge"), "config": []byte(`{"bearerToken":"secret"}`)},
	}
	out, err := keepIdentity(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "argocd", Name: "cluster-edge", ResourceVersion: "7",
			Labels:      map[string]string{argocd.LabelSecretType: argocd.SecretTypeCluster},
			Annotations: map[string]string{argocd.AnnotationOwner: "team-a/edge"},
		},
		Data: map[string][]byte{"server": []byte("https://edge"), "name": []byte("edge")},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if _, ok := in.Data["config"]; !ok {
		t.Error("the input Secret was modified")
	}
	huge := in.DeepCopy()
	huge.Labels["team"] = "a"
	huge.Data["server"] = make([]byte, maxKept+1)
	out, _ = keepIdentity(huge)
	if got := out.(*corev1.Secret); len(got.Labels) != 1 || got.Data["server"] != nil || string(got.Data["name"]) != "edge" {
		t.Errorf("kept other labels or an oversized server: %v %v", got.Labels, got.Data)
	}
	if got, _ := keepIdentity("not a secret"); got != "not a secret" {
		t.Errorf("other objects pass unchanged, got %v", got)
	}
}
