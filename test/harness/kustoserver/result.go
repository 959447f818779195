package kustoserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// result is one table of a response.
type result struct {
	name    string
	columns []Column
	rows    [][]any
}

func newResult(cols ...string) *result {
	r := &result{name: "Table_0"}
	for i := 0; i+1 < len(cols); i += 2 {
		r.columns = append(r.columns, Column{Name: cols[i], Type: cols[i+1]})
	}
	return r
}

func (r *result) add(row ...any) { r.rows = append(r.rows, row) }

// dataTypes are the v1 protocol's .NET type names.
var dataTypes = map[string]string{
	"bool": "Boolean", "datetime": "DateTime", "dynamic": "Object", "guid": "Guid", "int": "Int32",
	"long": "Int64", "real": "Double", "string": "String", "timespan": "TimeSpan", "decimal": "Decimal",
}

// wire renders a value the way Kusto writes it in JSON.
func wire(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.0000000Z")
	case json.RawMessage:
		return x
	default:
		return x
	}
}

func wireRows(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		w := make([]any, len(r))
		for j, v := range r {
			w[j] = wire(v)
		}
		out[i] = w
	}
	return out
}

// v1 encodes a management response: one table, which azkustodata reads as
// the primary result.
func (r *result) v1() []byte {
	type col struct {
		ColumnName string
		DataType   string
		ColumnType string
	}
	cols := make([]col, len(r.columns))
	for i, c := range r.columns {
		cols[i] = col{c.Name, dataTypes[c.Type], c.Type}
	}
	rows := wireRows(r.rows)
	if rows == nil {
		rows = [][]any{}
	}
	b, _ := json.Marshal(map[string]any{"Tables": []any{map[string]any{"TableName": r.name, "Columns": cols, "Rows": rows}}})
	return b
}

// v2 encodes a query response as progressive-off, fragmented v2 frames,
// one frame per line: the shape azkustodata requests.
func (r *result) v2(requestID string) []byte {
	type col struct {
		ColumnName string
		ColumnType string
	}
	cols := make([]col, len(r.columns))
	for i, c := range r.columns {
		cols[i] = col{c.Name, c.Type}
	}
	rows := wireRows(r.rows)
	if rows == nil {
		rows = [][]any{}
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
	// azkustodata reads FrameType as the first key of every frame, so the
	// frames are structs, whose fields marshal in order.
	type header struct {
		FrameType               string
		IsProgressive           bool
		Version                 string
		IsFragmented            bool
		ErrorReportingPlacement string
	}
	type dataTable struct {
		FrameType string
		TableId   int
		TableKind string
		TableName string
		Columns   []col
		Rows      [][]any
	}
	type tableHeader struct {
		FrameType string
		TableId   int
		TableKind string
		TableName string
		Columns   []col
	}
	type fragment struct {
		FrameType         string
		TableFragmentType string
		TableId           int
		Rows              [][]any
	}
	type completion struct {
		FrameType string
		TableId   int
		RowCount  int
	}
	type done struct {
		FrameType string
		HasErrors bool
		Cancelled bool
	}
	frames := []any{
		header{"DataSetHeader", false, "v2.0", true, "EndOfTable"},
		dataTable{"DataTable", 0, "QueryProperties", "@ExtendedProperties",
			[]col{{"TableId", "int"}, {"Key", "string"}, {"Value", "dynamic"}},
			[][]any{{1, "Visualization", `{"Visualization":null}`}}},
		tableHeader{"TableHeader", 1, "PrimaryResult", "PrimaryResult", cols},
		fragment{"TableFragment", "DataAppend", 1, rows},
		completion{"TableCompletion", 1, len(rows)},
		dataTable{"DataTable", 2, "QueryCompletionInformation", "QueryCompletionInformation",
			[]col{{"Timestamp", "datetime"}, {"ClientRequestId", "string"}, {"ActivityId", "guid"}, {"SubActivityId", "guid"},
				{"ParentActivityId", "guid"}, {"Level", "int"}, {"LevelName", "string"}, {"StatusCode", "int"}, {"StatusCodeName", "string"},
				{"EventType", "int"}, {"EventTypeName", "string"}, {"Payload", "string"}},
			[][]any{{now, requestID, zeroGUID, zeroGUID, zeroGUID, 4, "Info", 0, "S_OK (0)", 4, "QueryInfo", `{"Count":1,"Text":"Query completed successfully"}`}}},
		done{"DataSetCompletion", false, false},
	}
	var b bytes.Buffer
	for i, f := range frames {
		if i == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		j, _ := json.Marshal(f)
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes()
}

const zeroGUID = "00000000-0000-0000-0000-000000000000"

// kustoError is an error the server answers with, in Kusto's JSON shape.
type kustoError struct {
	status    int
	code      string
	message   string
	permanent bool
}

func (e *kustoError) Error() string { return e.code + ": " + e.message }

func (e *kustoError) body() []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": e.code, "message": "Request is invalid and cannot be executed.",
		"@type": "Kusto.Data.Exceptions.KustoException", "@message": e.message, "@permanent": e.permanent,
		"@context": map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "serviceAlias": "FLEETPLANE-KUSTO-SERVER"},
	}})
	return b
}

func badRequest(format string, a ...any) *kustoError {
	return &kustoError{status: 400, code: "General_BadRequest", message: fmt.Sprintf(format, a...), permanent: true}
}

func notFound(format string, a ...any) *kustoError {
	return &kustoError{status: 400, code: "BadRequest_EntityNotFound", message: fmt.Sprintf(format, a...), permanent: true}
}
