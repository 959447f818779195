package heartbeat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// adxMonSchema is a Schema column as the adx-mon operator writes it:
// besides names, every table's columns (tableSchemas), which a hub never
// plans with.
func adxMonSchema(dbs, tables int) string {
	type schema struct {
		Database     string            `json:"database"`
		Tables       []string          `json:"tables"`
		TableSchemas map[string]string `json:"tableSchemas,omitempty"`
		Views        []string          `json:"views"`
	}
	var out []schema
	for d := range dbs {
		s := schema{Database: fmt.Sprintf("Db%d", d), TableSchemas: map[string]string{}, Views: []string{"Latest"}}
		for t := range tables {
			name := fmt.Sprintf("Table%03d", t)
			s.Tables = append(s.Tables, name)
			s.TableSchemas[name] = "Timestamp:datetime, ObservedTimestamp:datetime, TraceId:string, SpanId:string, SeverityText:string, SeverityNumber:int, Body:dynamic, Resource:dynamic, Attributes:dynamic"
		}
		out = append(out, s)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func TestDecodeSchema(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []DatabaseSchema
		err  bool
	}{
		"adx-mon's form, columns skipped": {
			in:   `[{"database":"Metrics","tables":["Cpu"],"tableSchemas":{"Cpu":"Timestamp:datetime, \"x\":real"},"views":[]}]`,
			want: []DatabaseSchema{{Database: "Metrics", Tables: []string{"Cpu"}, Views: []string{}}},
		},
		"keys in any case, escapes, nulls, later keys win": {
			in:   ` [ {"DATABASE":"M\u0065trics","Tables":["a",null],"tables":["b"],"views":null,"x":[1,-2.5e+3,true,{"y":null}]}, null ] `,
			want: []DatabaseSchema{{Database: "Metrics", Tables: []string{"b"}}, {}},
		},
		"not ASCII goes through encoding/json": {
			in:   "[{\"database\":\"D\xff\u00e9\"}]",
			want: []DatabaseSchema{{Database: "D\ufffd\u00e9"}},
		},
		"null":                     {in: "null"},
		"empty list":               {in: "[]", want: []DatabaseSchema{}},
		"trailing garbage":         {in: `[] x`, err: true},
		"a number as a name":       {in: `[{"database":1}]`, err: true},
		"tables as an object":      {in: `[{"tables":{}}]`, err: true},
		"an invalid skipped value": {in: `[{"tableSchemas":{"a":01}}]`, err: true},
		"an invalid escape":        {in: `[{"database":"\x"}]`, err: true},
		"unterminated":             {in: `[{"database":"a`, err: true},
		"an object, not a list":    {in: `{}`, err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := decodeSchema(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("error = %v, want error: %v", err, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	// Nesting up to encoding/json's limit, and one level past it.
	deep := `[{"x":` + strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2) + `}]`
	deeper := `[{"x":[` + deep[6:len(deep)-2] + `]}]`
	if _, err := decodeSchema(deep); err != nil {
		t.Errorf("nesting at the limit: %v", err)
	}
	for _, in := range []string{deep, deeper} {
		_, err := decodeSchema(in)
		var v []DatabaseSchema
		if werr := json.Unmarshal([]byte(in), &v); (err != nil) != (werr != nil) {
			t.Errorf("nesting %d: decodeSchema error %v, encoding/json error %v", strings.Count(in, "["), err, werr)
		}
	}
}

// FuzzDecodeSchemaMatchesEncodingJSON holds decodeSchema to
// json.Unmarshal: the same inputs accepted, the same result.
func FuzzDecodeSchemaMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		adxMonSchema(2, 3), `null`, `[]`, `[null]`, `[{"database":"a","tables":null}]`,
		`[{"Database":"\u00e9\ud83d\ude00","views":["\/"]}]`, `[{"x":[1e5,-0,0.5,"\t"]}]`, `[{"x":01}]`, "[{\"database\":\"a\x01\"}]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := decodeSchema(s)
		var want []DatabaseSchema
		werr := json.Unmarshal([]byte(s), &want)
		if (err != nil) != (werr != nil) {
			t.Fatalf("decodeSchema error %v, encoding/json error %v", err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeSchema %#v, encoding/json %#v", got, want)
		}
	})
}

func BenchmarkDecodeSchema(b *testing.B) {
	s := adxMonSchema(5, 200)
	for _, bc := range []struct {
		name   string
		decode func(string) ([]DatabaseSchema, error)
	}{
		{"names-only", decodeSchema},
		{"encoding-json", func(s string) ([]DatabaseSchema, error) {
			var out []DatabaseSchema
			return out, json.Unmarshal([]byte(s), &out)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.decode(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
