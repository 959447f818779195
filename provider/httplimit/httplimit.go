// Package httplimit bounds what the provider reads of an HTTP answer:
// every answer from a cluster, Azure or a pod is untrusted, and one
// provider reads them for every tenant. The limit is enforced while the
// body is read, so no caller ever holds more than it.
package httplimit

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrTooLarge is wrapped by the error of an answer larger than its limit.
var ErrTooLarge = errors.New("the answer is larger than fleetplane reads")

// Body fails a read of r past n bytes.
func Body(r io.ReadCloser, n int64) io.ReadCloser {
	return &body{r: r, left: n, limit: n}
}

type body struct {
	r           io.ReadCloser
	left, limit int64
}

func (b *body) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer
		// one.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%w: more than %d bytes, the limit for this call", ErrTooLarge, b.limit)
		}
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *body) Close() error { return b.r.Close() }

// Response limits resp's body to n bytes, refusing at once one whose
// declared length is larger.
func Response(resp *http.Response, n int64) (*http.Response, error) {
	if resp.ContentLength > n {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes, the limit for this call is %d", ErrTooLarge, resp.ContentLength, n)
	}
	resp.Body = Body(resp.Body, n)
	return resp, nil
}

// Client is an HTTP client whose answers are limited to n bytes each, for
// SDKs that take one (azcore's policy.Transporter).
type Client struct {
	HTTP *http.Client
	Max  int64
}

// Do sends req and limits its answer.
func (c Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.HTTP.Do(req) //nolint:gosec // G704: the SDK's request, to the endpoint the admin configured
	if err != nil || resp.Body == nil {
		return resp, err
	}
	return Response(resp, c.Max)
}
