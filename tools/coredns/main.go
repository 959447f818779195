// Command coredns is CoreDNS with the plugins a node's cluster DNS needs
// and no others (test/harness/node serves Services' names with it), in a
// module of its own so that CoreDNS's dependency graph never touches
// fleetplane's go.mod. CoreDNS's own main imports every plugin it ships,
// the cloud DNS providers among them; this is its documented way of
// building with fewer: coremain with a shorter directive list.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives are the plugins a Corefile may name, in the order CoreDNS's
// plugin.cfg gives them: a request passes through them in this order.
var directives = []string{"ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
