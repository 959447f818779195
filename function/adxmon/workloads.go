package adxmon

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetplane/fleetplane/apis/adx/v1alpha1"
)

// The workloads follow adx-mon v0.3.0's own manifests (build/k8s and
// operator/manifests): the same names, labels, ports, flags, probes,
// mounts and security settings, so that an installation made by
// fleetplane looks like one made by adx-mon's setup to anyone who knows
// it. What differs is filled in rather than left as a placeholder (the
// ADX endpoints, the identity) and what the ADXMon overrides.

// Default images: adx-mon's, at the release whose manifests and CRDs
// fleetplane follows (v0.3.0), never :latest, which moves under a running
// stack. An admin pins them by digest in the function input
// (adxmon.images), or a stack in its spec.
const (
	imageRepo        = "ghcr.io/azure/adx-mon/"
	defaultTag       = ":v0.3.0"
	ingestorPort     = 9090
	ingestorSvcPort  = 443
	ingestorMetrics  = 9091
	collectorPort    = 8080
	collectorHost    = 3100
	alerterPort      = 8080
	labelApp         = "app"
	labelPartOf      = "app.kubernetes.io/part-of"
	labelInstance    = "app.kubernetes.io/instance"
	partOf           = "adx-mon"
	tokenMountPath   = "/etc/adx-mon/ingestor-auth" //nolint:gosec // a mount path, not a credential
	tlsMountPath     = "/etc/adx-mon/tls"
	caMountPath      = "/etc/adx-mon/ingestor-ca"
	collectorConfig  = "collector-config"
	collectorCfgPath = "/etc/config"
)

// image is a component's image: the stack's, the function input's, or
// adx-mon's release.
func (p *planner) image(w v1alpha1.Workload, component string) string {
	if w.Image != "" {
		return w.Image
	}
	if i := p.cfg.Images[component]; i != "" {
		return i
	}
	return imageRepo + component + defaultTag
}

func (p *planner) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: p.ns, Labels: p.labels(name)}
}

// clusterMeta names a cluster-scoped object after the namespace, as
// adx-mon's operator does, so stacks in different namespaces never share
// one.
func (p *planner) clusterMeta(component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: p.ns + ":" + component, Labels: p.labels(component)}
}

func (p *planner) labels(component string) map[string]string {
	return map[string]string{labelApp: component, labelPartOf: partOf, labelInstance: p.xr.Name}
}

func serviceAccount(m metav1.ObjectMeta, automount bool) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: m}
	if !automount {
		sa.AutomountServiceAccountToken = new(false)
	}
	return sa
}

// The ClusterRoles adx-mon's components are bound to. They ship in
// package/rbac/adxmon-roles.yaml, which the cluster admin applies: an
// ADXMon composes only bindings to them, so Crossplane needs bind on these
// names and never holds what they grant (the API server lets a subject
// create a role only with every permission in it).
const (
	// RoleIngestor: adx-mon's Function, ManagementCommand and
	// SummaryRule CRs, in any namespace.
	RoleIngestor = "fleetplane:adxmon:ingestor"
	// RoleIngestorPods: the ingestor's own pods, bound in the stack's
	// namespace only (peer discovery and its shutdown annotation).
	RoleIngestorPods = "fleetplane:adxmon:ingestor-pods"
	// RoleCollector: reading nodes, pods and namespaces, and kubelet
	// metrics, cluster-wide.
	RoleCollector = "fleetplane:adxmon:collector"
	// RoleAlerter: adx-mon's AlertRule CRs.
	RoleAlerter = "fleetplane:adxmon:alerter"
)

// Roles are the ClusterRoles each component is bound to cluster-wide,
// and the one bound in the stack's namespace only ("" for none).
var Roles = map[string]struct{ Cluster, Namespaced string }{
	"ingestor":  {RoleIngestor, RoleIngestorPods},
	"collector": {RoleCollector, ""},
	"alerter":   {RoleAlerter, ""},
}

func clusterRoleBinding(m metav1.ObjectMeta, role, sa, ns string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: m,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}
}

func roleBinding(m metav1.ObjectMeta, role, sa string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: m,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: m.Namespace}},
	}
}

// ingestorService is the ingestor's Service, exposed as exp says (nil: in
// this cluster only).
func ingestorService(m metav1.ObjectMeta, exp *v1alpha1.IngestorService) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: m, Spec: corev1.ServiceSpec{
		Type:     corev1.ServiceTypeClusterIP,
		Selector: map[string]string{labelApp: "ingestor"},
		Ports:    []corev1.ServicePort{{Port: ingestorSvcPort, TargetPort: intstrPort(ingestorPort)}},
	}}
	if exp == nil {
		return svc
	}
	if exp.Type != "" {
		svc.Spec.Type = exp.Type
	}
	if len(exp.Annotations) > 0 {
		svc.Annotations = maps.Clone(svc.Annotations)
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		for k, v := range exp.Annotations {
			svc.Annotations[k] = string(v)
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerSourceRanges = slices.Sorted(slices.Values(exp.LoadBalancerSourceRanges))
	}
	return svc
}

// checkService reports what the schema cannot check of an exposure: the
// annotation keys (a CEL rule on map keys costs more than the API server
// allows), in order, so the message is stable.
func checkService(exp *v1alpha1.IngestorService) error {
	if exp == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(exp.Annotations)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("spec.ingestor.service.annotations: key %q: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

func hostPath(name, path string, t corev1.HostPathType) corev1.Volume {
	v := corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
	if t != "" {
		v.HostPath.Type = new(t)
	}
	return v
}

// caVolumes are the host's CA bundles, which every component mounts to
// reach ADX over TLS.
func caVolumes() ([]corev1.Volume, []corev1.VolumeMount) {
	return []corev1.Volume{
			hostPath("ca-certs", "/etc/ssl/certs", corev1.HostPathDirectory),
			hostPath("etc-pki-ca-certs", "/etc/pki/ca-trust/extracted", corev1.HostPathDirectoryOrCreate),
		}, []corev1.VolumeMount{
			{Name: "etc-pki-ca-certs", MountPath: "/etc/pki/ca-trust/extracted", ReadOnly: true},
			{Name: "ca-certs", MountPath: "/etc/ssl/certs", ReadOnly: true},
		}
}

var restricted = &corev1.SecurityContext{
	AllowPrivilegeEscalation: new(false),
	Privileged:               new(false),
	ReadOnlyRootFilesystem:   new(true),
	Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
}

// override applies what the ADXMon sets on a component's pods.
func override(spec *corev1.PodSpec, w v1alpha1.Workload) {
	c := &spec.Containers[0]
	c.Args = append(c.Args, w.ExtraArgs...)
	if w.Resources != nil {
		c.Resources = *w.Resources
	}
	if len(w.NodeSelector) > 0 {
		spec.NodeSelector = w.NodeSelector
	}
	if w.Tolerations != nil {
		spec.Tolerations = w.Tolerations
	}
}

var defaultTolerations = []corev1.Toleration{
	{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
	{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
	{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
}

// ingestorArgs are adx-mon's flags plus one endpoint flag per Metrics and
// Logs database, as <database>=<endpoint>. Traces databases have no
// ingestor flag in adx-mon v0.3.0.
func ingestorArgs(dbs []endpointDB) []string {
	args := []string{
		"--storage-dir=/mnt/data",
		"--max-segment-age=5s",
		"--max-disk-usage=21474836480",
		"--max-transfer-size=10485760",
		"--max-connections=1000",
		"--insecure-skip-verify",
	}
	for _, d := range dbs {
		switch d.Type {
		case v1alpha1.TelemetryMetrics:
			args = append(args, fmt.Sprintf("--metrics-kusto-endpoints=%s=%s", d.Name, d.Endpoint))
		case v1alpha1.TelemetryLogs:
			args = append(args, fmt.Sprintf("--logs-kusto-endpoints=%s=%s", d.Name, d.Endpoint))
		case v1alpha1.TelemetryTraces:
			// adx-mon v0.3.0's ingestor has no traces endpoint flag.
		}
	}
	return args
}

func (p *planner) ingestor(in *v1alpha1.Ingestor, dbs []endpointDB, replicas *int32) *appsv1.StatefulSet {
	vols, mounts := caVolumes()
	env := []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "INFO"}, {Name: "GODEBUG", Value: "http2client=0"}}
	if len(dbs) > 0 {
		env = append(env, corev1.EnvVar{Name: "AZURE_RESOURCE", Value: dbs[0].Endpoint})
	}
	if id := p.clientID(); id != "" {
		env = append(env, corev1.EnvVar{Name: "AZURE_CLIENT_ID", Value: id})
	}
	if in.TLS != nil {
		vols = append(vols, corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: in.TLS.SecretName,
			Items:      []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey}, {Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "tls", MountPath: tlsMountPath, ReadOnly: true})
	}
	podLabels := map[string]string{labelApp: "ingestor"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: p.meta("ingestor"),
		Spec: appsv1.StatefulSetSpec{
			ServiceName:    "ingestor",
			Replicas:       replicas,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Selector:       &metav1.LabelSelector{MatchLabels: podLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{
					"adx-mon/scrape": "true", "adx-mon/port": "9091", "adx-mon/path": "/metrics",
					"adx-mon/log-destination": "Logs:Ingestor", "adx-mon/log-parsers": "json",
				}},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: new(true),
					ServiceAccountName:           "ingestor",
					Containers: []corev1.Container{{
						Name:            "ingestor",
						Image:           p.image(in.Workload, "ingestor"),
						SecurityContext: restricted,
						Ports: []corev1.ContainerPort{
							{Name: "ingestor", ContainerPort: ingestorPort},
							{Name: "metrics", ContainerPort: ingestorMetrics},
						},
						Env:          env,
						Command:      []string{"/ingestor"},
						Args:         append(ingestorArgs(dbs), tlsArgs(in.TLS)...),
						VolumeMounts: append([]corev1.VolumeMount{{Name: "metrics", MountPath: "/mnt/data"}}, mounts...),
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstrPort(ingestorPort), Scheme: corev1.URISchemeHTTPS}},
							InitialDelaySeconds: 10,
							PeriodSeconds:       5,
						},
					}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: podLabels},
							TopologyKey:   "kubernetes.io/hostname",
						}},
					}},
					Volumes:     append(vols, hostPath("metrics", "/mnt/ingestor", "")),
					Tolerations: defaultTolerations,
				},
			},
		},
	}
	override(&sts.Spec.Template.Spec, in.Workload)
	return sts
}

// tlsArgs are the ingestor's flags for a serving certificate. adx-mon
// calls the certificate's flag --ca-cert; given both, the ingestor serves
// them instead of the certificate it makes itself. Its own transfers to
// peers, which it addresses by pod IP, still skip verification
// (--insecure-skip-verify above): a certificate for the load balancer's
// name does not name the pods.
func tlsArgs(t *v1alpha1.IngestorTLS) []string {
	if t == nil {
		return nil
	}
	return []string{"--ca-cert=" + tlsMountPath + "/" + corev1.TLSCertKey, "--key=" + tlsMountPath + "/" + corev1.TLSPrivateKeyKey}
}

// collectorConfigTOML is adx-mon's collector configuration, pointed at
// the ingestor and at the stack's Metrics and Logs databases.
func collectorConfigTOML(endpoint, region, ns, metricsDB, logsDB string, insecure bool) string {
	var b strings.Builder
	q := tomlString
	fmt.Fprintf(&b, "# Written by fleetplane for an ADXMon; edits are undone.\n")
	fmt.Fprintf(&b, "endpoint = %s\n", q(endpoint))
	fmt.Fprintf(&b, "region = %s\n", q(region))
	fmt.Fprintf(&b, "insecure-skip-verify = %t\n", insecure)
	fmt.Fprintf(&b, "listen-addr = ':%d'\n", collectorPort)
	b.WriteString("max-connections = 100\nmax-batch-size = 10000\nstorage-dir = '/mnt/data'\nwal-flush-interval-ms = 1000\n")
	b.WriteString("lift-labels = [\n  { name = 'host' },\n  { name = 'cluster' },\n  { name = 'adxmon_pod', column = 'Pod' },\n  { name = 'adxmon_namespace', column = 'Namespace' },\n  { name = 'adxmon_container', column = 'Container' },\n]\n")
	b.WriteString("\n[add-labels]\n  host = '$(HOSTNAME)'\n")
	fmt.Fprintf(&b, "\n[prometheus-scrape]\n  database = %s\n  default-drop-metrics = false\n  scrape-interval = 30\n  scrape-timeout = 25\n", q(metricsDB))
	fmt.Fprintf(&b, "  static-scrape-target = [\n    { host-regex = '.*', url = 'http://$(HOSTNAME):%d/metrics', namespace = %s, pod = 'collector', container = 'collector' },\n", collectorHost, q(ns))
	b.WriteString("    { host-regex = '.*', url = 'https://$(HOSTNAME):10250/metrics/cadvisor', namespace = 'kube-system', pod = 'kubelet', container = 'cadvisor' },\n  ]\n")
	fmt.Fprintf(&b, "\n[[prometheus-remote-write]]\n  database = %s\n  path = '/receive'\n", q(metricsDB))
	b.WriteString("\n[otel-log]\n  lift-attributes = ['kusto.database', 'kusto.table']\n")
	fmt.Fprintf(&b, "\n[[host-log]]\n  parsers = ['json']\n  journal-target = [\n    { matches = ['_SYSTEMD_UNIT=kubelet.service'], database = %s, table = 'Kubelet' },\n  ]\n", q(logsDB))
	return b.String()
}

// tomlString quotes s as a TOML basic string. The values come from a
// spec: escaping keeps them values.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (p *planner) collector(c *v1alpha1.Collector, configHash string) *appsv1.DaemonSet {
	vols, mounts := caVolumes()
	podLabels := map[string]string{"adxmon": "collector"}
	mounts = append(mounts,
		corev1.VolumeMount{Name: "config-volume", MountPath: collectorCfgPath},
		corev1.VolumeMount{Name: "storage", MountPath: "/mnt/data"},
		corev1.VolumeMount{Name: "varlog", MountPath: "/var/log", ReadOnly: true},
		corev1.VolumeMount{Name: "runlog", MountPath: "/run/log", ReadOnly: true},
		corev1.VolumeMount{Name: "varlibdockercontainers", MountPath: "/var/lib/docker/containers", ReadOnly: true},
		corev1.VolumeMount{Name: "etcmachineid", MountPath: "/etc/machine-id", ReadOnly: true},
	)
	vols = append(vols,
		corev1.Volume{Name: "config-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: collectorConfig}}}},
		hostPath("storage", "/mnt/collector", ""),
		hostPath("varlog", "/var/log", ""),
		hostPath("runlog", "/run/log", ""),
		hostPath("varlibdockercontainers", "/var/lib/docker/containers", ""),
		hostPath("etcmachineid", "/etc/machine-id", corev1.HostPathFile),
	)
	if a := c.IngestorAuth; a != nil && a.TokenSecretRef != nil {
		// adx-mon v0.3.0's collector has no token setting of its own; the
		// token is mounted where a collector image that sends one reads it.
		vols = append(vols, corev1.Volume{Name: "ingestor-auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: a.TokenSecretRef.Name,
			Items:      []corev1.KeyToPath{{Key: a.TokenSecretRef.Key, Path: "token"}},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "ingestor-auth", MountPath: tokenMountPath, ReadOnly: true})
	}
	env := []corev1.EnvVar{
		{Name: "LOG_LEVEL", Value: "INFO"},
		{Name: "HOSTNAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "GODEBUG", Value: "http2client=0"},
	}
	if ca := c.IngestorCA; ca != nil {
		// Go adds every file of SSL_CERT_DIR's directories to the roots
		// it reads from the node's bundle (/etc/ssl/certs, mounted
		// above), so the CA is trusted besides the node's, not instead.
		vols = append(vols, corev1.Volume{Name: "ingestor-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ca.Name},
			Items:                []corev1.KeyToPath{{Key: ca.Key, Path: "ca.crt"}},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "ingestor-ca", MountPath: caMountPath, ReadOnly: true})
		env = append(env, corev1.EnvVar{Name: "SSL_CERT_DIR", Value: caMountPath})
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: p.meta("collector"),
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{
				MaxSurge: new(intstr.FromInt32(0)), MaxUnavailable: new(intstr.FromString("30%")),
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{
					"adx-mon/scrape": "true", "adx-mon/port": "9091", "adx-mon/path": "/metrics",
					"adx-mon/log-destination": "Logs:Collector", "adx-mon/log-parsers": "json",
					// The collector reads its configuration at start: a
					// change rolls the pods.
					"fleetplane.io/config-hash": configHash,
				}},
				Spec: corev1.PodSpec{
					ServiceAccountName: "collector",
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
						{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
					},
					Containers: []corev1.Container{{
						Name:         "collector",
						Image:        p.image(c.Workload, "collector"),
						Command:      []string{"/collector"},
						Args:         []string{"--config=" + collectorCfgPath + "/config.toml", "--hostname=$(HOSTNAME)"},
						Ports:        []corev1.ContainerPort{{ContainerPort: collectorPort, HostPort: collectorHost, Protocol: corev1.ProtocolTCP}},
						Env:          env,
						VolumeMounts: mounts,
						Resources: corev1.ResourceRequirements{
							Requests: quantities("50m", "100Mi"),
							Limits:   quantities("500m", "2000Mi"),
						},
					}},
					Volumes: vols,
				},
			},
		},
	}
	override(&ds.Spec.Template.Spec, c.Workload)
	return ds
}

func (p *planner) alerter(a *v1alpha1.Alerter, dbs []endpointDB) *appsv1.Deployment {
	vols, mounts := caVolumes()
	podLabels := map[string]string{labelApp: "alerter"}
	args := []string{fmt.Sprintf("--port=%d", alerterPort)}
	if a.NotificationEndpoint != "" {
		args = append(args, "--alerter-address="+a.NotificationEndpoint)
	}
	for _, d := range dbs {
		args = append(args, fmt.Sprintf("--kusto-endpoint=%s=%s", d.Name, d.Endpoint))
	}
	if id := p.clientID(); id != "" {
		args = append(args, "--auth-msi-id="+id)
	}
	dep := &appsv1.Deployment{
		ObjectMeta: p.meta("alerter"),
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{
					"adx-mon/scrape": "true", "adx-mon/log-destination": "Logs:Alerter", "adx-mon/log-parsers": "json",
					"prometheus.io/path": "/metrics", "prometheus.io/port": strconv.Itoa(alerterPort), "prometheus.io/scrape": "true",
				}},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: new(true),
					ServiceAccountName:           "alerter",
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: new(true), RunAsUser: new(int64(1000)), RunAsGroup: new(int64(3000)), FSGroup: new(int64(65534)),
					},
					Containers: []corev1.Container{{
						Name:  "alerter",
						Image: p.image(a.Workload, "alerter"),
						// Where adx-mon's image has it (build/images/
						// Dockerfile.alerter), as /ingestor and /collector
						// are theirs. adx-mon's operator manifest names
						// /usr/local/bin/alerter, which that image lacks:
						// the container could not start (test/node).
						Command:         []string{"/alerter"},
						Args:            args,
						Env:             []corev1.EnvVar{{Name: "GODEBUG", Value: "http2client=0"}},
						Ports:           []corev1.ContainerPort{{ContainerPort: alerterPort, Protocol: corev1.ProtocolTCP}},
						SecurityContext: restricted,
						Resources: corev1.ResourceRequirements{
							Requests: quantities("100m", "125Mi"),
							Limits:   quantities("400m", "1400Mi"),
						},
						VolumeMounts: mounts,
					}},
					Volumes: vols,
				},
			},
		},
	}
	override(&dep.Spec.Template.Spec, a.Workload)
	return dep
}
