package kusto

import (
	"context"
	"net/http"

	"github.com/fleetplane/fleetplane/provider/httplimit"
)

// Limits on what one call reads from a cluster, fitted to what fleetplane
// asks. A cluster's answers are untrusted: a tenant's endpoint can be
// anything that speaks HTTP, and one shared provider reads them all.
const (
	// DefaultMaxQueryBytes bounds a query's answer, which Query streams
	// row by row: it bounds time more than memory.
	DefaultMaxQueryBytes = 256 << 20
	// DefaultMaxMgmtBytes bounds a management command's answer, which
	// the SDK holds whole (and at about a hundred times its size for
	// small rows): a hub's 5,000 functions with their bodies are a few
	// MiB.
	DefaultMaxMgmtBytes = 16 << 20
	// MaxListBytes bounds the answers of listing commands such as
	// .show databases: 100 databases are tens of KiB.
	MaxListBytes = 1 << 20
)

// ErrTooLarge is wrapped by the error of a call whose answer is larger
// than its limit.
var ErrTooLarge = httplimit.ErrTooLarge

type limitKey struct{}

// WithLimit has the calls made with ctx read at most n bytes of answer,
// for commands whose answers are known to be small; a client never reads
// more than its own limits.
func WithLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, limitKey{}, n)
}

// capLimit is ctx with the smaller of its limit and n.
func capLimit(ctx context.Context, n int64) context.Context {
	if l, ok := ctx.Value(limitKey{}).(int64); ok && l <= n {
		return ctx
	}
	return WithLimit(ctx, n)
}

// limitTransport cuts every answer at the limit of its call.
type limitTransport struct{ base http.RoundTripper }

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	n, ok := req.Context().Value(limitKey{}).(int64)
	if !ok {
		n = DefaultMaxQueryBytes
	}
	return decompressed(resp, n)
}
