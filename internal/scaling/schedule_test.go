package scaling

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

func TestParseSchedule(t *testing.T) {
	good := map[string]string{
		"":                    "2026-11-23T12:05:00Z",
		"*/5 * * * *":         "2026-11-23T12:05:00Z",
		"0 * * * *":           "2026-11-23T13:00:00Z",
		"30 2 * * MON-FRI":    "2026-11-24T02:30:00Z",
		"0,15,30,45 * * * *":  "2026-11-23T12:15:00Z",
		"0 0 1 jan *":         "2027-01-01T00:00:00Z",
		"5-10/2 8-18 * * 1-5": "2026-11-23T12:05:00Z",
		"0  12   *  * *":      "2026-11-24T12:00:00Z",
	}
	for s, next := range good {
		sched, err := ParseSchedule(s)
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", s, err)
			continue
		}
		if got := sched.Next(t0.Add(time.Second)).UTC().Format(time.RFC3339); got != next {
			t.Errorf("%q: next after 12:00:01 is %s, want %s", s, got, next)
		}
	}
	// UTC whatever the location of the time asked about: noon UTC is
	// 13:00 in Paris in November.
	paris := time.FixedZone("CET", 3600)
	noon, err := ParseSchedule("0 12 * * *")
	if err != nil {
		t.Fatal(err)
	}
	if got := noon.Next(time.Date(2026, 11, 23, 12, 30, 0, 0, paris)).UTC().Format(time.RFC3339); got != "2026-11-23T12:00:00Z" {
		t.Errorf("next noon after 12:30 CET (11:30 UTC) is %s, want 12:00 UTC the same day", got)
	}
	bad := map[string]string{
		"* * * *":          "five-field",
		"* * * * * *":      "five-field",
		"@hourly":          "five-field",
		"60 * * * *":       "five-field",
		"* 24 * * *":       "five-field",
		"* * 0 * *":        "five-field",
		"* * * 13 *":       "five-field",
		"* * * * 7":        "five-field",
		"*/0 * * * *":      "five-field",
		"10-5 * * * *":     "beginning of range (10) beyond end of range (5)",
		"* * * * SUNDAY":   "five-field",
		"* * * * *\n":      "five-field",
		"-1 * * * *":       "five-field",
		"TZ=UTC * * * * *": "five-field",
	}
	for s, want := range bad {
		if _, err := ParseSchedule(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q) = %v, want an error mentioning %q", s, err, want)
		}
	}
}

// FuzzParseSchedule: what the pattern lets through, cron reads, except a
// range that ends before it starts; and ParseSchedule never accepts what
// cron refuses.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 0 1 jan *", "5-10/2 8-18 * * 1-5", "10-5 * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return // the default schedule
		}
		_, err := ParseSchedule(s)
		_, cronErr := cron.ParseStandard(s)
		if err == nil && cronErr != nil {
			t.Fatalf("ParseSchedule accepted %q, which cron refuses: %v", s, cronErr)
		}
		if schedulePattern.MatchString(s) && cronErr != nil && !strings.Contains(cronErr.Error(), "beyond end of range") {
			t.Fatalf("the pattern accepts %q, which cron refuses: %v", s, cronErr)
		}
	})
}
