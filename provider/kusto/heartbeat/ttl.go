package heartbeat

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxTTL bounds how far back a hub reads heartbeats. A month is far longer
// than any partition may stay silent and still be federated, and far
// shorter than what overflows a time.Duration (about 292 years), which an
// unbounded TTL once wrapped into minutes.
const MaxTTL = 30 * 24 * time.Hour

// MinTTL is the shortest TTL: the hub's query counts in whole seconds.
const MinTTL = time.Second

// TTLPattern is the grammar of a heartbeat TTL, as the CRDs and XRDs check
// it when a resource is applied, and ParseTTL reads it. Two of Kusto's
// timespan forms:
//
//   - units, largest first, each at most once, with up to 7 decimals:
//     1d, 2h, 4h30m, 1.5h, 0.25d, 90s;
//   - a clock, [days.]hh:mm:ss[.fraction]: 00:30:00, 1.02:03:04.
//
// The resources check it with a CEL rule (TTLCELRules, which a test holds
// them to) rather than an OpenAPI pattern, whose refusal dumps the regular
// expression: the rule says the format in words, and the bounds (at least
// MinTTL, at most MaxTTL) are judged only for a timespan, so a value that
// is none gets one message, not three.
const TTLPattern = `^(([0-9]{1,7}(\.[0-9]{1,7})?d)?([0-9]{1,7}(\.[0-9]{1,7})?h)?([0-9]{1,7}(\.[0-9]{1,7})?m)?([0-9]{1,7}(\.[0-9]{1,7})?s)?|([0-9]{1,5}\.)?([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,7})?)$`

// TTLCELSeconds is a TTL in seconds, in either form, as the API server's
// CEL computes it; the resources' CEL rules bound it (TTLCELRules).
const TTLCELSeconds = `(self.contains(':') ? (self.matches('^[0-9]+[.][0-9]{2}:') ? double(self.find('^[0-9]+')) * 86400.0 : 0.0) + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[0]) * 3600.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[1]) * 60.0 + double(self.find('[0-9]{2}:[0-9]{2}:[0-9.]+$').split(':')[2]) : (self.find('[0-9.]+d') == '' ? 0.0 : double(self.find('[0-9.]+d').replace('d', '')) * 86400.0) + (self.find('[0-9.]+h') == '' ? 0.0 : double(self.find('[0-9.]+h').replace('h', '')) * 3600.0) + (self.find('[0-9.]+m') == '' ? 0.0 : double(self.find('[0-9.]+m').replace('m', '')) * 60.0) + (self.find('[0-9.]+s') == '' ? 0.0 : double(self.find('[0-9.]+s').replace('s', ''))))`

// ttlCELMatches is TTLPattern as a CEL test: a dot as [.], which needs no
// escape in a CEL string.
var ttlCELMatches = "self.matches('" + strings.ReplaceAll(TTLPattern, `\.`, "[.]") + "')"

// TTLCELRules are the CEL rules of the same resources, with their
// messages: the format, then the bounds of a value that has it.
var TTLCELRules = map[string]string{
	ttlCELMatches: "heartbeatTTL is a Kusto timespan: units such as 2d, 4h30m, 1.5h or 90s, or a clock such as 00:30:00 or 1.02:03:04",
	"!" + ttlCELMatches + " || " + TTLCELSeconds + ` >= 1.0`:       "heartbeatTTL must be at least 1s",
	"!" + ttlCELMatches + " || " + TTLCELSeconds + ` <= 2592000.0`: "heartbeatTTL must be at most 30d",
}

var (
	ttlPattern = regexp.MustCompile(TTLPattern)
	unitPart   = regexp.MustCompile(`([0-9]+)(?:\.([0-9]+))?([dhms])`)
	clock      = regexp.MustCompile(`^(?:([0-9]+)\.)?([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?$`)
)

var units = map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}

// ParseTTL reads a heartbeat TTL in either form of TTLPattern, exactly (no
// floating point), and checks that it lies within [MinTTL, MaxTTL].
func ParseTTL(s string) (time.Duration, error) {
	if s == "" || !ttlPattern.MatchString(s) {
		return 0, fmt.Errorf("heartbeatTTL %q is not a timespan such as 1h, 4h30m, 1.5h, 1d or 00:30:00", s)
	}
	var d time.Duration
	var err error
	if m := clock.FindStringSubmatch(s); m != nil {
		d, err = clockTTL(m)
	} else {
		d, err = unitTTL(s)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("heartbeatTTL %q is longer than %s", s, ttlString(MaxTTL))
	case d < MinTTL:
		return 0, fmt.Errorf("heartbeatTTL %q must be at least 1s", s)
	case d > MaxTTL:
		return 0, fmt.Errorf("heartbeatTTL %q is longer than %s", s, ttlString(MaxTTL))
	}
	return d, nil
}

// errTooLong stops a sum before it can overflow.
var errTooLong = fmt.Errorf("longer than %s", MaxTTL)

// part is whole + 0.frac of unit. Each part must fit under the bound before
// it is added, so no sum overflows; every unit is a multiple of 10^7 ns,
// so 7 decimals are exact.
func part(whole, frac string, unit time.Duration) (time.Duration, error) {
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n > int64(MaxTTL/unit) {
		return 0, errTooLong
	}
	d := time.Duration(n) * unit
	if frac != "" {
		f, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || len(frac) > 7 {
			return 0, errTooLong
		}
		d += time.Duration(f) * (unit / time.Duration(pow10(len(frac))))
	}
	return d, nil
}

func unitTTL(s string) (time.Duration, error) {
	var d time.Duration
	for _, m := range unitPart.FindAllStringSubmatch(s, -1) {
		p, err := part(m[1], m[2], units[m[3]])
		if err != nil {
			return 0, err
		}
		d += p
	}
	return d, nil
}

func clockTTL(m []string) (time.Duration, error) {
	var d time.Duration
	if m[1] != "" {
		p, err := part(m[1], "", 24*time.Hour)
		if err != nil {
			return 0, err
		}
		d = p
	}
	h, _ := strconv.Atoi(m[2])
	mi, _ := strconv.Atoi(m[3])
	sec, err := part(m[4], m[5], time.Second)
	if err != nil {
		return 0, err
	}
	return d + time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + sec, nil
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func ttlString(d time.Duration) string {
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}
