package tenancy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

// KustoUpgradeNote is what a refusal for want of any Kusto grant adds:
// installs from before spec.kusto existed reached every endpoint, and
// get default deny when they upgrade.
const KustoUpgradeNote = "since spec.kusto was added, no endpoint is reached unless granted: the cluster admin lists the namespace's clusters in spec.kusto.endpoints (docs/tenancy.md, \"Kusto endpoints\")"

// KustoDatabase checks that the grant lets a managed resource reach database on
// endpoint, or the endpoint at all when database is "". what names the
// field asking, for the message.
func (g *Grant) KustoDatabase(what, endpoint, database string) error {
	matched, err := g.kustoGrants(what, endpoint)
	if err != nil {
		return err
	}
	if database == "" || databaseGranted(matched, database) {
		return nil
	}
	var allowed []string
	for _, e := range matched {
		allowed = append(allowed, e.Databases...)
	}
	return fmt.Errorf("%s does not grant database %s on Kusto endpoint %s (%s); spec.kusto.endpoints allows there: %s",
		g, database, endpoint, what, strings.Join(allowed, ", "))
}

// KustoDatabasePatterns is the database patterns the grant lets managed
// resources use on endpoint: nil when every one, and a pattern no name
// matches when the endpoint is not granted.
func (g *Grant) KustoDatabasePatterns(endpoint string) []string {
	matched, err := g.kustoGrants("", endpoint)
	if err != nil {
		return []string{""}
	}
	var out []string
	for _, e := range matched {
		if len(e.Databases) == 0 {
			return nil
		}
		out = append(out, e.Databases...)
	}
	return out
}

// KustoDatabases is KustoDatabasePatterns as a test of a name: nil when
// every database is granted.
func (g *Grant) KustoDatabases(endpoint string) func(database string) bool {
	p := g.KustoDatabasePatterns(endpoint)
	if p == nil {
		return nil
	}
	return func(database string) bool { return MatchAny(p, database) }
}

// KustoHub checks that the grant lets a Federation federate endpoint as
// its hub, and returns what the hub may do (the grants that match, one
// of them granting a hub, taken together).
func (g *Grant) KustoHub(what, endpoint string) (v1alpha1.KustoHubGrant, error) {
	matched, err := g.kustoGrants(what, endpoint)
	if err != nil {
		return v1alpha1.KustoHubGrant{}, err
	}
	var hub v1alpha1.KustoHubGrant
	found := false
	for _, e := range matched {
		if e.Hub != nil {
			found = true
			hub.CreateDatabasesFromPartitions = hub.CreateDatabasesFromPartitions || e.Hub.CreateDatabasesFromPartitions
		}
	}
	if !found {
		return hub, fmt.Errorf("%s grants Kusto endpoint %s (%s) but not as a hub: a Federation needs spec.kusto.endpoints[].hub on it", g, endpoint, what)
	}
	return hub, nil
}

// GrantsKustoHub reports whether the grant lets a Federation federate
// endpoint, for finding the other namespaces granted a hub.
func (g *Grant) GrantsKustoHub(endpoint string) bool {
	_, err := g.KustoHub("", endpoint)
	return err == nil
}

func (g *Grant) kustoGrants(what, endpoint string) ([]v1alpha1.KustoEndpointGrant, error) {
	if len(g.Kusto.Endpoints) == 0 {
		return nil, fmt.Errorf("%s grants no Kusto endpoints, so %s (%s) is not reached; %s", g, endpoint, what, KustoUpgradeNote)
	}
	ep, ok := parseEndpoint(endpoint)
	if !ok {
		return nil, fmt.Errorf("the Kusto endpoint %q (%s) is not scheme://host[:port]", endpoint, what)
	}
	var matched []v1alpha1.KustoEndpointGrant
	for _, e := range g.Kusto.Endpoints {
		if p, ok := parseEndpoint(e.Endpoint); ok && p.matches(ep) {
			matched = append(matched, e)
		}
	}
	if len(matched) == 0 {
		granted := make([]string, len(g.Kusto.Endpoints))
		for i, e := range g.Kusto.Endpoints {
			granted[i] = e.Endpoint
		}
		return nil, fmt.Errorf("%s does not grant Kusto endpoint %s (%s); spec.kusto.endpoints grants %s", g, endpoint, what, strings.Join(granted, ", "))
	}
	return matched, nil
}

func databaseGranted(matched []v1alpha1.KustoEndpointGrant, database string) bool {
	return slices.ContainsFunc(matched, func(e v1alpha1.KustoEndpointGrant) bool {
		return len(e.Databases) == 0 || MatchAny(e.Databases, database)
	})
}

// endpoint is a Kusto endpoint, or a pattern of them, in parts: scheme
// and host lower case, the port "" when it is the scheme's default.
type endpoint struct{ scheme, host, port string }

// parseEndpoint reads scheme://host[:port][/]; the host may be an IPv6
// literal in brackets. It validates no more than that: an endpoint a
// managed resource names was validated by its schema and by the client
// that dials it, and one that does not parse here is granted nothing.
func parseEndpoint(s string) (endpoint, bool) {
	s = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "/"))
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "https" && scheme != "http") || rest == "" || strings.ContainsAny(rest, "/?#@ ") {
		return endpoint{}, false
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return endpoint{}, false
		}
		host, rest = rest[:end+1], rest[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return endpoint{}, false
			}
			port = rest[1:]
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host, port = rest[:i], rest[i+1:]
	}
	if host == "" || strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return endpoint{}, false
	}
	if port != "" && port != "*" {
		port = strings.TrimLeft(port, "0")
		if port == "" || strings.Trim(port, "0123456789") != "" || len(port) > 5 {
			return endpoint{}, false
		}
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	return endpoint{scheme: scheme, host: host, port: port}, true
}

// matches reports whether the pattern p matches the endpoint e: the
// scheme exactly, the host with * matching any run of characters, the
// port exactly or any when *.
func (p endpoint) matches(e endpoint) bool {
	return p.scheme == e.scheme && (p.port == "*" || p.port == e.port) && Match(p.host, e.host)
}
