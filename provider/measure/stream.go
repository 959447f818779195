package measure

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Limits of one scrape, checked while it is read: a pod's answer is
// untrusted, and one provider scrapes every tenant's pods.
const (
	// MaxScrapeBytes caps one scrape: an ingestor exposes tens of
	// kilobytes.
	MaxScrapeBytes = 4 << 20
	// MaxLineBytes caps one line of it.
	MaxLineBytes = 64 << 10
	// MaxLabels caps the labels of one sample.
	MaxLabels = 64
)

// Series is one sum a scrape is read for: the samples of family Name
// whose labels include Match.
type Series struct {
	Name  string
	Match map[string]string
}

// Sum is what a scrape gave for one Series.
type Sum struct {
	Value float64
	// Found is false when no sample matched.
	Found bool
	// Err says why the series has no value.
	Err error
}

// ReadSums reads Prometheus text exposition line by line and sums the
// samples of each series as it goes, holding one line at a time: nothing
// but the sums is kept, however many families and samples the answer has.
// Every line is checked (a comment, or a sample of a valid name, labels and
// value), so an answer that is not Prometheus text is an error; a family
// whose # TYPE is neither gauge, counter nor untyped is an error for its
// series only.
func ReadSums(r io.Reader, want []Series) ([]Sum, error) {
	sums := make([]Sum, len(want))
	byName := map[string][]int{}
	for i, s := range want {
		byName[s.Name] = append(byName[s.Name], i)
	}
	lr := &io.LimitedReader{R: r, N: MaxScrapeBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4<<10), MaxLineBytes)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if err := readLine(line, byName, want, sums); err != nil {
			return nil, fmt.Errorf("not Prometheus text: line %d: %w", n, err)
		}
	}
	switch err := sc.Err(); {
	case lr.N <= 0:
		return nil, fmt.Errorf("more than %d bytes of metrics", MaxScrapeBytes)
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("a line longer than %d bytes", MaxLineBytes)
	case err != nil:
		return nil, err
	}
	for i, s := range sums {
		if s.Err == nil && (math.IsInf(s.Value, 0) || math.IsNaN(s.Value)) {
			sums[i] = Sum{Err: fmt.Errorf("%s is not a finite number", want[i].Name)}
		}
	}
	return sums, nil
}

// readLine checks one line and adds a sample it holds to the sums of the
// series it belongs to.
func readLine(line string, byName map[string][]int, want []Series, sums []Sum) error {
	line = strings.TrimLeft(line, " \t")
	if line == "" {
		return nil
	}
	if line[0] == '#' {
		f := strings.Fields(line)
		if len(f) >= 4 && f[1] == "TYPE" {
			switch f[3] {
			case "gauge", "counter", "untyped":
			default:
				for _, i := range byName[f[2]] {
					sums[i].Err = fmt.Errorf("%s: is a %s, not a gauge or counter", f[2], strings.ToUpper(f[3]))
				}
			}
		}
		return nil
	}
	name, rest := metricName(line)
	if name == "" {
		return errors.New("no metric name")
	}
	idx := byName[name]
	labels := ""
	if strings.HasPrefix(rest, "{") {
		end, err := skipLabels(rest)
		if err != nil {
			return err
		}
		labels, rest = rest[1:end-1], rest[end:]
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 {
		return errors.New("expected a value and an optional timestamp")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return fmt.Errorf("value %q", truncate(f[0]))
	}
	for _, i := range idx {
		if sums[i].Err != nil {
			continue
		}
		ok, err := matches(labels, want[i].Match)
		if err != nil {
			return err
		}
		if ok {
			sums[i].Value += v
			sums[i].Found = true
		}
	}
	return nil
}

// metricName splits a sample line at the end of its metric name.
func metricName(line string) (string, string) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') || (i > 0 && c >= '0' && c <= '9') {
			i++
			continue
		}
		break
	}
	return line[:i], line[i:]
}

// skipLabels returns the index just past the label set that s opens,
// checking its shape: name="value" pairs, at most MaxLabels.
func skipLabels(s string) (int, error) {
	i, n := 1, 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		if n++; n > MaxLabels {
			return 0, fmt.Errorf("more than %d labels", MaxLabels)
		}
		name, rest := metricName(s[i:])
		if name == "" || strings.Contains(name, ":") {
			return 0, errors.New("bad label name")
		}
		i += len(name)
		rest = strings.TrimLeft(rest, " ")
		i += len(s[i:]) - len(rest)
		if !strings.HasPrefix(rest, `="`) {
			return 0, errors.New(`expected =" after a label name`)
		}
		i += 2
		end, err := skipQuoted(s, i)
		if err != nil {
			return 0, err
		}
		i = end
	}
}

// skipQuoted returns the index just past the closing quote of the label
// value starting at s[i].
func skipQuoted(s string, i int) (int, error) {
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1, nil
		default:
			i++
		}
	}
	return 0, errors.New("unterminated label value")
}

// matches reports whether a label set (between its braces, already
// checked) holds every label of match.
func matches(labels string, match map[string]string) (bool, error) {
	found := 0
	for labels != "" {
		labels = strings.TrimLeft(labels, " ,")
		if labels == "" {
			break
		}
		eq := strings.IndexByte(labels, '=')
		name := strings.TrimSpace(labels[:eq])
		end, err := skipQuoted(labels, eq+2)
		if err != nil {
			return false, err
		}
		raw := labels[eq+2 : end-1]
		labels = labels[end:]
		want, ok := match[name]
		if !ok {
			continue
		}
		v := raw
		if strings.IndexByte(raw, '\\') >= 0 {
			v = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n").Replace(raw)
		}
		if v != want {
			return false, nil
		}
		found++
	}
	return found == len(match), nil
}

func truncate(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
