package kusto

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/fleetplane/fleetplane/provider/kusto/frames"
	"github.com/fleetplane/fleetplane/provider/kusto/kql"
	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
)

func server(t *testing.T) *kustoserver.Server {
	t.Helper()
	s := kustoserver.New("Metrics")
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func client(t *testing.T, s *kustoserver.Server, o Options) *Client {
	t.Helper()
	if o.Backoff == 0 {
		o.Backoff = 10 * time.Millisecond
	}
	c, err := New(s.URL, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func requests(s *kustoserver.Server, text string) int {
	n := 0
	for _, c := range s.Commands() {
		if c.Text == text {
			n++
		}
	}
	return n
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	s := server(t)
	c := client(t, s, Options{})
	if err := s.InjectFault(kustoserver.Fault{Match: "^.show tables$", Status: 429, RetryAfter: time.Second, Times: 1}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Mgmt(context.Background(), "Metrics", kql.ShowTables); err != nil {
		t.Fatalf("a throttled request should succeed on retry: %v", err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %s; Retry-After asked for 1s", waited)
	}
	if n := requests(s, kql.ShowTables); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

func TestServerErrorsAreRetriedThenClassified(t *testing.T) {
	s := server(t)
	if err := s.InjectFault(kustoserver.Fault{Match: "^.show tables$", Status: 503, Times: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, s, Options{Attempts: 4}).Mgmt(context.Background(), "Metrics", kql.ShowTables); err != nil {
		t.Fatalf("three 503s then success within four attempts: %v", err)
	}

	s.ClearFaults()
	if err := s.InjectFault(kustoserver.Fault{Match: "^.show functions$", Status: 500}); err != nil {
		t.Fatal(err)
	}
	_, err := client(t, s, Options{Attempts: 2}).Mgmt(context.Background(), "Metrics", kql.ShowFunctions)
	if ClassOf(err) != Transient {
		t.Fatalf("persistent 500 = %v (class %s), want Transient", err, ClassOf(err))
	}
	if n := requests(s, kql.ShowFunctions); n != 2 {
		t.Errorf("server saw %d requests, want 2 attempts", n)
	}
}

func TestClassification(t *testing.T) {
	s := server(t)
	c := client(t, s, Options{Attempts: 3})
	ctx := context.Background()

	if err := s.InjectFault(kustoserver.Fault{Match: "^.show entity_groups$", Status: 403}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Mgmt(ctx, "Metrics", kql.ShowEntityGroups)
	if ClassOf(err) != Forbidden {
		t.Errorf("403 = %v, want Forbidden", err)
	}
	if n := requests(s, kql.ShowEntityGroups); n != 1 {
		t.Errorf("a refusal must not be retried: %d requests", n)
	}

	_, err = c.Mgmt(ctx, "Nope", kql.ShowTables)
	if ClassOf(err) != NotFound || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("missing database = %v, want NotFound naming it", err)
	}
	q, _ := kql.CallFunction("GetBlockedPartitions")
	err = c.Query(ctx, "Metrics", q, func(frames.Row) error { return nil })
	if ClassOf(err) != NotFound {
		t.Errorf("missing function = %v, want NotFound", err)
	}

	huge := ".frobnicate " + strings.Repeat("x", 1<<20)
	_, err = c.Mgmt(ctx, "Metrics", huge)
	var ke *Error
	if !errors.As(err, &ke) || ke.Class != Invalid || ke.Status != 400 {
		t.Fatalf("bad command = %v, want Invalid 400", err)
	}
	if len(err.Error()) > 1200 {
		t.Errorf("error message is %d bytes: the command text must not be repeated", len(err.Error()))
	}
}

func TestDeadline(t *testing.T) {
	s := server(t)
	if err := s.InjectFault(kustoserver.Fault{Delay: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, Options{Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := c.Mgmt(context.Background(), "Metrics", kql.ShowTables)
	if ClassOf(err) != Transient {
		t.Errorf("slow server = %v, want Transient", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %s; the timeout is 300ms", d)
	}
}

func TestQueryStreamsRows(t *testing.T) {
	s := server(t)
	for _, cmd := range []string{
		".create-merge table ['Blocked'] (['ClusterEndpoint']:string)",
		".ingest inline into table ['Blocked'] <| https://a",
		".ingest inline into table ['Blocked'] <| https://b",
	} {
		if err := s.Exec("Metrics", cmd); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := client(t, s, Options{}).Query(context.Background(), "Metrics", "['Blocked']", func(r frames.Row) error {
		v, err := r.String("ClusterEndpoint")
		got = append(got, v)
		return err
	})
	if err != nil || strings.Join(got, ",") != "https://a,https://b" {
		t.Errorf("rows = %v, %v", got, err)
	}
}

type fakeCred struct{}

func (fakeCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "t", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestCredentialsAndSchemes(t *testing.T) {
	if _, err := New("https://hub.kusto.windows.net", nil, Options{}); !errors.Is(err, kql.ErrInvalidEndpoint) {
		t.Errorf("https without credentials = %v, want refused", err)
	}
	if _, err := New("http://127.0.0.1:8080", fakeCred{}, Options{}); !errors.Is(err, kql.ErrInvalidEndpoint) {
		t.Errorf("http with credentials = %v, want refused", err)
	}
	if _, err := New("https://hub.kusto.windows.net", fakeCred{}, Options{}); err != nil {
		t.Errorf("https with credentials: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	date := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	for v, want := range map[string]time.Duration{
		"3": 3 * time.Second, " 7 ": 7 * time.Second, "0": 0,
		// Too long to wait is bounded; the transport's backoff cap then
		// applies on top.
		"99999999999999999": maxRetryAfter, "86400": maxRetryAfter,
		// An HTTP date, RFC 9110's other form.
		date: 20 * time.Second, "Wed, 21 Oct 2015 07:28:00 GMT": 0,
	} {
		got, ok := retryAfter(v)
		if !ok || got > want || got < want-2*time.Second {
			t.Errorf("retryAfter(%q) = %s, %v; want about %s", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "soon", "1.5"} {
		if _, ok := retryAfter(v); ok {
			t.Errorf("retryAfter(%q) accepted", v)
		}
	}
}

func TestRetryAfterPastTheDeadlineAnswersAtOnce(t *testing.T) {
	s := server(t)
	if err := s.InjectFault(kustoserver.Fault{Match: "^.show tables$", Status: 429, RetryAfter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, Options{Timeout: 5 * time.Second, MaxBackoff: time.Minute})
	start := time.Now()
	_, err := c.Mgmt(context.Background(), "Metrics", kql.ShowTables)
	if ClassOf(err) != Throttled {
		t.Errorf("err = %v, want Throttled", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("waited %s for a Retry-After that outlasts the deadline", waited)
	}
}

func TestThrottledAuthMetadataIsThrottling(t *testing.T) {
	s := server(t) // a new port: the SDK caches metadata per endpoint
	if err := s.InjectFault(kustoserver.Fault{Match: "auth/metadata", Status: 429}); err != nil {
		t.Fatal(err)
	}
	_, err := client(t, s, Options{Attempts: 2}).Mgmt(context.Background(), "Metrics", kql.ShowTables)
	if ClassOf(err) != Throttled {
		t.Errorf("a throttled metadata request = %v (class %s), want Throttled", err, ClassOf(err))
	}
}

// TestErrorsQuoteNoSecrets: whatever answers at an endpoint may echo a
// request header or a token into its error; none of it reaches status.
func TestErrorsQuoteNoSecrets(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2t1c3RvIn0.c2lnbmF0dXJlLXZhbHVl"
	for name, body := range map[string]struct {
		contentType, text string
	}{
		"plain text echoing the request": {"text/plain", "denied; you sent Authorization: Bearer " + jwt},
		"Kusto JSON with a token in it":  {"application/json", `{"error":{"code":"Forbidden","message":"token ` + jwt + ` is not valid; sig=abcdef0123"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					w.WriteHeader(http.StatusNotFound)
					return
				}
				w.Header().Set("Content-Type", body.contentType)
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(body.text))
			}))
			defer srv.Close()
			c, err := New(srv.URL, nil, Options{Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Mgmt(context.Background(), "Metrics", kql.ShowTables)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, secret := range []string{jwt, "eyJhbGciOiJSUzI1NiJ9", "abcdef0123"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error quotes a secret: %v", err)
				}
			}
		})
	}
}

// An answer that starts well and then fails quotes no secret either: a
// cluster's error after the rows, and frames that are no Kusto answer.
func TestQueryErrorsQuoteNoSecrets(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2t1c3RvIn0.c2lnbmF0dXJlLXZhbHVl"
	const header = `[{"FrameType":"DataSetHeader","IsProgressive":false,"Version":"v2.0","IsFragmented":true,"ErrorReportingPlacement":"EndOfTable"}` + "\n"
	for name, text := range map[string]string{
		"the cluster's error": header + `,{"FrameType":"DataSetCompletion","HasErrors":true,"Cancelled":false,"OneApiErrors":[{"error":{"code":"Internal","message":"token ` + jwt + ` refused"}}]}` + "\n]\n",
		"an unknown frame":    header + `,{"FrameType":"Bearer ` + jwt + `"}` + "\n]\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					// No auth metadata, as for the local emulators.
					w.WriteHeader(http.StatusNotFound)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(text))
			}))
			defer srv.Close()
			c, err := New(srv.URL, nil, Options{Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Query(context.Background(), "Metrics", "T", func(frames.Row) error { return nil })
			if err == nil {
				t.Fatal("want an error")
			}
			if !errors.Is(err, frames.ErrFormat) && ClassOf(err) != Other {
				t.Fatalf("the answer was not read: %v", err)
			}
			if !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "frame type") {
				t.Fatalf("the error is not the answer's: %v", err)
			}
			if strings.Contains(err.Error(), "eyJhbGciOiJSUzI1NiJ9") {
				t.Errorf("error quotes a secret: %v", err)
			}
		})
	}
}
