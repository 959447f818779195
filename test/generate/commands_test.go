package generate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/devfunction"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// command is one shell command of a ```sh block of the docs, its
// continuation lines joined and its trailing comment cut.
type command struct {
	file string
	line int
	text string
}

func (c command) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

// commands are the shell commands of file, in order.
func commands(t *testing.T, root, file string) []command {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []command
	var cur *command
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			in = line == "```sh"
			continue
		case !in:
			continue
		}
		if cur == nil {
			text := strings.TrimSpace(line)
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			cur = &command{file: file, line: n}
		}
		text := strings.TrimSpace(line)
		if i := strings.Index(text, "  #"); i >= 0 {
			text = strings.TrimSpace(text[:i])
		}
		if more, ok := strings.CutSuffix(text, `\`); ok {
			cur.text += strings.TrimSpace(more) + " "
			continue
		}
		cur.text += text
		out = append(out, *cur)
		cur = nil
	}
	return out
}

// commandKinds says, for each command the docs show by how it starts,
// whether this test runs it, and if not, why not and what runs it
// instead. A command that starts otherwise fails the test until it is
// added here: a new kind of command is run or excused on purpose.
var commandKinds = []struct {
	prefix string
	// skip is why the command does not run here; "" runs it.
	skip string
}{
	{prefix: "go run ./function", skip: ""},
	{prefix: "crossplane render ", skip: ""},
	{prefix: "crossplane beta validate ", skip: ""},
	{prefix: "make demo", skip: "it runs the demo as root on real nodes (hack/demo, on the e2e's environment)"},
	{prefix: "make test", skip: "it is CI (.ci/run)"},
	{prefix: "kubectl ", skip: "it needs a cluster: the e2e journeys apply the same examples"},
	{prefix: "crossplane beta trace ", skip: "it needs a cluster: the e2e reads real trace output"},
	{prefix: "crossplane xpkg install ", skip: "it needs a cluster and a registry: test/node installs the packages from a real OCI registry"},
	{prefix: "curl ", skip: "it needs a cluster: the e2e scrapes the metrics endpoints with a token"},
	{prefix: "oras pull ", skip: "it needs a registry: the e2e environment pulls the RBAC artifact back from a real one (tools/ociartifact) and installs from it"},
}

// TestDocumentedCommandsRun runs every command of the README and docs/
// that needs no cluster, as written: the function started as the docs
// start it (on a free port rather than 9443, which the render is pointed
// at), each `crossplane render` with the pinned CLI from the repository's
// root. A render must succeed and compose something: a recipe whose
// example comes back refused, or composing nothing, fails here.
func TestDocumentedCommandsRun(t *testing.T) {
	root := support.Root()
	var run []command
	for _, f := range prose(t, root) {
		for _, c := range commands(t, root, f) {
			kind := -1
			for i, k := range commandKinds {
				if strings.HasPrefix(c.text, k.prefix) {
					kind = i
					break
				}
			}
			switch {
			case kind < 0:
				t.Errorf("%s: no entry of commandKinds says whether it runs here", c)
			case commandKinds[kind].skip == "":
				run = append(run, c)
			}
		}
	}
	if len(run) == 0 {
		t.Fatal("the docs show no command that runs without a cluster; the render recipe was expected")
	}
	support.NeedsTools(t)
	xp, err := controlplane.Tool(root, "crossplane")
	if err != nil {
		t.Fatal(err)
	}
	// The function a file's render commands reach is the one the same
	// file starts, with the flags it shows; files that start it alike
	// share one process.
	functions, started := map[string]string{}, map[string]string{}
	for _, c := range run {
		args := strings.Fields(c.text)
		switch {
		case args[0] == "go":
			args = args[3:]
			if len(args) == 0 || args[len(args)-1] != "&" {
				t.Errorf("%s: the function runs in the background (&) while the renders reach it", c)
				continue
			}
			flags := strings.Join(args[:len(args)-1], " ")
			if _, ok := started[flags]; !ok {
				started[flags] = devfunction.Start(t, root, args[:len(args)-1]...)
			}
			functions[c.file] = started[flags]
		case args[1] == "render":
			addr, ok := functions[c.file]
			if !ok {
				t.Errorf("%s: renders without the function running; show `go run ./function --insecure --debug &` before it", c)
				continue
			}
			t.Run(fmt.Sprintf("%s:%d", c.file, c.line), func(t *testing.T) {
				renders(t, root, xp, c, append(args[1:], devfunction.Target(addr)...))
			})
		default:
			t.Run(fmt.Sprintf("%s:%d", c.file, c.line), func(t *testing.T) {
				out, err := runIn(root, xp, args[1:]...)
				if err != nil {
					t.Fatalf("%s: %v\n%s", c, err, out)
				}
			})
		}
	}
}

// renders runs a render command and checks that it composed something and
// that no function result is fatal or a refusal.
func renders(t *testing.T, root, xp string, c command, args []string) {
	t.Helper()
	for _, a := range args {
		if strings.ContainsAny(a, `"'$`) {
			t.Fatalf("%s: this test splits commands on spaces and cannot run %q", c, a)
		}
	}
	out, err := runIn(root, xp, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", c, err, out)
	}
	composed := 0
	for doc := range strings.SplitSeq(out, "\n---\n") {
		var o struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Severity   string `json:"severity"`
			Message    string `json:"message"`
			Metadata   struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Status struct {
				Conditions []struct {
					Type, Status, Reason, Message string
				} `json:"conditions"`
			} `json:"status"`
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil || o.Kind == "" {
			continue
		}
		switch {
		case o.APIVersion == "render.crossplane.io/v1beta1" && o.Kind == "Result":
			if o.Severity == "SEVERITY_FATAL" {
				t.Errorf("%s: a fatal result: %s", c, o.Message)
			}
		case o.Metadata.Annotations["crossplane.io/composition-resource-name"] != "":
			composed++
		default:
			for _, cond := range o.Status.Conditions {
				if cond.Reason == "NotGranted" || cond.Reason == "QuotaExceeded" {
					t.Errorf("%s: the XR is refused: %s %s: %s", c, cond.Type, cond.Reason, cond.Message)
				}
			}
		}
	}
	if composed == 0 {
		t.Errorf("%s: composed nothing:\n%s", c, out)
	}
}

// runIn runs bin with args in dir, as a reader at the repository's root
// would, and returns what it printed.
func runIn(dir, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}
