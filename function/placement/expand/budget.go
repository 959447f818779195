package expand

import (
	"fmt"
	"maps"
	"text/template"
)

// DefaultBudget is what the templates of one Placement may spend, across
// every leaf of every object on every cluster: 4 Mi units, a unit being a
// byte written, built or compared, a node of a template run (a range's
// body once for each iteration it may take), or a range iteration. A Placement of 100
// templated objects on 50 clusters writing 200 bytes each spends 1 Mi.
const DefaultBudget = 4 << 20

// A Budget is what a set of templates may spend together, counted while
// they run and before anything is allocated. It is not safe for
// concurrent use: one Placement's expansion runs on one goroutine.
type Budget struct {
	total, left int64
	// parsed holds each template text parsed, or why it failed: a
	// Placement's leaf is expanded for every cluster, parsed once.
	parsed map[string]parsedTemplate
	// text is how many bytes of template text are parsed so far, at
	// most MaxTemplateText.
	text int
}

// MaxTemplateText is how much template text one Placement's objects may
// hold, every distinct templated leaf counted once. Parsing allocates
// about a hundred times the text; a Placement of 100 objects with a few
// templated leaves each holds a few KiB.
const MaxTemplateText = 128 << 10

// parsedTemplate is a leaf's template, ready to run, or why it is not.
type parsedTemplate struct {
	t   *template.Template
	err error
}

// NewBudget returns a budget of units.
func NewBudget(units int64) *Budget { return &Budget{total: units, left: units} }

// Spent is how much of the budget has been spent.
func (b *Budget) Spent() int64 { return b.total - b.left }

// BudgetError is the error of a template that would overspend.
type BudgetError struct{ Total int64 }

func (e BudgetError) Error() string {
	return fmt.Sprintf("the Placement's templates would take more than their budget of %d bytes and range iterations", e.Total)
}

func (b *Budget) spend(n int64) error {
	if n > b.left {
		b.left = 0
		return BudgetError{Total: b.total}
	}
	b.left -= n
	return nil
}

// size is an upper bound of what fmt prints for args: their lengths for
// strings, every key and value for the properties (. or $), and 32 bytes
// for anything else (numbers, booleans, nil: all a template can hold
// besides). Printing the properties prints all of them.
func size(args []any) int64 {
	var n int64
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += int64(len(v)) + 1
		case map[string]string:
			n += 8
			for k, x := range v {
				n += int64(len(k)+len(x)) + 2
			}
		default:
			n += 32
		}
	}
	return n
}

// funcs are text/template's builtins that build strings, paying for what
// they would build before they build it: a variable holds a result, and a
// template can double a value into it with every action.
func (b *Budget) funcs() template.FuncMap {
	bounded := func(factor int64, f func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			if err := b.spend(factor * size(args)); err != nil {
				return "", err
			}
			return f(args...), nil
		}
	}
	fns := template.FuncMap{
		"print":   bounded(1, fmt.Sprint),
		"println": bounded(1, fmt.Sprintln),
		"printf": func(format string, args ...any) (string, error) {
			extra, err := printfSize(format)
			if err != nil {
				return "", err
			}
			if err := b.spend(int64(extra) + size(args)); err != nil {
				return "", err
			}
			return fmt.Sprintf(format, args...), nil
		},
		// Escapers grow their input at most sixfold (\u003c for <).
		"html":     bounded(6, template.HTMLEscaper),
		"js":       bounded(6, template.JSEscaper),
		"urlquery": bounded(3, template.URLQueryEscaper),
	}
	maps.Copy(fns, b.comparisons())
	return fns
}
