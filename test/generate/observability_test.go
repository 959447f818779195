package generate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/function/runmetrics"
	"github.com/fleetplane/fleetplane/provider/fleetmetrics"
	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// The dashboard and alert rules under deploy/observability are checked
// with Prometheus' own parser (tools/promcheck, a module of its own) and
// against the metrics the binaries register, so that renaming a metric
// fails here rather than on an operator's dashboard.

const (
	alertsFile    = "deploy/observability/alerts.yaml"
	dashboardFile = "deploy/observability/dashboard.json"
)

// expr is one line of `promcheck exprs`.
type expr struct {
	Where   string   `json:"where"`
	Expr    string   `json:"expr"`
	Metrics []string `json:"metrics"`
	Error   string   `json:"error"`
}

// promcheckExprs runs promcheck exprs on rules and dashboard; err is its
// exit error, exprs what it printed either way.
func promcheckExprs(t *testing.T, rules, dashboard string) ([]expr, error) {
	t.Helper()
	bin, err := controlplane.Tool(support.Root(), "promcheck")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "exprs", rules, dashboard)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out []expr
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e expr
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("promcheck printed %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	if runErr != nil && len(out) == 0 {
		t.Fatalf("promcheck: %v\n%s", runErr, stderr.String())
	}
	return out, runErr
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// registered is every series name the binaries serve: fleetplane's own
// from their definitions (a histogram as _bucket, _sum and _count), and
// those of the collectors the binaries register from crossplane-runtime
// and the gRPC middleware, from their descriptors. A descriptor does not
// say its type, so those names are taken with the histogram suffixes too.
func registered() map[string]bool {
	names := map[string]bool{}
	for _, d := range append(append(fleetmetrics.Defs[:0:0], fleetmetrics.Defs...), runmetrics.Defs...) {
		for _, n := range d.Samples() {
			names[n] = true
		}
	}
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range []prometheus.Collector{managed.NewMRMetricRecorder(), statemetrics.NewMRStateMetrics(), grpcprometheus.NewServerMetrics()} {
		c.Describe(ch)
	}
	close(ch)
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
				names[m[1]+suffix] = true
			}
		}
	}
	return names
}

// unknown lists what exprs select that is not registered, or does not
// parse.
func unknown(exprs []expr, names map[string]bool) []string {
	var out []string
	for _, e := range exprs {
		if e.Error != "" {
			out = append(out, e.Where+": "+e.Error)
		}
		for _, m := range e.Metrics {
			if !names[m] {
				out = append(out, e.Where+": "+m+" is not a metric fleetplane serves")
			}
		}
	}
	return out
}

func TestDashboardAndAlertsUseRegisteredMetrics(t *testing.T) {
	root := support.Root()
	exprs, err := promcheckExprs(t, filepath.Join(root, alertsFile), filepath.Join(root, dashboardFile))
	if err != nil {
		t.Errorf("promcheck: %v", err)
	}
	if len(exprs) < 20 {
		t.Fatalf("promcheck found %d expressions; the files have more", len(exprs))
	}
	for _, u := range unknown(exprs, registered()) {
		t.Error(u)
	}
	// Every fleetplane metric is on the dashboard or in an alert: a
	// metric nobody looks at is one nobody will miss when it breaks.
	used := map[string]bool{}
	for _, e := range exprs {
		for _, m := range e.Metrics {
			used[strings.TrimSuffix(m, "_bucket")] = true
		}
	}
	for _, d := range append(append(fleetmetrics.Defs[:0:0], fleetmetrics.Defs...), runmetrics.Defs...) {
		if !used[d.Name] && d.Name != runmetrics.PlacementsUntracked.Name {
			t.Errorf("%s is on neither the dashboard nor an alert", d.Name)
		}
	}
}

// TestARenamedMetricFails is the check above failing as it must: a rule
// that selects a metric by an old name, and one that does not parse.
func TestARenamedMetricFails(t *testing.T) {
	root := support.Root()
	b, err := os.ReadFile(filepath.Join(root, alertsFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	renamed := filepath.Join(dir, "renamed.yaml")
	if err := os.WriteFile(renamed, bytes.ReplaceAll(b, []byte("fleetplane_autoscaler_measured"), []byte("fleetplane_autoscaler_measured_ok")), 0o600); err != nil {
		t.Fatal(err)
	}
	exprs, err := promcheckExprs(t, renamed, filepath.Join(root, dashboardFile))
	if err != nil {
		t.Fatalf("promcheck: %v", err)
	}
	if u := unknown(exprs, registered()); len(u) != 1 || !strings.Contains(u[0], "fleetplane_autoscaler_measured_ok is not a metric") {
		t.Errorf("a renamed metric found as %q", u)
	}

	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, bytes.Replace(b, []byte("fleetplane_autoscaler_measured == 0"), []byte("fleetplane_autoscaler_measured == == 0"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := promcheckExprs(t, broken, filepath.Join(root, dashboardFile)); err == nil {
		t.Error("promcheck accepted a rule that does not parse")
	}
}

// TestAlertsSayWhatToDo: every alert has a severity, a summary and a
// description, and docs/operations.md has a section for it.
func TestAlertsSayWhatToDo(t *testing.T) {
	root := support.Root()
	b, err := os.ReadFile(filepath.Join(root, alertsFile))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			switch {
			case r.Alert == "":
				t.Error("a rule that is not an alert")
			case r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "":
				t.Errorf("%s needs a severity, a summary and a description", r.Alert)
			case !bytes.Contains(ops, []byte("### "+r.Alert+"\n")):
				t.Errorf("docs/operations.md has no section ### %s", r.Alert)
			}
		}
	}
	if n == 0 {
		t.Fatal("no alerts")
	}
}
