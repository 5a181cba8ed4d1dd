// Package upstream is the hostile-spec fixture's upstream (examples/hostile):
// a loopback HTTP server that answers its three operations and records every
// request it receives, so a test can tell that a dry run sent nothing and
// what a real call sent.
package upstream

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Request is one request the upstream received.
type Request struct {
	Method         string
	Path           string
	Query          string
	IdempotencyKey string         // the Idempotency-Key header
	Body           map[string]any // the JSON body, or nil
}

// Server is a running upstream.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:<port>).
	URL string

	token string
	srv   *http.Server
	mu    sync.Mutex
	reqs  []Request
	next  int
}

// Start serves on a loopback port; requests must carry "Bearer <token>".
func Start(token string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), token: token, next: 7}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		http.Error(w, `{"message":"bad credentials"}`, http.StatusUnauthorized)
		return
	}
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20)); len(b) > 0 {
		_ = json.Unmarshal(b, &rec.Body)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	id := s.next
	s.next++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/things":
		_, _ = io.WriteString(w, `[{"id":1,"name":"first"}]`)
	case r.Method == http.MethodPost && r.URL.Path == "/things":
		name, _ := rec.Body["name"].(string)
		draft, _ := rec.Body["draft"].(bool)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "name": name, "draft": draft})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/things/") && strings.HasSuffix(r.URL.Path, "/publish"):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/things/"), "/publish"))
		if err != nil {
			http.Error(w, `{"message":"bad id"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": n, "name": "published", "draft": false})
	default:
		http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
	}
}
