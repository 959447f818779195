// Package kusto wraps the azkustodata client for fleetplane: one client per
// cluster endpoint, per-call deadlines, retries with backoff on throttling
// and server errors (honouring Retry-After), and errors classified so that
// callers can tell a refusal from a missing entity from a transient fault.
// Command text comes only from package kql.
package kusto

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-kusto-go/azkustodata"
	azkql "github.com/Azure/azure-kusto-go/azkustodata/kql"
	"github.com/Azure/azure-kusto-go/azkustodata/query"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// Options tune a client. Zero values take the defaults.
type Options struct {
	// Timeout bounds every call, retries included. Default 60s.
	Timeout time.Duration
	// Attempts is how many times a throttled or failed request is sent.
	// Default 4.
	Attempts int
	// Backoff is the first wait between attempts; it doubles, with jitter,
	// up to MaxBackoff. Defaults 500ms and 30s.
	Backoff, MaxBackoff time.Duration
	// HTTPClient replaces the transport under the retries (tests), for
	// clients with credentials.
	HTTPClient *http.Client
	// PlainHTTP is where clients without credentials may connect; nil is
	// Loopback.
	PlainHTTP *PlainHTTP
	// MaxQueryBytes and MaxMgmtBytes bound the answer of one query and
	// one management command. Defaults DefaultMaxQueryBytes and
	// DefaultMaxMgmtBytes.
	MaxQueryBytes, MaxMgmtBytes int64
}

func (o Options) withDefaults() Options {
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Attempts == 0 {
		o.Attempts = 4
	}
	if o.Backoff == 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.MaxQueryBytes == 0 {
		o.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if o.MaxMgmtBytes == 0 {
		o.MaxMgmtBytes = DefaultMaxMgmtBytes
	}
	return o
}

// Client talks to one cluster.
type Client struct {
	endpoint          string
	c                 *azkustodata.Client
	timeout           time.Duration
	maxQuery, maxMgmt int64
}

// New returns a client for endpoint. A nil credential means no
// authentication, which is allowed only for plain-http local endpoints: a
// token must never travel in clear text, and an https cluster always needs
// one.
func New(endpoint string, cred azcore.TokenCredential, opts Options) (*Client, error) {
	ep, err := kql.Endpoint(endpoint, cred == nil)
	if err != nil {
		if cred == nil {
			return nil, fmt.Errorf("%w (credentials None serve only plain-http local endpoints)", err)
		}
		return nil, err
	}
	plain := strings.HasPrefix(ep, "http:")
	switch {
	case cred != nil && plain:
		return nil, fmt.Errorf("%w: %s is plain http; credentials would travel in clear text", kql.ErrInvalidEndpoint, ep)
	case cred == nil && !plain:
		return nil, fmt.Errorf("%w: %s needs credentials; None serves only plain-http local endpoints", kql.ErrInvalidEndpoint, ep)
	}
	host := ep[strings.Index(ep, "://")+3:]
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if cred == nil {
		err = plainHost(host)
	} else {
		err = credentialedHost(host)
	}
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	var base http.RoundTripper
	switch {
	case cred == nil:
		// Without credentials, only where the provider allows plain
		// http, checked as each connection is made.
		p := Loopback()
		if opts.PlainHTTP != nil {
			p = *opts.PlainHTTP
		}
		p.Trust()
		base = p.transport()
	case opts.HTTPClient != nil:
		base = transport(opts.HTTPClient)
	default:
		base = http.DefaultTransport
	}
	hc := &http.Client{
		Transport: limitTransport{base: &retryTransport{base: base, attempts: opts.Attempts, backoff: opts.Backoff, max: opts.MaxBackoff}},
		Timeout:   0, // deadlines come from the context
	}
	kcsb := azkustodata.NewConnectionStringBuilder(ep)
	if cred != nil {
		kcsb = kcsb.WithTokenCredential(cred)
	}
	c, err := azkustodata.New(kcsb, azkustodata.WithHttpClient(hc))
	if err != nil {
		return nil, fmt.Errorf("cannot create a Kusto client for %s: %w", ep, err)
	}
	return &Client{endpoint: ep, c: c, timeout: opts.Timeout, maxQuery: opts.MaxQueryBytes, maxMgmt: opts.MaxMgmtBytes}, nil
}

func transport(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// Endpoint is the normalized endpoint of the cluster.
func (c *Client) Endpoint() string { return c.endpoint }

// Close releases idle connections.
func (c *Client) Close() error { return c.c.Close() }

func statement(text string) azkustodata.Statement {
	// kql is the only builder of command text; this is where it is handed
	// to the SDK, which has no way to take a pre-built string otherwise.
	return azkql.New("").AddUnsafe(text)
}

// Mgmt runs a management command and returns the rows of its primary
// result, reading at most the client's MaxMgmtBytes of answer, or less
// when ctx carries a smaller limit (WithLimit).
func (c *Client) Mgmt(ctx context.Context, db, command string) ([]query.Row, error) {
	ctx, cancel := context.WithTimeout(capLimit(ctx, c.maxMgmt), c.timeout)
	defer cancel()
	ds, err := c.c.Mgmt(ctx, db, statement(command))
	if err != nil {
		return nil, classify(c.endpoint, err)
	}
	var rows []query.Row
	for _, t := range ds.Tables() {
		rows = append(rows, t.Rows()...)
	}
	return rows, nil
}

// Query runs a query and calls fn for every row of its primary results as
// they stream in, so that large results never sit in memory whole. The
// SDK sends the request, asking for the answer IterativeQuery asks for;
// package frames reads it, a row at a time, without a value per cell.
func (c *Client) Query(ctx context.Context, db, q string, fn func(frames.Row) error) error {
	ctx, cancel := context.WithTimeout(capLimit(ctx, c.maxQuery), c.timeout)
	defer cancel()
	body, err := c.c.RawV2(ctx, db, statement(q), []azkustodata.QueryOption{
		azkustodata.V2NewlinesBetweenFrames(),
		azkustodata.V2FragmentPrimaryTables(),
		azkustodata.ResultsErrorReportingPlacement(azkustodata.ResultsErrorReportingPlacementEndOfTable),
	})
	if err != nil {
		return classify(c.endpoint, err)
	}
	defer func() { _ = body.Close() }()
	var failed bool
	err = frames.Read(body, func(r frames.Row) error {
		if err := fn(r); err != nil {
			failed = true
			return err
		}
		return nil
	})
	if err != nil && !failed {
		return classify(c.endpoint, err)
	}
	return err
}
