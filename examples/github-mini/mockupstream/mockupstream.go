// Package mockupstream is the GitHub-shaped mock upstream that github-mini's
// end-to-end run and the gateway tests call instead of a real API.
//
// It serves the twelve operations of examples/github-mini/openapi.yaml over
// an in-memory store with fixed seed data, optionally requires one bearer
// token, and records every request it serves so tests can assert on what
// reached the upstream (GET /__requests, or [Server.Requests]).
//
// Seed data: issues #2 "Second issue" (open, body "Still open.") and #1
// "First issue" (closed, body "Done."), listed in that order; pulls
// [{number:3, title:"Fix the first issue", state:"merged"}]; no comments and
// no releases. The next issue number is 3, the next comment id 100 and the
// next release id 500.
//
// Routes (owner and repo are any single path segments):
//
//	GET    /repos/{o}/{r}/issues                  list; ?state=open|closed filters, all or absent does not
//	POST   /repos/{o}/{r}/issues                  {title, body?} → issue, state open, 201
//	GET    /repos/{o}/{r}/issues/{n}              issue, or 404
//	PATCH  /repos/{o}/{r}/issues/{n}              updates title, body, state; 404 when missing
//	GET    /repos/{o}/{r}/issues/{n}/comments     that issue's comments
//	POST   /repos/{o}/{r}/issues/{n}/comments     {body} → {id, body}, 201; honours Idempotency-Key
//	DELETE /repos/{o}/{r}/issues/comments/{id}    204, or 404
//	POST   /repos/{o}/{r}/releases                {tag_name, name?, body?, draft?} → release, 201
//	PATCH  /repos/{o}/{r}/releases/{id}           updates name, body, draft; 404 when missing
//	DELETE /repos/{o}/{r}/releases/{id}           204 (also when there was no such release)
//	GET    /repos/{o}/{r}/releases/tags/{tag}     the first release with that tag, or 404
//	GET    /repos/{o}/{r}/pulls                   the pulls list
//	GET    /__requests                            the request log (never logged, never needs the token)
//
// Anything else answers 404 {"message":"Not Found"}. Every JSON response has
// Content-Type: application/json and no trailing newline; 204 responses have
// no body.
//
// Choices the reference leaves open, fixed here:
//   - A repeated Idempotency-Key on POST …/comments answers 201 with the
//     comment the key first created (even if it was deleted since) and stores
//     nothing. Keys are global, not per issue.
//   - A body that is not a JSON object answers 400 {"message":"Problems
//     parsing JSON"}; a missing or mistyped required field (title, body,
//     tag_name) or a state other than open/closed answers 422
//     {"message":"Validation Failed"}.
//   - Comments may be listed and created on any issue number, existing or not.
//   - Absent optional strings (issue body, release name and body) are null.
//   - A logged path is the request target as sent: the path, plus "?" and the
//     query only when the request had one.
package mockupstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultAddr is the listen address used when [Options.Addr] is empty.
const DefaultAddr = "127.0.0.1:0"

// ErrListen is returned (wrapped) by [Start] when the listener cannot be opened.
var ErrListen = errors.New("mockupstream: cannot listen")

// Options configure [Start] and [NewHandler].
type Options struct {
	// Addr is the TCP address to listen on. Default "127.0.0.1:0" (a free
	// loopback port).
	Addr string
	// Token, when non-empty, is the only bearer accepted: a request whose
	// Authorization header is not exactly "Bearer <Token>" gets 401
	// {"message":"Bad credentials"} (and is still logged).
	Token string
}

// Request is one entry of the request log, as served by GET /__requests.
type Request struct {
	// Method is the HTTP method.
	Method string `json:"method"`
	// Path is the request target: path, plus "?query" when a query was sent.
	Path string `json:"path"`
	// Authorized reports whether the request passed the token check (always
	// true when no token is configured).
	Authorized bool `json:"authorized"`
	// IdempotencyKey is the Idempotency-Key header; omitted when absent or empty.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// Issue is one issue.
type Issue struct {
	Number int64   `json:"number"`
	Title  string  `json:"title"`
	State  string  `json:"state"`
	Body   *string `json:"body"`
}

// Comment is one issue comment. Issue is the number it was posted on and is
// not part of the wire shape.
type Comment struct {
	ID    int64  `json:"id"`
	Body  string `json:"body"`
	Issue int64  `json:"-"`
}

// Release is one release.
type Release struct {
	ID      int64   `json:"id"`
	TagName string  `json:"tag_name"`
	Name    *string `json:"name"`
	Body    *string `json:"body"`
	Draft   bool    `json:"draft"`
}

// Pull is one pull request.
type Pull struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	State  string `json:"state"`
}

// State is a deep copy of the mock's store, for assertions.
type State struct {
	Issues   []Issue
	Comments []Comment
	Releases []Release
}

// Handler is the mock as an http.Handler, without a listener. Create it with
// [NewHandler]; it is safe for concurrent use.
type Handler struct {
	token string

	mu          sync.Mutex
	log         []Request
	issues      []Issue
	comments    []Comment
	releases    []Release
	pulls       []Pull
	idempotent  map[string]Comment
	nextIssue   int64
	nextComment int64
	nextRelease int64
}

// NewHandler returns a mock holding the seed data. Only opts.Token is used.
func NewHandler(opts Options) *Handler {
	return &Handler{
		token: opts.Token,
		issues: []Issue{
			{Number: 2, Title: "Second issue", State: "open", Body: ptr("Still open.")},
			{Number: 1, Title: "First issue", State: "closed", Body: ptr("Done.")},
		},
		pulls:       []Pull{{Number: 3, Title: "Fix the first issue", State: "merged"}},
		idempotent:  map[string]Comment{},
		nextIssue:   3,
		nextComment: 100,
		nextRelease: 500,
	}
}

// Requests returns a copy of the request log, oldest first.
func (h *Handler) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request{}, h.log...)
}

// State returns a deep copy of the issues, comments and releases.
func (h *Handler) State() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := State{
		Issues:   make([]Issue, len(h.issues)),
		Comments: append([]Comment{}, h.comments...),
		Releases: make([]Release, len(h.releases)),
	}
	for i, is := range h.issues {
		is.Body = clone(is.Body)
		s.Issues[i] = is
	}
	for i, r := range h.releases {
		r.Name, r.Body = clone(r.Name), clone(r.Body)
		s.Releases[i] = r
	}
	return s
}

// Server is a running mock upstream. Create it with [Start].
type Server struct {
	// URL is the base URL, "http://<host>:<port>" with no trailing slash.
	URL string

	h    *Handler
	srv  *http.Server
	done chan struct{}
	once sync.Once
}

// Start listens on opts.Addr (default 127.0.0.1:0) and serves the mock in
// the background until [Server.Close].
func Start(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrListen, err)
	}
	h := NewHandler(opts)
	s := &Server{
		URL:  "http://" + ln.Addr().String(),
		h:    h,
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Handler returns the mock's handler (the same store the server serves).
func (s *Server) Handler() *Handler { return s.h }

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request { return s.h.Requests() }

// State returns a deep copy of the issues, comments and releases.
func (s *Server) State() State { return s.h.State() }

// Close stops the server, closing open connections, and waits for the serve
// loop to end. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err = s.srv.Shutdown(ctx); err != nil {
			err = s.srv.Close()
		}
		<-s.done
	})
	return err
}

func ptr(s string) *string { return &s }

func clone(p *string) *string {
	if p == nil {
		return nil
	}
	return ptr(*p)
}
