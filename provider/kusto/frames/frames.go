// Package frames reads Kusto's v2 query answers, the frames a cluster
// sends for a query asked with fragmented primary tables, a newline
// between frames and errors at the end of each table (what azkustodata's
// IterativeQuery asks for), and hands over each row of the primary results
// as its values' JSON text, without building a value per cell.
//
// It exists because the SDK's reader costs most of what a steady
// federation cycle spends: it tokenizes every frame with encoding/json
// and allocates a value per cell and a row per row, about 30 allocations
// a row, where the hub's heartbeat digests are a few hundred KiB read
// every few seconds (docs/performance.md). The SDK still builds and sends
// the request (RawV2); only the answer is read here.
package frames

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fleetplane/fleetplane/internal/observe"
)

// Column is a column of a table, as its header names it.
type Column struct {
	Name, Type string
}

// Row is one row of a primary result: the table's columns and the JSON
// text of each value. Values are the reader's and valid only until the
// callback that got the row returns; the accessors copy what they return.
//
// What a row promises about text that is not UTF-8 (FuzzRead holds it):
// the reader accepts what encoding/json, and so the SDK, accepts, so a
// value is one whole JSON value under jsontext's AllowInvalidUTF8 and
// AllowDuplicateNames, its bytes as the answer sent them. Everything
// decoded from it is valid UTF-8, invalid bytes read as U+FFFD as the SDK
// reads them: column names, String, Time, Dynamic of a string, and every
// error. Only the JSON text of a value (Raw, Dynamic and DynamicInPlace of
// an object or array) keeps the bytes, for a decoder with the same
// leniency to read.
type Row struct {
	Columns []Column
	Values  []jsontext.Value
}

// Index is the position of the named column, -1 when there is none.
func (r Row) Index(name string) int {
	for i, c := range r.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Raw is the JSON text of the named column's value, valid only during the
// callback.
func (r Row) Raw(name string) (jsontext.Value, error) {
	i := r.Index(name)
	if i < 0 || i >= len(r.Values) {
		return nil, fmt.Errorf("no column %q", name)
	}
	return r.Values[i], nil
}

// String is the named column's value, which must be a string or null
// (""), as a string of its own.
func (r Row) String(name string) (string, error) {
	v, err := r.Raw(name)
	if err != nil {
		return "", err
	}
	b, err := unquote(v, nil)
	if err != nil {
		return "", fmt.Errorf("column %s: %w", name, err)
	}
	return string(b), nil
}

// Time is the named column's value, a datetime as Kusto writes it (RFC
// 3339 with up to seven digits of fraction); null is the zero time.
func (r Row) Time(name string) (time.Time, error) {
	v, err := r.Raw(name)
	if err != nil {
		return time.Time{}, err
	}
	b, err := unquote(v, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("column %s: %w", name, err)
	}
	if len(b) == 0 {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, fmt.Errorf("column %s: not a datetime", name)
	}
	return t, nil
}

// Dynamic is the named column's value, a dynamic, as the JSON it holds,
// copied: an object, array, number or boolean as it came, a string's
// content (a dynamic written as a string of JSON), nil for null. It is
// what azkustodata's dynamic value holds for the same cell.
func (r Row) Dynamic(name string) ([]byte, error) {
	v, err := r.Raw(name)
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case 'n':
		return nil, nil
	case '"':
		b, err := unquote(v, nil)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		return b, nil
	}
	return append([]byte(nil), v...), nil
}

// DynamicInPlace is Dynamic without the copy where it can: an object,
// array, number or boolean is the row's own JSON text, valid only during
// the callback; a string's content is a copy.
func (r Row) DynamicInPlace(name string) ([]byte, error) {
	v, err := r.Raw(name)
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case 'n':
		return nil, nil
	case '"':
		return r.Dynamic(name)
	}
	return v, nil
}

func unquote(v jsontext.Value, dst []byte) ([]byte, error) {
	switch v.Kind() {
	case 'n':
		return dst, nil
	case '"':
		out, err := jsontext.AppendUnquote(dst, v)
		if err == nil {
			return out, nil
		}
		// Invalid UTF-8: encoding/json, and so the SDK, reads it as
		// U+FFFD where jsontext refuses it.
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, err
		}
		return append(dst, s...), nil
	}
	return nil, fmt.Errorf("a %v where a string belongs", v.Kind())
}

// ErrFormat is wrapped by every error about the answer's shape.
var ErrFormat = errors.New("not a Kusto v2 answer")

// Error is an error a cluster reported inside its answer, after the rows
// it had sent.
type Error struct {
	Code, Message string
}

func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// Read reads a v2 answer from r and calls fn with every row of every
// primary result, in order. It stops at fn's first error and returns it.
// An error the cluster reports at the end of a table or of the answer is
// returned as an *Error, after the rows before it were handed over.
//
// What it holds at a time is one row's JSON text and the reader's buffer
// (which grows to the longest value): bound the answer's bytes in r.
func Read(r io.Reader, fn func(Row) error) error {
	rd := reader{dec: jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))}
	return rd.read(fn)
}

type reader struct {
	dec *jsontext.Decoder
	// The open primary table: its id and columns; nil columns when none.
	table   int64
	columns []Column
	open    bool
	values  []jsontext.Value
	// started is set once the DataSetHeader is read.
	started bool
}

func (rd *reader) formatf(format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrFormat, rd.dec.InputOffset(), fmt.Sprintf(format, a...))
}

func (rd *reader) read(fn func(Row) error) error {
	if err := rd.delim('['); err != nil {
		return err
	}
	done := false
	for rd.dec.PeekKind() == '{' {
		if done {
			return rd.formatf("a frame after DataSetCompletion")
		}
		var err error
		done, err = rd.frame(fn)
		if err != nil {
			return err
		}
	}
	if err := rd.delim(']'); err != nil {
		return err
	}
	if !done {
		return rd.formatf("the answer ended without DataSetCompletion")
	}
	return nil
}

// delim reads the delimiter want.
func (rd *reader) delim(want jsontext.Kind) error {
	t, err := rd.dec.ReadToken()
	if err != nil {
		return rd.syntax(err)
	}
	if t.Kind() != want {
		return rd.formatf("%v where %v belongs", t.Kind(), want)
	}
	return nil
}

func (rd *reader) syntax(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the answer ended early", ErrFormat)
	}
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return fmt.Errorf("%w: %w", ErrFormat, se)
	}
	return err // the transport's: a limit, a deadline, a reset
}

// name reads an object member's name, or reports the object's end.
func (rd *reader) name() (string, bool, error) {
	if rd.dec.PeekKind() == '}' {
		_, err := rd.dec.ReadToken()
		return "", false, rd.syntax(err)
	}
	t, err := rd.dec.ReadToken()
	if err != nil {
		return "", false, rd.syntax(err)
	}
	return t.String(), true, nil
}

// Frames whose members fleetplane reads. Kusto writes FrameType first,
// which the SDK relies on too; the other members may come in any order,
// Rows last where there are rows.
const (
	dataSetHeader     = "DataSetHeader"
	dataTable         = "DataTable"
	tableHeader       = "TableHeader"
	tableFragment     = "TableFragment"
	tableProgress     = "TableProgress"
	tableCompletion   = "TableCompletion"
	dataSetCompletion = "DataSetCompletion"
)

// frame reads one frame; done is true for DataSetCompletion.
func (rd *reader) frame(fn func(Row) error) (done bool, err error) {
	if err := rd.delim('{'); err != nil {
		return false, err
	}
	n, ok, err := rd.name()
	if err != nil {
		return false, err
	}
	if !ok || n != "FrameType" {
		return false, rd.formatf("a frame whose first member is not FrameType")
	}
	t, err := rd.dec.ReadToken()
	if err != nil {
		return false, rd.syntax(err)
	}
	if t.Kind() != '"' {
		return false, rd.formatf("FrameType is a %v", t.Kind())
	}
	kind := t.String()
	var f frameFields
	switch kind {
	case dataSetHeader, dataTable, tableHeader, tableFragment, tableProgress, tableCompletion, dataSetCompletion:
	default:
		return false, rd.formatf("unknown frame type %q", observe.Bound(kind))
	}
	// The header comes first and once: what it says is how the rest is
	// read.
	if (kind == dataSetHeader) == rd.started {
		where := "starts"
		if rd.started {
			where = "goes on"
		}
		return false, rd.formatf("a %s frame where the answer %s", kind, where)
	}
	rd.started = true
	for {
		n, ok, err := rd.name()
		if err != nil {
			return false, err
		}
		if !ok {
			break
		}
		if err := rd.member(kind, n, &f, fn); err != nil {
			return false, err
		}
	}
	return kind == dataSetCompletion, rd.finish(kind, &f)
}

// frameFields are the members of a frame that matter once it is read.
type frameFields struct {
	tableID              int64
	hasTableID           bool
	tableKind            string
	fragmentType         string
	version, placement   string
	progressive, fragmnt bool
	hasErrors, cancelled bool
	err                  *Error // the first the frame reports
}

func (rd *reader) member(kind, name string, f *frameFields, fn func(Row) error) error {
	switch {
	case name == "TableId":
		t, err := rd.dec.ReadToken()
		if err != nil {
			return rd.syntax(err)
		}
		if t.Kind() != '0' {
			return rd.formatf("TableId is a %v", t.Kind())
		}
		f.tableID, f.hasTableID = t.Int(), true
	case f.text(name) != nil:
		t, err := rd.token(name, func(k jsontext.Kind) bool { return k == '"' })
		if err != nil {
			return err
		}
		*f.text(name) = t.String()
	case f.flag(name) != nil:
		t, err := rd.token(name, func(k jsontext.Kind) bool { return k == 't' || k == 'f' })
		if err != nil {
			return err
		}
		*f.flag(name) = t.Bool()
	case name == "Columns" && kind == tableHeader:
		return rd.readColumns()
	case name == "Rows" && kind == tableFragment:
		return rd.rows(f, fn)
	case name == "OneApiErrors":
		return rd.oneAPIErrors(f)
	default:
		// The rows of the QueryProperties and QueryCompletionInformation
		// tables, and every member fleetplane does not read.
		if err := rd.dec.SkipValue(); err != nil {
			return rd.syntax(err)
		}
	}
	return nil
}

// token reads a member's value, a single token of a kind ok accepts.
func (rd *reader) token(name string, ok func(jsontext.Kind) bool) (jsontext.Token, error) {
	t, err := rd.dec.ReadToken()
	if err != nil {
		return t, rd.syntax(err)
	}
	if !ok(t.Kind()) {
		return t, rd.formatf("%s is a %v", name, t.Kind())
	}
	return t, nil
}

// text is where the string member name goes, nil for another member.
func (f *frameFields) text(name string) *string {
	switch name {
	case "TableKind":
		return &f.tableKind
	case "TableFragmentType":
		return &f.fragmentType
	case "Version":
		return &f.version
	case "ErrorReportingPlacement":
		return &f.placement
	}
	return nil
}

// flag is where the boolean member name goes, nil for another member.
func (f *frameFields) flag(name string) *bool {
	switch name {
	case "IsProgressive":
		return &f.progressive
	case "IsFragmented":
		return &f.fragmnt
	case "HasErrors":
		return &f.hasErrors
	case "Cancelled":
		return &f.cancelled
	}
	return nil
}

// readColumns reads a TableHeader's columns; the header opens its table.
func (rd *reader) readColumns() error {
	if err := rd.delim('['); err != nil {
		return err
	}
	var cols []Column
	for rd.dec.PeekKind() == '{' {
		if err := rd.delim('{'); err != nil {
			return err
		}
		var c Column
		for {
			n, ok, err := rd.name()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if n != "ColumnName" && n != "ColumnType" {
				if err := rd.dec.SkipValue(); err != nil {
					return rd.syntax(err)
				}
				continue
			}
			t, err := rd.dec.ReadToken()
			if err != nil {
				return rd.syntax(err)
			}
			if t.Kind() != '"' {
				return rd.formatf("%s is a %v", n, t.Kind())
			}
			if n == "ColumnName" {
				c.Name = t.String()
			} else {
				c.Type = t.String()
			}
		}
		cols = append(cols, c)
	}
	if err := rd.delim(']'); err != nil {
		return err
	}
	if cols == nil {
		cols = []Column{}
	}
	rd.columns = cols
	return nil
}

// rows reads a fragment's rows and hands each to fn.
func (rd *reader) rows(f *frameFields, fn func(Row) error) error {
	if !rd.open || (f.hasTableID && f.tableID != rd.table) {
		return rd.formatf("rows of a table that is not open")
	}
	if f.fragmentType != "" && f.fragmentType != "DataAppend" {
		// DataReplace belongs to progressive answers, which are never
		// asked for: rows handed over cannot be taken back.
		return rd.formatf("a %s fragment", observe.Bound(f.fragmentType))
	}
	if err := rd.delim('['); err != nil {
		return err
	}
	for rd.dec.PeekKind() == '[' {
		row, err := rd.dec.ReadValue()
		if err != nil {
			return rd.syntax(err)
		}
		rd.values = split(row, rd.values[:0])
		if len(rd.values) != len(rd.columns) {
			return rd.formatf("a row of %d values in a table of %d columns", len(rd.values), len(rd.columns))
		}
		if err := fn(Row{Columns: rd.columns, Values: rd.values}); err != nil {
			return err
		}
	}
	return rd.delim(']')
}

// oneAPIErrors reads the errors of a TableCompletion or DataSetCompletion
// and keeps the first, its code and message bounded: the rest are read
// past, so that an answer of many errors costs no more than its bytes.
func (rd *reader) oneAPIErrors(f *frameFields) error {
	if rd.dec.PeekKind() == 'n' {
		_, err := rd.dec.ReadToken()
		return rd.syntax(err)
	}
	if err := rd.delim('['); err != nil {
		return err
	}
	for rd.dec.PeekKind() != ']' {
		v, err := rd.dec.ReadValue()
		if err != nil {
			return rd.syntax(err)
		}
		if f.err == nil {
			e := oneAPIError(v)
			f.err = &e
		}
	}
	return rd.delim(']')
}

// oneAPIError reads {"error": {"code", "message", "@message"}}: the
// detailed @message when there is one. Errors are rare: encoding/json is
// fast enough here.
func oneAPIError(v jsontext.Value) Error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Detail  string `json:"@message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(v, &e)
	out := Error{Code: observe.Bound(e.Error.Code), Message: observe.Bound(e.Error.Detail)}
	if out.Message == "" {
		out.Message = observe.Bound(e.Error.Message)
	}
	if out.Message == "" {
		out.Message = "the cluster reported an error without a message"
	}
	return out
}

// finish checks a frame once all its members are read.
func (rd *reader) finish(kind string, f *frameFields) error {
	switch kind {
	case dataSetHeader:
		if f.version != "" && !strings.HasPrefix(f.version, "v2.") {
			return rd.formatf("version %q", observe.Bound(f.version))
		}
		if f.progressive || !f.fragmnt || f.placement != "EndOfTable" {
			return rd.formatf("an answer that is progressive, unfragmented or reports errors among its rows, none of which was asked for")
		}
	case tableHeader:
		if rd.open {
			return rd.formatf("a table opened while another is open")
		}
		if f.tableKind != "PrimaryResult" {
			// Only primary results are fragmented; anything else is
			// read as nothing.
			rd.columns = nil
			return rd.formatf("a fragmented %s table", observe.Bound(f.tableKind))
		}
		if rd.columns == nil {
			return rd.formatf("a table without columns")
		}
		rd.table, rd.open = f.tableID, true
	case dataTable:
		if f.tableKind == "PrimaryResult" {
			// Asked fragmented, a primary result never comes whole;
			// its rows were not handed over.
			return rd.formatf("a primary result as a DataTable")
		}
	case tableCompletion:
		if !rd.open || (f.hasTableID && f.tableID != rd.table) {
			return rd.formatf("the completion of a table that is not open")
		}
		rd.open, rd.columns = false, nil
		if f.err != nil {
			return f.err
		}
	case dataSetCompletion:
		if rd.open {
			return rd.formatf("the answer completed inside a table")
		}
		if f.err != nil {
			return f.err
		}
		if f.hasErrors {
			return &Error{Message: "the cluster reported errors without saying which"}
		}
		if f.cancelled {
			return &Error{Message: "the query was cancelled"}
		}
	}
	return nil
}

// split returns the elements of a JSON array that is known valid, as
// slices of it, appended to out.
func split(v jsontext.Value, out []jsontext.Value) []jsontext.Value {
	depth, start := 0, -1
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			if depth == 1 && start < 0 {
				start = i
			}
			i = closingQuote(v, i)
		case '[', '{':
			if depth == 1 && start < 0 {
				start = i
			}
			depth++
		case ']', '}':
			depth--
			if depth == 0 && start >= 0 {
				out = append(out, trimSpace(v[start:i]))
			}
		case ',':
			if depth == 1 {
				out = append(out, trimSpace(v[start:i]))
				start = -1
			}
		case ' ', '\t', '\n', '\r':
		default:
			if depth == 1 && start < 0 {
				start = i
			}
		}
	}
	return out
}

// closingQuote is the index of the quote that ends the string opening at
// v[open]: the next quote not escaped, found with IndexByte since strings
// are most of what rows hold.
func closingQuote(v jsontext.Value, open int) int {
	from := open + 1
	for {
		k := bytes.IndexByte(v[from:], '"')
		if k < 0 {
			return len(v)
		}
		q := from + k
		backslashes := 0
		for b := q - 1; b > open && v[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q
		}
		from = q + 1
	}
}

func trimSpace(v jsontext.Value) jsontext.Value {
	for len(v) > 0 {
		switch v[len(v)-1] {
		case ' ', '\t', '\n', '\r':
			v = v[:len(v)-1]
			continue
		}
		break
	}
	return v
}
