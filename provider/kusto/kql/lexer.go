package kql

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TokenKind classifies a token of Kusto command or query text.
type TokenKind int

// Token kinds.
const (
	// Command is the leading control command keyword with its dot: ".show".
	Command TokenKind = iota + 1
	// Word is a bare identifier or keyword, dashes allowed: "create-or-alter".
	Word
	// Name is a bracket-quoted identifier; Value holds the name.
	Name
	// String is a string literal; Value holds its content.
	String
	// Number is a number or timespan literal such as 3600s.
	Number
	// Punct is an operator or punctuation: ( ) , : { } | = == > * . <|
	Punct
	// Raw is everything after "<|" up to the end of the text.
	Raw
)

func (k TokenKind) String() string {
	return [...]string{"?", "Command", "Word", "Name", "String", "Number", "Punct", "Raw"}[k]
}

// Token is one lexical element. Value is the decoded content of Name and
// String tokens and the text of every other kind.
type Token struct {
	Kind  TokenKind
	Value string
}

func (t Token) String() string { return t.Kind.String() + "(" + t.Value + ")" }

// Tokenize splits Kusto text into tokens, decoding quoted names and string
// literals with the escapes Literal produces. It understands exactly the
// subset of KQL fleetplane writes, which is also what its test Kusto server
// accepts; anything else is an error rather than a guess.
func Tokenize(s string) ([]Token, error) {
	var out []Token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && strings.HasPrefix(s[i:], "//"):
			// A comment runs to the end of the line.
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '<' && strings.HasPrefix(s[i:], "<|"):
			out = append(out, Token{Punct, "<|"})
			rest := strings.TrimPrefix(s[i+2:], " ")
			rest = strings.TrimPrefix(rest, "\n")
			out = append(out, Token{Raw, rest})
			return out, nil
		case c == '.' && len(out) == 0 && i+1 < len(s) && isWordStart(rune(s[i+1])):
			j := i + 1
			for j < len(s) && isWordPart(rune(s[j])) {
				j++
			}
			out = append(out, Token{Command, s[i:j]})
			i = j
		case c == '[':
			v, n, err := quotedName(s[i:])
			if err != nil {
				return nil, fmt.Errorf("at byte %d: %w", i, err)
			}
			out = append(out, Token{Name, v})
			i += n
		case c == '\'' || c == '"':
			v, n, err := literal(s[i:])
			if err != nil {
				return nil, fmt.Errorf("at byte %d: %w", i, err)
			}
			out = append(out, Token{String, v})
			i += n
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || isLetter(s[j])) {
				j++
			}
			out = append(out, Token{Number, s[i:j]})
			i = j
		case c == '=' && strings.HasPrefix(s[i:], "=="):
			out = append(out, Token{Punct, "=="})
			i += 2
		case strings.IndexByte("(),:{}|=>*.<!", c) >= 0:
			out = append(out, Token{Punct, string(c)})
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isWordStart(r) {
				return nil, fmt.Errorf("at byte %d: unexpected %q", i, r)
			}
			j := i + size
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if !isWordPart(r) {
					break
				}
				j += size
			}
			out = append(out, Token{Word, s[i:j]})
			i = j
		}
	}
	return out, nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isWordStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isWordPart(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// quotedName decodes ['...'] or ["..."] at the start of s.
func quotedName(s string) (string, int, error) {
	if len(s) < 2 || (s[1] != '\'' && s[1] != '"') {
		return "", 0, errors.New("'[' not followed by a quote")
	}
	v, n, err := literal(s[1:])
	if err != nil {
		return "", 0, err
	}
	if 1+n >= len(s) || s[1+n] != ']' {
		return "", 0, errors.New("quoted name not closed by ']'")
	}
	return v, n + 2, nil
}

// literal decodes a quoted string at the start of s and returns its value
// and length.
func literal(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case q:
			return b.String(), i + 1, nil
		case '\n', '\r':
			return "", 0, errors.New("newline inside a string literal")
		case '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("unterminated escape")
			}
			i++
			switch s[i] {
			case '\'', '"', '\\':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", 0, fmt.Errorf("unknown escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated string literal")
}
