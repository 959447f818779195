package generate

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fleetplane/fleetplane/test/harness/controlplane"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

// The documentation is checked against the tree and the binaries: every
// link resolves, every flag it names exists in the program it belongs to,
// and every kind has a guide.

// prose is the hand-written documentation; docs/reference is generated.
func prose(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md", "test/README.md"}
	for _, glob := range []string{"docs/*.md", "docs/decisions/*.md"} {
		more, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range more {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	return files
}

var (
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	// Inline code, where a pattern may look like a link.
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	// A flag in inline code: `--name`, `--name=value`, `--name (default)`.
	inlineFlag = regexp.MustCompile("`(--[a-z0-9][a-z0-9-]*)")
	// A flag in a program's --help: --name, --[no-]name (kingpin's booleans).
	helpFlag = regexp.MustCompile(`--(?:\[no-\])?([a-z0-9][a-z0-9-]*)`)
	// A flag in adx-mon's sources (urfave/cli).
	cliFlag = regexp.MustCompile(`Flag\{Name: "([a-z0-9-]+)"`)
	// A kind in the reference's index.
	indexKind = regexp.MustCompile(`\[([A-Za-z]+)\]\([a-z.]+\.md#`)
)

// slug is GitHub's anchor for a heading.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// withoutCode is a Markdown text without its fenced code blocks, where
// neither links nor headings are.
func withoutCode(s string) string {
	var b strings.Builder
	fence := false
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if !fence {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown file's headings, read once per
// file however many links point into it.
type anchors map[string][]string

func (a anchors) of(t *testing.T, file string) []string {
	t.Helper()
	if got, ok := a[file]; ok {
		return got
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range heading.FindAllStringSubmatch(withoutCode(string(b)), -1) {
		out = append(out, slug(m[1]))
	}
	a[file] = out
	return out
}

func TestDocsLinksResolve(t *testing.T) {
	root := support.Root()
	files := prose(t, root)
	generated, _ := filepath.Glob(filepath.Join(root, "docs", "reference", "*.md"))
	for _, f := range generated {
		rel, _ := filepath.Rel(root, f)
		files = append(files, rel)
	}
	checked, headings := 0, anchors{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(withoutCode(string(b)), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			file := filepath.Join(root, f)
			if path != "" {
				file = filepath.Join(filepath.Dir(file), path)
			}
			info, err := os.Stat(file)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", f, target)
				continue
			}
			if anchor != "" && !info.IsDir() && !slices.Contains(headings.of(t, file), anchor) {
				t.Errorf("%s links to %s: no heading has the anchor #%s", f, target, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d links checked: is the pattern still right?", checked)
	}
}

func TestReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(support.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n >= 250 {
		t.Errorf("README.md is %d lines: keep it under 250 and move the rest into docs/", n)
	}
	// Its first lines are the two commands, which .ci/run relies on.
	if !strings.HasPrefix(string(b), "# fleetplane\n\n```sh\nmake demo ") || !strings.Contains(string(b)[:400], "\nmake test ") {
		t.Error("README.md must open with the demo and test commands")
	}
}

// TestEveryKindHasAGuide: each kind of the reference is explained in a
// guide, not only listed.
func TestEveryKindHasAGuide(t *testing.T) {
	root := support.Root()
	index, err := os.ReadFile(filepath.Join(root, "docs", "reference", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var guides strings.Builder
	for _, f := range prose(t, root) {
		if strings.HasPrefix(f, "docs/") && !strings.HasPrefix(f, "docs/decisions/") {
			b, _ := os.ReadFile(filepath.Join(root, f))
			guides.Write(b)
		}
	}
	text := guides.String()
	kinds := indexKind.FindAllStringSubmatch(string(index), -1)
	if len(kinds) < 20 {
		t.Fatalf("only %d kinds in the reference index", len(kinds))
	}
	for _, k := range kinds {
		if strings.HasSuffix(k[1], "Usage") {
			continue // bookkeeping Crossplane writes, not a kind anyone applies
		}
		if !regexp.MustCompile(`\b` + k[1] + `\b`).MatchString(text) {
			t.Errorf("no guide under docs/ mentions %s", k[1])
		}
	}
}

// TestDocsFlagsExist: every flag the prose names in inline code is a flag
// of the program it belongs to: fleetplane's own (docs/reference/flags.md,
// generated from their --help), Crossplane core's, provider-kubernetes'
// (their pinned binaries' --help) or adx-mon's (its v0.3.0 sources, the
// release fleetplane runs).
func TestDocsFlagsExist(t *testing.T) {
	support.NeedsTools(t)
	root := support.Root()
	known := map[string]string{}
	add := func(owner, text string) {
		for _, m := range helpFlag.FindAllStringSubmatch(text, -1) {
			if _, ok := known[m[1]]; !ok {
				known[m[1]] = owner
			}
		}
	}
	ours, err := os.ReadFile(filepath.Join(root, "docs", "reference", "flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	add("fleetplane", string(ours))
	for _, tool := range []struct{ name, owner string }{{"crossplane-core", "Crossplane"}, {"provider-kubernetes", "provider-kubernetes"}} {
		bin, err := controlplane.Tool(root, tool.name)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"--help-long"}
		if tool.name == "crossplane-core" {
			args = []string{"core", "start", "--help"}
		}
		out, _ := exec.Command(bin, args...).CombinedOutput()
		if len(out) == 0 {
			t.Fatalf("%s %v printed nothing", tool.name, args)
		}
		add(tool.owner, string(out))
	}
	adxmon, err := exec.Command(filepath.Join(root, "tools", "tools.sh"), "adx-mon-crds").Output()
	if err != nil {
		t.Fatal(err)
	}
	// operator/manifests/crds → the module's cmd/.
	cmdDir := filepath.Join(strings.TrimSpace(string(adxmon)), "..", "..", "..", "cmd")
	_ = filepath.WalkDir(cmdDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil //nolint:nilerr // what cannot be read names no flag
		}
		b, _ := os.ReadFile(p)
		for _, m := range cliFlag.FindAllStringSubmatch(string(b), -1) {
			if _, ok := known[m[1]]; !ok {
				known[m[1]] = "adx-mon"
			}
		}
		return nil
	})
	named := 0
	for _, f := range prose(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inlineFlag.FindAllStringSubmatch(string(b), -1) {
			named++
			if _, ok := known[strings.TrimPrefix(m[1], "--")]; !ok {
				t.Errorf("%s names %s, which no program it could belong to has", f, m[1])
			}
		}
	}
	if named < 20 {
		t.Errorf("only %d flags named in the docs: is the pattern still right?", named)
	}
}
