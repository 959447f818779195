package kusto

import (
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/fleetplane/fleetplane/provider/httplimit"
)

// Kusto compresses its answers, and the SDK decompresses what it is
// handed. A limit on the compressed bytes bounds nothing: an answer of a
// few kilobytes of gzip can expand a thousandfold. So the client
// decompresses answers itself, before the SDK sees them, and the call's
// limit counts the bytes decompressed (the compressed ones too). The
// decompressors are pooled: each holds 40 KiB of window and buffers,
// which a call that reads a one-row digest would otherwise allocate anew.

var (
	gzipReaders  sync.Pool // *gzip.Reader
	flateReaders sync.Pool // io.ReadCloser that is a flate.Resetter
)

// decompressed is resp with its body decompressed and limited to n bytes,
// and the headers an uncompressed answer has.
func decompressed(resp *http.Response, n int64) (*http.Response, error) {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc == "" || enc == "identity" {
		return httplimit.Response(resp, n)
	}
	raw, err := httplimit.Response(resp, n)
	if err != nil {
		return nil, err
	}
	body, err := decoder(enc, raw.Body)
	if err != nil {
		_ = raw.Body.Close()
		return nil, err
	}
	resp.Body = httplimit.Body(body, n)
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
	return resp, nil
}

// decoder reads r decompressed with a pooled reader, returned to its pool
// when closed; closing it closes r.
func decoder(enc string, r io.ReadCloser) (io.ReadCloser, error) {
	switch enc {
	case "gzip", "x-gzip":
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(r)
		} else {
			err = zr.Reset(r)
		}
		if err != nil {
			return nil, fmt.Errorf("the answer is not gzip: %w", err)
		}
		return &pooled{Reader: zr, src: r, put: func() { gzipReaders.Put(zr) }}, nil
	case "deflate":
		fr, _ := flateReaders.Get().(io.ReadCloser)
		if rs, ok := fr.(flate.Resetter); ok {
			if err := rs.Reset(r, nil); err != nil {
				return nil, err
			}
		} else {
			fr = flate.NewReader(r)
		}
		return &pooled{Reader: fr, src: r, put: func() { flateReaders.Put(fr) }}, nil
	}
	return nil, fmt.Errorf("the answer's Content-Encoding %q is not one Kusto uses", enc)
}

// pooled is a decompressing body whose reader goes back to its pool on
// Close, once.
type pooled struct {
	io.Reader
	src    io.ReadCloser
	put    func()
	closed bool
}

func (p *pooled) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	err := p.src.Close()
	// The reader may still hold src; it is reset before its next use,
	// and this body reads no more of it.
	p.put()
	p.Reader = eof{}
	return err
}

type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }
