package tenancy

import (
	"strings"
	"testing"

	"github.com/fleetplane/fleetplane/apis/v1alpha1"
)

func TestKustoGrants(t *testing.T) {
	g := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "team-b", Kusto: v1alpha1.KustoPolicy{Endpoints: []v1alpha1.KustoEndpointGrant{
		{Endpoint: "https://team-b-*.westeurope.kusto.windows.net", Databases: []string{"Metrics", "team_b_*"}},
		{Endpoint: "https://hub-b.kusto.windows.net/", Hub: &v1alpha1.KustoHubGrant{}},
		{Endpoint: "http://kusto.team-b.svc:8080", Databases: []string{"Logs"}},
		{Endpoint: "http://[::1]:*"},
	}}}
	for _, tc := range []struct {
		endpoint, database string
		want               string // "" when granted
	}{
		{"https://team-b-prod.westeurope.kusto.windows.net", "Metrics", ""},
		{"HTTPS://Team-B-Prod.WestEurope.kusto.windows.net:443/", "metrics", ""},
		{"https://team-b-prod.westeurope.kusto.windows.net", "team_b_logs", ""},
		{"https://team-b-prod.westeurope.kusto.windows.net", "", ""},
		{"https://team-b-prod.westeurope.kusto.windows.net", "Other", "does not grant database Other"},
		{"https://team-b-prod.westeurope.kusto.windows.net:8443", "Metrics", "does not grant Kusto endpoint"},
		// * stays in the host: no other domain, no port.
		{"https://team-b-x.evil.example", "Metrics", "does not grant Kusto endpoint"},
		{"https://team-a-prod.westeurope.kusto.windows.net", "Metrics", "does not grant Kusto endpoint"},
		{"http://team-b-prod.westeurope.kusto.windows.net", "Metrics", "does not grant Kusto endpoint"},
		{"https://hub-b.kusto.windows.net", "anything", ""},
		{"http://kusto.team-b.svc:8080", "Logs", ""},
		{"http://kusto.team-b.svc:08080", "Logs", ""},
		{"http://kusto.team-b.svc", "Logs", "does not grant Kusto endpoint"},
		{"http://[::1]:9000", "x", ""},
		{"https://user@hub-b.kusto.windows.net", "", "is not scheme://host[:port]"},
		{"https://hub-b.kusto.windows.net/path", "", "is not scheme://host[:port]"},
		{"ftp://hub-b.kusto.windows.net", "", "is not scheme://host[:port]"},
	} {
		err := g.KustoDatabase("spec.forProvider.endpoint", tc.endpoint, tc.database)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v, want granted", tc.endpoint, tc.database, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s: %v, want %q", tc.endpoint, tc.database, err, tc.want)
		case err != nil && !strings.Contains(err.Error(), "spec.forProvider.endpoint"):
			t.Errorf("%s: the error does not name the field: %v", tc.endpoint, err)
		}
	}

	if _, err := g.KustoHub("spec.forProvider.endpoint", "https://hub-b.kusto.windows.net"); err != nil {
		t.Errorf("hub: %v", err)
	}
	if _, err := g.KustoHub("spec.forProvider.endpoint", "https://team-b-prod.westeurope.kusto.windows.net"); err == nil || !strings.Contains(err.Error(), "not as a hub") {
		t.Errorf("a granted endpoint that is no hub: %v", err)
	}
	if in := g.KustoDatabases("https://hub-b.kusto.windows.net"); in != nil {
		t.Error("every database of the hub is granted: want nil")
	}
	in := g.KustoDatabases("https://team-b-prod.westeurope.kusto.windows.net")
	if in == nil || !in("TEAM_B_x") || in("Other") {
		t.Error("the databases of team-b-prod: want Metrics and team_b_* only")
	}
	if in := g.KustoDatabases("https://elsewhere.kusto.windows.net"); in == nil || in("Metrics") {
		t.Error("an endpoint not granted: want no database")
	}

	none := &Grant{Kind: v1alpha1.ClusterProviderConfigKind, Name: "old"}
	err := none.KustoDatabase("spec.forProvider.endpoint", "https://hub-b.kusto.windows.net", "db")
	if err == nil || !strings.Contains(err.Error(), "grants no Kusto endpoints") || !strings.Contains(err.Error(), "spec.kusto.endpoints") {
		t.Errorf("no spec.kusto: %v, want the upgrade note", err)
	}
}

func TestGoverning(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{nil, "default"},
		{map[string]string{PolicyLabel: ""}, "default"},
		{map[string]string{PolicyLabel: "team-b"}, "team-b"},
		{map[string]string{PolicyLabel: "Team_B"}, ""},
	} {
		name, _, err := Governing(tc.labels)
		if name != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("Governing(%v) = %q, %v; want %q", tc.labels, name, err, tc.want)
		}
	}
}
