package kustoserver

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetplane/fleetplane/provider/kusto/kql"
)

// maxRequestBytes bounds a request body; Kusto's own limit is far larger,
// fleetplane's scripts stay under 1 MB.
const maxRequestBytes = 16 << 20

// Server is an in-memory Kusto cluster.
type Server struct {
	mu             sync.Mutex
	dbs            map[string]*database // by lower-case name: database names are case-insensitive
	log            []Command
	faults         []*Fault
	scriptCommands int
	// started is when the server was made: its one node's StartTime.
	started time.Time
	// served counts the bytes of response bodies, before compression.
	served atomic.Int64

	listener net.Listener
	srv      *http.Server
	// URL is the endpoint clients connect to, e.g. http://127.0.0.1:34567.
	URL string
}

// Command is one request the server received.
type Command struct {
	Time     time.Time `json:"time"`
	API      string    `json:"api"` // mgmt or query
	Database string    `json:"database"`
	Text     string    `json:"text"`
	Status   int       `json:"status"`
}

// Fault makes matching requests fail or slow down.
type Fault struct {
	// Match is a regular expression on the command text; empty matches all.
	Match string `json:"match,omitempty"`
	// Status to answer with: 429, 500, 503, 403 ...; 0 only delays.
	Status int `json:"status,omitempty"`
	// RetryAfter is sent with 429 and 503 answers.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// Delay before answering; a client deadline cuts it short.
	Delay time.Duration `json:"delay,omitempty"`
	// Times is how many requests the fault hits; 0 means every one.
	Times int `json:"times,omitempty"`
	// InScript matches the commands inside a database script instead of
	// requests: a matching command fails with Status in the script's
	// results while the others run, as Kusto reports a partial failure.
	InScript bool `json:"inScript,omitempty"`
	// Hit, when set, receives the text of every request the fault
	// matches, as it starts (dropped if the channel is full): how a test
	// knows a request is in flight.
	Hit chan<- string `json:"-"`

	re   *regexp.Regexp
	hits int
}

// New returns a server with the given databases, not yet listening.
func New(databases ...string) *Server {
	s := &Server{dbs: map[string]*database{}, started: time.Now().UTC()}
	for _, d := range databases {
		s.dbs[strings.ToLower(d)] = newDatabase(d)
	}
	return s
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves.
func (s *Server) Start(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.listener = l
	s.URL = "http://" + l.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return nil
}

// Close stops the server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// Requests still in flight after the grace period (a held request
	// whose client gave up, on a loaded machine) are cut, as an outage
	// cuts them.
	if err := s.srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		return s.srv.Close()
	} else if err != nil {
		return err
	}
	return nil
}

// Restart listens again on the address it had before Close, with the
// state it had: a cluster back from an outage.
func (s *Server) Restart() error {
	if s.listener == nil {
		return errors.New("the server never started")
	}
	return s.Start(s.listener.Addr().String())
}

// CreateDatabase adds an empty database.
func (s *Server) CreateDatabase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dbs[strings.ToLower(name)]; !ok {
		s.dbs[strings.ToLower(name)] = newDatabase(name)
	}
}

// DropDatabase removes a database.
func (s *Server) DropDatabase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.dbs, strings.ToLower(name))
}

// Exec runs a management command directly, as a seed or an operator
// would, without logging it as a client request.
func (s *Server) Exec(db, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.mgmt(db, text)
	return err
}

// InjectFault adds a fault.
func (s *Server) InjectFault(f Fault) error {
	re, err := regexp.Compile(f.Match)
	if err != nil {
		return err
	}
	f.re = re
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
	return nil
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Commands returns the requests received so far.
func (s *Server) Commands() []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Command(nil), s.log...)
}

// Stats is what the control API reports of the server's traffic.
type Stats struct {
	BytesServed int64 `json:"bytesServed"`
	Requests    int   `json:"requests"`
}

// BytesServed is how many bytes of results the server has answered with,
// before compression: what clients read.
func (s *Server) BytesServed() int64 { return s.served.Load() }

// ResetCommands forgets the requests received so far.
func (s *Server) ResetCommands() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
	s.scriptCommands = 0
}

// ScriptCommands counts the commands run inside database scripts since the
// last reset.
func (s *Server) ScriptCommands() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scriptCommands
}

// Functions returns a copy of a database's functions.
func (s *Server) Functions(db string) map[string]Function {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]Function{}
	if d, ok := s.dbs[strings.ToLower(db)]; ok {
		for n, f := range d.functions {
			out[n] = *f
		}
	}
	return out
}

// EntityGroups returns a copy of a database's entity groups.
func (s *Server) EntityGroups(db string) map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	if d, ok := s.dbs[strings.ToLower(db)]; ok {
		for n, e := range d.entityGroups {
			out[n] = append([]string(nil), e...)
		}
	}
	return out
}

// Tables returns a database's table names and CSL schemas.
func (s *Server) Tables(db string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if d, ok := s.dbs[strings.ToLower(db)]; ok {
		for n, t := range d.tables {
			out[n] = t.cslSchema()
		}
	}
	return out
}

// Rows returns a table's rows, values as the server holds them.
func (s *Server) Rows(db, table string) [][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dbs[strings.ToLower(db)]
	if !ok {
		return nil
	}
	t, ok := d.tables[table]
	if !ok {
		return nil
	}
	out := make([][]any, len(t.rows))
	for i, r := range t.rows {
		out[i] = append([]any(nil), r...)
	}
	return out
}

type request struct {
	DB  string `json:"db"`
	CSL string `json:"csl"`
}

// ServeHTTP implements the Kusto REST endpoints and the admin API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/rest/auth/metadata":
		// Faults match this request as "GET /v1/rest/auth/metadata".
		if f := s.fault("GET " + r.URL.Path); f != nil && f.Status != 0 {
			s.record(Command{Time: time.Now().UTC(), API: "metadata", Text: "GET " + r.URL.Path}, f.Status)
			writeError(w, r, faultError(f.Status))
			return
		}
		writeJSON(w, r, http.StatusOK, map[string]any{"AzureAD": map[string]any{
			"LoginEndpoint": "https://login.microsoftonline.com", "LoginMfaRequired": false,
			"KustoClientAppId": "db662dc1-0cfe-4e1c-a843-19a68e65be58", "KustoClientRedirectUri": "https://microsoft/kustoclient",
			"KustoServiceResourceId": "https://kusto.kusto.windows.net", "FirstPartyAuthorityUrl": "https://login.microsoftonline.com/f8cdef31-a31e-4b4a-93e4-5f571e91255a",
		}})
	case r.Method == http.MethodPost && (r.URL.Path == "/v1/rest/mgmt" || r.URL.Path == "/v2/rest/query"):
		s.serveKusto(w, r)
	case strings.HasPrefix(r.URL.Path, "/fleetplane/"):
		s.serveAdmin(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveKusto(w http.ResponseWriter, r *http.Request) {
	api := "mgmt"
	if strings.HasPrefix(r.URL.Path, "/v2/") {
		api = "query"
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, maxRequestBytes)).Decode(&req); err != nil {
		writeError(w, r, badRequest("Request body is not valid JSON: %v", err))
		return
	}
	cmd := Command{Time: time.Now().UTC(), API: api, Database: req.DB, Text: req.CSL}

	if f := s.fault(req.CSL); f != nil {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				s.record(cmd, 499)
				return
			}
		}
		if f.Status != 0 {
			s.record(cmd, f.Status)
			if f.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
			}
			writeError(w, r, faultError(f.Status))
			return
		}
	}

	s.mu.Lock()
	var res *result
	var err error
	if api == "mgmt" {
		res, err = s.mgmt(req.DB, req.CSL)
	} else {
		res, err = s.query(req.DB, req.CSL, 0)
	}
	status := http.StatusOK
	ke := &kustoError{}
	if errors.As(err, &ke) {
		status = ke.status
	} else if err != nil {
		status = http.StatusInternalServerError
	}
	cmd.Status = status
	s.log = append(s.log, cmd)
	s.mu.Unlock()

	if err != nil {
		ke := &kustoError{}
		ok := errors.As(err, &ke)
		if !ok {
			ke = &kustoError{status: 500, code: "InternalServiceError", message: err.Error()}
		}
		writeError(w, r, ke)
		return
	}
	body := res.v1()
	if api == "query" {
		body = res.v2(r.Header.Get("X-Ms-Client-Request-Id"))
	}
	s.served.Add(int64(len(body)))
	write(w, r, http.StatusOK, body)
}

func (s *Server) record(cmd Command, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd.Status = status
	s.log = append(s.log, cmd)
}

// fault returns the first request fault matching text and counts the hit.
func (s *Server) fault(text string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultLocked(text, false)
}

// faultLocked is fault for requests or, with inScript, for the commands of
// a script; s.mu is held.
func (s *Server) faultLocked(text string, inScript bool) *Fault {
	for _, f := range s.faults {
		if f.InScript == inScript && (f.Times == 0 || f.hits < f.Times) && f.re.MatchString(text) {
			f.hits++
			if f.Hit != nil {
				select {
				case f.Hit <- text:
				default:
				}
			}
			return f
		}
	}
	return nil
}

func faultError(status int) *kustoError {
	switch status {
	case http.StatusTooManyRequests:
		return &kustoError{status: status, code: "LimitsExceeded", message: "The request was throttled: too many concurrent requests."}
	case http.StatusForbidden:
		return &kustoError{status: status, code: "Forbidden", message: "Principal is not authorized to perform this operation.", permanent: true}
	case http.StatusUnauthorized:
		return &kustoError{status: status, code: "Unauthorized", message: "The caller is not authenticated.", permanent: true}
	default:
		return &kustoError{status: status, code: "InternalServiceError", message: fmt.Sprintf("Injected failure (%d).", status)}
	}
}

func writeError(w http.ResponseWriter, r *http.Request, e *kustoError) {
	write(w, r, e.status, e.body())
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, _ := json.Marshal(v)
	write(w, r, status, b)
}

// write answers with gzip when the client accepts it, as Kusto does.
func write(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(status)
		gz := gzip.NewWriter(w)
		_, _ = gz.Write(body)
		_ = gz.Close()
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// serveAdmin is the control API for tests and demos that run the server
// as a separate process:
//
//	GET    /fleetplane/commands          the command log
//	DELETE /fleetplane/commands          reset it
//	POST   /fleetplane/faults            add a Fault (JSON)
//	DELETE /fleetplane/faults            clear faults
//	POST   /fleetplane/databases/{name}  create a database
//	POST   /fleetplane/exec?db=D         run the body as a management command
//	GET    /fleetplane/functions?db=D    functions, and /entity-groups, /tables
//	GET    /fleetplane/stats             bytes served and requests received
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/fleetplane/")
	db := r.URL.Query().Get("db")
	switch {
	case path == "commands" && r.Method == http.MethodGet:
		writeJSON(w, r, http.StatusOK, s.Commands())
	case path == "commands" && r.Method == http.MethodDelete:
		s.ResetCommands()
		w.WriteHeader(http.StatusNoContent)
	case path == "faults" && r.Method == http.MethodPost:
		var f Fault
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.InjectFault(f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case path == "faults" && r.Method == http.MethodDelete:
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	case strings.HasPrefix(path, "databases/") && r.Method == http.MethodPost:
		name := strings.TrimPrefix(path, "databases/")
		if err := kql.ValidateName(name); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.CreateDatabase(name)
		w.WriteHeader(http.StatusNoContent)
	case path == "exec" && r.Method == http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.Exec(db, string(body)); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case path == "stats" && r.Method == http.MethodGet:
		writeJSON(w, r, http.StatusOK, Stats{BytesServed: s.BytesServed(), Requests: len(s.Commands())})
	case path == "functions" && r.Method == http.MethodGet:
		writeJSON(w, r, http.StatusOK, s.Functions(db))
	case path == "entity-groups" && r.Method == http.MethodGet:
		writeJSON(w, r, http.StatusOK, s.EntityGroups(db))
	case path == "tables" && r.Method == http.MethodGet:
		writeJSON(w, r, http.StatusOK, s.Tables(db))
	default:
		http.NotFound(w, r)
	}
}
