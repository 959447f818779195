package federation

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/fleetplane/fleetplane/provider/kusto/frames"
)

// readDigests reads one row of kql.HeartbeatDigests, a bucket of
// partitions, and passes each of its [endpoint, digest, time] triples to
// fn. The endpoints and digests are substrings of the row's Entries:
// nothing is allocated for a triple without escapes, which is what keeps
// a steady cycle's read of a large fleet cheap. A caller keeping one
// beyond the cycle clones it.
func readDigests(r frames.Row, fn func(DigestRow) error) error {
	entries, err := r.Dynamic("Entries")
	if err != nil {
		return fmt.Errorf("unreadable heartbeat digests: %w", err)
	}
	// The copy is this call's and never changes: a string of it costs
	// no second copy.
	if err := eachDigest(unsafe.String(unsafe.SliceData(entries), len(entries)), fn); err != nil {
		return fmt.Errorf("unreadable heartbeat digests: %w", err)
	}
	return nil
}

var errDigestList = errors.New("not a list of [endpoint, digest, time]")

// eachDigest parses s, a JSON list of three-string lists, strictly: any
// other shape is an error, as nothing but the hub's own query writes it.
func eachDigest(s string, fn func(DigestRow) error) error {
	p := digestParser{s: s}
	if !p.punct('[') {
		return errDigestList
	}
	if p.punct(']') {
		return p.end()
	}
	for {
		var d DigestRow
		var ts string
		ok := p.punct('[')
		if ok {
			d.Endpoint, ok = p.str()
		}
		ok = ok && p.punct(',')
		if ok {
			d.Digest, ok = p.str()
		}
		ok = ok && p.punct(',')
		if ok {
			ts, ok = p.str()
		}
		if !ok || !p.punct(']') {
			return fmt.Errorf("%w at byte %d", errDigestList, p.i)
		}
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return fmt.Errorf("heartbeat time %q: %w", ts[:min(len(ts), 40)], err)
		}
		d.Timestamp = t
		if err := fn(d); err != nil {
			return err
		}
		if p.punct(']') {
			return p.end()
		}
		if !p.punct(',') {
			return fmt.Errorf("%w at byte %d", errDigestList, p.i)
		}
	}
}

type digestParser struct {
	s string
	i int
}

func (p *digestParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *digestParser) punct(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *digestParser) end() error {
	p.space()
	if p.i != len(p.s) {
		return fmt.Errorf("%w: trailing data at byte %d", errDigestList, p.i)
	}
	return nil
}

// str reads a JSON string: a substring of s when it has no escape, else
// decoded (escapes are rare: only an endpoint no partition could have,
// which decoding then refuses, carries one).
func (p *digestParser) str() (string, bool) {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	// The common case first: no escape before the closing quote, found
	// with IndexByte rather than a byte at a time.
	if end := strings.IndexByte(p.s[p.i+1:], '"'); end >= 0 {
		v := p.s[p.i+1 : p.i+1+end]
		if strings.IndexByte(v, '\\') < 0 {
			for i := range len(v) {
				if v[i] < 0x20 {
					return "", false
				}
			}
			p.i += end + 2
			return v, true
		}
	}
	start, escaped := p.i, false
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '\\':
			escaped = true
			p.i++
		case c == '"':
			p.i++
			if !escaped {
				return p.s[start+1 : p.i-1], true
			}
			return unescape(p.s[start:p.i])
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

func unescape(quoted string) (string, bool) {
	var v string
	err := json.Unmarshal([]byte(quoted), &v)
	return v, err == nil
}
