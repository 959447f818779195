package federation

import (
	"testing"
	"time"
)

func TestParseTTL(t *testing.T) {
	good := map[string]time.Duration{"1h": time.Hour, "2h": 2 * time.Hour, "4h30m": 4*time.Hour + 30*time.Minute, "1d": 24 * time.Hour, "90s": 90 * time.Second, "1d2h3m4s": 26*time.Hour + 3*time.Minute + 4*time.Second}
	for in, want := range good {
		if got, err := ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0s", "1", "h", "1w", "1h1d", "-1h", "99999999999h"} {
		if _, err := ParseTTL(bad); err == nil {
			t.Errorf("ParseTTL(%q) should fail", bad)
		}
	}
}
