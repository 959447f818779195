package experiment

import (
	"fmt"
	"maps"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
)

// A vcluster target is a virtual cluster in the Experiment's own namespace
// on the hub: the objects vcluster's Helm chart makes for its k8s
// distribution, composed by Crossplane itself (no provider acts for the
// tenant): a ServiceAccount bound, in that namespace only, to the
// ClusterRole of package/rbac/vcluster-roles.yaml; the config Secret the
// control plane reads; its Service and headless Service; its StatefulSet.
// Once the StatefulSet is ready, vcluster has written its kubeconfig to
// the Secret vc-<name>, which the target's ClusterRegistration registers
// with Argo CD. Crossplane composes no object that exists and another
// controls, so a vcluster never takes over what it did not make.

// VClusterRole is the ClusterRole package/rbac/vcluster-roles.yaml ships,
// the rights vcluster's chart gives its control plane in its namespace.
// Crossplane holds bind on this name and no other.
const VClusterRole = "fleetplane:vcluster"

// vcluster's ports: the control plane serves its API on 8443, its Service
// on 443.
const (
	vclusterPort        = 8443
	vclusterServicePort = 443
)

// vclusterKubeconfigKey is the key of vcluster's kubeconfig Secret
// (vc-<name>) that holds the kubeconfig.
const vclusterKubeconfigKey = "config"

// Composition resource names of a vcluster target's objects besides its
// StatefulSet (clusterName) and registration.
func vclusterAccountName(t string) resource.Name  { return resource.Name("vcluster-account-" + t) }
func vclusterBindingName(t string) resource.Name  { return resource.Name("vcluster-binding-" + t) }
func vclusterConfigName(t string) resource.Name   { return resource.Name("vcluster-config-" + t) }
func vclusterServiceName(t string) resource.Name  { return resource.Name("vcluster-service-" + t) }
func vclusterHeadlessName(t string) resource.Name { return resource.Name("vcluster-headless-" + t) }

// vclusterName is a target's virtual cluster: vcluster's release name,
// which names its StatefulSet and Service. GKE's rules for a cluster name
// (40 characters at most, a letter first, unique per experiment and
// target) suit it: the names vcluster derives from it stay within
// Kubernetes' 63.
func (r renderer) vclusterName(target string) string { return r.gkeName(target) }

// vclusterServer is where Argo CD, on the hub, reaches the virtual
// cluster: its Service. vcluster writes it into the kubeconfig it exports.
func (r renderer) vclusterServer(target string) string {
	return fmt.Sprintf("https://%s.%s.svc:%d", r.vclusterName(target), r.xr.Namespace, vclusterServicePort)
}

// vclusterLabels select a virtual cluster's pods, as vcluster's chart
// labels them.
func vclusterLabels(name string) map[string]string {
	return map[string]string{"app": "vcluster", "release": name}
}

func (r renderer) vclusterMeta(name string) metav1.ObjectMeta {
	l := vclusterLabels(name)
	maps.Copy(l, r.labels(""))
	return metav1.ObjectMeta{Name: name, Namespace: r.xr.Namespace, Labels: l}
}

// vclusterTarget composes a vcluster target's cluster and registration,
// and returns the server Argo CD reaches it at: its Service, which
// vcluster's exported kubeconfig names once it runs.
func (p *planner) vclusterTarget(t v1alpha1.Target, st *v1alpha1.TargetStatus) (string, error) {
	st.ClusterName = p.r.vclusterName(t.Name)
	p.vcluster(t)
	server := p.r.vclusterServer(t.Name)
	st.Endpoint = server
	reg, err := p.r.vclusterRegistration(t)
	if err != nil {
		return "", err
	}
	p.set.Add(registrationName(t.Name), reg, clusterName(t.Name))
	return server, nil
}

// vcluster composes a target's virtual cluster: its StatefulSet once
// every object it needs exists.
func (p *planner) vcluster(t v1alpha1.Target) {
	var after []resource.Name
	for _, o := range []struct {
		name resource.Name
		obj  runtime.Object
	}{
		{vclusterAccountName(t.Name), p.r.vclusterAccount(t.Name)},
		{vclusterBindingName(t.Name), p.r.vclusterBinding(t.Name)},
		{vclusterConfigName(t.Name), p.r.vclusterConfig(t.Name)},
		{vclusterServiceName(t.Name), p.r.vclusterService(t.Name)},
		{vclusterHeadlessName(t.Name), p.r.vclusterHeadless(t.Name)},
	} {
		p.set.AddObject(o.name, o.obj)
		after = append(after, o.name)
	}
	p.set.AddObject(clusterName(t.Name), p.r.vclusterStatefulSet(t.Name), after...)
}

func (r renderer) vclusterAccount(target string) runtime.Object {
	return &corev1.ServiceAccount{ObjectMeta: r.vclusterMeta("vc-" + r.vclusterName(target))}
}

// vclusterBinding binds the virtual cluster's ServiceAccount to
// VClusterRole in the Experiment's namespace: a RoleBinding to a
// ClusterRole grants its rules in that namespace only.
func (r renderer) vclusterBinding(target string) runtime.Object {
	name := "vc-" + r.vclusterName(target)
	return &rbacv1.RoleBinding{
		ObjectMeta: r.vclusterMeta(name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: VClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: r.xr.Namespace}},
	}
}

// vclusterValues is the part of vcluster.yaml fleetplane sets: the k8s
// distribution, and the server the exported kubeconfig names (the
// Service, which Argo CD reaches) instead of vcluster's default
// localhost.
type vclusterValues struct {
	ControlPlane struct {
		Distro struct {
			K8s struct {
				Enabled bool `json:"enabled"`
			} `json:"k8s"`
		} `json:"distro"`
	} `json:"controlPlane"`
	ExportKubeConfig struct {
		Server string `json:"server"`
	} `json:"exportKubeConfig"`
}

// vclusterConfig is the Secret vc-config-<name> whose config.yaml the
// control plane reads at /var/lib/vcluster, as the chart writes it.
func (r renderer) vclusterConfig(target string) runtime.Object {
	var v vclusterValues
	v.ControlPlane.Distro.K8s.Enabled = true
	v.ExportKubeConfig.Server = r.vclusterServer(target)
	// A struct of strings and booleans always marshals.
	b, _ := yaml.Marshal(v)
	return &corev1.Secret{
		ObjectMeta: r.vclusterMeta("vc-config-" + r.vclusterName(target)),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"config.yaml": b},
	}
}

func (r renderer) vclusterService(target string) runtime.Object {
	name := r.vclusterName(target)
	m := r.vclusterMeta(name)
	m.Labels["vcluster.loft.sh/service"] = "true"
	return &corev1.Service{
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: vclusterLabels(name),
			Ports:    []corev1.ServicePort{{Name: "https", Port: vclusterServicePort, TargetPort: intstr.FromInt32(vclusterPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// vclusterHeadless is the StatefulSet's governing Service.
func (r renderer) vclusterHeadless(target string) runtime.Object {
	name := r.vclusterName(target)
	return &corev1.Service{
		ObjectMeta: r.vclusterMeta(name + "-headless"),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 vclusterLabels(name),
			Ports:                    []corev1.ServicePort{{Name: "https", Port: vclusterServicePort, TargetPort: intstr.FromInt32(vclusterPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// vclusterResources are vcluster's chart's defaults for the control
// plane's container.
func vclusterResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:              kresource.MustParse("200m"),
			corev1.ResourceMemory:           kresource.MustParse("256Mi"),
			corev1.ResourceEphemeralStorage: kresource.MustParse("400Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory:           kresource.MustParse("2Gi"),
			corev1.ResourceEphemeralStorage: kresource.MustParse("8Gi"),
		},
	}
}

// vclusterStatefulSet runs the virtual control plane: an init container
// copies the Kubernetes binaries into /binaries, the syncer runs them and
// syncs the virtual cluster's pods into the namespace. Both images are
// the policy's. Its data lives in an emptyDir: an experiment's cluster
// lives as long as the experiment.
func (r renderer) vclusterStatefulSet(target string) runtime.Object {
	name := r.vclusterName(target)
	res := vclusterResources()
	if r.cfg.VCluster.Resources != nil {
		res = *r.cfg.VCluster.Resources
	}
	probe := func(path string, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(vclusterPort), Scheme: corev1.URISchemeHTTPS}},
			PeriodSeconds:    2,
			TimeoutSeconds:   3,
			FailureThreshold: failures,
		}
	}
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	empty := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	return &appsv1.StatefulSet{
		ObjectMeta: r.vclusterMeta(name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            new(int32(1)),
			ServiceName:         name + "-headless",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: vclusterLabels(name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: vclusterLabels(name)},
				Spec: corev1.PodSpec{
					ServiceAccountName:            "vc-" + name,
					TerminationGracePeriodSeconds: new(int64(15)),
					InitContainers: []corev1.Container{{
						Name:         "kubernetes",
						Image:        r.cfg.VCluster.KubernetesImage,
						Command:      []string{"cp"},
						Args:         []string{"-r", "/kubernetes/.", "/binaries/"},
						VolumeMounts: []corev1.VolumeMount{{Name: "binaries", MountPath: "/binaries"}},
					}},
					Containers: []corev1.Container{{
						Name:           "syncer",
						Image:          r.cfg.VCluster.Image,
						Ports:          []corev1.ContainerPort{{Name: "https", ContainerPort: vclusterPort, Protocol: corev1.ProtocolTCP}},
						LivenessProbe:  probe("/healthz", 60),
						ReadinessProbe: probe("/readyz", 60),
						StartupProbe:   probe("/readyz", 300),
						Resources:      res,
						Env: []corev1.EnvVar{
							{Name: "VCLUSTER_NAME", Value: name},
							field("POD_NAME", "metadata.name"),
							field("POD_IP", "status.podIP"),
							field("NODE_NAME", "spec.nodeName"),
							field("NODE_IP", "status.hostIP"),
						},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), RunAsUser: new(int64(0)), RunAsGroup: new(int64(0))},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "data", MountPath: "/data"},
							{Name: "binaries", MountPath: "/binaries"},
							{Name: "certs", MountPath: "/pki"},
							{Name: "helm-cache", MountPath: "/.cache/helm"},
							{Name: "vcluster-config", MountPath: "/var/lib/vcluster"},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						empty("data"), empty("binaries"), empty("certs"), empty("helm-cache"), empty("tmp"),
						{Name: "vcluster-config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vc-config-" + name}}},
					},
				},
			},
		},
	}
}

// vclusterRegistration registers the virtual cluster with Argo CD from
// the kubeconfig vcluster exports (its admin client certificate, the
// Service as server).
func (r renderer) vclusterRegistration(t v1alpha1.Target) (*composed.Unstructured, error) {
	name := r.vclusterName(t.Name)
	return r.registration(t, name, argocdv1alpha1.SecretKeyRef{Name: "vc-" + name, Key: vclusterKubeconfigKey}, nil)
}
