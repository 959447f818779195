// Command function-fleetplane is fleetplane's Crossplane composition
// function. It composes all eight of fleetplane's composite resource
// kinds: ADXCluster and ADXMon (adx.fleetplane.io), Experiment and
// Component (experiments.fleetplane.io), Placement, ClusterPlacement,
// CustomTransform and StatusCollector (placement.fleetplane.io); fn.go
// maps each kind to its composer, a package of its own beside this one
// (function/<kind>).
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetplane/fleetplane/function/fnwire"
	"github.com/fleetplane/fleetplane/function/runmetrics"
	"github.com/fleetplane/fleetplane/internal/securemetrics"
)

// CLI holds the flags every Crossplane function takes, and the metrics
// endpoint's.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network     string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address     string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir string `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure    bool   `help:"Run without mTLS credentials. If you supply this flag --tls-certs-dir will be ignored."`

	MaxRecvMessageSize int `default:"4" help:"Maximum size of received messages in MB."`

	MetricsAddress string `default:":8080" help:"Address of the Prometheus metrics endpoint; empty turns it off (as when many run on one machine)."`
	Kubeconfig     string `help:"Kubeconfig of the API server that authenticates and authorizes metrics scrapers, out of a cluster; in a cluster, the pod's ServiceAccount. Without either, secure metrics are off." env:"KUBECONFIG"`

	securemetrics.Flags `embed:""`
}

// Run serves the function until the process is stopped.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	// The function's own metrics and the gRPC server's, in the registry
	// controller-runtime's metrics server serves.
	reg, ok := crmetrics.Registry.(*prometheus.Registry)
	if !ok {
		return errors.New("controller-runtime's metrics registry is not a Prometheus registry")
	}
	m := runmetrics.New(nil)
	for _, col := range append(m.Collectors(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})) {
		if err := reg.Register(col); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			return fmt.Errorf("cannot register the function's metrics: %w", err)
		}
	}
	if err := c.serveMetrics(log); err != nil {
		return err
	}
	// fnwire.Serve is function.Serve with requests decoded and responses
	// encoded straight from and to the maps composers use.
	return fnwire.Serve(NewFunction(log).WithRecorder(m),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		function.WithMetricsServer(c.MetricsAddress),
		function.WithMetricsRegistry(reg))
}

// serveMetrics starts the metrics endpoint, unless it is off. Secure
// metrics need an API server to review scrapers' tokens: without one
// (the function run by hand for crossplane render, or a pod that mounts
// no token) they are off, and the log says so, rather than served to
// anyone or taking the function down with them.
func (c *CLI) serveMetrics(log logging.Logger) error {
	if c.MetricsAddress == "" {
		return nil
	}
	var cfg *rest.Config
	var httpClient *http.Client
	if c.MetricsSecure {
		var err error
		if c.Kubeconfig != "" {
			cfg, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		} else {
			cfg, err = rest.InClusterConfig()
		}
		switch {
		case err != nil && c.Kubeconfig != "":
			return fmt.Errorf("cannot load the Kubernetes configuration for secure metrics: %w", err)
		case err != nil:
			// Out of a cluster, or in a pod that mounts no ServiceAccount
			// token: nothing can review a scraper, and the function's
			// work (gRPC) does not depend on its metrics.
			log.Info("Metrics are off: serving them securely needs an API server to authenticate scrapers; pass --kubeconfig, mount the pod's ServiceAccount token, or pass --no-metrics-secure to serve them to anyone", "reason", err.Error())
			return nil
		}
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return fmt.Errorf("cannot make the client that reviews metrics scrapers: %w", err)
		}
	}
	// The server listens only once started, in the background, where a
	// port already taken was a line few read after "Serving metrics":
	// ask first, and say so, keeping the function's work (gRPC) going.
	if l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", c.MetricsAddress); err != nil {
		log.Info("Metrics are off: their address cannot be listened on; pass another --metrics-address, or --metrics-address= to turn them off", "address", c.MetricsAddress, "reason", err.Error())
		return nil
	} else if err := l.Close(); err != nil {
		return fmt.Errorf("cannot free the metrics address %s: %w", c.MetricsAddress, err)
	}
	srv, err := metricsserver.NewServer(c.Options(c.MetricsAddress), cfg, httpClient)
	if err != nil {
		return fmt.Errorf("cannot make the metrics server: %w", err)
	}
	// It lives as long as the process: a signal ends both, as it ends
	// the gRPC server, so no handler may catch it here.
	go func() {
		if err := srv.Start(context.Background()); err != nil {
			log.Info("The metrics server stopped", "error", err.Error())
		}
	}()
	log.Info("Serving metrics", "address", c.MetricsAddress, "secure", c.MetricsSecure)
	return nil
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Name("function-fleetplane"), kong.Description("fleetplane's Crossplane composition function."))
	ctx.FatalIfErrorf(ctx.Run())
}
