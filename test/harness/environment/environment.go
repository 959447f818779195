// Package environment brings up fleetplane for real on one machine, offline,
// installed the way a user installs it: etcd and kube-apiserver with real
// nodes (test/harness/node: containerd, kubelet, kube-proxy, CoreDNS);
// Crossplane from its own Helm chart, running as pods; an OCI registry
// holding fleetplane's packages (built with `crossplane xpkg build`, pushed
// with `crossplane xpkg push`) and those it depends on, under their
// upstream names, which ImageConfigs rewrite to the registry as an
// air-gapped mirror would; `crossplane xpkg install` of the provider and
// the Configuration, whose dependencies the package manager resolves and
// runs: fleetplane's function and provider and provider-kubernetes as pods
// of the images the packages embed. Stand-ins play the upjet providers'
// controllers (their packages run no pod), and Kusto servers partitions
// and hubs, listening where the pods reach this machine. The end-to-end
// tests (on two nodes), `make demo` and `make footprint` use it; it needs
// root on Linux (node.Supported).
package environment

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/apis"
	"github.com/fleetplane/fleetplane/apis/v1alpha1"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/node"
	"github.com/fleetplane/fleetplane/test/harness/registry"
	"github.com/fleetplane/fleetplane/test/harness/standin"
)

// Package sources, as the Configurations' dependsOn name them.
const (
	FunctionSource      = "ghcr.io/fleetplane/function-fleetplane"
	ProviderSource      = "ghcr.io/fleetplane/provider-fleetplane"
	ConfigurationSource = "ghcr.io/fleetplane/fleetplane"

	// FunctionName is the Function object's name, which the package
	// manager derives from its source and the Compositions' functionRef
	// uses.
	FunctionName = "fleetplane-function-fleetplane"
	// ProviderName is the Provider object's name: docs/install.md installs the
	// provider by name, with its runtime config, before the Configuration.
	ProviderName = "provider-fleetplane"
	// ConfigurationName is the installed Configuration's name.
	ConfigurationName = "fleetplane"
	// LocalComposition is the packaged Composition with a short federation
	// interval, for local use.
	LocalComposition = "adxclusters-local"
)

// Options tune an environment.
type Options struct {
	// Interval of heartbeats and federation in LocalComposition.
	Interval time.Duration
	// ChangeCheck, when set, is LocalComposition's kusto.changeCheckInterval:
	// how often partitions and hubs look for a new table in between.
	ChangeCheck time.Duration
	// Logf reports progress.
	Logf func(format string, a ...any)
	// Poll, when set, is both providers' --poll instead of the tests'
	// (5s for provider-fleetplane, 10s for provider-kubernetes): for
	// measurements that compare them at the same interval.
	Poll time.Duration
	// Quiet runs both providers at their default log level, as in
	// production, instead of --debug.
	Quiet bool
	// ProviderArgs are further flags of provider-fleetplane.
	ProviderArgs []string
	// AuditLog, when set, makes kube-apiserver log every request there
	// (controlplane.Options.AuditLog).
	AuditLog string
	// Nodes is how many real nodes (test/harness/node) run the control
	// plane's pods: Crossplane's, the packages', an ADXMon's adx-mon.
	// Zero is one.
	Nodes int
}

// poll is the --poll of a provider whose tests' value is def.
func (o Options) poll(def string) string {
	if o.Poll > 0 {
		return o.Poll.String()
	}
	return def
}

// debug is the log flag of both providers.
func (o Options) debug() []string {
	if o.Quiet {
		return nil
	}
	return []string{"--debug"}
}

// Env is a running environment.
type Env struct {
	Root, Dir  string
	CP         *controlplane.ControlPlane
	Crossplane *controlplane.Crossplane
	Azure      *standin.Azure
	// AzureAPI plays IMDS and Azure Resource Manager's SKU list for
	// ProvisioningDefaults.
	AzureAPI *standin.AzureAPI
	// Cluster is the control plane's real nodes, its registry and its
	// network; CP and Registry are its.
	Cluster *node.Cluster
	// Kube knows fleetplane's, Crossplane's and core types; use
	// unstructured objects for the rest.
	Kube client.Client
	// Registry holds every package, fleetplane's and its dependencies'.
	Registry *registry.Registry
	// Experiments are Argo CD's, Argo Workflows' and GKE's stand-ins.
	Experiments *Experiments
	// ScrapeToken is the token of a scraper bound to
	// fleetplane:metrics-reader, which fleetplane's secure metrics
	// endpoints take.
	ScrapeToken string

	opts    Options
	cancel  context.CancelFunc
	servers []*kustoserver.Server
	logf    func(string, ...any)
	// startRestarts are the restarts of provider-kubernetes' containers
	// (by pod UID and container name) that install found explained by its
	// known start-up race, which Alive does not count.
	startRestarts map[string]int32
	// logDirs, when set, stand for the nodes' pod-logs directories (in
	// the harness's own tests).
	logDirs []string
	// Timings of start-up phases, for reports.
	Timings []Timing
}

// Timing is how long a phase of start-up took.
type Timing struct {
	Phase    string
	Duration time.Duration
}

func (e *Env) phase(name string, start time.Time) {
	d := time.Since(start)
	e.Timings = append(e.Timings, Timing{name, d})
	e.logf("%s: %s", name, d.Round(100*time.Millisecond))
}

// Start brings the environment up in dir. root is the repository root.
// When it fails, the Env it returns (when it got as far as making one) is
// stopped and of use only for its Logs, which say why.
func Start(ctx context.Context, root, dir string, o Options) (started *Env, err error) {
	if o.Interval == 0 {
		o.Interval = 10 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	e := &Env{Root: root, Dir: dir, logf: o.Logf, opts: o}
	// The harness's own clients (stand-ins, waits) log through
	// controller-runtime: to a file, not into the demo's story, and
	// without its stack trace about a logger never set.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	harnessLog, err := os.OpenFile(filepath.Join(dir, "harness.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	ctrllog.SetLogger(zap.New(zap.WriteTo(harnessLog)))
	defer func() {
		if err != nil {
			e.Stop()
			started = e
		}
	}()

	t := time.Now()
	pkgs, err := buildPackages(root, dir)
	if err != nil {
		return nil, err
	}
	e.phase("packages built", t)

	t = time.Now()
	o.Nodes = max(o.Nodes, 1)
	if err := e.startNodes(ctx, o); err != nil {
		return nil, err
	}
	e.phase(fmt.Sprintf("etcd, kube-apiserver, a registry and %d real nodes ready", o.Nodes), t)

	t = time.Now()
	if err := e.publish(ctx, pkgs); err != nil {
		return nil, err
	}
	e.phase("packages pushed to the registry", t)

	t = time.Now()
	// Crossplane, from its chart, trusts the registry's CA, and rolls a
	// dependency when a Configuration's constraint moves past it (an
	// alpha feature in v2.4).
	if e.Crossplane, err = controlplane.InstallCrossplaneChart(ctx, e.CP, root, e.Registry, "--enable-dependency-version-upgrades"); err != nil {
		return nil, err
	}
	e.phase("crossplane ready", t)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, pkgv1.AddToScheme, apis.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	if e.Kube, err = client.New(e.CP.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}

	// The upjet Azure kinds come with their packages; the stand-in serves
	// them once they are.
	sctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.Azure = standin.New(e.Kube)
	// Provisioned clusters' Kusto servers and Azure's APIs listen where
	// the provider's pod reaches them: the node network's host address.
	e.Azure.Host = e.PodHost()
	go e.Azure.Run(sctx)
	if e.AzureAPI, err = standin.NewAzureAPIOn(e.PodHost()); err != nil {
		return nil, err
	}
	e.AzureAPI.ServeClusters(e.Azure.Capacity)

	// Argo's and Cluster API's CRDs are large: the API server takes half
	// a minute on two cores to establish them, which it does while
	// Crossplane installs the packages rather than after.
	standInCRDs := make(chan error, 1)
	go func() { standInCRDs <- e.installStandInCRDs(ctx) }()

	t = time.Now()
	if err := e.install(ctx); err != nil {
		return nil, err
	}
	e.phase("packages installed and healthy", t)

	t = time.Now()
	if err := <-standInCRDs; err != nil {
		return nil, err
	}
	if e.Experiments, err = e.startExperiments(ctx, sctx); err != nil {
		return nil, err
	}
	e.phase("Argo CD, Argo Workflows, GKE and Cluster API stand-ins ready", t)

	if err := e.configure(ctx, o); err != nil {
		return nil, err
	}
	return e, nil
}

type built struct {
	// dir holds the six .xpkg files, as _output/ does after make package.
	dir string
}

// buildPackages runs tools/package.sh, the same script `make package`
// runs, into dir.
func buildPackages(root, dir string) (built, error) {
	out := filepath.Join(dir, "packages")
	cmd := exec.Command(filepath.Join(root, "tools", "package.sh"), out)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		return built{}, fmt.Errorf("tools/package.sh: %w\n%s", err, stderr.String())
	}
	return built{dir: out}, nil
}

// Alive returns an error for the first of the function's and the
// providers' pods that restarted, with how its last run ended: a wait for
// something one of them should do would otherwise only time out.
func (e *Env) Alive() error {
	return e.podsAlive()
}
func standInNames() []string {
	var out []string
	for _, s := range standIns {
		out = append(out, PackageName(s.source))
	}
	return out
}

// applyProviderRBAC applies package/rbac: the ClusterRole and binding the
// provider needs beyond its system role, and the DeploymentRuntimeConfig
// naming the ServiceAccount they bind, with args, when there are any, as
// the provider's flags. It returns that config's name.
func (e *Env) applyProviderRBAC(ctx context.Context, args []string) (string, error) {
	dir := e.RBACDir()
	// The roles adx-mon's components run with, which an ADXMon binds.
	for _, f := range []string{"provider-fleetplane.yaml", "adxmon-roles.yaml", "vcluster-roles.yaml", "metrics.yaml"} {
		if err := e.CP.ApplyRBAC(ctx, filepath.Join(dir, f)); err != nil {
			return "", err
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "runtime-config.yaml"))
	if err != nil {
		return "", err
	}
	rc := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &rc.Object); err != nil {
		return "", err
	}
	if len(args) > 0 {
		if err := unstructured.SetNestedField(rc.Object, map[string]any{
			"selector": map[string]any{},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "package-runtime", "args": toAny(args)}}}},
		}, "spec", "deploymentTemplate", "spec"); err != nil {
			return "", err
		}
	}
	if err := e.Kube.Create(ctx, rc); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", err
	}
	return rc.GetName(), nil
}

// configure creates what a platform team adds after installing: the
// ProviderConfig for local Kusto servers and a Composition with a short
// interval.
func (e *Env) configure(ctx context.Context, o Options) error {
	pc := DefaultProviderConfig()
	if err := e.Kube.Create(ctx, pc); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	b, err := os.ReadFile(filepath.Join(e.Root, "package", "configuration", "compositions", "adxcluster.yaml"))
	if err != nil {
		return err
	}
	comp := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &comp.Object); err != nil {
		return err
	}
	comp.SetName(LocalComposition)
	pipeline, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	step := pipeline[0].(map[string]any)
	kusto := map[string]any{"interval": o.Interval.String()}
	if o.ChangeCheck > 0 {
		kusto["changeCheckInterval"] = o.ChangeCheck.String()
	}
	step["input"] = map[string]any{"apiVersion": "fn.fleetplane.io/v1beta1", "kind": "Input", "kusto": kusto}
	if err := unstructured.SetNestedSlice(comp.Object, pipeline, "spec", "pipeline"); err != nil {
		return err
	}
	if err := e.Kube.Create(ctx, comp); err != nil {
		return err
	}
	// The example Compositions a platform team would add: the convention
	// repository's.
	files, _ := filepath.Glob(filepath.Join(e.Root, "examples", "experiment", "compositions", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := e.Kube.Create(ctx, u); err != nil && !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// DefaultProviderConfig is the policy a platform team writes for local
// use, governing every namespace without a fleetplane.io/policy label: no
// Kusto credentials (local plain-http servers); provisioning in the test
// subscriptions (any resource group, with upjet's ClusterProviderConfig
// "default"), discovery and monitoring there; every Kusto endpoint, each
// a hub; Argo CD registrations in the
// default project with Argo CD's own exec helper; every WorkflowTemplate
// of the argo namespace; Experiments on the hub and on GKE (the project
// and Argo CD's Google service account); and Placement of the workload
// kinds on every inventory cluster, reading every property, with the
// admin's ClusterPlacements of Namespaces, ClusterRoles and CRDs.
func DefaultProviderConfig() *v1alpha1.ClusterProviderConfig {
	azure := func(sub string) v1alpha1.AzureProvisioning {
		return v1alpha1.AzureProvisioning{
			SubscriptionID: sub, ResourceGroups: []string{"*"}, UserAssignedIdentities: []string{"*"}, DatabasePrincipals: []string{"*"},
			ProviderConfigRef: v1alpha1.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"},
			// The tenant of principals that name none, such as the
			// identity of adx-mon's complete example.
			TenantID: "33333333-3333-3333-3333-333333333333",
		}
	}
	return &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Credentials:       v1alpha1.Credentials{Source: xpv2.CredentialsSourceNone},
		NamespaceSelector: metav1.LabelSelector{},
		Azure: &v1alpha1.AzurePolicy{AllowDiscovery: true, AllowMonitoring: true, Provisioning: []v1alpha1.AzureProvisioning{
			azure(TestSubscription), azure(DiscoveredSubscription),
		}},
		// Every Kusto stand-in, each a hub that may create the databases
		// partitions report; tenancy tests write narrower grants.
		Kusto: &v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{
			{Endpoint: "http://*:*", Hub: &v1alpha1.KustoHubGrant{CreateDatabasesFromPartitions: true}},
			{Endpoint: "https://*:*", Hub: &v1alpha1.KustoHubGrant{CreateDatabasesFromPartitions: true}},
		}, Quota: LocalKustoQuota()},
		ArgoCD:    &v1alpha1.ArgoCDPolicy{Namespace: ArgoCDNamespace, Project: "default", AllowedExecCommands: []string{"argocd-k8s-auth"}},
		Workflows: &v1alpha1.WorkflowsPolicy{Namespace: WorkflowsNamespace, AllowedTemplates: []string{"*"}},
		Experiments: &v1alpha1.ExperimentsPolicy{AllowHubTargets: true, GCP: &v1alpha1.GCPPolicy{
			Project: "fleetplane-lab", ArgoCDServiceAccount: "argocd@fleetplane-lab.iam.gserviceaccount.com",
		}},
		Placement: &v1alpha1.PlacementPolicy{
			Kinds:              []string{"apps/*", "batch/*", "/ConfigMap", "/Service", "/Secret", "/ServiceAccount", "policy/*", "networking.k8s.io/*"},
			ReportedStateKinds: []string{"apps/*", "batch/*"},
			PodSecurity:        v1alpha1.PodSecurityBaseline, Properties: []string{"*"},
			ClusterPlacements: &v1alpha1.ClusterPlacementPolicy{
				Kinds: []string{"Namespace", "rbac.authorization.k8s.io/ClusterRole", "apiextensions.k8s.io/CustomResourceDefinition"}, Namespace: "crossplane-system",
			},
		},
	}}
}

// LocalKustoQuota lets Federations cycle and check for changes every
// second: the local environment federates within seconds, where the
// default quota (a cycle a minute at most) would make every journey wait.
func LocalKustoQuota() *v1alpha1.KustoQuota {
	second := &metav1.Duration{Duration: time.Second}
	return &v1alpha1.KustoQuota{MinFederationInterval: second, MinChangeCheckInterval: second}
}

// Subscriptions the e2e and the demo provision in: the one their specs
// name, and the one the IMDS stand-in reports.
const (
	TestSubscription       = "00000000-0000-0000-0000-000000000000"
	DiscoveredSubscription = "44444444-4444-4444-4444-444444444444"
)

// KustoServer starts a Kusto server with the given databases where the
// provider reaches it (PodHost); it stops with the environment.
func (e *Env) KustoServer(dbs ...string) (*kustoserver.Server, error) {
	return e.kustoServerOn(e.PodHost(), dbs...)
}

// ProviderMetrics is the URL of provider-fleetplane's /metrics, on its
// ready pod.
func (e *Env) ProviderMetrics(ctx context.Context) (string, error) {
	return e.MetricsOf(ctx, ProviderName)
}

// FunctionMetrics is the URL of function-fleetplane's /metrics, on the
// ready pod of its active revision.
func (e *Env) FunctionMetrics(ctx context.Context) (string, error) {
	return e.MetricsOf(ctx, FunctionName)
}

func (e *Env) kustoServerOn(host string, dbs ...string) (*kustoserver.Server, error) {
	s := kustoserver.New(dbs...)
	if err := s.Start(host + ":0"); err != nil {
		return nil, err
	}
	e.servers = append(e.servers, s)
	return s, nil
}

// PodHost is where the nodes' pods reach this machine: their network's
// HostIP.
func (e *Env) PodHost() string {
	return e.Cluster.Network.HostIP
}

// startNodes starts the control plane with o.Nodes real nodes, and the
// registry their pods pull from, which is the packages' registry too.
func (e *Env) startNodes(ctx context.Context, o Options) error {
	c, err := node.StartCluster(ctx, e.Root, filepath.Join(e.Dir, "cluster"), e.nodeName("hub-1"), controlplane.Options{AuditLog: o.AuditLog})
	if err != nil {
		return err
	}
	e.Cluster, e.CP, e.Registry = c, c.CP, c.Registry
	for i := 2; i <= o.Nodes; i++ {
		if _, err := c.AddNode(ctx, e.Root, e.nodeName(fmt.Sprintf("hub-%d", i))); err != nil {
			return err
		}
	}
	return nil
}

// nodeName is the name of this environment's node called name. Node
// names are the machine's to share (network namespaces and cgroups are
// named after them): this environment's directory tells its nodes apart
// from another's, the e2e suite's from the demo's.
func (e *Env) nodeName(name string) string {
	return fmt.Sprintf("%s-%x", name, sha256.Sum256([]byte(e.Dir)))[:len(name)+7]
}

// Trace runs `crossplane beta trace` on an object (cluster-scoped when
// namespace is empty) and returns its output.
func (e *Env) Trace(kind, name, namespace string, args ...string) (string, error) {
	cli, err := controlplane.Tool(e.Root, "crossplane")
	if err != nil {
		return "", err
	}
	base := []string{"beta", "trace", kind, name}
	if namespace != "" {
		base = append(base, "-n", namespace)
	}
	cmd := exec.Command(cli, append(base, args...)...)
	cmd.Env = e.cliEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Logs returns the tail of every process log, for failure reports.
func (e *Env) Logs(n int) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(e.Dir, "*.log"))
	if e.CP != nil && e.CP.Dir != e.Dir {
		// The control plane's, Crossplane's and the packages' processes
		// log where the cluster keeps its control plane.
		more, _ := filepath.Glob(filepath.Join(e.CP.Dir, "*.log"))
		files = append(files, more...)
	}
	// The package manager's pods: Crossplane's, the function's and the
	// providers', as each node's kubelet keeps their logs.
	for _, dir := range e.podLogDirs() {
		more, _ := filepath.Glob(filepath.Join(dir, controlplane.CrossplaneNamespace+"_*", "*", "*.log"))
		files = append(files, more...)
	}
	for _, f := range files {
		data, _ := tail(f, int64(n))
		name, err := filepath.Rel(e.Dir, f)
		if err != nil {
			name = filepath.Base(f)
		}
		fmt.Fprintf(&b, "==> %s <==\n", name)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Stop stops everything.
func (e *Env) Stop() {
	if e.cancel != nil {
		e.cancel()
	}
	for _, s := range e.servers {
		_ = s.Close()
	}
	if e.AzureAPI != nil {
		e.AzureAPI.Close()
	}
	if e.Cluster != nil {
		e.Cluster.Stop()
	}
}

// cliEnv is the environment of kubectl and the crossplane CLI run as the
// control plane's administrator. Their discovery cache is this
// environment's own: kubectl keys it by the API server's host and port,
// which a later control plane on the same node network may reuse, and a
// stale cache answers `kubectl get pkg` with "no resource type".
func (e *Env) cliEnv() []string {
	return append(os.Environ(), "KUBECONFIG="+e.CP.Kubeconfig, "KUBECACHEDIR="+filepath.Join(e.Dir, "kube-cache"))
}
