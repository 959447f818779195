package kusto

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fleetplane/fleetplane/test/harness/race"
)

// hugeDatabases answers every management command as a cluster with n
// databases would answer .show databases, streamed (no length).
func hugeDatabases(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/rest/auth/metadata" {
			fmt.Fprint(w, `{"AzureAD":{"LoginEndpoint":"https://login.microsoftonline.com","KustoServiceResourceId":"https://kusto.kusto.windows.net"}}`)
			return
		}
		bw := bufio.NewWriter(w)
		fmt.Fprint(bw, `{"Tables":[{"TableName":"Table_0","Columns":[{"ColumnName":"DatabaseName","DataType":"String","ColumnType":"string"}],"Rows":[`)
		for i := range n {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			fmt.Fprintf(bw, `["db%07d"]`, i)
		}
		fmt.Fprint(bw, `]}]}`)
		_ = bw.Flush()
	}
}

// TestAnswersAreBounded: a cluster answering .show databases with two
// million rows (22 MiB) made the shared provider allocate 2.8 GiB. The
// answer is now cut at the call's limit while it is read.
func TestAnswersAreBounded(t *testing.T) {
	s := httptest.NewServer(hugeDatabases(2_000_000))
	t.Cleanup(s.Close)
	c, err := New(s.URL, nil, Options{Attempts: 1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for name, ctx := range map[string]context.Context{
		"a listing, at its own limit":  WithLimit(context.Background(), MaxListBytes),
		"any command, at the client's": context.Background(),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := c.Mgmt(ctx, "", ".show databases")
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			if limit := limitOf(ctx); alloc > race.AllocScale*(16*uint64(limit)+16<<20) {
				t.Errorf("allocated %d MiB for an answer cut at %d MiB", alloc>>20, limit>>20)
			}
			if took > race.TimeScale*5*time.Second {
				t.Errorf("took %s", took)
			}
			t.Logf("refused in %s after allocating %d MiB: %v", took.Round(time.Millisecond), alloc>>20, err)
		})
	}
	// A known length over the limit is refused before a byte is read.
	sized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/rest/auth/metadata" {
			hugeDatabases(0)(w, r)
			return
		}
		w.Header().Set("Content-Length", "5000000")
		_, _ = w.Write([]byte(strings.Repeat(" ", 10)))
	}))
	t.Cleanup(sized.Close)
	c2, err := New(sized.URL, nil, Options{Attempts: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Mgmt(WithLimit(context.Background(), MaxListBytes), "", ".show databases"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "5000000 bytes") {
		t.Errorf("err = %v", err)
	}
}

func limitOf(ctx context.Context) int64 {
	if l, ok := ctx.Value(limitKey{}).(int64); ok {
		return l
	}
	return DefaultMaxMgmtBytes
}

// TestPlainHTTPOnlyWhereAllowed: without credentials a client connects
// only to the networks the provider allows, never to a link-local
// address (where cloud metadata answers) or to the API server.
func TestPlainHTTPOnlyWhereAllowed(t *testing.T) {
	apiServer := netip.MustParseAddrPort("127.0.0.1:6443")
	p := PlainHTTP{Networks: Loopback().Networks, Denied: []netip.AddrPort{apiServer}}
	for addr, want := range map[string]string{
		"127.0.0.1:8080":      "",
		"[::1]:8080":          "",
		"127.0.0.1:6443":      "is the Kubernetes API server",
		"169.254.169.254:80":  "link-local",
		"[fe80::1]:80":        "link-local",
		"0.0.0.0:80":          "unspecified",
		"10.0.0.4:8080":       "outside the networks the provider allows plain http to (--plain-http-networks)",
		"[::ffff:10.0.0.4]:8": "outside the networks",
	} {
		err := p.allows(netip.MustParseAddrPort(addr))
		if (want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), want) || !errors.Is(err, ErrPlainHTTPRefused))) {
			t.Errorf("allows(%s) = %v, want %q", addr, err, want)
		}
	}
	// Through a client: the connection is refused, the call says why.
	for _, endpoint := range []string{"http://169.254.169.254", "http://10.0.0.4:8080"} {
		c, err := New(endpoint, nil, Options{Attempts: 1, Timeout: 5 * time.Second, PlainHTTP: &p})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Mgmt(context.Background(), "", ".show databases"); err == nil || !strings.Contains(err.Error(), "credentials None may not connect there") {
			t.Errorf("%s: %v", endpoint, err)
		}
	}
	none, err := ParseNetworks("")
	if err != nil || len(none) != 0 {
		t.Errorf("ParseNetworks(\"\") = %v, %v", none, err)
	}
	got, err := ParseNetworks("10.0.0.0/8, ::1, 192.168.1.7")
	if err != nil || fmt.Sprint(got) != "[10.0.0.0/8 ::1/128 192.168.1.7/32]" {
		t.Errorf("ParseNetworks = %v, %v", got, err)
	}
	if _, err := ParseNetworks("10.0.0.0/33"); err == nil {
		t.Error("a bad prefix parses")
	}
}

// TestCompressedAnswersAreBounded: the limit counted compressed bytes, and
// the SDK decompressed what passed it, so 64 KiB of gzip from a cluster (a
// tenant's endpoint, say) became a 64 MiB answer the shared provider read
// whole. The limit now counts what is decompressed.
func TestCompressedAnswersAreBounded(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	_, _ = zw.Write([]byte(`{"Tables":[{"TableName":"Table_0","Columns":[{"ColumnName":"DatabaseName","DataType":"String","ColumnType":"string"}],"Rows":[["`))
	_, _ = zw.Write(bytes.Repeat([]byte("a"), 64<<20))
	_, _ = zw.Write([]byte(`"]]}]}`))
	_ = zw.Close()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/rest/auth/metadata" {
			hugeDatabases(0)(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb.Bytes())
	}))
	t.Cleanup(s.Close)
	c, err := New(s.URL, nil, Options{Attempts: 1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = c.Mgmt(WithLimit(context.Background(), MaxListBytes), "", ".show databases")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a %d KiB gzip answer of 64 MiB: err = %v, want ErrTooLarge", bomb.Len()>>10, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*MaxListBytes+16<<20 {
		t.Errorf("allocated %d MiB for an answer cut at %d MiB", alloc>>20, MaxListBytes>>20)
	}
}

// TestCompressedAnswersRead: gzip and deflate answers read as plain ones,
// with their readers reused from call to call.
func TestCompressedAnswersRead(t *testing.T) {
	for _, enc := range []string{"gzip", "deflate", ""} {
		t.Run("encoding "+enc, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := `{"Tables":[{"TableName":"Table_0","Columns":[{"ColumnName":"DatabaseName","DataType":"String","ColumnType":"string"}],"Rows":[["a"],["b"]]}]}`
				if r.URL.Path == "/v1/rest/auth/metadata" {
					hugeDatabases(0)(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				var buf bytes.Buffer
				switch enc {
				case "gzip":
					zw := gzip.NewWriter(&buf)
					_, _ = zw.Write([]byte(body))
					_ = zw.Close()
				case "deflate":
					fw, _ := flate.NewWriter(&buf, flate.DefaultCompression)
					_, _ = fw.Write([]byte(body))
					_ = fw.Close()
				default:
					buf.WriteString(body)
				}
				if enc != "" {
					w.Header().Set("Content-Encoding", enc)
				}
				_, _ = w.Write(buf.Bytes())
			}))
			t.Cleanup(s.Close)
			c, err := New(s.URL, nil, Options{Attempts: 1, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				rows, err := c.Mgmt(context.Background(), "", ".show databases")
				if err != nil || len(rows) != 2 {
					t.Fatalf("rows %d, err %v", len(rows), err)
				}
			}
		})
	}
}

// TestPlainHTTPBeyondLoopback: a Kusto emulator on another address of the
// networks the provider allows (in a pod, or on the node's address) was
// refused by azkustodata, which trusts no plain-http host but loopback,
// whatever --plain-http-networks said. A client without credentials now
// reaches it; a client with credentials never sends a token there; a host
// name, which azkustodata would refuse on the first call, is refused with
// the reason when the client is made.
func TestPlainHTTPBeyondLoopback(t *testing.T) {
	s := httptest.NewServer(hugeDatabases(3))
	t.Cleanup(s.Close)
	// 198.51.100.0/24 is documentation space: no machine has it, so the
	// dial is redirected to the server on loopback, after the address
	// was checked.
	old := dial
	dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "198.51.100.7:") {
			addr = s.Listener.Addr().String()
		}
		return old(ctx, network, addr)
	}
	t.Cleanup(func() { dial = old })
	p := PlainHTTP{Networks: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}}
	c, err := New("http://198.51.100.7:8080", nil, Options{Attempts: 1, Timeout: 10 * time.Second, PlainHTTP: &p})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := c.Mgmt(context.Background(), "", ".show databases")
	if err != nil || len(rows) != 3 {
		t.Fatalf("a None client to an allowed address: %d rows, %v", len(rows), err)
	}
	// Outside the networks: refused as before, by the connection.
	c, err = New("http://198.51.101.7:8080", nil, Options{Attempts: 1, Timeout: 10 * time.Second, PlainHTTP: &p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mgmt(context.Background(), "", ".show databases"); !errors.Is(err, ErrPlainHTTPRefused) {
		t.Errorf("outside the networks: %v, want refused", err)
	}
	for endpoint, want := range map[string]string{
		"https://198.51.100.7":          "a token is never sent there",
		"https://[::ffff:198.51.100.9]": "a token is never sent there",
		"https://127.0.0.1:8443":        "",
		"https://hub.kusto.windows.net": "",
	} {
		_, err := New(endpoint, fakeCred{}, Options{})
		if (want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), want) || !errors.Is(err, ErrPlainHTTPRefused))) {
			t.Errorf("with credentials to %s: %v, want %q", endpoint, err, want)
		}
	}
	for endpoint, want := range map[string]string{
		"http://kusto-emulator.team-a.svc:8080": "is a host name",
		"http://localhost:8080":                 "",
		"http://[::1]:8080":                     "",
	} {
		_, err := New(endpoint, nil, Options{PlainHTTP: &p})
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("without credentials to %s: %v, want %q", endpoint, err, want)
		}
	}
}
