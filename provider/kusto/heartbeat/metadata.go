package heartbeat

import (
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Limits on a partition's metadata (its partitioning: geo, tenant, ...).
// Both ends hold them: the Heartbeat and ADXCluster schemas at apply time
// (MetadataCELRule) and the hub when it reads a row, because a row may come
// from any writer with ingest rights on the heartbeat table.
const (
	MaxMetadataEntries     = 32
	MaxMetadataKeyLength   = 63
	MaxMetadataValueLength = 256
)

// MetadataCELRules are the apply-time form of ValidateMetadata's checks,
// with their messages, on the Partitioning type that the Heartbeat CRD and
// the ADXCluster XRD share; its maxProperties and its values' maxLength
// hold the counts. Sizes are in characters, as the API server counts them.
// Two rules, not one: each CEL rule has its own cost budget.
var MetadataCELRules = map[string]string{
	`self.all(k, size(k) >= 1 && size(k) <= 63 && !k.matches(r'\p{Cc}'))`: "partitioning keys must be 1 to 63 characters without control characters",
	`self.all(k, !self[k].matches(r'\p{Cc}'))`:                            "partitioning values must not hold control characters",
}

// ValidateMetadata checks one partition's metadata.
func ValidateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataEntries {
		return fmt.Errorf("%d entries, the limit is %d", len(m), MaxMetadataEntries)
	}
	for k, v := range m {
		if n := utf8.RuneCountInString(k); n < 1 || n > MaxMetadataKeyLength || !printable(k) {
			return fmt.Errorf("key %q must be 1 to %d characters without control characters", bound(k), MaxMetadataKeyLength)
		}
		if utf8.RuneCountInString(v) > MaxMetadataValueLength || !printable(v) {
			return fmt.Errorf("value of %q must be at most %d characters without control characters", k, MaxMetadataValueLength)
		}
	}
	return nil
}

// DecodeMetadata reads a heartbeat's PartitionMetadata column: a JSON object
// of strings, as the adx-mon operator and this project's Heartbeat write
// it. Null or empty is no metadata: an empty map. Numbers and booleans,
// which a hand-made row may hold, are kept as their JSON text; nested
// values are refused.
func DecodeMetadata(raw []byte) (map[string]string, error) {
	if len(raw) > MaxMetadataBytes {
		return nil, fmt.Errorf("partition metadata is %d bytes, the limit is %d", len(raw), MaxMetadataBytes)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]string{}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("partition metadata is not a JSON object: %w", err)
	}
	if len(obj) > MaxMetadataEntries {
		return nil, fmt.Errorf("partition metadata has %d entries, the limit is %d", len(obj), MaxMetadataEntries)
	}
	m := make(map[string]string, len(obj))
	for k, v := range obj { // a RawMessage is the value's bytes, without surrounding space
		switch {
		case len(v) > 0 && v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("partition metadata %q: %w", bound(k), err)
			}
			m[k] = s
		case len(v) > 0 && (v[0] == '{' || v[0] == '['):
			return nil, fmt.Errorf("partition metadata %q is an object or list; only strings, numbers and booleans are kept", bound(k))
		case string(v) == "null":
			continue
		default: // a number or a boolean, already checked by Unmarshal
			m[k] = string(v)
		}
	}
	if err := ValidateMetadata(m); err != nil {
		return nil, fmt.Errorf("partition metadata: %w", err)
	}
	return m, nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// bound keeps an untrusted key short enough to quote in an error.
func bound(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}
