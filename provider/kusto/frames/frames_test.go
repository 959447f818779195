package frames

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	queryv2 "github.com/Azure/azure-kusto-go/azkustodata/query/v2"
	"github.com/go-json-experiment/json/jsontext"
)

// answer writes frames as Kusto does: a JSON array, a frame per line.
func answer(frames ...string) string {
	var b strings.Builder
	for i, f := range frames {
		if i == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(f)
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.String()
}

const (
	header     = `{"FrameType":"DataSetHeader","IsProgressive":false,"Version":"v2.0","IsFragmented":true,"ErrorReportingPlacement":"EndOfTable"}`
	properties = `{"FrameType":"DataTable","TableId":0,"TableKind":"QueryProperties","TableName":"@ExtendedProperties","Columns":[{"ColumnName":"TableId","ColumnType":"int"},{"ColumnName":"Key","ColumnType":"string"},{"ColumnName":"Value","ColumnType":"dynamic"}],"Rows":[[1,"Visualization","{\"Visualization\":null}"]]}`
	primary    = `{"FrameType":"TableHeader","TableId":1,"TableKind":"PrimaryResult","TableName":"PrimaryResult","Columns":[{"ColumnName":"Timestamp","ColumnType":"datetime"},{"ColumnName":"ClusterEndpoint","ColumnType":"string"},{"ColumnName":"Schema","ColumnType":"dynamic"},{"ColumnName":"Count","ColumnType":"long"}]}`
	completion = `{"FrameType":"TableCompletion","TableId":1,"RowCount":3}`
	info       = `{"FrameType":"DataTable","TableId":2,"TableKind":"QueryCompletionInformation","TableName":"QueryCompletionInformation","Columns":[{"ColumnName":"Payload","ColumnType":"string"}],"Rows":[["{\"Count\":1}"]]}`
	finished   = `{"FrameType":"DataSetCompletion","HasErrors":false,"Cancelled":false}`
)

func fragment(rows ...string) string {
	return `{"FrameType":"TableFragment","TableFragmentType":"DataAppend","TableId":1,"Rows":[` + strings.Join(rows, ",") + `]}`
}

type got struct {
	Timestamp time.Time
	Endpoint  string
	Schema    string
	Count     string
}

// gotOf reads a row's time, endpoint, schema and, when it has one, count.
func gotOf(r Row) (got, error) {
	var g got
	var err error
	if g.Timestamp, err = r.Time("Timestamp"); err != nil {
		return g, err
	}
	if g.Endpoint, err = r.String("ClusterEndpoint"); err != nil {
		return g, err
	}
	s, err := r.Dynamic("Schema")
	if err != nil {
		return g, err
	}
	g.Schema = string(s)
	if r.Index("Count") >= 0 {
		v, _ := r.Raw("Count")
		g.Count = string(v)
	}
	return g, nil
}

func readAll(t *testing.T, text string) ([]got, error) {
	t.Helper()
	var out []got
	err := Read(strings.NewReader(text), func(r Row) error {
		g, err := gotOf(r)
		out = append(out, g)
		return err
	})
	return out, err
}

func TestRead(t *testing.T) {
	ts := time.Date(2026, 11, 27, 7, 0, 0, 123456700, time.UTC)
	text := answer(header, properties, primary,
		fragment(`["2026-11-27T07:00:00.1234567Z","https://a.kusto.windows.net",[{"name":"Db","tables":["T"]}],1]`,
			` [ "2026-11-27T07:00:00.1234567Z" , "https://b\u002ekusto.windows.net\"" , {"a":[1,{"b":"]"}]} , 2 ] `),
		fragment(`[null,null,null,null]`, `["2026-11-27T07:00:00.1234567Z","c","[\"as a string\"]",3]`),
		completion, info, finished)
	rows, err := readAll(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := []got{
		{ts, "https://a.kusto.windows.net", `[{"name":"Db","tables":["T"]}]`, "1"},
		{ts, `https://b.kusto.windows.net"`, `{"a":[1,{"b":"]"}]}`, "2"},
		{time.Time{}, "", "", "null"},
		{ts, "c", `["as a string"]`, "3"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}
}

func TestReadRefuses(t *testing.T) {
	row := `["2026-11-27T07:00:00Z","a",{},1]`
	for _, tc := range []struct {
		name, text string
		rows       int
		cluster    bool // an *Error, not ErrFormat
	}{
		{"not json", "Internal error\n", 0, false},
		{"empty", "", 0, false},
		{"cut short", answer(header, primary, fragment(row))[:200], 0, false},
		{"no completion", answer(header, properties, primary, fragment(row), completion), 1, false},
		{"frame after completion", answer(header, finished, info), 0, false},
		{"no header", answer(primary, fragment(row), completion, finished), 0, false},
		{"header twice", answer(header, primary, fragment(row), completion, header, finished), 1, false},
		{"progressive", answer(strings.Replace(header, `"IsProgressive":false`, `"IsProgressive":true`, 1), finished), 0, false},
		{"errors among rows", answer(strings.Replace(header, "EndOfTable", "InData", 1), finished), 0, false},
		{"FrameType not first", answer(header, `{"TableId":1,"FrameType":"TableHeader"}`, finished), 0, false},
		{"unknown frame", answer(header, `{"FrameType":"Surprise"}`, finished), 0, false},
		{"rows without a table", answer(header, fragment(row), finished), 0, false},
		{"rows of another table", answer(header, primary, strings.Replace(fragment(row), `"TableId":1`, `"TableId":7`, 1), completion, finished), 0, false},
		{"replace", answer(header, primary, strings.Replace(fragment(row), "DataAppend", "DataReplace", 1), completion, finished), 0, false},
		{"short row", answer(header, primary, fragment(`["2026-11-27T07:00:00Z","a",{}]`), completion, finished), 0, false},
		{"long row", answer(header, primary, fragment(`["2026-11-27T07:00:00Z","a",{},1,2]`), completion, finished), 0, false},
		{"primary as a DataTable", answer(header, strings.Replace(properties, "QueryProperties", "PrimaryResult", 1), finished), 0, false},
		{"table inside a table", answer(header, primary, primary, finished), 0, false},
		{"completed inside a table", answer(header, primary, fragment(row), finished), 1, false},
		{"error at the end of the table", answer(header, primary, fragment(row),
			`{"FrameType":"TableCompletion","TableId":1,"RowCount":1,"OneApiErrors":[{"error":{"code":"LimitsExceeded","message":"Request is invalid","@message":"Query result set has exceeded the internal record count limit"}}]}`, finished), 1, true},
		{"error at the end of the answer", answer(header, primary, fragment(row), completion,
			`{"FrameType":"DataSetCompletion","HasErrors":true,"Cancelled":false,"OneApiErrors":[{"error":{"code":"Internal","message":"boom"}}]}`), 1, true},
		{"errors unnamed", answer(header, `{"FrameType":"DataSetCompletion","HasErrors":true,"Cancelled":false}`), 0, true},
		{"cancelled", answer(header, `{"FrameType":"DataSetCompletion","HasErrors":false,"Cancelled":true}`), 0, true},
		{"wrong types", answer(header, primary, fragment(`[1,"a",{},1]`), completion, finished), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := Read(strings.NewReader(tc.text), func(r Row) error {
				if _, err := r.Time("Timestamp"); err != nil {
					return fmt.Errorf("%w: %w", ErrFormat, err)
				}
				n++
				return nil
			})
			var ce *Error
			switch {
			case err == nil:
				t.Fatal("read")
			case tc.cluster && !errors.As(err, &ce):
				t.Fatalf("%v is not the cluster's error", err)
			case !tc.cluster && !errors.Is(err, ErrFormat):
				t.Fatalf("%v is not ErrFormat", err)
			}
			if n != tc.rows {
				t.Errorf("%d rows handed over before %v, want %d", n, err, tc.rows)
			}
			t.Log(err)
		})
	}
}

func TestClusterErrorSaysWhat(t *testing.T) {
	err := Read(strings.NewReader(answer(header, `{"FrameType":"DataSetCompletion","HasErrors":true,"Cancelled":false,"OneApiErrors":[{"error":{"code":"LimitsExceeded","message":"Request is invalid","@message":"too many rows"}}]}`)), func(Row) error { return nil })
	if err == nil || err.Error() != "LimitsExceeded: too many rows" {
		t.Errorf("error = %v", err)
	}
}

// A callback's error stops the read and is returned as it is.
func TestCallbackErrorStops(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	err := Read(strings.NewReader(answer(header, primary, fragment(`[null,"a",{},1]`, `[null,"b",{},2]`), completion, finished)), func(Row) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err %v after %d rows", err, n)
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		`[]`:                         nil,
		`[ ]`:                        nil,
		`[1]`:                        {`1`},
		`[ 1 , "a,b" , null ]`:       {`1`, `"a,b"`, `null`},
		`["\"],["]`:                  {`"\"],["`},
		`[[1,[2]],{"a":{"b":[]}},3]`: {`[1,[2]]`, `{"a":{"b":[]}}`, `3`},
		`["\\",true]`:                {`"\\"`, `true`},
		`["a\\\"b,",1]`:              {`"a\\\"b,"`, `1`},
		`["\\\\",["\""]]`:            {`"\\\\"`, `["\""]`},
	} {
		var got []string
		for _, v := range split(jsontext.Value(in), nil) {
			got = append(got, string(v))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("split(%s) = %q, want %q", in, got, want)
		}
	}
}

// sdkRow is what federation read through the SDK's rows before.
type sdkRow struct {
	Timestamp time.Time `kusto:"Timestamp"`
	Endpoint  string    `kusto:"ClusterEndpoint"`
	Schema    []byte    `kusto:"Schema"`
}

// readSDK reads text with azkustodata's own iterative reader.
func readSDK(text string) ([]got, error) {
	ds, err := queryv2.NewIterativeDataset(context.Background(), io.NopCloser(strings.NewReader(text)), queryv2.DefaultIoCapacity, queryv2.DefaultRowCapacity, queryv2.DefaultTableCapacity)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	var out []got
	for tr := range ds.Tables() {
		if err := tr.Err(); err != nil {
			return out, err
		}
		if !tr.Table().IsPrimaryResult() {
			continue
		}
		for rr := range tr.Table().Rows() {
			if err := rr.Err(); err != nil {
				return out, err
			}
			var r sdkRow
			if err := rr.Row().ToStruct(&r); err != nil {
				return out, err
			}
			out = append(out, got{Timestamp: r.Timestamp, Endpoint: r.Endpoint, Schema: string(r.Schema)})
		}
	}
	return out, nil
}

// FuzzReadMatchesSDK: for whatever strings and dynamic values a row holds,
// this reader gives what azkustodata's gives.
func FuzzReadMatchesSDK(f *testing.F) {
	f.Add("https://a.kusto.windows.net", `[{"name":"Db","tables":["T"]}]`, "2026-11-27T07:00:00.1234567Z")
	f.Add("é\u2028\"\\/\x01", `"a string"`, "2026-11-27T07:00:00Z")
	f.Add("", `null`, "")
	f.Add("x", `{"a":"\u00e9\ud83d\ude00"}`, "2026-11-27T07:00:00+02:00")
	f.Add("x", `12.5e3`, "2026-11-27T07:00:00.1Z")
	f.Fuzz(func(t *testing.T, endpoint, dynamic, ts string) {
		if !json.Valid([]byte(dynamic)) {
			return
		}
		ep, _ := json.Marshal(endpoint)
		var tsv []byte
		if ts == "" {
			tsv = []byte("null")
		} else {
			tsv, _ = json.Marshal(ts)
		}
		var dyn bytes.Buffer
		_ = json.Compact(&dyn, []byte(dynamic))
		cols := `{"FrameType":"TableHeader","TableId":1,"TableKind":"PrimaryResult","TableName":"PrimaryResult","Columns":[{"ColumnName":"Timestamp","ColumnType":"datetime"},{"ColumnName":"ClusterEndpoint","ColumnType":"string"},{"ColumnName":"Schema","ColumnType":"dynamic"}]}`
		row := fmt.Sprintf("[%s,%s,%s]", tsv, ep, dyn.String())
		text := answer(header, properties, cols, fragment(row, row), completion, info, finished)
		want, werr := readSDK(text)
		var have []got
		herr := Read(strings.NewReader(text), func(r Row) error {
			g, err := gotOf(r)
			have = append(have, g)
			return err
		})
		if werr != nil {
			// The SDK refuses a datetime it cannot parse; so does this
			// reader, for the same values.
			if herr == nil {
				t.Fatalf("the SDK refused %s (%v), this reader did not", row, werr)
			}
			return
		}
		if herr != nil {
			t.Fatalf("this reader refused %s: %v", row, herr)
		}
		for i := range want {
			want[i].Timestamp = want[i].Timestamp.UTC()
		}
		for i := range have {
			have[i].Timestamp = have[i].Timestamp.UTC()
		}
		if fmt.Sprintf("%q", have) != fmt.Sprintf("%q", want) {
			t.Fatalf("row %s:\nthis reader %q\nthe SDK     %q", row, have, want)
		}
	})
}

// FuzzRead: whatever the answer, the reader returns without panicking,
// hands over only rows as wide as their table, and keeps Row's promise
// about text that is not UTF-8: each value is one JSON value under the
// reader's own leniency (not jsontext's strict defaults, which refuse
// what the SDK reads), and all it decodes, errors included, is UTF-8.
func FuzzRead(f *testing.F) {
	f.Add(answer(header, properties, primary, fragment(`["2026-11-27T07:00:00Z","a",{},1]`), completion, info, finished))
	f.Add(answer(header, `{"FrameType":"DataSetCompletion","HasErrors":true,"Cancelled":false,"OneApiErrors":[{"error":{"code":"c","message":"m"}}]}`))
	f.Fuzz(func(t *testing.T, text string) {
		err := Read(strings.NewReader(text), func(r Row) error {
			if len(r.Values) != len(r.Columns) {
				t.Fatalf("a row of %d values, %d columns", len(r.Values), len(r.Columns))
			}
			for i, v := range r.Values {
				if !oneLenientValue(v) {
					t.Fatalf("not one JSON value, even allowing invalid UTF-8: %q", v)
				}
				c := r.Columns[i]
				if !utf8.ValidString(c.Name) || !utf8.ValidString(c.Type) {
					t.Fatalf("column %q of type %q is not UTF-8", c.Name, c.Type)
				}
				if v.Kind() != '"' {
					continue
				}
				s, err := r.String(c.Name)
				if r.Index(c.Name) != i {
					continue // a repeated column name: String reads the first
				}
				if err != nil {
					t.Fatalf("String of the string %q: %v", v, err)
				}
				if !utf8.ValidString(s) {
					t.Fatalf("String of %q = %q, not UTF-8", v, s)
				}
				if d, _ := r.Dynamic(c.Name); !utf8.Valid(d) {
					t.Fatalf("Dynamic of %q = %q, not UTF-8", v, d)
				}
			}
			return nil
		})
		if err != nil && !utf8.ValidString(err.Error()) {
			t.Fatalf("error %q is not UTF-8", err)
		}
	})
}

// oneLenientValue reports whether v is exactly one JSON value as the
// reader reads them: invalid UTF-8 and duplicate names allowed.
func oneLenientValue(v jsontext.Value) bool {
	d := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if _, err := d.ReadValue(); err != nil {
		return false
	}
	_, err := d.ReadToken()
	return errors.Is(err, io.EOF)
}
