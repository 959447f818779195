package expand

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/race"
)

// doubling is the review's template: a variable doubled by reassignment,
// each 20 bytes doubling what it holds. Before the budget, 18 rounds in
// 398 bytes allocated 1.36 GiB in one RunFunction.
func doubling(rounds int) string {
	return `{{$x := .region}}` + strings.Repeat(`{{$x = print $x $x}}`, rounds) + `{{len $x}}`
}

// TestBudgetBoundsWhatTemplatesBuild: hostile templates stop at their
// Placement's budget, before they allocate, whatever their shape; the
// memory and time they take are bounded and asserted.
func TestBudgetBoundsWhatTemplatesBuild(t *testing.T) {
	props := map[string]string{"clusterName": "wec1", "region": strings.Repeat("r", 64)}
	many := map[string]string{}
	for i := range 1000 {
		many["p"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676))] = "v"
	}
	// Two values of 8 KiB, which printing the properties prints.
	big := map[string]string{"clusterName": "wec1", "a": strings.Repeat("a", 8<<10), "b": strings.Repeat("b", 8<<10)}
	// Strings compared on every iteration of two ranges: equally long,
	// equal up to their last byte.
	long := strings.Repeat("x", 20<<10)
	for name, tc := range map[string]struct {
		text  string
		props map[string]string
	}{
		// Before: charged 32 units an argument; a 203 KB template took
		// 9.5 GiB and 11 s.
		"printing the properties, many times": {text: strings.Repeat(`{{$x := print . . .}}`, 5000), props: big},
		// Before: free; 2 × 20 KiB compared a million times.
		"long strings compared in nested ranges": {text: `{{range $k, $v := .}}{{range $a, $b := $}}{{if eq "` + long + `" "` + long + `y"}}{{end}}{{end}}{{end}}`, props: many},
		// Before: a unit an iteration, nothing for the nodes run in it.
		"nested ranges over many empty ifs":       {text: `{{range $k, $v := .}}{{range $a, $b := $}}` + strings.Repeat(`{{if 1}}{{end}}`, 2000) + `{{end}}{{end}}`, props: many},
		"a variable doubled by reassignment":      {text: doubling(60), props: props},
		"new variables, each twice the last":      {text: `{{$a := print .region .region}}` + strings.Repeat(`{{$a := print $a $a}}`, 60), props: props},
		"printf of the maximum width, many times": {text: strings.Repeat(`{{$y := printf "%1000s%1000s%1000s" .region .region .region}}`, 2000), props: props},
		"escapers on a doubled value":             {text: `{{$x := .region}}` + strings.Repeat(`{{$x = html $x $x}}`, 30), props: props},
		"nested ranges that write nothing":        {text: `{{range $k, $v := .}}{{range $a, $b := $}}{{end}}{{end}}` + strings.Repeat(`{{range $k, $v := .}}{{range $a, $b := $}}{{end}}{{end}}`, 10), props: many},
	} {
		t.Run(name, func(t *testing.T) {
			b := NewBudget(DefaultBudget)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := String(tc.text, tc.props, b)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if _, ok := errors.AsType[BudgetError](err); !ok {
				t.Fatalf("err = %v, want the budget's", err)
			}
			// What a template may build is its budget; fmt's buffers and
			// the parse add a small multiple of that.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > race.AllocScale*4*DefaultBudget {
				t.Errorf("allocated %d bytes, more than four times the budget (%d)", alloc, DefaultBudget)
			}
			if took > race.TimeScale*2*time.Second {
				t.Errorf("took %s", took)
			}
			t.Logf("refused after %s, spending %d", took, b.Spent())
		})
	}
}

// TestBudgetSpansAPlacement: one budget for every leaf and cluster; an
// honest template costs what it writes, and its Placement can expand
// thousands of them.
func TestBudgetSpansAPlacement(t *testing.T) {
	b := NewBudget(DefaultBudget)
	props := map[string]string{"clusterName": "wec1", "region": "westeurope"}
	obj := map[string]any{"data": map[string]any{"a": "{{.region}}", "b": `{{printf "%s-%s" .clusterName .region}}`}}
	for range 1000 {
		if _, errs := Object(obj, props, b); len(errs) > 0 {
			t.Fatalf("errors after spending %d: %v", b.Spent(), errs)
		}
	}
	if b.Spent() > 2_100_000 {
		t.Errorf("1000 small objects spent %d", b.Spent())
	}
	small := NewBudget(100)
	_, errs := Object(map[string]any{"a": strings.Repeat("{{.region}}", 20)}, props, small)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "more than their budget of 100") {
		t.Errorf("over a small budget: %v", errs)
	}
	// Spent is spent: the next leaf fails at once.
	if _, err := String("{{.region}}", props, small); err == nil {
		t.Error("an exhausted budget expanded again")
	}
}

// FuzzBudget: whatever the template, expansion spends at most its
// budget, and allocates at most a small multiple of it.
func FuzzBudget(f *testing.F) {
	for _, s := range []string{
		doubling(5), `{{$a := print .region .region}}{{$a := print $a $a}}`, `{{printf "%999s" .region}}`, `{{range $k, $v := .}}{{$v}}{{end}}`, "{{html .region .region}}",
		`{{$x := print . . $}}{{$x = print $x $x}}`, `{{range $k, $v := .}}{{range $a, $b := $}}{{if eq $v $b .region}}{{lt $k $a}}{{end}}{{end}}{{end}}`,
		`{{range $k, $v := .}}{{if and (ne $v "x") (ge (len $v) 3) (gt 1.5 1.0)}}{{le $k "d"}}{{end}}{{end}}`,
	} {
		f.Add(s)
	}
	props := map[string]string{"clusterName": "c", "region": strings.Repeat("e", 100)}
	const budget = 64 << 10
	f.Fuzz(func(t *testing.T, s string) {
		b := NewBudget(budget)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = String(s, props, b)
		runtime.ReadMemStats(&after)
		if b.Spent() > budget {
			t.Fatalf("spent %d of %d", b.Spent(), budget)
		}
		// Parsing costs about 100 bytes per byte of template text.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*budget+200*uint64(len(s))+64<<10 {
			t.Fatalf("allocated %d for %d bytes of template", alloc, len(s))
		}
	})
}

// TestTemplateText: a Placement's templates hold at most MaxTemplateText
// of text, each leaf parsed once however many clusters it expands for.
func TestTemplateText(t *testing.T) {
	props := map[string]string{"clusterName": "wec1", "region": "westeurope"}
	leaf := `{{.region}}` + strings.Repeat(" ", 60<<10)
	b := NewBudget(DefaultBudget)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 50 {
		if _, err := String(leaf, props, b); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Fifty expansions of 60 KiB each, parsed once: parsed each time,
	// at about a hundred bytes a byte of text, they would take 300 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("one leaf on 50 clusters allocated %d KiB", alloc>>10)
	}
	if _, err := String(leaf+"x", props, b); err != nil {
		t.Fatalf("a second leaf within the cap: %v", err)
	}
	_, err := String(leaf+"y", props, b)
	if err == nil || !strings.Contains(err.Error(), "more than 131072 bytes of template text") {
		t.Errorf("a third leaf past the cap: %v", err)
	}
	// Still refused, and still parsed once, on the next cluster.
	if _, err2 := String(leaf+"y", props, b); err2 == nil {
		t.Error("refused once, expanded the next time")
	}
}

// TestComparisons: the comparisons that pay for what they read answer as
// text/template's own for everything a template here can hold, errors
// included.
func TestComparisons(t *testing.T) {
	props := map[string]string{"clusterName": "wec1", "region": "westeurope"}
	values := []string{`true`, `false`, `0`, `1`, `-1`, `1.5`, `2.0`, `1i`, `"a"`, `"b"`, `""`, `.region`, `.`, `(len .region)`, `nil`}
	for _, op := range []string{"eq", "ne", "lt", "le", "gt", "ge"} {
		for _, x := range values {
			for _, y := range values {
				args := []string{x + " " + y}
				if op == "eq" {
					args = append(args, x, x+" "+y+" "+x, y+" "+`"b" 1`)
				}
				for _, a := range args {
					text := "{{" + op + " " + a + "}}"
					var want bytes.Buffer
					builtin, err := template.New("leaf").Option("missingkey=error").Parse(text)
					if err == nil {
						err = builtin.Execute(&want, props)
					}
					got, gerr := String(text, props, NewBudget(DefaultBudget))
					if (err != nil) != (gerr != nil) || (err == nil && got != want.String()) {
						t.Errorf("%s: %q, %v; text/template: %q, %v", text, got, gerr, want.String(), err)
					}
				}
			}
		}
	}
}
