// Command provider-fleetplane is fleetplane's Crossplane provider, the
// imperative work no other provider does. Its managed resources: Kusto
// Tables, partition Heartbeats, hub Federations and ProvisioningDefaults
// (kusto.m); Autoscalers (scaling.m); Argo CD ClusterRegistrations
// (argocd.m); Argo Workflows WorkflowRuns (workflows.m); Expiries
// (lifecycle.m); ReportedStates (placement.m). Its controllers are under
// provider/controller. It runs in a cluster as a Crossplane
// package, or anywhere with --kubeconfig.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"time"

	"github.com/alecthomas/kong"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fleetplane/fleetplane/apis"
	"github.com/fleetplane/fleetplane/internal/securemetrics"
	fpcontroller "github.com/fleetplane/fleetplane/provider/controller"
	"github.com/fleetplane/fleetplane/provider/controller/autoscaler"
	"github.com/fleetplane/fleetplane/provider/controller/defaults"
	"github.com/fleetplane/fleetplane/provider/controller/fairshare"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	"github.com/fleetplane/fleetplane/provider/kusto"
)

// CLI holds the provider's flags.
type CLI struct {
	Debug            bool          `help:"Log at debug level." short:"d"`
	Kubeconfig       string        `help:"Kubeconfig to run out of the cluster; in-cluster configuration when empty." env:"KUBECONFIG"`
	LeaderElection   bool          `help:"Elect a leader among provider replicas." env:"LEADER_ELECTION"`
	LeaderNamespace  string        `default:"crossplane-system" help:"Namespace of the leader election lease." env:"POD_NAMESPACE"`
	Poll             time.Duration `default:"1m" help:"How often an up-to-date managed resource is checked again; federation also comes back when its interval is due, and heartbeats only then."`
	Sync             time.Duration `default:"1h" help:"How often the informer cache resyncs."`
	MaxReconcileRate int           `default:"10" help:"Reconciles per second across all controllers."`
	KustoTimeout     time.Duration `default:"60s" help:"Deadline of one Kusto call, retries included."`
	MetricsAddress   string        `default:":8080" help:"Address of the Prometheus metrics endpoint; 0 turns it off."`
	PollStateMetric  time.Duration `name:"poll-state-metric" default:"5s" help:"How often the managed-resource state metrics (exist, ready, synced) are counted, as provider-kubernetes counts them."`
	HealthAddress    string        `default:":8081" help:"Address of the health and readiness probes; 0 turns them off."`
	PprofAddress     string        `default:"0" help:"Address of Go's pprof endpoints, for profiling the provider; 0 turns them off."`
	IMDSEndpoint     string        `default:"http://169.254.169.254" help:"Azure's instance metadata service, read by ProvisioningDefaults where a ClusterProviderConfig allows discovery."`
	ARMEndpoint      string        `name:"azure-resource-manager-endpoint" default:"https://management.azure.com" help:"Azure Resource Manager, where ProvisioningDefaults lists the Kusto SKUs of a region and Autoscalers read ADX clusters and their Azure Monitor metrics."`
	LoopbackPods     bool          `name:"scrape-loopback-pods" help:"Let Autoscalers scrape ingestor pods whose IP is a loopback address. Only for local control planes whose stand-in pods listen on loopback; never on a real cluster, where a pod claiming such an IP would point the provider at itself."`
	PlainHTTP        string        `name:"plain-http-networks" default:"127.0.0.0/8,::1" help:"Comma-separated addresses and CIDR prefixes Kusto endpoints with credentials None (plain http, local emulators) may connect to; empty for none. Such endpoints name the emulator by IP address or as localhost; an endpoint with credentials named by one of these addresses (loopback aside) is refused. Link-local addresses and the Kubernetes API server are refused whatever this says."`
	MaxKustoMgmt     int64         `name:"max-kusto-mgmt-bytes" default:"16777216" help:"Most bytes of one Kusto management command's answer the provider reads; the SDK holds it whole."`
	MaxKustoQuery    int64         `name:"max-kusto-query-bytes" default:"268435456" help:"Most bytes of one Kusto query's answer the provider reads, streaming."`
	FederationShare  time.Duration `name:"federation-time-per-namespace" default:"6s" help:"Federation cycle time one namespace may spend each minute on average, and its burst; a namespace also runs one cycle at a time. A namespace past it is held back (condition CycleScheduled) until it is repaid, so that no team's Federations delay another's."`

	securemetrics.Flags `embed:""`
}

// plainHTTP is where credentials None may connect: the flag's networks,
// never the API server the provider talks to.
func (c *CLI) plainHTTP(cfg *rest.Config) (kusto.PlainHTTP, error) {
	nets, err := kusto.ParseNetworks(c.PlainHTTP)
	if err != nil {
		return kusto.PlainHTTP{}, fmt.Errorf("--plain-http-networks: %w", err)
	}
	p := kusto.PlainHTTP{Networks: nets}
	if u, err := url.Parse(cfg.Host); err == nil && u.Host != "" {
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"http": "80"}[u.Scheme]
			if port == "" {
				port = "443"
			}
		}
		addrs, _ := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
		for _, a := range addrs {
			if ap, err := netip.ParseAddrPort(net.JoinHostPort(a.String(), port)); err == nil {
				p.Denied = append(p.Denied, ap)
			}
		}
	}
	return p, nil
}

func (c *CLI) restConfig() (*rest.Config, error) {
	if c.Kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	}
	return rest.InClusterConfig()
}

// Run runs the provider until it receives a signal.
func (c *CLI) Run() error {
	zl := zap.New(zap.UseDevMode(c.Debug))
	log := logging.NewLogrLogger(zl.WithName("provider-fleetplane"))
	ctrl.SetLogger(zl)

	cfg, err := c.restConfig()
	if err != nil {
		return fmt.Errorf("cannot load the Kubernetes configuration: %w", err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apis.Managed.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(ratelimiter.LimitRESTConfig(cfg, c.MaxReconcileRate), ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			SyncPeriod: &c.Sync,
			// Nothing the provider caches needs its managedFields: the
			// reconcilers update, never apply, and an update without
			// them keeps the stored ones. (ReportedState reads the
			// objects whose writers it names uncached.)
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				// The CRD gate watches every CRD of the cluster for
				// names and conditions; their OpenAPI schemas were 45 of
				// the 59 MB of live heap on a control plane with the
				// upjet Azure CRDs (make footprint).
				&apiextensionsv1.CustomResourceDefinition{}: {Transform: customresourcesgate.TransformStripCRDSchema},
			},
		},
		LeaderElection:             c.LeaderElection,
		LeaderElectionID:           "provider-fleetplane",
		LeaderElectionNamespace:    c.LeaderNamespace,
		LeaderElectionResourceLock: "leases",
		Metrics:                    c.Options(c.MetricsAddress),
		HealthProbeBindAddress:     c.HealthAddress,
		PprofBindAddress:           c.PprofAddress,
	})
	if err != nil {
		return fmt.Errorf("cannot create the controller manager: %w", err)
	}
	if c.HealthAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
			return err
		}
	}
	// crossplane-runtime's managed-resource metrics, registered as the
	// upjet providers and provider-kubernetes register them, so that
	// Crossplane's dashboards read fleetplane's resources too.
	mrMetrics, stateMetrics := managed.NewMRMetricRecorder(), statemetrics.NewMRStateMetrics()
	metrics.Registry.MustRegister(mrMetrics, stateMetrics)
	// fleetplane's own: what cycles, heartbeats and autoscalers did.
	fleet := fleetmetrics.New()
	metrics.Registry.MustRegister(fleet.Collectors()...)
	o := controller.Options{
		Logger:                  log,
		MaxConcurrentReconciles: c.MaxReconcileRate,
		PollInterval:            c.Poll,
		GlobalRateLimiter:       ratelimiter.NewGlobal(c.MaxReconcileRate),
		Features:                &feature.Flags{},
		Gate:                    new(gate.Gate[schema.GroupVersionKind]),
		MetricOptions:           &controller.MetricOptions{PollStateMetricInterval: c.PollStateMetric, MRMetrics: mrMetrics, MRStateMetrics: stateMetrics},
	}
	if err := customresourcesgate.Setup(mgr, o); err != nil {
		return fmt.Errorf("cannot set up the CRD gate: %w", err)
	}
	plain, err := c.plainHTTP(cfg)
	if err != nil {
		return err
	}
	// Before any Kusto client exists: clients with credentials then
	// refuse these networks' addresses from the first one on.
	plain.Trust()
	if err := fpcontroller.Setup(mgr, o, kusto.Options{Timeout: c.KustoTimeout, PlainHTTP: &plain, MaxMgmtBytes: c.MaxKustoMgmt, MaxQueryBytes: c.MaxKustoQuery},
		defaults.Config{IMDSEndpoint: c.IMDSEndpoint, ResourceManagerEndpoint: c.ARMEndpoint},
		autoscaler.Config{ResourceManagerEndpoint: c.ARMEndpoint, LoopbackPods: c.LoopbackPods}, fairshare.Config{PerMinute: c.FederationShare}, fleet); err != nil {
		return err
	}
	log.Info("Starting", "poll", c.Poll.String(), "max-reconcile-rate", c.MaxReconcileRate, "metrics-secure", c.MetricsSecure)
	return mgr.Start(ctrl.SetupSignalHandler())
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Name("provider-fleetplane"), kong.Description("fleetplane's Crossplane provider: Kusto tables, heartbeats and federation, ADX provisioning defaults, autoscaling, Argo CD registrations, Argo Workflows runs, expiries and reported state."))
	if err := ctx.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "provider-fleetplane:", err)
		os.Exit(1)
	}
}
