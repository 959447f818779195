package scaling

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/robfig/cron/v3"
)

// DefaultSchedule is adx-mon's: every five minutes.
const DefaultSchedule = "*/5 * * * *"

// cronField is one field of a five-field cron expression: a list of
// values, ranges, or *, each with an optional step.
func cronField(value string) string {
	item := `(\*|` + value + `(-` + value + `)?)(/[1-9][0-9]?)?`
	return item + `(,` + item + `)*`
}

const (
	monthNames = `JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec`
	dayNames   = `SUN|MON|TUE|WED|THU|FRI|SAT|sun|mon|tue|wed|thu|fri|sat`
)

// SchedulePattern is the apply-time check of a schedule (the XRD's and the
// CRD's pattern): minute, hour, day of month, month and day of week, each
// within its range. What it cannot say (a range that ends before it
// starts) ParseSchedule reports.
var SchedulePattern = `^` + strings.Join([]string{
	cronField(`[0-5]?[0-9]`),
	cronField(`([01]?[0-9]|2[0-3])`),
	cronField(`(0?[1-9]|[12][0-9]|3[01])`),
	cronField(`(0?[1-9]|1[0-2]|` + monthNames + `)`),
	cronField(`([0-6]|` + dayNames + `)`),
}, ` +`) + `$`

var schedulePattern = regexp.MustCompile(SchedulePattern)

// ParseSchedule reads a five-field cron expression; empty is
// DefaultSchedule. Times are UTC.
func ParseSchedule(s string) (cron.Schedule, error) {
	if s == "" {
		s = DefaultSchedule
	}
	if len(s) > 128 || !schedulePattern.MatchString(s) {
		return nil, fmt.Errorf("schedule %q is not a five-field cron expression (minute hour day-of-month month day-of-week)", s)
	}
	// In UTC whatever the provider's local time zone: the schedule says
	// UTC, and robfig/cron would otherwise follow the time it is given.
	sched, err := cron.ParseStandard("CRON_TZ=UTC " + s)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", s, err)
	}
	return sched, nil
}
