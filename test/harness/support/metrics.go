package support

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
)

// Samples are metric families by name, gathered from a registry or
// parsed from a /metrics page.
type Samples map[string]*dto.MetricFamily

// Gather gathers g.
func Gather(t testing.TB, g prometheus.Gatherer) Samples {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	out := Samples{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// ParseMetrics reads a /metrics page in Prometheus' text format.
func ParseMetrics(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	return Samples(fams), err
}

// Value is the value of the sample of family name whose labels include
// labels: a counter's or gauge's value, a histogram's count. ok is false
// when there is no such sample.
func (s Samples) Value(name string, labels map[string]string) (v float64, ok bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if !includes(have, labels) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.GetUntyped() != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// Series counts the samples of family name.
func (s Samples) Series(name string) int {
	if f := s[name]; f != nil {
		return len(f.GetMetric())
	}
	return 0
}

func includes(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// maxScrape bounds what Scrape reads: a /metrics page of the test's
// binaries is tens of kilobytes.
const maxScrape = 16 << 20

// scrapeClient accepts the self-signed certificate the binaries make for
// their metrics endpoint when given none (--metrics-cert-dir), as a
// scraper configured with insecure_skip_verify does: what is under test
// is who may read, which the token decides.
var scrapeClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// Scrape reads the /metrics page at url, as Prometheus would, sending
// token (when not empty) as its bearer token, and returns it raw and
// parsed.
func Scrape(ctx context.Context, url, token string) ([]byte, Samples, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rsp, err := scrapeClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = rsp.Body.Close() }()
	if rsp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: %s", url, rsp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(rsp.Body, maxScrape))
	if err != nil {
		return nil, nil, err
	}
	s, err := ParseMetrics(bytes.NewReader(b))
	return b, s, err
}

// EvalAlerts runs the shipped alert rules (deploy/observability/alerts.yaml
// under root) with tools/promcheck's rule engine over the scrapes in files,
// in time order, up to at, and returns the state ("pending", "firing") of
// each active alert by name/namespace.
func EvalAlerts(root string, at time.Time, files []string) (map[string]string, error) {
	bin, err := controlplane.Tool(root, "promcheck")
	if err != nil {
		return nil, err
	}
	args := append([]string{"eval", filepath.Join(root, "deploy", "observability", "alerts.yaml"), strconv.FormatInt(at.Unix(), 10)}, files...)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("promcheck eval: %w\n%s", err, stderr.String())
	}
	out := map[string]string{}
	for sc := bufio.NewScanner(&stdout); sc.Scan(); {
		var a struct {
			Alert  string            `json:"alert"`
			State  string            `json:"state"`
			Labels map[string]string `json:"labels"`
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("promcheck printed %q: %w", sc.Text(), err)
		}
		out[a.Alert+"/"+a.Labels["namespace"]] = a.State
	}
	return out, nil
}
