package kusto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	trustedendpoints "github.com/Azure/azure-kusto-go/azkustodata/trusted_endpoints"
)

// PlainHTTP is where a client without credentials (None) may connect:
// plain-http endpoints, as local emulators serve, whose every address is
// in Networks and is none of Denied. Link-local addresses (where cloud
// metadata services answer), unspecified and multicast ones are refused
// whatever Networks say. Addresses are checked when the connection is
// made, after resolving, and the connection goes to the address checked,
// so a name cannot resolve one way for the check and another for the dial.
type PlainHTTP struct {
	// Networks allowed. Empty: none, credentials None connect nowhere.
	Networks []netip.Prefix
	// Denied are addresses never reached without credentials, such as
	// the Kubernetes API server the provider talks to.
	Denied []netip.AddrPort
}

// Loopback is the default: local emulators on the provider's own host.
func Loopback() PlainHTTP {
	return PlainHTTP{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
}

// ParseNetworks reads a comma-separated list of CIDR prefixes (or single
// addresses); "" is none.
func ParseNetworks(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR prefix", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ErrPlainHTTPRefused is wrapped by the error of a connection credentials
// None may not make.
var ErrPlainHTTPRefused = errors.New("credentials None may not connect there")

// allows reports why a None client may not connect to addr, or nil.
func (p PlainHTTP) allows(addr netip.AddrPort) error {
	a := addr.Addr().Unmap()
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || a.IsMulticast():
		return fmt.Errorf("%w: %s is link-local, unspecified or multicast", ErrPlainHTTPRefused, a)
	case slices.ContainsFunc(p.Denied, func(d netip.AddrPort) bool { return d.Addr().Unmap() == a && d.Port() == addr.Port() }):
		return fmt.Errorf("%w: %s is the Kubernetes API server", ErrPlainHTTPRefused, addr)
	case !slices.ContainsFunc(p.Networks, func(n netip.Prefix) bool { return n.Contains(a) }):
		return fmt.Errorf("%w: %s is outside the networks the provider allows plain http to (--plain-http-networks)", ErrPlainHTTPRefused, a)
	}
	return nil
}

// trusted holds every network a PlainHTTP has been trusted for in this
// process. azkustodata keeps one process-wide list of the hosts it sends
// requests to, which admits no plain-http host but loopback: a Kusto
// emulator in a pod or on another host is refused before the first
// request. Its override admits here exactly the IP literals inside these
// networks, and clients with credentials refuse those same hosts (New),
// so the trust this adds never carries a token.
var trusted struct {
	once     sync.Once
	mu       sync.RWMutex
	networks []netip.Prefix
}

// Trust makes azkustodata accept the IP addresses of p's networks as
// Kusto hosts, which it otherwise refuses unless they are loopback. The
// provider calls it once at start, before any client exists; New calls it
// for every client without credentials, so it is idempotent.
func (p PlainHTTP) Trust() {
	trusted.once.Do(func() {
		// Set once, before any request of this package, since
		// azkustodata reads the override without a lock.
		trustedendpoints.Instance.SetOverridePolicy(trustsHost)
	})
	// New calls this for every client without credentials: once the
	// networks are in, it only reads.
	trusted.mu.RLock()
	known := true
	for _, n := range p.Networks {
		known = known && slices.Contains(trusted.networks, n)
	}
	trusted.mu.RUnlock()
	if known {
		return
	}
	trusted.mu.Lock()
	defer trusted.mu.Unlock()
	for _, n := range p.Networks {
		if !slices.Contains(trusted.networks, n) {
			trusted.networks = append(trusted.networks, n)
		}
	}
}

// trustsHost reports whether host, as azkustodata sees it (a URL's
// hostname), is an IP literal inside a network Trust was given. Names
// never are: what a name resolves to can change between this check and
// the connection, and a client with credentials checks the same host.
func trustsHost(host string) bool {
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	trusted.mu.RLock()
	defer trusted.mu.RUnlock()
	return slices.ContainsFunc(trusted.networks, func(n netip.Prefix) bool { return n.Contains(a) })
}

// plainHost checks, before any request, that a client without
// credentials names its endpoint's host so that azkustodata will talk to
// it: localhost, or an IP address (which the connection then checks
// against p's networks). A name is refused here with the reason, instead
// of by the SDK on the first call.
func plainHost(host string) error {
	if host == "localhost" {
		return nil
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && a.Zone() == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is a host name; without credentials, name the emulator by its IP address (inside --plain-http-networks) or as localhost, since the Kusto client trusts no other plain-http name", ErrPlainHTTPRefused, host)
}

// credentialedHost refuses a client with credentials whose host is an IP
// address Trust admitted: those are the plain-http emulators' networks,
// and a token must never be sent there. Loopback stays as azkustodata
// has it, trusted for any client: Trust widens nothing there.
func credentialedHost(host string) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && a.Unmap().IsLoopback() {
		return nil
	}
	if trustsHost(strings.Trim(host, "[]")) {
		return fmt.Errorf("%w: %s is inside --plain-http-networks, where only credentials None connect; a token is never sent there", ErrPlainHTTPRefused, host)
	}
	return nil
}

// dial connects to an address a PlainHTTP allowed; tests redirect it.
var dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext

// transport is an HTTP transport that connects only where p allows.
func (p PlainHTTP) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // the standard library's own
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		portNum, err := netip.ParseAddrPort(net.JoinHostPort("0.0.0.0", port))
		if err != nil {
			return nil, err
		}
		var refused error
		for _, a := range addrs {
			ap := netip.AddrPortFrom(a.Unmap(), portNum.Port())
			if err := p.allows(ap); err != nil {
				refused = err
				continue
			}
			return dial(ctx, network, ap.String())
		}
		if refused == nil {
			refused = fmt.Errorf("%w: %s resolves to no address", ErrPlainHTTPRefused, host)
		}
		return nil, refused
	}
	return t
}
