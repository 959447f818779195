// Command promcheck checks fleetplane's shipped dashboard and alert rules
// with Prometheus' own code, in a module of its own so that Prometheus'
// dependency graph never touches fleetplane's go.mod.
//
//	promcheck exprs RULES DASHBOARD
//	    parses every rule with rulefmt and every dashboard query with the
//	    PromQL parser; prints one JSON line per expression: where it is,
//	    the metric names it selects, and its error if it has one. Exits 1
//	    when any has one.
//	promcheck eval RULES AT SCRAPE...
//	    loads scrapes (files of Prometheus' text format, each named
//	    <unix-seconds>.prom) into a TSDB, runs every alerting rule with
//	    Prometheus' rule engine every 15 seconds from the first scrape to
//	    AT (unix seconds), and prints one JSON line per alert that is
//	    pending or firing at AT.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "promcheck:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	switch {
	case len(args) == 3 && args[0] == "exprs":
		return exprs(args[1], args[2], out)
	case len(args) >= 4 && args[0] == "eval":
		at, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return fmt.Errorf("AT %q is not unix seconds", args[2])
		}
		return eval(args[1], time.Unix(at, 0), args[3:], out)
	}
	return errors.New("usage: promcheck exprs RULES DASHBOARD | promcheck eval RULES AT SCRAPE...")
}

var promql3 = parser.NewParser(parser.Options{})

// Expr is one expression of the rules or the dashboard.
type Expr struct {
	Where   string   `json:"where"`
	Expr    string   `json:"expr"`
	Metrics []string `json:"metrics"`
	Error   string   `json:"error,omitempty"`
}

func exprs(rulesFile, dashboardFile string, out io.Writer) error {
	var all []Expr
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, promql3, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		all = append(all, Expr{Where: rulesFile, Error: err.Error()})
	}
	if groups != nil {
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				all = append(all, inspect(fmt.Sprintf("%s: %s", rulesFile, r.Alert+r.Record), r.Expr, r.Expr))
			}
		}
	}
	queries, err := dashboardQueries(dashboardFile)
	if err != nil {
		return err
	}
	for _, q := range queries {
		all = append(all, inspect(dashboardFile+": "+q.where, q.expr, grafana(q.expr)))
	}
	failed := false
	enc := json.NewEncoder(out)
	for _, e := range all {
		failed = failed || e.Error != ""
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	if failed {
		return errors.New("some expressions do not parse")
	}
	return nil
}

// inspect parses expr (as written) from text (as Prometheus receives it)
// and lists the metrics it selects.
func inspect(where, expr, text string) Expr {
	e := Expr{Where: where, Expr: expr, Metrics: []string{}}
	node, err := promql3.ParseExpr(text)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	seen := map[string]bool{}
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			e.Error = "a selector without a metric name: " + vs.String()
		} else if !seen[name] {
			seen[name] = true
			e.Metrics = append(e.Metrics, name)
		}
		return nil
	})
	sort.Strings(e.Metrics)
	return e
}

// grafanaVars are the dashboard variables Grafana fills in, with values
// of the same type, so that the PromQL parser sees what Prometheus does.
var grafanaVars = regexp.MustCompile(`\$(__rate_interval|__interval|__range|\{__rate_interval\}|[a-z_]+)`)

func grafana(expr string) string {
	return grafanaVars.ReplaceAllStringFunc(expr, func(v string) string {
		switch strings.Trim(v, "${}") {
		case "__rate_interval", "__interval":
			return "5m"
		case "__range":
			return "1h"
		}
		return "x" // a template variable inside a label value
	})
}

type query struct{ where, expr string }

// dashboardQueries are the targets of every panel, rows' panels too.
func dashboardQueries(file string) ([]query, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var d struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []query
	var walk func([]json.RawMessage) error
	walk = func(ps []json.RawMessage) error {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			for i, t := range p.Targets {
				out = append(out, query{where: fmt.Sprintf("panel %q target %d", p.Title, i), expr: t.Expr})
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(d.Panels)
}

// Alert is an alert pending or firing at the evaluation time.
type Alert struct {
	Alert  string            `json:"alert"`
	State  string            `json:"state"`
	Labels map[string]string `json:"labels"`
}

func eval(rulesFile string, at time.Time, scrapes []string, out io.Writer) error {
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, promql3, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	dir, err := os.MkdirTemp("", "promcheck")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	db, err := tsdb.Open(dir, nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	first, err := load(db, scrapes)
	if err != nil {
		return err
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute, Parser: promql3})
	query := rules.EngineQueryFunc(engine, db)
	var alerting []*rules.AlertingRule
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			expr, err := promql3.ParseExpr(r.Expr)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Alert, err)
			}
			alerting = append(alerting, rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, slog.New(slog.DiscardHandler)))
		}
	}
	ctx := context.Background()
	for ts := first; !ts.After(at); ts = ts.Add(15 * time.Second) {
		for _, r := range alerting {
			if _, err := r.Eval(ctx, 0, ts, query, nil, 0); err != nil {
				return fmt.Errorf("%s at %s: %w", r.Name(), ts.UTC().Format(time.RFC3339), err)
			}
		}
	}
	enc := json.NewEncoder(out)
	for _, r := range alerting {
		for _, a := range r.ActiveAlerts() {
			if err := enc.Encode(Alert{Alert: r.Name(), State: a.State.String(), Labels: a.Labels.Map()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// load appends each scrape at the time its file is named for, and returns
// the earliest.
func load(db *tsdb.DB, scrapes []string) (time.Time, error) {
	var first time.Time
	app := db.Appender(context.Background())
	for _, file := range scrapes {
		sec, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(file), ".prom"), 10, 64)
		if err != nil {
			return first, fmt.Errorf("%s: scrapes are named <unix-seconds>.prom", file)
		}
		ts := time.Unix(sec, 0)
		if first.IsZero() || ts.Before(first) {
			first = ts
		}
		f, err := os.Open(file)
		if err != nil {
			return first, err
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(f)
		_ = f.Close()
		if err != nil {
			return first, fmt.Errorf("%s: %w", file, err)
		}
		for name, fam := range fams {
			for _, m := range fam.GetMetric() {
				for _, s := range samples(name, m) {
					if _, err := app.Append(0, s.labels, ts.UnixMilli(), s.value); err != nil {
						return first, fmt.Errorf("%s: %s: %w", file, name, err)
					}
				}
			}
		}
	}
	return first, app.Commit()
}
