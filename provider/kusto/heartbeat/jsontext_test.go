package heartbeat

// The jsontext candidate of docs/decisions/0007-heartbeat-schema-decoder.md,
// kept beside the benchmark so the decision can be measured again (when
// encoding/json/jsontext leaves GOEXPERIMENT, for one): the scanner's
// rules as a token walk on jsontext.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// jsontextDecodeInto is decodeSchemaInto with every list of names a slice of
// *arena, which grows as needed: a caller decoding many heartbeats reuses
// one arena for all of them. Names without escapes, which every valid
// Kusto name is, are slices of s rather than copies.
func jsontextDecodeInto(s string, arena *[]string) ([]DatabaseSchema, error) {
	d := jsontextDecoders.Get().(*jsontextDecoder)
	d.s, d.arena = s, (*arena)[:0]
	d.r.Reset(s)
	d.dec.Reset(&d.r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	defer func() {
		*arena = d.arena
		d.s, d.arena = "", nil
		jsontextDecoders.Put(d)
	}()
	out, err := d.databases()
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// A jsontextDecoder is pooled: its jsontext buffer is the one allocation a
// decode would otherwise make in proportion to the row.
type jsontextDecoder struct {
	s     string
	r     strings.Reader
	dec   jsontext.Decoder
	arena []string
}

var jsontextDecoders = sync.Pool{New: func() any { return &jsontextDecoder{} }}

func (d *jsontextDecoder) errorf(format string, a ...any) error {
	return fmt.Errorf("offset %d: %s", d.dec.InputOffset(), fmt.Sprintf(format, a...))
}

// open reads the start of a list or an object; null is none, reported as
// false.
func (d *jsontextDecoder) open(kind jsontext.Kind, what string) (bool, error) {
	tok, err := d.dec.ReadToken()
	switch {
	case err != nil:
		return false, err
	case tok.Kind() == 'n':
		return false, nil
	case tok.Kind() != kind:
		return false, d.errorf("expected %s", what)
	}
	return true, nil
}

// each calls item until the list or object being read closes, then reads
// the close.
func (d *jsontextDecoder) each(closing jsontext.Kind, item func() error) error {
	for d.dec.PeekKind() != closing {
		if err := item(); err != nil {
			return err
		}
	}
	_, err := d.dec.ReadToken()
	return err
}

func (d *jsontextDecoder) databases() ([]DatabaseSchema, error) {
	isList, err := d.open('[', "a list")
	if !isList {
		return nil, err
	}
	out := []DatabaseSchema{}
	return out, d.each(']', func() error {
		if len(out) == MaxDatabases {
			return errTooManyDatabases
		}
		db, err := d.database()
		out = append(out, db)
		return err
	})
}

// database decodes one database object; null is the zero database.
func (d *jsontextDecoder) database() (DatabaseSchema, error) {
	var db DatabaseSchema
	isObject, err := d.open('{', "a database object")
	if !isObject {
		return db, err
	}
	return db, d.each('}', func() error {
		key, err := d.dec.ReadToken()
		if err != nil {
			return err
		}
		switch k := key.String(); {
		case strings.EqualFold(k, "database"):
			db.Database, err = d.str()
			return err
		case strings.EqualFold(k, "tables"):
			db.Tables, err = d.names()
		case strings.EqualFold(k, "views"):
			db.Views, err = d.names()
		default:
			err = d.dec.SkipValue()
		}
		return err
	})
}

// names decodes a list of strings; null elements are empty strings, a
// null list is nil.
func (d *jsontextDecoder) names() ([]string, error) {
	isList, err := d.open('[', "a list")
	if !isList {
		return nil, err
	}
	// Names gather at the end of the arena; the list is that stretch, its
	// capacity capped so that nothing appended to it can reach the next.
	start := len(d.arena)
	err = d.each(']', func() error {
		n, err := d.str()
		// Past the limit names are checked, not kept: one more than the
		// limit is enough for the database to be refused.
		if err == nil && len(d.arena)-start <= MaxTablesPerDatabase {
			d.arena = append(d.arena, n)
		}
		return err
	})
	if len(d.arena) == start {
		return []string{}, err
	}
	return d.arena[start:len(d.arena):len(d.arena)], err
}

// str reads a string; null is "".
func (d *jsontextDecoder) str() (string, error) {
	v, err := d.dec.ReadValue()
	switch {
	case err != nil:
		return "", err
	case v.Kind() == 'n':
		return "", nil
	case v.Kind() != '"':
		return "", d.errorf("expected a string")
	}
	// Without escapes or bytes past ASCII the string is a slice of the
	// input; otherwise encoding/json unquotes it, replacing invalid UTF-8
	// as it does (jsontext passes such bytes on as they came).
	end := int(d.dec.InputOffset())
	if raw := d.s[end-len(v) : end]; !strings.ContainsRune(raw, '\\') && jsontextPlain(raw) {
		return raw[1 : len(raw)-1], nil
	}
	var out string
	if err := json.Unmarshal(v, &out); err != nil {
		return "", d.errorf("%v", err)
	}
	return out, nil
}

// jsontextPlain reports whether s is printable ASCII.
func jsontextPlain(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// end checks that nothing follows the list.
func (d *jsontextDecoder) end() error {
	_, err := d.dec.ReadToken()
	switch {
	case err == nil:
		return d.errorf("unexpected data after the list")
	case errors.Is(err, io.EOF):
		return nil
	}
	return err
}

func jsontextDecode(s string) ([]DatabaseSchema, error) {
	var arena []string
	return jsontextDecodeInto(s, &arena)
}
