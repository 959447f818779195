package argocd

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations of a cluster Secret.
const (
	// LabelSecretType is the label Argo CD finds cluster Secrets by.
	LabelSecretType   = "argocd.argoproj.io/secret-type" //nolint:gosec // G101: a label name, not a credential
	SecretTypeCluster = "cluster"
	// LabelManagedBy says fleetplane wrote the Secret.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "provider-fleetplane"
	// AnnotationOwner names the ClusterRegistration (namespace/name) that
	// owns the Secret. A Secret without it, or with another owner, is never
	// overwritten or deleted.
	AnnotationOwner = "argocd.fleetplane.io/registration"
	// AnnotationLabels lists the label keys the registration asked for, so
	// that a key dropped from it is removed while labels others added stay.
	AnnotationLabels = "argocd.fleetplane.io/labels"
)

// SecretName is the cluster Secret of a cluster name.
func SecretName(clusterName string) string { return "cluster-" + clusterName }

// Registration is what a cluster Secret holds.
type Registration struct {
	// Owner is namespace/name of the ClusterRegistration.
	Owner     string
	Namespace string
	Name      string
	Project   string
	Labels    map[string]string
	Cluster   Cluster
}

// Secret renders the cluster Secret.
func (r Registration) Secret() (*corev1.Secret, error) {
	cfg, err := r.Cluster.ConfigJSON()
	if err != nil {
		return nil, err
	}
	labels := maps.Clone(r.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelSecretType] = SecretTypeCluster
	labels[LabelManagedBy] = ManagedBy
	data := map[string][]byte{
		"name":   []byte(r.Name),
		"server": []byte(r.Cluster.Server),
		"config": cfg,
	}
	if r.Project != "" {
		data["project"] = []byte(r.Project)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        SecretName(r.Name),
			Namespace:   r.Namespace,
			Labels:      labels,
			Annotations: map[string]string{AnnotationOwner: r.Owner, AnnotationLabels: strings.Join(slices.Sorted(maps.Keys(r.Labels)), ",")},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}, nil
}

// OwnedBy reports whether s was written for owner.
func OwnedBy(s *corev1.Secret, owner string) bool {
	return s.Annotations[AnnotationOwner] == owner
}

// UpToDate reports whether live carries everything want does: the same
// data and the wanted labels (labels others add are left alone).
func UpToDate(live, want *corev1.Secret) bool {
	if len(live.Data) != len(want.Data) {
		return false
	}
	for k, v := range want.Data {
		if !bytes.Equal(live.Data[k], v) {
			return false
		}
	}
	for k, v := range want.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	for _, k := range dropped(live, want) {
		if _, ok := live.Labels[k]; ok {
			return false
		}
	}
	return live.Annotations[AnnotationLabels] == want.Annotations[AnnotationLabels]
}

// dropped lists label keys live was given by its registration that want no
// longer has.
func dropped(live, want *corev1.Secret) []string {
	var out []string
	for k := range strings.SplitSeq(live.Annotations[AnnotationLabels], ",") {
		if _, keep := want.Labels[k]; k != "" && !keep {
			out = append(out, k)
		}
	}
	return out
}

// Apply copies want's data and labels onto live, keeping labels and
// annotations others added.
func Apply(live, want *corev1.Secret) {
	live.Data = want.Data
	live.StringData = nil
	if live.Labels == nil {
		live.Labels = map[string]string{}
	}
	for _, k := range dropped(live, want) {
		delete(live.Labels, k)
	}
	maps.Copy(live.Labels, want.Labels)
	if live.Annotations == nil {
		live.Annotations = map[string]string{}
	}
	maps.Copy(live.Annotations, want.Annotations)
}
