// Command function-fleetplane is fleetplane's Crossplane composition
// function. It composes all eight of fleetplane's composite resource
// kinds: ADXCluster and ADXMon (adx.fleetplane.io), Experiment and
// Component (experiments.fleetplane.io), Placement, ClusterPlacement,
// CustomTransform and StatusCollector (placement.fleetplane.io); fn.go
// maps each kind to its composer, a package of its own beside this one
// (function/<kind>).
package main

import (
	"fmt"

	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetplane/fleetplane/function/fnwire"
	"github.com/fleetplane/fleetplane/function/runmetrics"
)

// CLI holds the flags every Crossplane function takes.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network     string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address     string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir string `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure    bool   `help:"Run without mTLS credentials. If you supply this flag --tls-certs-dir will be ignored."`

	MaxRecvMessageSize int `default:"4" help:"Maximum size of received messages in MB."`

	MetricsAddress string `default:":8080" help:"Address of the Prometheus metrics endpoint; empty turns it off (as when many run on one machine)."`
}

// Run serves the function until the process is stopped.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	// The function's own metrics, served with the gRPC server's on
	// --metrics-address.
	m := runmetrics.New(nil)
	for _, c := range m.Collectors() {
		if err := prometheus.Register(c); err != nil {
			return fmt.Errorf("cannot register the function's metrics: %w", err)
		}
	}
	// fnwire.Serve is function.Serve with requests decoded and responses
	// encoded straight from and to the maps composers use.
	return fnwire.Serve(NewFunction(log).WithRecorder(m),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		function.WithMetricsServer(c.MetricsAddress))
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Name("function-fleetplane"), kong.Description("fleetplane's Crossplane composition function."))
	ctx.FatalIfErrorf(ctx.Run())
}
