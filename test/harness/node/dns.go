package node

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/registry"
	"github.com/fleetplane/fleetplane/tools/ociimage/image"
)

const (
	// ClusterDNS is the cluster DNS Service's address, the tenth of the
	// control plane's Service range as kubeadm picks it; pods resolve
	// through it (kubelet's clusterDNS).
	ClusterDNS = "10.0.0.10"
	// ClusterDomain is the suffix of Services' names.
	ClusterDomain = "cluster.local"
	// dnsPort is where CoreDNS listens in its pod: above 1024, so that
	// its non-root user needs no capability; the Service maps 53 to it.
	dnsPort = 1053
)

// DNSImage builds CoreDNS (tools.sh coredns: CoreDNS with the plugins
// cluster DNS needs) into an image, pushes it to reg and returns its
// reference, for Options.DNSImage.
func DNSImage(ctx context.Context, root string, reg *registry.Registry) (string, error) {
	bin, err := controlplane.Tool(root, "coredns")
	if err != nil {
		return "", err
	}
	ref, _, err := reg.PushImage(ctx, image.Image{Binary: bin, Path: "/coredns"}, "fleetplane/coredns", "v1.12.1")
	return ref, err
}

// corefile serves the cluster's names from the API server and nothing
// else: no forwarding, since nothing beyond the machine is reachable.
var corefile = fmt.Sprintf(`.:%d {
    errors
    health :8080
    ready :8181
    kubernetes %s in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30
    loadbalance
}
`, dnsPort, ClusterDomain)

// startDNS runs cluster DNS as the add-on kubeadm installs: CoreDNS as a
// Deployment in kube-system under a ServiceAccount that may read what it
// serves, behind the kube-dns Service at ClusterDNS. It waits until the
// Service has a ready endpoint.
func startDNS(ctx context.Context, kube kubernetes.Interface, image string) error {
	const ns, name = "kube-system", "coredns"
	labels := map[string]string{"k8s-app": "kube-dns"}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	no := false
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					// Its own names come from the API server, not from
					// itself.
					DNSPolicy: corev1.DNSDefault,
					Containers: []corev1.Container{{
						Name: "coredns", Image: image,
						Args: []string{"-conf", "/etc/coredns/Corefile"},
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: dnsPort, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: dnsPort, Protocol: corev1.ProtocolTCP},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}},
							PeriodSeconds: 1,
						},
						VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
						SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(true), AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: new(true)},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}},
					}}},
				},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kube-dns", Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector:  labels,
			ClusterIP: ClusterDNS,
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("dns-tcp")},
			},
		},
	}
	for _, create := range []func() error{
		func() error {
			_, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"Corefile": corefile}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := kube.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			return err
		},
	} {
		if err := create(); err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster DNS: %w", err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && d.Status.ReadyReplicas > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster DNS not ready within 2m: %v", describe(ctx, kube, ns, labels))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// describe says what the pods of labels in ns are doing, for an error.
func describe(ctx context.Context, kube kubernetes.Interface, ns string, labels map[string]string) string {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: labels})})
	if err != nil {
		return err.Error()
	}
	return controlplane.DescribePods(pods.Items)
}
