// Package kql builds every piece of Kusto command and query text fleetplane
// sends. Names are checked against Kusto's naming rules and bracket-quoted,
// string literals are escaped, endpoints are validated, and nothing else in
// the project concatenates KQL. Values that reach a hub from partitions'
// heartbeats are untrusted; this package is what keeps them inert.
package kql

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength is Kusto's limit for entity names.
const MaxNameLength = 1024

// ErrInvalidName is wrapped by every name that breaks Kusto's naming rules.
var ErrInvalidName = errors.New("invalid Kusto name")

// ValidateName checks a database, table, column, function or entity group
// name against Kusto's rules: 1 to 1024 letters, digits, underscores, spaces,
// dots and dashes, without leading or trailing spaces.
func ValidateName(name string) error {
	if ValidName(name) {
		return nil
	}
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidName, len(name), MaxNameLength)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidName)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%w: %s has leading or trailing spaces", ErrInvalidName, strconv.Quote(name))
	}
	for _, r := range name {
		if !nameRune(r) {
			return fmt.Errorf("%w: %s contains %q", ErrInvalidName, strconv.Quote(name), r)
		}
	}
	return fmt.Errorf("%w: %s", ErrInvalidName, strconv.Quote(name))
}

// ValidName reports whether ValidateName accepts name, allocating
// nothing: a heartbeat may hold millions of invalid names, of which a hub
// describes only the first few.
func ValidName(name string) bool {
	if plainName(name) {
		return true
	}
	if name == "" || len(name) > MaxNameLength || !utf8.ValidString(name) || strings.TrimSpace(name) != name {
		return false
	}
	for _, r := range name {
		if !nameRune(r) {
			return false
		}
	}
	return true
}

func nameRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == ' ' || r == '.' || r == '-'
}

// plainName is a valid name of at most MaxNameLength ASCII letters,
// digits, underscores, dots, dashes and inner spaces, checked byte by
// byte: a hub validates every table name of every heartbeat it decodes.
func plainName(name string) bool {
	if name == "" || len(name) > MaxNameLength || name[0] == ' ' || name[len(name)-1] == ' ' {
		return false
	}
	for i := range len(name) {
		c := name[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != ' ' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// Ident returns name as a bracket-quoted identifier, ['name'], after
// checking it. Bracket quoting is valid for every name and keeps names that
// are also keywords, or contain spaces, dots or dashes, working.
func Ident(name string) (string, error) {
	if plainName(name) {
		// Nothing to escape: the name is its literal's content.
		return "['" + name + "']", nil
	}
	if err := ValidateName(name); err != nil {
		return "", err
	}
	lit, err := Literal(name)
	if err != nil {
		return "", err
	}
	return "[" + lit + "]", nil
}

// ErrInvalidLiteral is returned for text no Kusto string literal can hold.
var ErrInvalidLiteral = errors.New("invalid Kusto string literal")

// Literal renders s as a single-quoted Kusto string literal, escaping
// quotes, backslashes, tabs and newlines: the escapes Kusto documents.
// Other control characters and invalid UTF-8 have no documented escape and
// are refused rather than passed through.
func Literal(s string) (string, error) {
	// A fresh federation plan quotes every partition's endpoint and
	// database, thousands of them, nearly all needing no escape.
	if plainLiteral(s) {
		return "'" + s + "'", nil
	}
	return escapedLiteral(s)
}

// escapedLiteral is Literal the long way, rune by rune.
func escapedLiteral(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: not UTF-8", ErrInvalidLiteral)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if unicode.IsControl(r) || r == 0x2028 || r == 0x2029 {
				return "", fmt.Errorf("%w: control character %U", ErrInvalidLiteral, r)
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String(), nil
}

// MaxEndpointLength bounds an endpoint; ADX URIs are far shorter.
const MaxEndpointLength = 2048

// ErrInvalidEndpoint is wrapped by every rejected endpoint.
var ErrInvalidEndpoint = errors.New("invalid Kusto endpoint")

// Endpoint validates a cluster endpoint and returns its one canonical
// form, used alike for blocking, grouping and quoting: scheme://host[:port]
// in lower case, an IPv6 host in brackets and in its shortest form, the
// port in decimal without leading zeros and left out when it is the
// scheme's default, no path or trailing slash. It must be https, or http
// when allowHTTP (local emulators); the host must be a DNS name or an IP
// address (no zone); the port 1 to 65535; user info, paths, queries and
// fragments are refused.
func Endpoint(raw string, allowHTTP bool) (string, error) {
	if len(raw) > MaxEndpointLength {
		return "", fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidEndpoint, len(raw), MaxEndpointLength)
	}
	// An endpoint already canonical, https:// and a lower-case DNS name,
	// is its own canonical form: the common case, spared a URL parse
	// (a hub renders a thousand of them every cycle).
	if h, ok := strings.CutPrefix(raw, "https://"); ok && dnsName(h) {
		return raw, nil
	}
	return parseEndpoint(raw, allowHTTP)
}

// parseEndpoint is Endpoint without its shortcut.
func parseEndpoint(raw string, allowHTTP bool) (string, error) {
	s := strings.TrimSpace(raw)
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %s does not parse", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
	}
	defaultPort := "443"
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowHTTP:
		defaultPort = "80"
	case u.Scheme == "http":
		return "", fmt.Errorf("%w: %s is plain http, allowed only for local endpoints", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
	default:
		return "", fmt.Errorf("%w: %s is not an https URL", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%w: %s has more than scheme, host and port", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
	}
	host, ok := canonicalHost(u.Hostname())
	if !ok {
		return "", fmt.Errorf("%w: %s has no valid host", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
	}
	port := u.Port()
	switch {
	case port == "" && strings.HasSuffix(u.Host, ":"):
		return "", fmt.Errorf("%w: %s has an empty port", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
	case port != "":
		n, err := strconv.Atoi(port)
		if err != nil || len(port) > 5 || n < 1 || n > 65535 {
			return "", fmt.Errorf("%w: %s has a port outside 1 to 65535", ErrInvalidEndpoint, strconv.Quote(Redact(raw)))
		}
		port = strconv.Itoa(n)
	}
	if port == "" || port == defaultPort {
		if strings.Contains(host, ":") {
			return u.Scheme + "://[" + host + "]", nil
		}
		return u.Scheme + "://" + host, nil
	}
	return u.Scheme + "://" + net.JoinHostPort(host, port), nil
}

// Redact is an untrusted endpoint as it may be shown: without the user
// information (user:password@) and the query (a SAS token, say) a URL may
// carry, which whoever reads a status or an event must not see. What does
// not parse as a URL loses everything between :// and the last @ before
// the first /, and everything from the first ?, as a URL would.
func Redact(raw string) string {
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil {
		if u.User == nil && u.RawQuery == "" && !u.ForceQuery {
			return raw
		}
		if u.User != nil {
			u.User = url.User("REDACTED")
		}
		if u.RawQuery != "" || u.ForceQuery {
			u.RawQuery, u.ForceQuery = "REDACTED", false
		}
		return u.String()
	}
	s := raw
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + "?REDACTED"
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			s = s[:i+3] + "REDACTED@" + rest[at+1:]
		}
	}
	return s
}

// canonicalHost lowers a DNS name and checks it, or writes an IP address in
// its canonical form (an IPv4-mapped IPv6 address as IPv4).
func canonicalHost(h string) (string, bool) {
	h = strings.ToLower(h)
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", false
		}
		return a.Unmap().String(), true
	}
	return h, !strings.Contains(h, ":") && validHost(h)
}

// dnsName reports whether h is a lower-case DNS name validHost accepts
// whose last label holds a letter, so that it cannot be an IP address:
// without parsing it as one, which costs an error's allocation.
func dnsName(h string) bool {
	last := h[strings.LastIndex(h, ".")+1:]
	return strings.IndexFunc(last, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0 && len(h) <= 253 && validLabels(h)
}

// validHost accepts DNS names (letters, digits, dashes in dot-separated
// labels) and IP literals. A name whose last label is all digits is no DNS
// name: it is an IP address some resolvers would read in octal or short
// form (010.0.0.4, 1.2.3), refused as ambiguous.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if last := h[strings.LastIndex(h, ".")+1:]; net.ParseIP(h) == nil && last != "" && strings.Trim(last, "0123456789") == "" {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return !strings.Contains(h, "%")
	}
	return validLabels(h)
}

// validLabels reports whether h is dot-separated labels of lower-case
// letters, digits and inner dashes, each 1 to 63 long.
func validLabels(h string) bool {
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := range len(label) {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// NormalizeEndpoint is the comparison form of an endpoint from a block
// list or a live entity group: its canonical form (Endpoint) when it is a
// valid endpoint, so that every spelling of one cluster compares equal;
// otherwise trimmed, lower case, without trailing slashes, which no valid
// partition endpoint can equal.
func NormalizeEndpoint(s string) string {
	if ep, err := Endpoint(s, true); err == nil {
		return ep
	}
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(s), "/"))
}
