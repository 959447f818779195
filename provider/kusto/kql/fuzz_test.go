package kql

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seeds are the inputs an attacker writing heartbeat rows would try first.
var seeds = []string{
	"Metrics", "my table", "a.b-c", "Tâblé",
	"'", "\"", "\\", "['x']", "x']) | .drop table T //", "]", "[", "a\nb", "a\r\nb", ";", "x; .drop database D",
	"|", "a | take 1", "//", "x // comment", "\u2028", "\x00", "\xff\xfe", "ü✓🙂", "cluster('evil').database('x')",
	"https://evil.kusto.windows.net').database('x')) | .drop table T //",
	strings.Repeat("a", 1<<20), strings.Repeat("'", 1<<10),
}

// tokens is the shape of a command: kinds, and values for names, strings
// and commands (words and punctuation are the fixed template).
func tokens(t *testing.T, s string) []Token {
	t.Helper()
	toks, err := Tokenize(s)
	if err != nil {
		t.Fatalf("generated text does not tokenize: %v\n%q", err, s)
	}
	return toks
}

// expect checks that toks has the template's tokens, with Name and String
// tokens equal to the intended values in order.
func expect(t *testing.T, cmd string, template string, values ...string) {
	t.Helper()
	got := tokens(t, cmd)
	want := tokens(t, template)
	if len(got) != len(want) {
		t.Fatalf("command has %d tokens, template %d:\n%q\n%q", len(got), len(want), cmd, template)
	}
	v := 0
	for i := range want {
		if got[i].Kind != want[i].Kind {
			t.Fatalf("token %d is %s, want %s:\n%q", i, got[i], want[i], cmd)
		}
		switch want[i].Kind {
		case Name, String:
			if want[i].Value == "?" {
				if v >= len(values) || got[i].Value != values[v] {
					t.Fatalf("token %d = %q, want the input %q", i, got[i].Value, values[v])
				}
				v++
				continue
			}
			fallthrough
		default:
			if got[i].Value != want[i].Value {
				t.Fatalf("token %d = %s, want %s:\n%q", i, got[i], want[i], cmd)
			}
		}
	}
}

func FuzzIdentAndLiteral(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := Ident(s); err == nil {
			expect(t, id, "['?']", s)
		}
		if lit, err := Literal(s); err == nil {
			expect(t, lit, "'?'", s)
		}
		// The short way agrees with the long one.
		lit, err := Literal(s)
		if long, lerr := escapedLiteral(s); lit != long || (err == nil) != (lerr == nil) {
			t.Fatalf("Literal(%q) = %q, %v; the long way %q, %v", s, lit, err, long, lerr)
		}
	})
}

func FuzzCommands(f *testing.F) {
	for i, s := range seeds {
		f.Add(s, seeds[(i+1)%len(seeds)], seeds[(i+2)%len(seeds)])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if cmd, err := CreateMergeTable(a, []Column{{b, "string"}, {c, "dynamic"}}); err == nil {
			expect(t, cmd, ".create-merge table ['?'] (['?']:string, ['?']:dynamic)", a, b, c)
		}
		if cmd, err := DropFunction(a); err == nil {
			expect(t, cmd, ".drop function ['?'] ifexists", a)
		}
		if cmd, err := DropTable(a); err == nil {
			expect(t, cmd, ".drop table ['?'] ifexists", a)
		}
		if cmd, err := DropEntityGroup(a); err == nil {
			expect(t, cmd, ".drop entity_group ['?']", a)
		}
		if body, err := MacroExpandBody(a, b); err == nil {
			if cmd, err := CreateOrAlterFunction(b, "fleetplane", c, body); err == nil {
				expect(t, cmd, ".create-or-alter function with (folder='fleetplane', docstring='?') ['?']() { macro-expand isfuzzy=true best_effort=true ['?'] as X ( X.['?'] ) }", c, b, a, b)
			}
		}
		if cmd, err := HeartbeatRows(a, time.Hour, []string{b, c}); err == nil {
			expect(t, cmd, "['?'] | where Timestamp > ago(3600s) | where ClusterEndpoint in ('?', '?') | summarize arg_max(Timestamp, *) by ClusterEndpoint | project Timestamp, ClusterEndpoint, Digest = hash_sha256(tostring(pack_array(Schema, PartitionMetadata))), Schema, PartitionMetadata", a, b, c)
		}
		if cmd, err := IngestInline(a, b); err == nil {
			// The record is raw data after <| and must arrive whole.
			toks := tokens(t, cmd)
			if len(toks) != 7 || toks[4].Value != a || toks[5].Value != "<|" || toks[6].Kind != Raw || toks[6].Value != b {
				t.Fatalf("inline ingestion of %q into %q tokenizes as %v", b, a, toks)
			}
		}
		if cmd, err := CallFunction(a); err == nil {
			expect(t, cmd, "['?']()", a)
		}
	})
}

func FuzzEntities(f *testing.F) {
	for i, s := range seeds {
		f.Add(s, seeds[(i+3)%len(seeds)])
	}
	f.Add("https://p1.kusto.windows.net", "Metrics")
	f.Add("HTTPS://P1.Kusto.Windows.Net/", "Logs")
	f.Add("https://[::1]:0443", "Logs")
	f.Add("https://[2001:db8::1]:8443", "Logs")
	f.Add("http://10.0.0.1:080", "Logs")
	f.Add("https://p1.kusto.windows.net:65535", "Logs")
	f.Add("https://1.2.3.4", "Logs")
	f.Add("https://010.0.0.4", "Logs")
	f.Add("https://p1.", "Logs")
	f.Fuzz(func(t *testing.T, endpoint, db string) {
		// Endpoint's shortcut for canonical names answers as parsing does.
		for _, allowHTTP := range []bool{false, true} {
			ep, err := Endpoint(endpoint, allowHTTP)
			slow, slowErr := parseEndpoint(endpoint, allowHTTP)
			if ep != slow || (err == nil) != (slowErr == nil) {
				t.Fatalf("Endpoint(%q) = %q, %v; parsed: %q, %v", endpoint, ep, err, slow, slowErr)
			}
		}
		ep, err := Endpoint(endpoint, true)
		if err != nil {
			return
		}
		// A normal form is stable and holds nothing that could end a literal.
		if again, err := Endpoint(ep, true); err != nil || again != ep {
			t.Fatalf("Endpoint(%q) = %q, not stable: %q, %v", endpoint, ep, again, err)
		}
		if strings.ContainsAny(ep, "'\"\\ \t\n\r()|;") {
			t.Fatalf("normalized endpoint %q holds a dangerous character", ep)
		}
		// The canonical form is what NormalizeEndpoint compares, so a block
		// list entry of any spelling catches it; its port is in range and
		// never the scheme's default.
		if NormalizeEndpoint(endpoint) != ep {
			t.Fatalf("NormalizeEndpoint(%q) = %q, Endpoint gave %q", endpoint, NormalizeEndpoint(endpoint), ep)
		}
		u, err := url.Parse(ep)
		if err != nil || u.Hostname() == "" {
			t.Fatalf("canonical endpoint %q does not parse back: %v", ep, err)
		}
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p || (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
				t.Fatalf("canonical endpoint %q has port %q", ep, p)
			}
		}
		if strings.Contains(u.Hostname(), ":") && !strings.Contains(ep, "[") {
			t.Fatalf("IPv6 endpoint %q lost its brackets", ep)
		}
		e := Entity{Endpoint: ep, Database: db}
		cmd, err := CreateEntityGroup("G", []Entity{e})
		if err != nil {
			return
		}
		expect(t, cmd, ".create entity_group ['G'] ifnotexists (cluster('?').database('?'))", ep, db)
		r, _ := e.Render()
		if back, err := ParseEntity(r); err != nil || back != e {
			t.Fatalf("entity %v did not round-trip: %v, %v", e, back, err)
		}
	})
}

func FuzzScripts(f *testing.F) {
	for i, s := range seeds {
		f.Add(s, seeds[(i+5)%len(seeds)], uint16(200))
	}
	f.Fuzz(func(t *testing.T, a, b string, extra uint16) {
		var cmds, names []string
		for _, n := range []string{a, b, a + b, b + "x"} {
			if c, err := DropFunction(n); err == nil {
				cmds = append(cmds, c)
				names = append(names, n)
			}
		}
		limit := len(ScriptHeader) + int(extra)
		scripts, err := Scripts(cmds, limit)
		if err != nil {
			return
		}
		var got []string
		for _, s := range scripts {
			if len(s) > limit {
				t.Fatalf("script of %d bytes exceeds %d", len(s), limit)
			}
			body := strings.TrimPrefix(s, ScriptHeader)
			got = append(got, strings.Split(strings.TrimSuffix(body, "\n"), "\n")...)
		}
		if len(got) != len(cmds) {
			t.Fatalf("%d commands went in, %d lines came out", len(cmds), len(got))
		}
		for i, line := range got {
			expect(t, line, ".drop function ['?'] ifexists", names[i])
		}
	})
}

// FuzzPlainEntity holds ParseEntity's shortcut to the tokenizer: whatever
// it reads, tokenizing reads the same.
func FuzzPlainEntity(f *testing.F) {
	for _, s := range []string{
		"cluster('https://p1.kusto.windows.net').database('Metrics')", "cluster('a').database('')",
		"cluster('a').database('b').database('c')", "cluster('a\\'b').database('c')", "cluster('é').database('x')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := plainEntity(s)
		if !ok {
			return
		}
		toks, err := Tokenize(s)
		if err != nil || len(toks) != 9 || toks[2].Value != e.Endpoint || toks[7].Value != e.Database {
			t.Fatalf("plainEntity(%q) = %+v; tokens %v, %v", s, e, toks, err)
		}
	})
}
