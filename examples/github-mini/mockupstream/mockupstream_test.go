package mockupstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const token = "e2e-upstream-pat"

type reply struct {
	status int
	ctype  string
	body   string
}

// call sends one request; auth "" sends no Authorization header.
func call(t *testing.T, method, url, auth, body string, header map[string]string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), string(data)}
}

func start(t *testing.T, tok string) *Server {
	t.Helper()
	s, err := Start(Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL = %q", s.URL)
	}
	return s
}

const (
	issue2   = `{"number":2,"title":"Second issue","state":"open","body":"Still open."}`
	issue1   = `{"number":1,"title":"First issue","state":"closed","body":"Done."}`
	notFound = `{"message":"Not Found"}`
)

// step is one request and the exact reply expected.
type step struct {
	name, method, path, body string
	header                   map[string]string
	status                   int
	want                     string // exact body; "" means empty body
}

func runSteps(t *testing.T, s *Server, steps []step) {
	t.Helper()
	for _, st := range steps {
		got := call(t, st.method, s.URL+st.path, "Bearer "+token, st.body, st.header)
		if got.status != st.status || got.body != st.want {
			t.Errorf("%s: %s %s = %d %s, want %d %s", st.name, st.method, st.path, got.status, got.body, st.status, st.want)
		}
		if st.want != "" && got.ctype != "application/json" {
			t.Errorf("%s: Content-Type = %q", st.name, got.ctype)
		}
	}
}

func TestSeedData(t *testing.T) {
	s := start(t, token)
	runSteps(t, s, []step{
		{"list all by default", "GET", "/repos/octo/hello/issues", "", nil, 200, "[" + issue2 + "," + issue1 + "]"},
		{"state=all", "GET", "/repos/o/r/issues?state=all", "", nil, 200, "[" + issue2 + "," + issue1 + "]"},
		{"state=open", "GET", "/repos/o/r/issues?state=open", "", nil, 200, "[" + issue2 + "]"},
		{"state=closed", "GET", "/repos/o/r/issues?state=closed", "", nil, 200, "[" + issue1 + "]"},
		{"state=other", "GET", "/repos/o/r/issues?state=merged", "", nil, 200, "[]"},
		{"get 2", "GET", "/repos/o/r/issues/2", "", nil, 200, issue2},
		{"get 1", "GET", "/repos/o/r/issues/1", "", nil, 200, issue1},
		{"get missing", "GET", "/repos/o/r/issues/3", "", nil, 404, notFound},
		{"pulls", "GET", "/repos/o/r/pulls", "", nil, 200, `[{"number":3,"title":"Fix the first issue","state":"merged"}]`},
		{"no comments", "GET", "/repos/o/r/issues/1/comments", "", nil, 200, "[]"},
		{"no releases", "GET", "/repos/o/r/releases/tags/v1.0.0", "", nil, 404, notFound},
	})
	st := s.State()
	if len(st.Issues) != 2 || len(st.Comments) != 0 || len(st.Releases) != 0 {
		t.Fatalf("State = %+v", st)
	}
}

func TestIssueRoutes(t *testing.T) {
	s := start(t, token)
	runSteps(t, s, []step{
		{"create", "POST", "/repos/o/r/issues", `{"title":"New <one> & more"}`, nil, 201, `{"number":3,"title":"New <one> & more","state":"open","body":null}`},
		{"create with body", "POST", "/repos/o/r/issues", `{"title":"x","body":"y"}`, nil, 201, `{"number":4,"title":"x","state":"open","body":"y"}`},
		{"close", "PATCH", "/repos/o/r/issues/3", `{"state":"closed"}`, nil, 200, `{"number":3,"title":"New <one> & more","state":"closed","body":null}`},
		{"retitle and body", "PATCH", "/repos/o/r/issues/3", `{"title":"T","body":"B"}`, nil, 200, `{"number":3,"title":"T","state":"closed","body":"B"}`},
		{"patch missing", "PATCH", "/repos/o/r/issues/99", `{"state":"closed"}`, nil, 404, notFound},
		{"patch bad state", "PATCH", "/repos/o/r/issues/3", `{"state":"merged"}`, nil, 422, `{"message":"Validation Failed"}`},
		{"create without title", "POST", "/repos/o/r/issues", `{"body":"y"}`, nil, 422, `{"message":"Validation Failed"}`},
		{"create title number", "POST", "/repos/o/r/issues", `{"title":5}`, nil, 422, `{"message":"Validation Failed"}`},
		{"create bad json", "POST", "/repos/o/r/issues", `{"title":`, nil, 400, `{"message":"Problems parsing JSON"}`},
		{"create array", "POST", "/repos/o/r/issues", `[1]`, nil, 400, `{"message":"Problems parsing JSON"}`},
		{"create no body", "POST", "/repos/o/r/issues", ``, nil, 400, `{"message":"Problems parsing JSON"}`},
		{"open list", "GET", "/repos/o/r/issues?state=open", "", nil, 200, "[" + issue2 + `,{"number":4,"title":"x","state":"open","body":"y"}]`},
	})
	st := s.State()
	if len(st.Issues) != 4 || st.Issues[2].Number != 3 || *st.Issues[2].Body != "B" {
		t.Fatalf("State.Issues = %+v", st.Issues)
	}
	// The snapshot is a copy.
	*st.Issues[2].Body = "changed"
	if got := *s.State().Issues[2].Body; got != "B" {
		t.Fatalf("State aliases the store: %q", got)
	}
}

func TestCommentRoutes(t *testing.T) {
	s := start(t, token)
	runSteps(t, s, []step{
		{"create", "POST", "/repos/o/r/issues/1/comments", `{"body":"hi"}`, nil, 201, `{"id":100,"body":"hi"}`},
		{"create on 2", "POST", "/repos/o/r/issues/2/comments", `{"body":"there"}`, nil, 201, `{"id":101,"body":"there"}`},
		{"list 1", "GET", "/repos/o/r/issues/1/comments", "", nil, 200, `[{"id":100,"body":"hi"}]`},
		{"list 2", "GET", "/repos/o/r/issues/2/comments", "", nil, 200, `[{"id":101,"body":"there"}]`},
		{"missing body", "POST", "/repos/o/r/issues/1/comments", `{}`, nil, 422, `{"message":"Validation Failed"}`},
		{"delete", "DELETE", "/repos/o/r/issues/comments/100", "", nil, 204, ""},
		{"delete again", "DELETE", "/repos/o/r/issues/comments/100", "", nil, 404, notFound},
		{"list after delete", "GET", "/repos/o/r/issues/1/comments", "", nil, 200, `[]`},
	})
	st := s.State()
	if diff := cmp.Diff([]Comment{{ID: 101, Body: "there", Issue: 2}}, st.Comments); diff != "" {
		t.Fatalf("State.Comments (-want +got):\n%s", diff)
	}
}

func TestReleaseRoutes(t *testing.T) {
	s := start(t, token)
	runSteps(t, s, []step{
		{"create", "POST", "/repos/o/r/releases", `{"tag_name":"v1","name":"One","body":"b"}`, nil, 201, `{"id":500,"tag_name":"v1","name":"One","body":"b","draft":false}`},
		{"create draft", "POST", "/repos/o/r/releases", `{"tag_name":"v2","draft":true}`, nil, 201, `{"id":501,"tag_name":"v2","name":null,"body":null,"draft":true}`},
		{"draft not strictly true", "POST", "/repos/o/r/releases", `{"tag_name":"v3","draft":"true"}`, nil, 201, `{"id":502,"tag_name":"v3","name":null,"body":null,"draft":false}`},
		{"no tag", "POST", "/repos/o/r/releases", `{"name":"x"}`, nil, 422, `{"message":"Validation Failed"}`},
		{"by tag", "GET", "/repos/o/r/releases/tags/v2", "", nil, 200, `{"id":501,"tag_name":"v2","name":null,"body":null,"draft":true}`},
		{"promote", "PATCH", "/repos/o/r/releases/501", `{"draft":false,"name":"Two"}`, nil, 200, `{"id":501,"tag_name":"v2","name":"Two","body":null,"draft":false}`},
		{"patch body", "PATCH", "/repos/o/r/releases/501", `{"body":"notes"}`, nil, 200, `{"id":501,"tag_name":"v2","name":"Two","body":"notes","draft":false}`},
		{"patch missing", "PATCH", "/repos/o/r/releases/9", `{"draft":false}`, nil, 404, notFound},
		{"delete", "DELETE", "/repos/o/r/releases/500", "", nil, 204, ""},
		{"delete again", "DELETE", "/repos/o/r/releases/500", "", nil, 204, ""},
		{"tag gone", "GET", "/repos/o/r/releases/tags/v1", "", nil, 404, notFound},
		{"escaped tag", "POST", "/repos/o/r/releases", `{"tag_name":"a/b c"}`, nil, 201, `{"id":503,"tag_name":"a/b c","name":null,"body":null,"draft":false}`},
		{"get escaped tag", "GET", "/repos/o/r/releases/tags/a%2Fb%20c", "", nil, 200, `{"id":503,"tag_name":"a/b c","name":null,"body":null,"draft":false}`},
	})
	st := s.State()
	if len(st.Releases) != 3 || st.Releases[0].ID != 501 || *st.Releases[0].Body != "notes" {
		t.Fatalf("State.Releases = %+v", st.Releases)
	}
}

func TestUnknownRoutes(t *testing.T) {
	s := start(t, token)
	var steps []step
	for _, mp := range [][2]string{
		{"GET", "/"},
		{"GET", "/repos"},
		{"GET", "/repos/o/r"},
		{"GET", "/repos/o/r/"},
		{"GET", "/repos/o/r/issues/"},
		{"GET", "/repos/o/r/labels"},
		{"PUT", "/repos/o/r/issues"},
		{"DELETE", "/repos/o/r/issues/1"},
		{"GET", "/repos/o/r/issues/abc"},
		{"GET", "/repos/o/r/issues/-1"},
		{"GET", "/repos/o/r/issues/comments/100"},
		{"GET", "/repos/o/r/releases"},
		{"GET", "/repos/o/r/releases/500"},
		{"POST", "/repos/o/r/pulls"},
		{"GET", "/repos/o/r/pulls/3"},
		{"GET", "/repos/o/r/issues/1/comments/extra"},
		{"POST", "/__requests"},
	} {
		steps = append(steps, step{mp[0] + " " + mp[1], mp[0], mp[1], "", nil, 404, notFound})
	}
	runSteps(t, s, steps)
}

func TestAuthRefusalIsLogged(t *testing.T) {
	s := start(t, token)
	url := s.URL + "/repos/o/r/pulls"
	for _, auth := range []string{"", "Bearer wrong", "bearer " + token, "Bearer  " + token, "Token " + token} {
		got := call(t, "GET", url, auth, "", nil)
		if got.status != 401 || got.body != `{"message":"Bad credentials"}` || got.ctype != "application/json" {
			t.Errorf("auth %q: %+v", auth, got)
		}
	}
	// Refused even on unknown routes: auth comes first.
	if got := call(t, "GET", s.URL+"/nope", "", "", nil); got.status != 401 {
		t.Errorf("unknown route without token = %d", got.status)
	}
	if got := call(t, "GET", url, "Bearer "+token, "", nil); got.status != 200 {
		t.Errorf("good token = %d", got.status)
	}
	reqs := s.Requests()
	if len(reqs) != 7 {
		t.Fatalf("logged %d requests: %+v", len(reqs), reqs)
	}
	for i, r := range reqs {
		if want := i == 6; r.Authorized != want {
			t.Errorf("request %d authorized = %v, want %v", i, r.Authorized, want)
		}
	}
	// Refused requests do not touch the store.
	if got := call(t, "POST", s.URL+"/repos/o/r/issues", "Bearer x", `{"title":"t"}`, nil); got.status != 401 {
		t.Fatal(got)
	}
	if n := len(s.State().Issues); n != 2 {
		t.Fatalf("issues after refused POST = %d", n)
	}
}

func TestNoTokenAcceptsAll(t *testing.T) {
	s := start(t, "")
	if got := call(t, "GET", s.URL+"/repos/o/r/pulls", "", "", nil); got.status != 200 {
		t.Fatalf("status %d", got.status)
	}
	if got := call(t, "GET", s.URL+"/repos/o/r/pulls", "Bearer anything", "", nil); got.status != 200 {
		t.Fatalf("status %d", got.status)
	}
	for _, r := range s.Requests() {
		if !r.Authorized {
			t.Fatalf("%+v not authorized without a token", r)
		}
	}
}

func TestRequestLog(t *testing.T) {
	s := start(t, token)
	call(t, "GET", s.URL+"/repos/o/r/issues?state=open", "Bearer "+token, "", nil)
	call(t, "POST", s.URL+"/repos/o/r/issues/1/comments", "Bearer "+token, `{"body":"x"}`, map[string]string{"Idempotency-Key": "k-1"})
	call(t, "GET", s.URL+"/repos/o/r/pulls", "", "", nil)
	call(t, "DELETE", s.URL+"/repos/o/r/issues/comments/100", "Bearer "+token, "", map[string]string{"Idempotency-Key": ""})

	// /__requests needs no token and is never logged.
	for range 2 {
		got := call(t, "GET", s.URL+"/__requests", "", "", nil)
		want := `[{"method":"GET","path":"/repos/o/r/issues?state=open","authorized":true},` +
			`{"method":"POST","path":"/repos/o/r/issues/1/comments","authorized":true,"idempotency_key":"k-1"},` +
			`{"method":"GET","path":"/repos/o/r/pulls","authorized":false},` +
			`{"method":"DELETE","path":"/repos/o/r/issues/comments/100","authorized":true}]`
		if got.status != 200 || got.body != want || got.ctype != "application/json" {
			t.Fatalf("/__requests = %d %s\nwant %s", got.status, got.body, want)
		}
	}
	if n := len(s.Requests()); n != 4 {
		t.Fatalf("Requests() has %d entries", n)
	}
	// Requests returns a copy.
	r := s.Requests()
	r[0].Path = "changed"
	if s.Requests()[0].Path == "changed" {
		t.Fatal("Requests aliases the log")
	}
}

func TestIdempotencyKeyReplay(t *testing.T) {
	s := start(t, token)
	url := s.URL + "/repos/octo/hello/issues/1/comments"
	key := map[string]string{"Idempotency-Key": "anvil-abc"}
	first := call(t, "POST", url, "Bearer "+token, `{"body":"hello"}`, key)
	again := call(t, "POST", url, "Bearer "+token, `{"body":"different"}`, key)
	if first.status != 201 || again.status != 201 || first.body != `{"id":100,"body":"hello"}` || again.body != first.body {
		t.Fatalf("first %+v, replay %+v", first, again)
	}
	if n := len(s.State().Comments); n != 1 {
		t.Fatalf("%d comments stored after a replay", n)
	}
	// A replay after deletion still answers the first comment and stores nothing.
	call(t, "DELETE", s.URL+"/repos/o/r/issues/comments/100", "Bearer "+token, "", nil)
	if got := call(t, "POST", url, "Bearer "+token, `{"body":"x"}`, key); got.body != first.body {
		t.Fatalf("replay after delete = %+v", got)
	}
	if n := len(s.State().Comments); n != 0 {
		t.Fatalf("%d comments after replaying a deleted one", n)
	}
	// Another key and no key both create.
	if got := call(t, "POST", url, "Bearer "+token, `{"body":"x"}`, map[string]string{"Idempotency-Key": "other"}); got.body != `{"id":101,"body":"x"}` {
		t.Fatalf("new key = %+v", got)
	}
	call(t, "POST", url, "Bearer "+token, `{"body":"y"}`, nil)
	call(t, "POST", url, "Bearer "+token, `{"body":"y"}`, nil)
	if n := len(s.State().Comments); n != 3 {
		t.Fatalf("%d comments, want 3", n)
	}
}

func TestConcurrentComments(t *testing.T) {
	s := start(t, token)
	const n = 50
	ids := make([]int64, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", s.URL+"/repos/o/r/issues/2/comments", strings.NewReader(fmt.Sprintf(`{"body":"c%d"}`, i)))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var c Comment
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 201 {
				errs <- fmt.Errorf("status %d, %v", resp.StatusCode, err)
				return
			}
			ids[i] = c.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if id < 100 || id >= 100+n || seen[id] {
			t.Fatalf("bad or repeated id %d in %v", id, ids)
		}
		seen[id] = true
	}
	if got := len(s.State().Comments); got != n {
		t.Fatalf("%d comments stored", got)
	}
	if got := len(s.Requests()); got != n {
		t.Fatalf("%d requests logged", got)
	}
}

func TestStartAndClose(t *testing.T) {
	if _, err := Start(Options{Addr: "256.0.0.1:0"}); !errors.Is(err, ErrListen) {
		t.Fatalf("Start on a bad address: %v", err)
	}
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Handler() == nil {
		t.Fatal("nil Handler")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := http.Get(s.URL + "/repos/o/r/pulls"); err == nil {
		t.Fatal("server still answers after Close")
	}
}
