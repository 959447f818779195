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
	"time"
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

// transport is an HTTP transport that connects only where p allows.
func (p PlainHTTP) transport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second}
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
			ap := netip.AddrPortFrom(a, portNum.Port())
			if err := p.allows(ap); err != nil {
				refused = err
				continue
			}
			return d.DialContext(ctx, network, ap.String())
		}
		if refused == nil {
			refused = fmt.Errorf("%w: %s resolves to no address", ErrPlainHTTPRefused, host)
		}
		return nil, refused
	}
	return t
}
