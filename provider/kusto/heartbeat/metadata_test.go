package heartbeat

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeMetadata(t *testing.T) {
	many := map[string]string{}
	for i := range MaxMetadataEntries + 1 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	manyJSON, err := json.Marshal(many)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		raw     string
		want    map[string]string
		wantErr string
	}{
		"adx-mon's shape":            {raw: `{"geo":"EU","tenant":"contoso"}`, want: map[string]string{"geo": "EU", "tenant": "contoso"}},
		"empty column":               {raw: ``},
		"null":                       {raw: `null`},
		"empty object":               {raw: `{}`},
		"numbers and booleans kept":  {raw: `{"shard":3,"canary":true,"w":1.5e2}`, want: map[string]string{"shard": "3", "canary": "true", "w": "1.5e2"}},
		"null values left out":       {raw: `{"geo":"EU","gone":null}`, want: map[string]string{"geo": "EU"}},
		"escapes decoded":            {raw: `{"note":"a,b\"c \u00e9"}`, want: map[string]string{"note": `a,b"c é`}},
		"a list is not an object":    {raw: `["EU"]`, wantErr: "not a JSON object"},
		"not JSON":                   {raw: `geo=EU`, wantErr: "not a JSON object"},
		"nested object refused":      {raw: `{"geo":{"region":"EU"}}`, wantErr: `"geo" is an object or list`},
		"nested list refused":        {raw: `{"geo":["EU"]}`, wantErr: `"geo" is an object or list`},
		"too many entries":           {raw: string(manyJSON), wantErr: "33 entries, the limit is 32"},
		"empty key":                  {raw: `{"":"EU"}`, wantErr: "must be 1 to 63 characters"},
		"long key":                   {raw: `{"` + strings.Repeat("k", 64) + `":"EU"}`, wantErr: "must be 1 to 63 characters"},
		"key of 63 multibyte chars":  {raw: `{"` + strings.Repeat("é", 63) + `":"EU"}`, want: map[string]string{strings.Repeat("é", 63): "EU"}},
		"control character in key":   {raw: `{"ge\no":"EU"}`, wantErr: "without control characters"},
		"long value":                 {raw: `{"geo":"` + strings.Repeat("v", 257) + `"}`, wantErr: "at most 256 characters"},
		"control character in value": {raw: `{"geo":"E\u0085U"}`, wantErr: "without control characters"},
		"too many bytes":             {raw: `{"geo":"` + strings.Repeat(" ", MaxMetadataBytes) + `"}`, wantErr: "the limit is 65536"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeMetadata([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one mentioning %q", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("a refused metadata column still returned %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if err := ValidateMetadata(many); err == nil {
		t.Error("ValidateMetadata accepted 33 entries")
	}
}

// metadataSchemas are the partitioning maps users write, generated from
// apis/: the ADXCluster XRD's and the Heartbeat CRD's.
var metadataSchemas = []struct{ file, path string }{
	{"../../../package/configuration/xrds/adxclusters.adx.fleetplane.io.yaml", "spec.federation.partitioning"},
	{"../../../package/provider/crds/kusto.m.fleetplane.io_heartbeats.yaml", "spec.forProvider.partitioning"},
}

func metadataAccepted(a *apiServerField, m map[string]string) bool {
	if a.props.MaxProperties == nil || int64(len(m)) > *a.props.MaxProperties {
		return false
	}
	values := a.props.AdditionalProperties
	obj := map[string]any{}
	for k, v := range m {
		if values == nil || values.Schema == nil || values.Schema.MaxLength == nil || int64(utf8.RuneCountInString(v)) > *values.Schema.MaxLength {
			return false
		}
		obj[k] = v
	}
	return a.celAccepts(obj)
}

// TestMetadataSchemasAreValidateMetadata holds the apply-time rules of the
// partitioning maps to ValidateMetadata, so that nothing a user can apply
// is refused by the hub, and the hub refuses nothing they could apply.
func TestMetadataSchemasAreValidateMetadata(t *testing.T) {
	examples := []map[string]string{
		{"geo": "EU"},
		{"": "EU"},
		{strings.Repeat("k", 63): "v"},
		{strings.Repeat("k", 64): "v"},
		{strings.Repeat("é", 63): strings.Repeat("é", 256)},
		{"geo": strings.Repeat("v", 257)},
		{"ge\x00o": "EU"},
		{"geo": "E\tU"},
		{"geo": "E\u009fU"},
		{"geo": "E\u00a0U"},
	}
	big := map[string]string{}
	for i := range MaxMetadataEntries + 1 {
		big[fmt.Sprintf("k%d", i)] = "v"
		if i == MaxMetadataEntries-1 {
			examples = append(examples, maps.Clone(big))
		}
	}
	examples = append(examples, big)
	for _, f := range metadataSchemas {
		a := loadFieldSchema(t, f.file, f.path)
		have := a.rules()
		for rule, msg := range MetadataCELRules {
			if have[rule] != msg {
				t.Errorf("%s %s lacks the rule %q of heartbeat.MetadataCELRules", f.file, f.path, msg)
			}
		}
		if a.props.MaxProperties == nil || *a.props.MaxProperties != MaxMetadataEntries {
			t.Errorf("%s %s maxProperties = %v, want %d", f.file, f.path, a.props.MaxProperties, MaxMetadataEntries)
		}
		for _, m := range examples {
			err := ValidateMetadata(m)
			if got := metadataAccepted(a, m); got != (err == nil) {
				t.Errorf("%s: the API server accepts %q: %v; ValidateMetadata: %v", f.path, m, got, err)
			}
		}
	}
}

// FuzzMetadataSchema: the API server and ValidateMetadata agree on every
// one-entry map.
func FuzzMetadataSchema(f *testing.F) {
	f.Add("geo", "EU")
	f.Add("", "x")
	f.Add("k\x7f", "v")
	a := loadFieldSchema(f, metadataSchemas[1].file, metadataSchemas[1].path)
	f.Fuzz(func(t *testing.T, k, v string) {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return // the API server decodes JSON, which is UTF-8, before CEL runs
		}
		m := map[string]string{k: v}
		err := ValidateMetadata(m)
		if got := metadataAccepted(a, m); got != (err == nil) {
			t.Fatalf("the API server accepts %q: %v; ValidateMetadata: %v", m, got, err)
		}
	})
}

// FuzzDecodeMetadata: whatever a row holds, decoding never panics and what
// it keeps is valid.
func FuzzDecodeMetadata(f *testing.F) {
	f.Add(`{"geo":"EU"}`)
	f.Add(`{"a":1,"b":[1],"c":null}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := DecodeMetadata([]byte(raw))
		if err != nil {
			return
		}
		if err := ValidateMetadata(m); err != nil {
			t.Fatalf("DecodeMetadata(%q) kept invalid metadata: %v", raw, err)
		}
	})
}
