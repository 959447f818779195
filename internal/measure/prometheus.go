// Package measure reads the metrics an Autoscaler decides on: Prometheus
// text from a component's pods, and Azure Monitor for ADX clusters. What
// it reads is untrusted: bodies are capped, values must be finite.
package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MaxScrapeBytes caps one scrape: an ingestor exposes tens of kilobytes.
const MaxScrapeBytes = 4 << 20

// Families are parsed Prometheus metric families by name.
type Families map[string]*dto.MetricFamily

// ParseText parses the Prometheus text exposition format.
func ParseText(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text: %w", err)
	}
	return fams, nil
}

// Scrape reads target's Prometheus metrics.
func Scrape(ctx context.Context, c *http.Client, target string) (Families, error) {
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
	body := io.LimitReader(resp.Body, MaxScrapeBytes+1)
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxScrapeBytes {
		return nil, fmt.Errorf("more than %d bytes of metrics", MaxScrapeBytes)
	}
	return ParseText(bytes.NewReader(b))
}

// Sum adds the values of the samples of family name that carry every label
// in match. ok is false when the family is absent or no sample matches.
func (f Families) Sum(name string, match map[string]string) (sum float64, ok bool, err error) {
	fam := f[name]
	if fam == nil {
		return 0, false, nil
	}
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, match) {
			continue
		}
		v, err := value(fam.GetType(), m)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", name, err)
		}
		sum += v
		ok = true
	}
	if math.IsInf(sum, 0) || math.IsNaN(sum) {
		return 0, false, fmt.Errorf("%s is not a finite number", name)
	}
	return sum, ok, nil
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := match[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(match)
}

func value(t dto.MetricType, m *dto.Metric) (float64, error) {
	var v float64
	switch t {
	case dto.MetricType_GAUGE:
		v = m.GetGauge().GetValue()
	case dto.MetricType_COUNTER:
		v = m.GetCounter().GetValue()
	case dto.MetricType_UNTYPED:
		v = m.GetUntyped().GetValue()
	default:
		return 0, fmt.Errorf("is a %s, not a gauge or counter", t)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("is not a finite number")
	}
	return v, nil
}
