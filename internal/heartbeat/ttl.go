package heartbeat

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// MaxTTL bounds how far back a hub reads heartbeats. A month is far longer
// than any partition may stay silent and still be federated, and far
// shorter than what overflows a time.Duration (about 292 years), which an
// unbounded TTL once wrapped into minutes.
const MaxTTL = 30 * 24 * time.Hour

var ttlPattern = regexp.MustCompile(`^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$`)

// ParseTTL reads a heartbeat TTL: days, hours, minutes and seconds, as in
// 1h, 4h30m or 1d, longer than zero and at most MaxTTL. The CRDs enforce
// the same rule when the resource is applied.
func ParseTTL(s string) (time.Duration, error) {
	m := ttlPattern.FindStringSubmatch(s)
	if s == "" || m == nil {
		return 0, fmt.Errorf("heartbeatTTL %q is not a duration such as 1h, 4h30m or 1d", s)
	}
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		// Each part alone must fit under the bound before it is
		// multiplied, so that no sum can overflow.
		if err != nil || n > int64(MaxTTL/unit) {
			return 0, fmt.Errorf("heartbeatTTL %q is longer than %s", s, ttlString(MaxTTL))
		}
		d += time.Duration(n) * unit
	}
	switch {
	case d <= 0:
		return 0, fmt.Errorf("heartbeatTTL %q must be longer than zero", s)
	case d > MaxTTL:
		return 0, fmt.Errorf("heartbeatTTL %q is longer than %s", s, ttlString(MaxTTL))
	}
	return d, nil
}

func ttlString(d time.Duration) string {
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}
