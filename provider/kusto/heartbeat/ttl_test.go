package heartbeat

import (
	"testing"
	"time"
)

var goodTTLs = map[string]time.Duration{
	"1h": time.Hour, "2h": 2 * time.Hour, "4h30m": 4*time.Hour + 30*time.Minute, "1d": 24 * time.Hour, "90s": 90 * time.Second,
	"1d2h3m4s": 26*time.Hour + 3*time.Minute + 4*time.Second, "30d": MaxTTL, "720h": MaxTTL, "29d24h": MaxTTL,
	// Fractions, exact to Kusto's 100 ns tick.
	"1.5h": 90 * time.Minute, "0.25d": 6 * time.Hour, "0.5m": 30 * time.Second, "1.0000001s": time.Second + 100*time.Nanosecond,
	"29.5d12h": MaxTTL, "1s": MinTTL,
	// Clocks: [days.]hh:mm:ss[.fraction].
	"00:30:00": 30 * time.Minute, "1.02:03:04": 26*time.Hour + 3*time.Minute + 4*time.Second, "23:59:59": 24*time.Hour - time.Second,
	"00:00:01": time.Second, "30.00:00:00": MaxTTL, "00:00:01.5": 1500 * time.Millisecond, "00001.00:00:00": 24 * time.Hour,
}

var badTTLs = []string{
	"", "0s", "0d0h", "1", "h", "1w", "1h1d", "-1h", "99999999999h", "1.h", ".5h", "1.5", "1h 30m", "1H",
	// Once accepted, and wrapped into 25 minutes.
	"213504d", "31d", "30d1s", "721h", "2592001s", "99999999999999999999s", "30.0000001d",
	// Under a second: the hub's query counts whole seconds.
	"0.5s", "00:00:00.9999999", "00:00:00",
	// Clocks out of range or malformed.
	"24:00:00", "00:60:00", "00:00:60", "0:30:00", "30.00:00:01", "31.00:00:00", "1.2:03:04", "123456.00:00:00", "00:30",
}

// ttlExamples are the cases both ParseTTL and the API server are held to.
func ttlExamples() []string {
	out := append([]string(nil), badTTLs...)
	for s := range goodTTLs {
		out = append(out, s)
	}
	return out
}

func TestParseTTL(t *testing.T) {
	for in, want := range goodTTLs {
		if got, err := ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range badTTLs {
		if got, err := ParseTTL(bad); err == nil {
			t.Errorf("ParseTTL(%q) = %s, want an error", bad, got)
		}
	}
}

func FuzzParseTTL(f *testing.F) {
	for _, s := range []string{"1h", "213504d", "30d", "1d2h3m4s", "9223372036854775807s", "0d", "1.02:03:04", "9999999.9999999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTTL(s)
		if err == nil && (d < MinTTL || d > MaxTTL) {
			t.Fatalf("ParseTTL(%q) = %s, outside [%s, %s]", s, d, MinTTL, MaxTTL)
		}
	})
}
