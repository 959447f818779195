package main

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/fleetplane/fleetplane/test/harness/environment"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// health is the fleet as an operator's Prometheus sees it: a summary
// scraped from provider-fleetplane's and function-fleetplane's /metrics.
func health(ctx context.Context, env *environment.Env) (string, error) {
	url, err := env.ProviderMetrics(ctx)
	if err != nil {
		return "", err
	}
	_, p, err := support.Scrape(ctx, url, env.ScrapeToken)
	if err != nil {
		return "", fmt.Errorf("scrape provider-fleetplane: %w", err)
	}
	now := time.Now()
	var b strings.Builder
	for _, fed := range objects(p, "fleetplane_federation_partitions") {
		state := map[string]float64{}
		for _, m := range p["fleetplane_federation_partitions"].GetMetric() {
			if label(m, "namespace")+"/"+label(m, "name") == fed {
				state[label(m, "state")] = m.GetGauge().GetValue()
			}
		}
		sel := selector(fed)
		cycles, _ := p.Value("fleetplane_federation_cycles_total", with(sel, "result", "synced"))
		failedCycles, _ := p.Value("fleetplane_federation_cycles_total", with(sel, "result", "commands_failed"))
		commands, _ := p.Value("fleetplane_federation_commands_total", sel)
		failures, _ := p.Value("fleetplane_federation_command_failures_total", sel)
		newest, _ := p.Value("fleetplane_federation_newest_heartbeat_timestamp_seconds", sel)
		fmt.Fprintf(&b, "  Federation %s: %v partitions federated, %v held back, %v past their TTL, %v blocked, %v rejected; newest heartbeat %s old; %v cycles synced, %v with failed commands; %v commands run, %v failed\n",
			fed, state["federated"], state["held_back"], state["past_ttl"], state["blocked"], state["rejected"], ago(now, newest), cycles, failedCycles, commands, failures)
	}
	hbs := objects(p, "fleetplane_heartbeat_last_success_timestamp_seconds")
	var sent, failed float64
	oldest := now
	for _, m := range p["fleetplane_heartbeat_sends_total"].GetMetric() {
		if label(m, "result") == "success" {
			sent += m.GetCounter().GetValue()
		} else {
			failed += m.GetCounter().GetValue()
		}
	}
	for _, m := range p["fleetplane_heartbeat_last_success_timestamp_seconds"].GetMetric() {
		if t := stamp(m.GetGauge().GetValue()); t.Before(oldest) {
			oldest = t
		}
	}
	fmt.Fprintf(&b, "  %d Heartbeats: %v rows sent, %v refused; the stalest reached all its hubs %s ago\n", len(hbs), sent, failed, now.Sub(oldest).Round(100*time.Millisecond))
	for _, a := range objects(p, "fleetplane_autoscaler_desired_size") {
		sel := selector(a)
		desired, _ := p.Value("fleetplane_autoscaler_desired_size", sel)
		measured, _ := p.Value("fleetplane_autoscaler_measured", sel)
		score, scored := p.Value("fleetplane_autoscaler_score", sel)
		var decisions []string
		for _, m := range p["fleetplane_autoscaler_decisions_total"].GetMetric() {
			if label(m, "namespace")+"/"+label(m, "name") == a {
				decisions = append(decisions, fmt.Sprintf("%s %v", label(m, "decision"), m.GetCounter().GetValue()))
			}
		}
		sort.Strings(decisions)
		s := "unmeasured"
		if measured == 1 && scored {
			s = fmt.Sprintf("score %.2f", score)
		}
		fmt.Fprintf(&b, "  Autoscaler %s: desired size %v, %s; decisions: %s\n", a, desired, s, strings.Join(decisions, ", "))
	}
	fnURL, err := env.FunctionMetrics(ctx)
	if err != nil {
		return "", err
	}
	if fnURL != "" {
		_, f, err := support.Scrape(ctx, fnURL, env.ScrapeToken)
		if err != nil {
			return "", fmt.Errorf("scrape function-fleetplane: %w", err)
		}
		byKind := map[string]float64{}
		var total, fatal float64
		for _, m := range f["fleetplane_function_runs_total"].GetMetric() {
			v := m.GetCounter().GetValue()
			byKind[label(m, "kind")] += v
			total += v
			if label(m, "result") == "fatal" {
				fatal += v
			}
		}
		var kinds []string
		for k, v := range byKind {
			kinds = append(kinds, fmt.Sprintf("%s %v", k, v))
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, "  function-fleetplane: %v RunFunction calls (%s), %v fatal\n", total, strings.Join(kinds, ", "), fatal)
	}
	return b.String(), nil
}

// objects are the namespace/name of a per-resource family's series.
func objects(s support.Samples, family string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range s[family].GetMetric() {
		k := label(m, "namespace") + "/" + label(m, "name")
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func selector(obj string) map[string]string {
	ns, name, _ := strings.Cut(obj, "/")
	return map[string]string{"namespace": ns, "name": name}
}

func with(sel map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	maps.Copy(out, sel)
	return out
}

func stamp(v float64) time.Time { return time.Unix(0, int64(v*1e9)) }

func ago(now time.Time, v float64) string {
	if v == 0 {
		return "never heard"
	}
	return now.Sub(stamp(v)).Round(100 * time.Millisecond).String()
}

// residentMemory is the function's and the provider's resident memory by
// name, in bytes, as their pods' own /metrics report it
// (process_resident_memory_bytes). What cannot be read is left out.
func residentMemory(ctx context.Context, env *environment.Env) iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		for _, c := range []struct {
			name string
			url  func(context.Context) (string, error)
		}{{"function-fleetplane", env.FunctionMetrics}, {"provider-fleetplane", env.ProviderMetrics}} {
			url, err := c.url(ctx)
			if err != nil {
				continue
			}
			_, s, err := support.Scrape(ctx, url, env.ScrapeToken)
			if err != nil {
				continue
			}
			if v, ok := s.Value("process_resident_memory_bytes", nil); ok && !yield(c.name, int64(v)) {
				return
			}
		}
	}
}
