package kql

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"Metrics", "my-table", "a.b c", "_x1", "Tâblé", strings.Repeat("a", 1024)} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", " lead", "trail ", "a'b", "a]b", "a\nb", "x;.drop table y", "a|b", "a//b", "a\\b", strings.Repeat("a", 1025), "\xff"} {
		if err := ValidateName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName", bad, err)
		}
		// A hub checks millions of names a heartbeat may hold without
		// describing them: the check allocates nothing.
		if ValidName(bad) {
			t.Errorf("ValidName(%q) = true", bad)
		}
		if n := testing.AllocsPerRun(10, func() { ValidName(bad) }); n != 0 {
			t.Errorf("ValidName(%q) allocates %v times", bad, n)
		}
	}
}

func TestLiteral(t *testing.T) {
	cases := map[string]string{
		"plain":        "'plain'",
		"it's":         `'it\'s'`,
		`back\slash`:   `'back\\slash'`,
		"two\nlines":   `'two\nlines'`,
		"tab\there":    `'tab\there'`,
		`"double"`:     `'"double"'`,
		"ünïcödé ✓":    "'ünïcödé ✓'",
		"') | .drop x": `'\') | .drop x'`,
	}
	for in, want := range cases {
		got, err := Literal(in)
		if err != nil || got != want {
			t.Errorf("Literal(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"nul\x00", "cr\r", "bell\a", "\xff", "line\u2028sep"} {
		if _, err := Literal(bad); !errors.Is(err, ErrInvalidLiteral) {
			t.Errorf("Literal(%q) = %v, want ErrInvalidLiteral", bad, err)
		}
	}
}

func TestEndpoint(t *testing.T) {
	good := map[string]string{
		"https://Hub.WestEurope.kusto.windows.net": "https://hub.westeurope.kusto.windows.net",
		" https://hub.kusto.windows.net/ ":         "https://hub.kusto.windows.net", //nolint:gocritic // surrounding spaces are the case under test
		// One cluster, one spelling: the default port goes, a port loses
		// its leading zeros, IPv6 keeps its brackets in its shortest form.
		"https://hub.kusto.windows.net:443":          "https://hub.kusto.windows.net",
		"https://hub.kusto.windows.net:0443":         "https://hub.kusto.windows.net",
		"https://hub.kusto.windows.net:08443":        "https://hub.kusto.windows.net:8443",
		"https://10.0.0.4":                           "https://10.0.0.4",
		"https://[::1]":                              "https://[::1]",
		"https://[::1]:443":                          "https://[::1]",
		"https://[::1]:8443":                         "https://[::1]:8443",
		"https://[2001:DB8:0:0:0:0:0:1]:9000":        "https://[2001:db8::1]:9000",
		"https://[::ffff:10.0.0.4]":                  "https://10.0.0.4",
		"https://p1.kusto.fabric.microsoft.com/":     "https://p1.kusto.fabric.microsoft.com",
		"https://ingest-x.eastus2.kusto.windows.net": "https://ingest-x.eastus2.kusto.windows.net",
	}
	for in, want := range good {
		got, err := Endpoint(in, false)
		if err != nil || got != want {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{
		"http://hub.kusto.windows.net", "ftp://x", "https://", "https://user:pw@hub.kusto.windows.net",
		"https://hub.kusto.windows.net/db", "https://hub.kusto.windows.net?x=1", "https://hub.kusto.windows.net#f",
		"https://hub'.kusto.windows.net", "https://hub.kusto.windows.net').database('x", "https://-bad.net",
		"https://a..b", "https://hub:99999999", "https://hub:", "hub.kusto.windows.net", "https://hub\n.net",
		"https://hub:0", "https://hub:99999", "https://hub:65536", "https://hub:+443", "https://hub:-1",
		"https://[fe80::1%25eth0]", "https://::1", "https://010.0.0.4", "https://1.2.3", "https://hub.kusto.windows.net?",
		"https://" + strings.Repeat("a", 3000),
	}
	for _, in := range bad {
		if got, err := Endpoint(in, false); !errors.Is(err, ErrInvalidEndpoint) {
			t.Errorf("Endpoint(%q) = %q, %v; want ErrInvalidEndpoint", in, got, err)
		}
	}
	// A refusal never repeats the credentials an endpoint carries.
	for _, in := range []string{"https://user:s3cret@hub.kusto.windows.net", "http://user:s3cret@hub", "https://hub.kusto.windows.net/?sig=s3cret", "https://us%zzer:s3cret@hub/x"} {
		if _, err := Endpoint(in, false); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Endpoint(%q) = %v, which shows the secret", in, err)
		}
	}
	if got, err := Endpoint("http://127.0.0.1:8080", true); err != nil || got != "http://127.0.0.1:8080" {
		t.Errorf("local http endpoint: %q, %v", got, err)
	}
	if got, err := Endpoint("http://localhost:80", true); err != nil || got != "http://localhost" {
		t.Errorf("http's default port: %q, %v", got, err)
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		// A block list entry catches every spelling of its cluster.
		"  HTTPS://Rogue.Kusto.Windows.NET/ ":  "https://rogue.kusto.windows.net",
		"https://rogue.kusto.windows.net:443":  "https://rogue.kusto.windows.net",
		"https://rogue.kusto.windows.net:0443": "https://rogue.kusto.windows.net",
		"https://[::1]:0443":                   "https://[::1]",
		// What is no endpoint stays comparable and matches no partition.
		"https://rogue.kusto.windows.net//": "https://rogue.kusto.windows.net",
		"not an endpoint":                   "not an endpoint",
	} {
		if got := NormalizeEndpoint(in); got != want {
			t.Errorf("NormalizeEndpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommands(t *testing.T) {
	must := func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	must2 := func(c ColumnList, err error) ColumnList {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ents := []Entity{{"https://p2.kusto.windows.net", "Metrics"}, {"https://p1.kusto.windows.net", "Metrics"}}
	cases := map[string]string{
		must(CreateMergeTable("Heartbeats", []Column{{"Timestamp", "datetime"}, {"Schema", "dynamic"}})):                  `.create-merge table ['Heartbeats'] (['Timestamp']:datetime, ['Schema']:dynamic)`,
		must(CreateEntityGroup("MetricsSpoke", ents)):                                                                     `.create entity_group ['MetricsSpoke'] ifnotexists (cluster('https://p1.kusto.windows.net').database('Metrics'), cluster('https://p2.kusto.windows.net').database('Metrics'))`,
		must(AlterEntityGroup("MetricsSpoke", ents[:1])):                                                                  `.alter entity_group ['MetricsSpoke'] (cluster('https://p2.kusto.windows.net').database('Metrics'))`,
		must(DropEntityGroup("MetricsSpoke")):                                                                             `.drop entity_group ['MetricsSpoke']`,
		must(CreateOrAlterFunction("cpu-usage", "fleetplane", "doc", must(MacroExpandBody("MetricsSpoke", "cpu-usage")))): `.create-or-alter function with (folder='fleetplane', docstring='doc') ['cpu-usage']() { macro-expand isfuzzy=true best_effort=true ['MetricsSpoke'] as X ( X.['cpu-usage'] ) }`,
		must(DropFunction("T")): `.drop function ['T'] ifexists`,
		must(CreateTableDocumented("cpu", []Column{{"v", "real"}}, "by 'x'")):       `.create table ['cpu'] (['v']:real) with (docstring = 'by \'x\'')`,
		must(HeartbeatDigests("Heartbeats", 90*time.Minute)):                        `['Heartbeats'] | where Timestamp > ago(5400s) | summarize arg_max(Timestamp, *) by ClusterEndpoint | project Entry = pack_array(ClusterEndpoint, hash_sha256(tostring(pack_array(Schema, PartitionMetadata))), Timestamp), Bucket = hash(ClusterEndpoint, 16) | summarize Entries = make_list(Entry) by Bucket`,
		must(HeartbeatRows("Heartbeats", time.Hour, []string{"https://p1", "x'y"})): `['Heartbeats'] | where Timestamp > ago(3600s) | where ClusterEndpoint in ('https://p1', 'x\'y') | summarize arg_max(Timestamp, *) by ClusterEndpoint | project Timestamp, ClusterEndpoint, Digest = hash_sha256(tostring(pack_array(Schema, PartitionMetadata))), Schema, PartitionMetadata`,
		must(HeartbeatRows("Heartbeats", time.Hour, nil)):                           `['Heartbeats'] | where Timestamp > ago(3600s) | summarize arg_max(Timestamp, *) by ClusterEndpoint | project Timestamp, ClusterEndpoint, Digest = hash_sha256(tostring(pack_array(Schema, PartitionMetadata))), Schema, PartitionMetadata`,
		must(IngestInline("Heartbeats", `a,"b,c"`)):                                 `.ingest inline into table ['Heartbeats'] <| a,"b,c"`,
		must(ShowDatabaseSchemaJSON("Metrics")):                                     `.show database ['Metrics'] schema as json`,
		must(CallFunction("GetBlockedPartitions")):                                  `['GetBlockedPartitions']()`,
		// A schema rendered once makes the same command as CreateTable.
		must(CreateTableOf("cpu", must2(NewColumnList([]Column{{"Timestamp", "datetime"}, {"Body", "dynamic"}})))): must(CreateTable("cpu", []Column{{"Timestamp", "datetime"}, {"Body", "dynamic"}})),
		// A database named beyond ASCII, in a group, is quoted the long way.
		must(AlterEntityGroup("G", []Entity{{"https://p1", "Métriques"}})): `.alter entity_group ['G'] (cluster('https://p1').database('Métriques'))`,
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if _, err := IngestInline("T", "a\n.drop table T"); err == nil {
		t.Error("a multi-line inline record must be refused")
	}
	if _, err := CreateMergeTable("T", []Column{{"a", "string); .drop table T //"}}); err == nil {
		t.Error("an unknown column type must be refused")
	}
	if _, err := (Entity{"https://x').database('y", "d"}).Render(); err == nil {
		t.Error("an endpoint that breaks out of its literal must be refused")
	}
	if _, err := CreateEntityGroup("G", []Entity{{"https://p1", "d"}, {"https://x').database('y", "d"}}); err == nil {
		t.Error("a group with an endpoint that breaks out of its literal must be refused")
	}
	if _, err := CreateTableOf("T", ColumnList{}); err == nil {
		t.Error("a table without columns must be refused")
	}
	if _, err := NewColumnList([]Column{{"a", "string); .drop table T //"}}); err == nil {
		t.Error("an unknown column type must be refused")
	}
}

func TestParseEntity(t *testing.T) {
	e := Entity{"https://p1.kusto.windows.net", "My DB"}
	r, err := e.Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseEntity(r)
	if err != nil || got != e {
		t.Errorf("ParseEntity(%q) = %v, %v", r, got, err)
	}
	// The form Kusto may hand back, with double quotes.
	got, err = ParseEntity(`cluster("https://p1.kusto.windows.net").database("My DB")`)
	if err != nil || got != e {
		t.Errorf("double-quoted: %v, %v", got, err)
	}
	for _, bad := range []string{"cluster('x')", "database('d').cluster('c')", "cluster('a').database('b') | take 1"} {
		if _, err := ParseEntity(bad); err == nil {
			t.Errorf("ParseEntity(%q) should fail", bad)
		}
	}
}

func TestScripts(t *testing.T) {
	cmds := []string{strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)}
	limit := len(ScriptHeader) + 2*41
	scripts, err := Scripts(cmds, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 2 {
		t.Fatalf("got %d scripts, want 2", len(scripts))
	}
	for _, s := range scripts {
		if len(s) > limit || !strings.HasPrefix(s, ScriptHeader) {
			t.Errorf("script of %d bytes (limit %d): %q", len(s), limit, s)
		}
	}
	if _, err := Scripts([]string{strings.Repeat("x", limit)}, limit); err == nil {
		t.Error("a command larger than a script must be an error, not truncated")
	}
	if _, err := Scripts([]string{"a\nb"}, limit); err == nil {
		t.Error("a multi-line command must be an error")
	}
}

// TestIdentShortcutKeepsTheRules: names quoted without escaping still obey
// every rule ValidateName has.
func TestIdentShortcutKeepsTheRules(t *testing.T) {
	for _, bad := range []string{"", " a", "a ", strings.Repeat("a", MaxNameLength+1), "a;b"} {
		if id, err := Ident(bad); err == nil {
			t.Errorf("Ident(%.20q) = %.30s, want an error", bad, id)
		}
	}
	if id, err := Ident(strings.Repeat("a", MaxNameLength)); err != nil || len(id) != MaxNameLength+4 {
		t.Errorf("a name at the limit: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://hub.kusto.windows.net":               "https://hub.kusto.windows.net",
		"https://user:pw@hub.kusto.windows.net":       "https://REDACTED@hub.kusto.windows.net",
		"https://user@hub.kusto.windows.net:8443/db":  "https://REDACTED@hub.kusto.windows.net:8443/db",
		"https://hub.kusto.windows.net/?sig=abc&x=1":  "https://hub.kusto.windows.net/?REDACTED",
		"https://us%zzer:pw@hub/x?sig=abc":            "https://REDACTED@hub/x?REDACTED",
		"https://a@b@hub.kusto.windows.net/p@th":      "https://REDACTED@hub.kusto.windows.net/p@th",
		"not a url at all":                            "not a url at all",
		"https://hub.kusto.windows.net').database('x": "https://hub.kusto.windows.net').database('x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
