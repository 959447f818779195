package heartbeat

import (
	"regexp"
	"testing"
)

// ttlSchemas are the heartbeatTTL fields users write: the ADXCluster XRD
// and the Federation CRD, generated from apis/.
var ttlSchemas = []struct{ file, path string }{
	{"../../../package/configuration/xrds/adxclusters.adx.fleetplane.io.yaml", "spec.federation.heartbeatTTL"},
	{"../../../package/provider/crds/kusto.m.fleetplane.io_federations.yaml", "spec.forProvider.heartbeatTTL"},
}

// apiServerTTL is what the API server decides for a heartbeatTTL: the
// schema's pattern and length as its OpenAPI validation checks them, and
// its CEL rules.
type apiServerTTL struct {
	*apiServerField
	pattern *regexp.Regexp
}

func loadTTLSchema(t testing.TB, file, path string) *apiServerTTL {
	t.Helper()
	f := loadFieldSchema(t, file, path)
	return &apiServerTTL{apiServerField: f, pattern: regexp.MustCompile(f.props.Pattern)}
}

func (a *apiServerTTL) accepts(s string) bool {
	if int64(len(s)) < *a.props.MinLength || int64(len(s)) > *a.props.MaxLength || !a.pattern.MatchString(s) {
		return false
	}
	return a.celAccepts(s)
}

// TestTTLSchemasAreParseTTL holds the generated schemas to the grammar
// ParseTTL reads, so that one definition decides at apply time and in the
// provider.
func TestTTLSchemasAreParseTTL(t *testing.T) {
	for _, f := range ttlSchemas {
		a := loadTTLSchema(t, f.file, f.path)
		if a.props.Pattern != "" {
			t.Errorf("%s %s has the pattern %q: the format is a CEL rule of heartbeat.TTLCELRules, which says it in words", f.file, f.path, a.props.Pattern)
		}
		have := a.rules()
		for rule, msg := range TTLCELRules {
			if have[rule] != msg {
				t.Errorf("%s %s lacks the rule %q of heartbeat.TTLCELRules", f.file, f.path, msg)
			}
		}
		for _, s := range append(ttlExamples(), "", "1w") {
			_, err := ParseTTL(s)
			if got := a.accepts(s); got != (err == nil) {
				t.Errorf("%s: the API server accepts %q: %v; ParseTTL: %v", f.path, s, got, err)
			}
		}
	}
}

// FuzzTTLSchema: the API server and ParseTTL agree on every input.
func FuzzTTLSchema(f *testing.F) {
	for _, s := range ttlExamples() {
		f.Add(s)
	}
	a := loadTTLSchema(f, ttlSchemas[0].file, ttlSchemas[0].path)
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseTTL(s)
		if got := a.accepts(s); got != (err == nil) {
			t.Fatalf("the API server accepts %q: %v; ParseTTL: %v", s, got, err)
		}
	})
}
