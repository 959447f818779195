// Package measure reads the metrics an Autoscaler decides on: Prometheus
// text from a component's pods, and Azure Monitor for ADX clusters. What
// it reads is untrusted: bodies are capped, values must be finite.
package measure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Scrape reads target's Prometheus metrics, streaming, and returns the
// sums of the series asked for (ReadSums).
func Scrape(ctx context.Context, c *http.Client, target string, want []Series) ([]Sum, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // the caller says which URL
		}
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > MaxScrapeBytes {
		return nil, fmt.Errorf("more than %d bytes of metrics", MaxScrapeBytes)
	}
	return ReadSums(resp.Body, want)
}
