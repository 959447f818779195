package kusto

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryTransport resends requests that Kusto throttled (429) or failed with
// a server error (500, 502, 503, 504), and requests that never got an
// answer. It waits what Retry-After asks, else an exponential backoff with
// jitter, and gives up at the context's deadline. Resending is safe for
// fleetplane's commands: they are idempotent, and the one that is not,
// inline ingestion of a heartbeat, at worst writes a duplicate row the hub
// ignores.
type retryTransport struct {
	base     http.RoundTripper
	attempts int
	backoff  time.Duration
	max      time.Duration
}

func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	ctx := req.Context()
	wait := t.backoff
	for attempt := 1; ; attempt++ {
		r := req.Clone(ctx)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		resp, err := t.base.RoundTrip(r)
		last := attempt >= t.attempts
		switch {
		case err != nil && (last || ctx.Err() != nil):
			return nil, err
		case err == nil && (!retryable(resp.StatusCode) || last):
			return resp, nil
		}
		d := jitter(wait)
		if err == nil {
			if ra, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
				d = ra
			}
			// A wait past the caller's deadline would end in nothing but
			// the deadline: answer with what the server said instead.
			if dl, ok := ctx.Deadline(); ok && time.Now().Add(min(d, t.max)).After(dl) {
				return resp, nil
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
		}
		// However long the server asks, never longer than the backoff cap:
		// a throttled cluster is asked again then, not hours later.
		d = min(d, t.max)
		if !sleep(ctx, d) {
			return nil, ctx.Err()
		}
		wait *= 2
	}
}

// jitter spreads d over [d/2, d) so that many MRs throttled together do not
// come back together.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half))) //nolint:gosec // G404: backoff jitter needs no unpredictability
}

// maxRetryAfter bounds what retryAfter returns before the backoff cap
// applies, so that no header can overflow a duration.
const maxRetryAfter = time.Hour

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110), bounded.
func retryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		if s > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), maxRetryAfter), true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
