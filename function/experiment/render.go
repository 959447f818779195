package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	argocdv1alpha1 "github.com/fleetplane/fleetplane/apis/argocd/v1alpha1"
	"github.com/fleetplane/fleetplane/apis/experiments/v1alpha1"
	lifecyclev1alpha1 "github.com/fleetplane/fleetplane/apis/lifecycle/v1alpha1"
	workflowsv1alpha1 "github.com/fleetplane/fleetplane/apis/workflows/v1alpha1"
	"github.com/fleetplane/fleetplane/function/compose"
)

// Composition resource names.
func networkName(t string) resource.Name      { return resource.Name("network-" + t) }
func subnetName(t string) resource.Name       { return resource.Name("subnet-" + t) }
func clusterName(t string) resource.Name      { return resource.Name("cluster-" + t) }
func nodePoolName(t string) resource.Name     { return resource.Name("nodepool-" + t) }
func registrationName(t string) resource.Name { return resource.Name("registration-" + t) }
func applicationName(t string) resource.Name  { return resource.Name("application-" + t) }

const (
	workflowName     resource.Name = "workflow"
	expiryName       resource.Name = "expiry"
	argocdAccessName resource.Name = "argocd-access"
)

// Labels on what an experiment creates outside its namespace.
const (
	labelExperiment = "experiments.fleetplane.io/experiment"
	labelNamespace  = "experiments.fleetplane.io/namespace"
	labelTarget     = "experiments.fleetplane.io/target"
)

const (
	gcpAPIVersion        = "container.gcp.m.upbound.io/v1beta1"
	gcpComputeAPIVersion = "compute.gcp.m.upbound.io/v1beta1"
	gcpIAMAPIVersion     = "cloudplatform.gcp.m.upbound.io/v1beta1"
)

// A dedicated network's default ranges: a /20 for nodes (4,092
// addresses), a /14 for pods (GKE's default, room for about 1,000 nodes
// at 110 pods each) and a /20 for services. They may repeat across
// targets: each target's VPC is its own address space.
const (
	defaultSubnetCIDR   = "10.0.0.0/20"
	defaultPodsCIDR     = "10.4.0.0/14"
	defaultServicesCIDR = "10.8.0.0/20"
)

// Secondary range names of a dedicated subnet, which the cluster names.
const (
	podsRange     = "pods"
	servicesRange = "services"
)

// gkeExecCommand is Argo CD's own helper, which reaches GKE as Argo CD's
// Google service account.
const gkeExecCommand = "argocd-k8s-auth"

// healthyAndSynced is what provider-kubernetes evaluates to call an Argo
// CD Application ready.
const healthyAndSynced = `object.status.health.status == 'Healthy' && object.status.sync.status == 'Synced'`

type renderer struct {
	xr  *v1alpha1.Experiment
	cfg Config
}

// gkeName is a target's GKE cluster name: at most 40 characters, starting
// with a letter, unique across namespaces (the experiment's namespace and
// name are hashed in, as the operator this replaces did not).
func (r renderer) gkeName(target string) string {
	sum := sha256.Sum256([]byte(r.xr.Namespace + "/" + r.xr.Name + "/" + target))
	// GKE takes lowercase letters, digits and dashes; an XR name may hold
	// dots too. The hash keeps a.b and a-b apart.
	base := strings.Trim(strings.ReplaceAll(r.xr.Name, ".", "-")+"-"+target, "-")
	if len(base) > 33 {
		base = strings.TrimRight(base[:33], "-")
	}
	name := base + "-" + hex.EncodeToString(sum[:])[:6]
	if name[0] < 'a' || name[0] > 'z' {
		name = "x" + name[:len(name)-1]
	}
	return name
}

// kubeconfigSecret is the connection Secret of a target's cluster.
func (r renderer) kubeconfigSecret(target string) string {
	return r.gkeName(target) + "-kubeconfig"
}

func (r renderer) gcp(kind string, forProvider map[string]any) *composed.Unstructured {
	return r.gcpOf(gcpAPIVersion, kind, forProvider)
}

func (r renderer) gcpOf(apiVersion, kind string, forProvider map[string]any) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.Object["spec"] = map[string]any{
		"forProvider":       forProvider,
		"providerConfigRef": map[string]any{"kind": r.cfg.GCP.Kind, "name": r.cfg.GCP.Name},
	}
	return o
}

// network is a GKE target's network: dedicated, with its resolved
// ranges, or the project's default one.
type network struct {
	dedicated              bool
	subnet, pods, services string
}

// networkOf is t's network with its defaults, and what is wrong with its
// ranges, "" when nothing is: GKE refuses ranges that overlap only after
// the VPC is made, so saying so first makes nothing.
func networkOf(t v1alpha1.Target) (network, string) {
	n := t.Cluster.Network
	if n != nil && n.Dedicated != nil && !*n.Dedicated {
		return network{}, ""
	}
	out := network{dedicated: true, subnet: defaultSubnetCIDR, pods: defaultPodsCIDR, services: defaultServicesCIDR}
	if n != nil {
		out.subnet = or(n.SubnetCIDR, out.subnet)
		out.pods = or(n.PodsCIDR, out.pods)
		out.services = or(n.ServicesCIDR, out.services)
	}
	ranges := []struct{ field, cidr string }{{"subnetCidr", out.subnet}, {"podsCidr", out.pods}, {"servicesCidr", out.services}}
	for i, a := range ranges {
		pa, err := netip.ParsePrefix(a.cidr)
		if err != nil {
			return out, fmt.Sprintf("cluster.network.%s %q is no network in CIDR notation", a.field, a.cidr)
		}
		for _, b := range ranges[i+1:] {
			if pb, err := netip.ParsePrefix(b.cidr); err == nil && pa.Overlaps(pb) {
				return out, fmt.Sprintf("cluster.network.%s %s overlaps cluster.network.%s %s: nodes, pods and services need ranges of their own", a.field, a.cidr, b.field, b.cidr)
			}
		}
	}
	return out, ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// region is the region of a zone (us-central1-a: us-central1); a
// regional location is its own region.
func region(location string) string {
	if i := strings.LastIndexByte(location, '-'); i > 0 && len(location)-i == 2 {
		return location[:i]
	}
	return location
}

// networkNames are a target's VPC and subnet names in GCP.
func (r renderer) vpcName(target string) string    { return r.gkeName(target) + "-vpc" }
func (r renderer) subnetName(target string) string { return r.gkeName(target) + "-nodes" }

// vpc is a target's own VPC, without automatic subnets: its one subnet
// is vpcSubnet.
func (r renderer) vpc(t v1alpha1.Target) *composed.Unstructured {
	o := r.gcpOf(gcpComputeAPIVersion, "Network", map[string]any{
		"autoCreateSubnetworks": false,
		"routingMode":           "REGIONAL",
	})
	o.SetAnnotations(map[string]string{"crossplane.io/external-name": r.vpcName(t.Name)})
	return o
}

// vpcSubnet is the subnet of a target's VPC in its cluster's region, with
// the secondary ranges a VPC-native cluster takes pod and service
// addresses from, and Private Google Access so that nodes without public
// addresses reach Google's APIs (image pulls from Artifact Registry).
func (r renderer) vpcSubnet(t v1alpha1.Target, n network) *composed.Unstructured {
	o := r.gcpOf(gcpComputeAPIVersion, "Subnetwork", map[string]any{
		"network":               r.vpcName(t.Name),
		"region":                region(t.Cluster.Zone),
		"ipCidrRange":           n.subnet,
		"privateIpGoogleAccess": true,
		"secondaryIpRange": []any{
			map[string]any{"rangeName": podsRange, "ipCidrRange": n.pods},
			map[string]any{"rangeName": servicesRange, "ipCidrRange": n.services},
		},
	})
	o.SetAnnotations(map[string]string{"crossplane.io/external-name": r.subnetName(t.Name)})
	return o
}

func (r renderer) cluster(t v1alpha1.Target, n network) *composed.Unstructured {
	fp := map[string]any{
		"location": t.Cluster.Zone,
		// The node pool is its own resource, so the default one goes.
		"initialNodeCount":      int64(1),
		"removeDefaultNodePool": true,
		"deletionProtection":    false,
		// No client certificate: GKE gives it no RBAC and cannot revoke it.
		// Argo CD authenticates as its Google service account instead (see
		// registration), and the connection Secret's kubeconfig serves for
		// the server and its CA.
	}
	if r.cfg.GCPProject != "" {
		fp["workloadIdentityConfig"] = map[string]any{"workloadPool": r.cfg.GCPProject + ".svc.id.goog"}
	}
	if n.dedicated {
		fp["network"] = r.vpcName(t.Name)
		fp["subnetwork"] = r.subnetName(t.Name)
		fp["networkingMode"] = "VPC_NATIVE"
		fp["ipAllocationPolicy"] = map[string]any{"clusterSecondaryRangeName": podsRange, "servicesSecondaryRangeName": servicesRange}
	}
	o := r.gcp("Cluster", fp)
	o.SetAnnotations(map[string]string{"crossplane.io/external-name": r.gkeName(t.Name)})
	o.Object["spec"].(map[string]any)["writeConnectionSecretToRef"] = map[string]any{"name": r.kubeconfigSecret(t.Name)} //nolint:forcetypeassert // gcp sets spec as a map
	return o
}

// nodePool is a GKE target's node pool. What its nodes run as (service
// account, scopes) is the policy's when the pool is made, and then stays
// as the pool was made: GKE replaces every node to change either, which a
// policy edit must not do to a running Experiment.
func (r renderer) nodePool(t v1alpha1.Target, observed *composed.Unstructured) *composed.Unstructured {
	c := t.Cluster
	nodeCount, machine, disk := int64(c.NodeCount), c.MachineType, int64(c.DiskSizeGb)
	if nodeCount == 0 {
		nodeCount = 1
	}
	if machine == "" {
		machine = defaultMachineType
	}
	if disk == 0 {
		disk = 50
	}
	scopes := make([]any, len(r.cfg.NodeOAuthScopes))
	for i, s := range r.cfg.NodeOAuthScopes {
		scopes[i] = s
	}
	sa := r.cfg.NodeServiceAccount
	if observed != nil {
		var made []string
		if err := observed.GetValueInto("spec.forProvider.nodeConfig.oauthScopes", &made); err == nil && len(made) > 0 {
			scopes = make([]any, len(made))
			for i, s := range made {
				scopes[i] = s
			}
			sa, _ = observed.GetString("spec.forProvider.nodeConfig.serviceAccount")
		}
	}
	node := map[string]any{
		"machineType": machine,
		"diskSizeGb":  disk,
		"preemptible": c.Preemptible,
		// The platform's, never the tenant's: the scopes bound what the
		// nodes' service account may do for every pod on them.
		"oauthScopes": scopes,
	}
	if sa != "" {
		node["serviceAccount"] = sa
	}
	o := r.gcp("NodePool", map[string]any{
		"cluster":    r.gkeName(t.Name),
		"location":   c.Zone,
		"nodeCount":  nodeCount,
		"nodeConfig": node,
	})
	o.SetAnnotations(map[string]string{"crossplane.io/external-name": r.gkeName(t.Name) + "-nodes"})
	return o
}

func (r renderer) fleetplaneSpec() xpv2.ManagedResourceSpec {
	pc := r.cfg.Fleetplane
	return xpv2.ManagedResourceSpec{ProviderConfigReference: &pc}
}

// registration registers a target's cluster with Argo CD as cluster,
// from the kubeconfig in the Secret key ref, with exec (if any) as the
// credential Argo CD runs instead of the kubeconfig's own.
func (r renderer) registration(t v1alpha1.Target, cluster string, kubeconfig argocdv1alpha1.SecretKeyRef, exec *argocdv1alpha1.ExecCredential) (*composed.Unstructured, error) {
	return compose.Typed(&argocdv1alpha1.ClusterRegistration{Spec: argocdv1alpha1.ClusterRegistrationSpec{
		ManagedResourceSpec: r.fleetplaneSpec(),
		ForProvider: argocdv1alpha1.ClusterRegistrationParameters{
			ClusterName:         cluster,
			KubeconfigSecretRef: kubeconfig,
			ExecCredential:      exec,
			Labels:              r.labels(t.Name),
		},
	}})
}

// gkeRegistration registers a target's GKE cluster the way Argo CD
// documents it for GKE: its argocd-k8s-auth helper gets a token for the
// Google service account Argo CD runs as (workload identity on the hub);
// the server and CA come from the cluster's kubeconfig. Where, and in
// which project, is the ClusterProviderConfig's to say.
func (r renderer) gkeRegistration(t v1alpha1.Target) (*composed.Unstructured, error) {
	return r.registration(t, r.gkeName(t.Name),
		argocdv1alpha1.SecretKeyRef{Name: r.kubeconfigSecret(t.Name), Key: "kubeconfig"},
		&argocdv1alpha1.ExecCredential{Command: gkeExecCommand, Args: []string{"gcp"}, APIVersion: "client.authentication.k8s.io/v1beta1"})
}

// argocdAccess grants Argo CD's Google service account its role on the
// project, so that GKE lets it deploy. The binding serves every experiment
// in the project: it is created if missing and never deleted with one
// experiment (no Delete in its management policies).
func (r renderer) argocdAccess() *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion(gcpIAMAPIVersion)
	o.SetKind("ProjectIAMMember")
	o.Object["spec"] = map[string]any{
		"forProvider": map[string]any{
			"project": r.cfg.GCPProject,
			"role":    r.cfg.ArgoCDRole,
			"member":  "serviceAccount:" + r.cfg.ArgoCDServiceAccount,
		},
		"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"},
		"providerConfigRef":  map[string]any{"kind": r.cfg.GCP.Kind, "name": r.cfg.GCP.Name},
	}
	return o
}

func (r renderer) labels(target string) map[string]string {
	l := map[string]string{labelExperiment: r.xr.Name, labelNamespace: r.xr.Namespace}
	if target != "" {
		l[labelTarget] = target
	}
	return l
}

// appName is the Argo CD Application of a target; the namespace is part
// of it so experiments of the same name in two namespaces do not collide.
// 63 characters at most, so that it fits Argo CD's tracking label.
func (r renderer) appName(target string) string {
	return shorten(r.xr.Namespace+"-"+r.xr.Name+"-"+target, 63)
}

// application wraps one multi-source Argo CD Application per target in a
// provider-kubernetes Object (see kubernetesObject), ready when Argo CD
// reports it Healthy and Synced.
func (r renderer) application(t v1alpha1.Target, server string, comps []Resolved, created bool) *composed.Unstructured {
	var sources []any
	for _, c := range comps {
		for _, s := range c.Sources {
			sources = append(sources, argoSource(s))
		}
	}
	app := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata": map[string]any{
			"name":      r.appName(t.Name),
			"namespace": r.cfg.ArgoCDNamespace,
			"labels":    toAny(r.labels(t.Name)),
			// Deleting the Application deletes what it deployed.
			"finalizers": []any{"resources-finalizer.argocd.argoproj.io"},
		},
		"spec": map[string]any{
			"project":     r.cfg.ArgoCDProject,
			"destination": map[string]any{"server": server, "namespace": r.destination(t)},
			"sources":     sources,
			"syncPolicy": map[string]any{
				"automated":   map[string]any{"prune": true, "selfHeal": true},
				"syncOptions": syncOptions(t),
			},
		},
	}
	return r.kubernetesObject(app, healthyAndSynced, r.cfg.WatchApplications, created)
}

// kubernetesObject wraps manifest in a provider-kubernetes Object, ready
// when celQuery holds for the object it delivers; watch has
// provider-kubernetes watch that object rather than poll it.
//
// Until the Object has created its object it may only create it: an
// object of that name that exists, anyone's, is observed, never
// overwritten nor deleted (created).
func (r renderer) kubernetesObject(manifest map[string]any, celQuery string, watch, created bool) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion("kubernetes.m.crossplane.io/v1alpha1")
	o.SetKind("Object")
	spec := map[string]any{
		"forProvider":       map[string]any{"manifest": manifest},
		"readiness":         map[string]any{"policy": "DeriveFromCelQuery", "celQuery": celQuery},
		"providerConfigRef": map[string]any{"kind": r.cfg.Kubernetes.Kind, "name": r.cfg.Kubernetes.Name},
	}
	if watch {
		spec["watch"] = true
	}
	if !created {
		spec["managementPolicies"] = []any{"Observe", "Create"}
	}
	o.Object["spec"] = spec
	return o
}

// destination is the namespace a target's application deploys to. On the
// hub, the control plane every tenant shares, it is the Experiment's own
// namespace, which exists and which the tenant may use; never its name,
// which could be any namespace of the hub. A GKE cluster is the
// experiment's own: there each experiment gets a namespace of its name.
func (r renderer) destination(t v1alpha1.Target) string {
	if t.Cluster.Type == v1alpha1.ClusterHub {
		return r.xr.Namespace
	}
	return r.xr.Name
}

// syncOptions of a target's application: Argo CD creates the namespace
// on an experiment's own cluster, never on the hub.
func syncOptions(t v1alpha1.Target) []any {
	if t.Cluster.Type == v1alpha1.ClusterHub {
		return []any{"ServerSideApply=true"}
	}
	return []any{"CreateNamespace=true", "ServerSideApply=true"}
}

func argoSource(s v1alpha1.Source) map[string]any {
	out := map[string]any{"repoURL": s.RepoURL, "targetRevision": s.TargetRevision}
	switch {
	case s.Chart != "":
		out["chart"] = s.Chart
	case s.Path != "":
		out["path"] = s.Path
	}
	if s.Ref != "" {
		out["ref"] = s.Ref
	}
	if helm := argoHelm(s.Helm); len(helm) > 0 {
		out["helm"] = helm
	}
	return out
}

// argoHelm is a source's helm section as Argo CD spells it, empty when
// there is nothing to say.
func argoHelm(h *v1alpha1.Helm) map[string]any {
	helm := map[string]any{}
	if h == nil {
		return helm
	}
	if h.ReleaseName != "" {
		helm["releaseName"] = h.ReleaseName
	}
	if len(h.ValueFiles) > 0 {
		files := make([]any, len(h.ValueFiles))
		for i, f := range h.ValueFiles {
			files[i] = f
		}
		helm["valueFiles"] = files
	}
	if len(h.Parameters) > 0 {
		params := make([]any, len(h.Parameters))
		for i, p := range h.Parameters {
			m := map[string]any{"name": p.Name, "value": p.Value}
			if p.ForceString {
				m["forceString"] = true
			}
			params[i] = m
		}
		helm["parameters"] = params
	}
	return helm
}

func (r renderer) workflowRun(params []workflowsv1alpha1.Parameter) (*composed.Unstructured, error) {
	onMissing := workflowsv1alpha1.MissingTemplateFail
	if c := r.xr.Spec.Workflow.Completion; c != nil && c.Mode == v1alpha1.CompletionManual {
		onMissing = workflowsv1alpha1.MissingTemplateSuspend
	}
	return compose.Typed(&workflowsv1alpha1.WorkflowRun{Spec: workflowsv1alpha1.WorkflowRunSpec{
		ManagedResourceSpec: r.fleetplaneSpec(),
		ForProvider: workflowsv1alpha1.WorkflowRunParameters{
			WorkflowTemplateRef: r.xr.Spec.Workflow.Template,
			RunName:             r.runName(),
			Parameters:          params,
			OnMissingTemplate:   onMissing,
			Labels:              r.labels(""),
		},
	}})
}

// runName names the validation Workflow. It carries a digest of what the
// run validates, the targets and the workflow: a run that finished is
// never submitted again for the same experiment, and a changed experiment
// is validated anew. The generation would not do: Crossplane bumps it
// each time it records a composed resource in the XR's spec. Argo
// Workflows wants at most 63 characters.
func (r renderer) runName() string {
	b, _ := json.Marshal(struct { //nolint:errchkjson // strings, numbers and maps of strings always marshal
		Targets  []v1alpha1.Target     `json:"targets"`
		Workflow v1alpha1.WorkflowSpec `json:"workflow"`
	}{r.xr.Spec.Targets, r.xr.Spec.Workflow})
	sum := sha256.Sum256(b)
	suffix := "-validation-" + hex.EncodeToString(sum[:])[:8]
	return shorten(r.xr.Namespace+"-"+r.xr.Name, 63-len(suffix)) + suffix
}

// shorten makes s, built from namespace and object names (which may hold
// dots), a DNS label of at most n bytes: it keeps s when it already is
// one; otherwise dots become dashes, it is cut to fit, and a hash of the
// original keeps different inputs different (a.b and a-b included).
func shorten(s string, n int) string {
	clean := strings.ReplaceAll(s, ".", "-")
	if clean == s && len(s) <= n {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(clean[:min(len(clean), n-7)], "-") + "-" + hex.EncodeToString(sum[:])[:6]
}

// expiresAt is creation plus the TTL.
func (r renderer) expiresAt() time.Time {
	days := r.xr.Spec.TTLDays
	if days == 0 {
		days = 1
	}
	return r.xr.CreationTimestamp.Add(time.Duration(days) * 24 * time.Hour).UTC()
}

func (r renderer) expiry() (*composed.Unstructured, error) {
	return compose.Typed(&lifecyclev1alpha1.Expiry{Spec: lifecyclev1alpha1.ExpirySpec{
		ManagedResourceSpec: r.fleetplaneSpec(),
		ForProvider: lifecyclev1alpha1.ExpiryParameters{
			Target: lifecyclev1alpha1.ObjectRef{
				APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ExperimentKind,
				Name: r.xr.Name, UID: string(r.xr.UID),
			},
			ExpiresAt: metav1.Time{Time: r.expiresAt()},
		},
	}})
}

// usage keeps of from being deleted while by exists, so that an
// experiment is torn down in reverse dependency order.
func usage(of, by *composed.Unstructured, reason string) *composed.Unstructured {
	ref := func(o *composed.Unstructured) map[string]any {
		return map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "resourceRef": map[string]any{"name": o.GetName()}}
	}
	u := composed.New()
	u.SetAPIVersion("protection.crossplane.io/v1beta1")
	u.SetKind("Usage")
	u.Object["spec"] = map[string]any{"of": ref(of), "by": ref(by), "reason": reason, "replayDeletion": true}
	return u
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
