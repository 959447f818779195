package kusto

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	kerrors "github.com/Azure/azure-kusto-go/azkustodata/errors"

	"github.com/fleetplane/fleetplane/internal/observe"
	"github.com/fleetplane/fleetplane/provider/kusto/frames"
)

// Class tells callers what kind of failure a Kusto error is.
type Class int

// Failure classes.
const (
	// Other is anything not classified below.
	Other Class = iota
	// Forbidden: the identity lacks rights (HTTP 401 or 403).
	Forbidden
	// NotFound: a database, table or function does not exist.
	NotFound
	// Throttled: still throttled after every retry (HTTP 429).
	Throttled
	// Transient: server errors, timeouts and dropped connections that
	// outlasted the retries.
	Transient
	// Invalid: the request was refused as wrong (HTTP 400).
	Invalid
)

func (c Class) String() string {
	return [...]string{"Other", "Forbidden", "NotFound", "Throttled", "Transient", "Invalid"}[c]
}

// Error is a classified Kusto failure. Its message names the endpoint and
// carries Kusto's own explanation, bounded, without the command text the
// SDK would otherwise repeat (a script can be a megabyte).
type Error struct {
	Class    Class
	Endpoint string
	Status   int
	Code     string
	Message  string
	err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kusto %s", e.Endpoint)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.err }

// Is reports an answer cut at its limit, and a connection refused to
// credentials None, as such: the SDK wraps the transport's errors in
// words only.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrTooLarge, ErrPlainHTTPRefused:
		return strings.Contains(e.Message, target.Error())
	}
	return false
}

// ClassOf returns the class of err, Other when it is no Kusto error.
func ClassOf(err error) Class {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Class
	}
	return Other
}

// notFoundPhrases are how Kusto words a missing entity when the error code
// is generic.
var notFoundPhrases = []string{"does not refer to any known", "was not found", "does not exist", "could not be found"}

func classify(endpoint string, err error) *Error {
	e := &Error{Endpoint: endpoint, err: err}
	var he *kerrors.HttpError
	var fe *frames.Error
	switch {
	case errors.As(err, &he):
		e.Status = he.StatusCode
		e.Code, e.Message = restError(&he.KustoError)
		switch {
		case he.StatusCode == http.StatusForbidden || he.StatusCode == http.StatusUnauthorized:
			e.Class = Forbidden
		case he.StatusCode == http.StatusTooManyRequests:
			e.Class = Throttled
		case he.StatusCode >= 500:
			e.Class = Transient
		case strings.Contains(e.Code, "NotFound") || containsAny(e.Message, notFoundPhrases):
			e.Class = NotFound
		default:
			e.Class = Invalid
		}
	case errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Message = Transient, "timed out"
	case errors.As(err, &fe):
		// An error the cluster reported after the rows it had sent.
		e.Code, e.Message = observe.Bound(Redact(fe.Code)), observe.Bound(Redact(fe.Message))
		if strings.Contains(e.Code, "NotFound") || containsAny(e.Message, notFoundPhrases) {
			e.Class = NotFound
		}
	default:
		e.Message = observe.Bound(Redact(err.Error()))
		var ke *kerrors.Error
		if errors.As(err, &ke) && ke.Kind == kerrors.KHTTPError {
			e.Class = Transient
			// The SDK reports a refused auth-metadata request only in
			// words: "error 429 Too Many Requests when querying endpoint".
			if m := metadataStatus.FindStringSubmatch(e.Message); m != nil {
				e.Status, _ = strconv.Atoi(m[1])
				switch {
				case e.Status == http.StatusTooManyRequests:
					e.Class = Throttled
				case e.Status == http.StatusForbidden || e.Status == http.StatusUnauthorized:
					e.Class = Forbidden
				case e.Status < 500:
					e.Class = Invalid
				}
			}
		}
	}
	return e
}

// metadataStatus finds the HTTP status in the SDK's error for a failed
// auth-metadata request.
var metadataStatus = regexp.MustCompile(`\berror ([1-5][0-9][0-9]) [^ ]+.* when querying endpoint`)

// restError reads Kusto's JSON error body: its code and the detailed
// @message, else the message.
func restError(ke *kerrors.Error) (code, msg string) {
	m := ke.UnmarshalREST()
	inner, _ := m["error"].(map[string]any)
	code, _ = inner["code"].(string)
	if s, ok := inner["@message"].(string); ok && s != "" {
		msg = s
	} else if s, ok := inner["message"].(string); ok {
		msg = s
	}
	if msg == "" && m == nil {
		// A body that is no Kusto error is not quoted: whatever answered
		// may have echoed a request header or a token into it.
		body := ke.Error()
		if i := strings.Index(body, "):\n"); i >= 0 {
			body = body[i+3:]
		}
		msg = fmt.Sprintf("(an error body of %d bytes that is not Kusto's JSON, not quoted)", len(body))
	}
	return observe.Bound(Redact(code)), observe.Bound(Redact(msg))
}

// secretLike matches what a message must never carry on: JSON web tokens,
// bearer and basic credentials, SAS signatures.
var secretLike = regexp.MustCompile(`(?i)(eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}|\bsig=[^&\s"']+)`)

// Redact replaces token-like text in a message from a remote system.
func Redact(s string) string {
	return secretLike.ReplaceAllString(s, "[redacted]")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
