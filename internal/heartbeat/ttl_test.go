package heartbeat

import (
	"testing"
	"time"
)

func TestParseTTL(t *testing.T) {
	good := map[string]time.Duration{
		"1h": time.Hour, "2h": 2 * time.Hour, "4h30m": 4*time.Hour + 30*time.Minute, "1d": 24 * time.Hour, "90s": 90 * time.Second,
		"1d2h3m4s": 26*time.Hour + 3*time.Minute + 4*time.Second, "30d": MaxTTL, "720h": MaxTTL, "29d24h": MaxTTL,
	}
	for in, want := range good {
		if got, err := ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"", "0s", "0d0h", "1", "h", "1w", "1h1d", "-1h", "99999999999h",
		// Once accepted, and wrapped into 25 minutes.
		"213504d", "31d", "30d1s", "721h", "2592001s", "99999999999999999999s",
	} {
		if got, err := ParseTTL(bad); err == nil {
			t.Errorf("ParseTTL(%q) = %s, want an error", bad, got)
		}
	}
}

func FuzzParseTTL(f *testing.F) {
	for _, s := range []string{"1h", "213504d", "30d", "1d2h3m4s", "9223372036854775807s", "0d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTTL(s)
		if err == nil && (d <= 0 || d > MaxTTL) {
			t.Fatalf("ParseTTL(%q) = %s, outside (0, %s]", s, d, MaxTTL)
		}
	})
}
