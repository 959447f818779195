// Package jsonpath parses and applies the small JSONPath subset that
// KubeStellar's CustomTransform uses to name content to remove: the root
// `$` followed by one or more segments, each `.name` (RFC 9535's
// member-name-shorthand) or `["string"]` (an RFC 9535 string literal, in
// double quotes only). Nothing else of JSONPath is accepted, not even
// whitespace: no wildcards, indexes, slices, filters or unions, so a path
// always names at most one member of nested objects.
package jsonpath

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLength bounds a path: paths come from users' objects.
const MaxLength = 1024

// Path is a parsed path: the member names from the root, at least one.
type Path []string

// Error is a parse error at a byte offset of the input.
type Error struct {
	Offset int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("at offset %d: %s", e.Offset, e.Reason) }

func fail(at int, format string, a ...any) error {
	return &Error{Offset: at, Reason: fmt.Sprintf(format, a...)}
}

// Parse reads a path.
func Parse(s string) (Path, error) {
	switch {
	case s == "":
		return nil, fail(0, "empty path: it must start with $")
	case len(s) > MaxLength:
		return nil, fail(MaxLength, "longer than %d bytes", MaxLength)
	case !utf8.ValidString(s):
		return nil, fail(invalidUTF8(s), "not valid UTF-8")
	case s[0] != '$':
		return nil, fail(0, "a path starts with the root $")
	}
	var p Path
	i := 1
	for i < len(s) {
		switch s[i] {
		case '.':
			name, n, err := shorthand(s, i+1)
			if err != nil {
				return nil, err
			}
			p, i = append(p, name), i+1+n
		case '[':
			name, n, err := literal(s, i+1)
			if err != nil {
				return nil, err
			}
			i += 1 + n
			if i >= len(s) || s[i] != ']' {
				return nil, fail(i, "expected ] after the string")
			}
			p, i = append(p, name), i+1
		default:
			return nil, fail(i, "expected . or [ to start a segment, found %q", s[i:i+1])
		}
	}
	if len(p) == 0 {
		return nil, fail(1, "$ alone names the whole object, which cannot be removed")
	}
	return p, nil
}

func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			return i
		}
	}
	return 0
}

// nameFirst is RFC 9535's name-first: ALPHA, "_", or a non-ASCII
// character outside the surrogates.
func nameFirst(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' ||
		(r >= 0x80 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0x10FFFF)
}

func nameChar(r rune) bool { return nameFirst(r) || r >= '0' && r <= '9' }

// shorthand reads a member-name-shorthand at s[at:] and its length.
func shorthand(s string, at int) (string, int, error) {
	i := at
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (i == at && !nameFirst(r)) || !nameChar(r) {
			break
		}
		i += size
	}
	if i == at {
		return "", 0, fail(at, "expected a name after . (a letter, _ or non-ASCII character first)")
	}
	return s[at:i], i - at, nil
}

// literal reads a double-quoted RFC 9535 string literal at s[at:] and
// returns its value and length.
func literal(s string, at int) (string, int, error) {
	if at >= len(s) || s[at] != '"' {
		return "", 0, fail(at, `expected a string in double quotes after [`)
	}
	var b strings.Builder
	i := at + 1
	for {
		if i >= len(s) {
			return "", 0, fail(i, "missing closing quote")
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			return b.String(), i + 1 - at, nil
		case r == '\\':
			v, n, err := escape(s, i)
			if err != nil {
				return "", 0, err
			}
			b.WriteRune(v)
			i += n
		case r < 0x20:
			return "", 0, fail(i, "control character %U must be escaped", r)
		default:
			b.WriteRune(r)
			i += size
		}
	}
}

// escape reads the escape sequence at s[at:] (at the backslash).
func escape(s string, at int) (rune, int, error) {
	if at+1 >= len(s) {
		return 0, 0, fail(at, "escape at the end of the path")
	}
	switch c := s[at+1]; c {
	case 'b':
		return '\b', 2, nil
	case 'f':
		return '\f', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 't':
		return '\t', 2, nil
	case '/', '\\', '"':
		return rune(c), 2, nil
	case 'u':
		hi, err := hex4(s, at+2)
		if err != nil {
			return 0, 0, err
		}
		switch {
		case hi >= 0xDC00 && hi <= 0xDFFF:
			return 0, 0, fail(at, "lone low surrogate \\u%04X", hi)
		case hi < 0xD800 || hi > 0xDBFF:
			return hi, 6, nil
		}
		if at+12 > len(s) || s[at+6] != '\\' || s[at+7] != 'u' {
			return 0, 0, fail(at, "high surrogate \\u%04X without its low surrogate", hi)
		}
		lo, err := hex4(s, at+8)
		if err != nil {
			return 0, 0, err
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0, fail(at+6, "\\u%04X is not a low surrogate", lo)
		}
		return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), 12, nil
	default:
		return 0, 0, fail(at, "unknown escape \\%c", c)
	}
}

func hex4(s string, at int) (rune, error) {
	if at+4 > len(s) {
		return 0, fail(at, "\\u needs four hexadecimal digits")
	}
	var v rune
	for _, c := range []byte(s[at : at+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, fail(at, "\\u needs four hexadecimal digits, found %q", s[at:at+4])
		}
		v = v<<4 | rune(d)
	}
	return v, nil
}

// String writes the path canonically: .name where the name is a
// shorthand, ["..."] with JSON escapes otherwise. Parse(p.String())
// returns p.
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, name := range p {
		writeSegment(&b, name)
	}
	return b.String()
}

// Segment is the canonical segment naming member name: .name, or
// ["..."] with escapes.
func Segment(name string) string {
	var b strings.Builder
	writeSegment(&b, name)
	return b.String()
}

func writeSegment(b *strings.Builder, name string) {
	if isShorthand(name) {
		b.WriteByte('.')
		b.WriteString(name)
		return
	}
	b.WriteString(`["`)
	for _, r := range name {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(`"]`)
}

func isShorthand(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	for i, r := range name {
		if (i == 0 && !nameFirst(r)) || !nameChar(r) {
			return false
		}
	}
	return true
}

// Remove deletes what p names from obj, if it is there, and reports
// whether it was. A missing member, or one on the way that is not an
// object, leaves obj as it is: removal is "if present".
func Remove(obj map[string]any, p Path) bool {
	m := obj
	for _, name := range p[:len(p)-1] {
		next, ok := m[name].(map[string]any)
		if !ok {
			return false
		}
		m = next
	}
	last := p[len(p)-1]
	if _, ok := m[last]; !ok {
		return false
	}
	delete(m, last)
	return true
}
