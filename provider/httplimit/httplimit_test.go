package httplimit

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClient(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := map[string]int{"/small": 10, "/exact": 100, "/large": 1000}[r.URL.Path]
		if r.URL.Query().Get("length") == "" {
			w.Header().Set("Transfer-Encoding", "chunked")
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	}))
	t.Cleanup(s.Close)
	c := Client{HTTP: s.Client(), Max: 100}
	for path, want := range map[string]string{
		"/small": "", "/exact": "", "/large": "more than 100 bytes", "/large?length=1": "1000 bytes, the limit for this call is 100",
	} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		resp, err := c.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
		if (want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), want) || !errors.Is(err, ErrTooLarge))) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
