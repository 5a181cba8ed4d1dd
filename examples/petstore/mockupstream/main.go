// Command mockupstream is a loopback stand-in for the Petstore API of
// examples/petstore/openapi.yaml, for scripts/own-api.sh: it serves the
// description's four operations under /v1, answers 401 unless the X-API-Key
// header holds the key it was given, and logs every request it answers as
// one JSON line on stderr. It prints its base URL on stdout once listening
// and exits on SIGTERM or SIGINT.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/examples/internal/mockserve"
)

type pet struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Tag    string `json:"tag,omitempty"`
	Status string `json:"status,omitempty"`
}

type store struct {
	mu   sync.Mutex
	pets []pet
	key  string
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status := s.serve(w, r)
	line, _ := json.Marshal(map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "status": status})
	fmt.Fprintln(os.Stderr, string(line))
}

func reply(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
	return status
}

func (s *store) serve(w http.ResponseWriter, r *http.Request) int {
	if r.Header.Get("X-API-Key") != s.key {
		return reply(w, http.StatusUnauthorized, map[string]any{"code": 401, "message": "missing or wrong X-API-Key"})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case path == "/pets" && r.Method == http.MethodGet:
		want := r.URL.Query().Get("status")
		limit := 20
		if l, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && l > 0 && l <= 100 {
			limit = l
		}
		out := []pet{}
		for _, p := range s.pets {
			if (want == "" || p.Status == want) && len(out) < limit {
				out = append(out, p)
			}
		}
		return reply(w, http.StatusOK, out)
	case path == "/pets" && r.Method == http.MethodPost:
		var in pet
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil || in.Name == "" {
			return reply(w, http.StatusBadRequest, map[string]any{"code": 400, "message": "a pet needs a name"})
		}
		in.ID = int64(len(s.pets) + 1)
		if in.Status == "" {
			in.Status = "available"
		}
		s.pets = append(s.pets, in)
		return reply(w, http.StatusCreated, in)
	case strings.HasPrefix(path, "/pets/") && r.Method == http.MethodGet:
		id, _ := strconv.ParseInt(strings.TrimPrefix(path, "/pets/"), 10, 64)
		for _, p := range s.pets {
			if p.ID == id {
				return reply(w, http.StatusOK, p)
			}
		}
		return reply(w, http.StatusNotFound, map[string]any{"code": 404, "message": "no such pet"})
	case path == "/store/inventory" && r.Method == http.MethodGet:
		counts := map[string]int{}
		for _, p := range s.pets {
			counts[p.Status]++
		}
		return reply(w, http.StatusOK, counts)
	}
	return reply(w, http.StatusNotFound, map[string]any{"code": 404, "message": "no such route"})
}

func main() {
	key := flag.String("key", "", "the API key the mock accepts (required)")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "mockupstream: --key is required")
		os.Exit(2)
	}
	s := &store{key: *key, pets: []pet{{ID: 1, Name: "Rex", Tag: "dog", Status: "available"}, {ID: 2, Name: "Tom", Tag: "cat", Status: "sold"}}}
	mockserve.Run("mockupstream", 0, "/v1", s, 2*time.Second)
}
