package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

func TestAllowlist(t *testing.T) {
	tests := []struct {
		list, env, host string
		want            bool
	}{
		{"github.example", "", "github.example", true},
		{"github.example", "", "api.github.example", true},
		{"github.example", "", "a.b.github.example", true},
		{"github.example", "", "evilgithub.example", false},
		{"github.example", "", "github.example.evil", false},
		{"github.example", "", "GitHub.Example", true},
		{"GITHUB.example.", "", "api.github.example.", true},
		{"github.example", "", "api.github.example:8443", true},
		{"github.example:443", "", "github.example", true},
		{"https://api.github.example/v3", "", "api.github.example", true},
		{"https://api.github.example/v3", "", "github.example", false},
		{"*.github.example", "", "api.github.example", true},
		{" a.example , ,127.0.0.1 ", "", "127.0.0.1", true},
		{"127.0.0.1", "", "127.0.0.2", false},
		{"127.0.0.1", "", "127.0.0.1:9999", true},
		{"[::1]", "", "::1", true},
		{"::1", "", "[::1]:80", true},
		{"", "", "anything.example", false},
		{"", "prod", "anything.example", false},
		{"", "dev", "anything.example", true},
		{" , ", "dev", "anything.example", true},
		{"", "development", "anything.example", false},
		{"a.example", "dev", "b.example", false},
		{"a.example", "", "", false},
	}
	for _, tt := range tests {
		a := ParseAllowlist(tt.list, tt.env)
		if got := a.Allows(tt.host); got != tt.want {
			t.Errorf("ParseAllowlist(%q, %q).Allows(%q) = %v, want %v", tt.list, tt.env, tt.host, got, tt.want)
		}
	}
	var zero Allowlist
	if zero.Allows("x.example") || !AllowAll().Allows("x.example") {
		t.Fatal("zero/AllowAll")
	}
	if h := ParseAllowlist("A.example,b.example:1", "").Hosts(); strings.Join(h, ",") != "a.example,b.example" {
		t.Fatalf("Hosts %v", h)
	}
}

func TestCredentials(t *testing.T) {
	newReq := func() *http.Request {
		r, _ := http.NewRequest("GET", "https://x.example/p?a=1&api_key=old&b=2", nil)
		r.Header.Set("Cookie", "theme=dark; sid=old")
		return r
	}
	tests := []struct {
		name   string
		auth   *air.Auth
		check  func(r *http.Request) string // returns what to compare
		expect string
	}{
		{"nil auth → bearer", nil, func(r *http.Request) string { return r.Header.Get("Authorization") }, "Bearer s3cr3t"},
		{"bearer type", &air.Auth{Type: air.AuthBearer}, func(r *http.Request) string { return r.Header.Get("Authorization") }, "Bearer s3cr3t"},
		{"bearer carrier with scheme", &air.Auth{Type: air.AuthBearer, Carrier: &air.Carrier{In: "header", Name: "Authorization", Scheme: "Bearer"}},
			func(r *http.Request) string { return r.Header.Get("Authorization") }, "Bearer s3cr3t"},
		{"basic", &air.Auth{Type: air.AuthBasic, Carrier: &air.Carrier{In: "header", Name: "Authorization", Scheme: "Basic"}},
			func(r *http.Request) string { return r.Header.Get("Authorization") }, "Basic czNjcjN0"},
		{"api_key header", &air.Auth{Type: air.AuthAPIKey, Carrier: &air.Carrier{In: "header", Name: "X-API-Key"}},
			func(r *http.Request) string { return r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Authorization") }, "s3cr3t|"},
		{"api_key query replaces", &air.Auth{Type: air.AuthAPIKey, Carrier: &air.Carrier{In: "query", Name: "api_key"}},
			func(r *http.Request) string { return r.URL.RawQuery }, "a=1&b=2&api_key=s3cr3t"},
		{"api_key cookie replaces", &air.Auth{Type: air.AuthAPIKey, Carrier: &air.Carrier{In: "cookie", Name: "sid"}},
			func(r *http.Request) string { return r.Header.Get("Cookie") }, "theme=dark; sid=s3cr3t"},
		{"api_key without carrier", &air.Auth{Type: air.AuthAPIKey},
			func(r *http.Request) string { return r.Header.Get("Authorization") }, "Bearer s3cr3t"},
		{"custom_header", &air.Auth{Type: air.AuthCustomHeader, Carrier: &air.Carrier{In: "header", Name: "X-Token", Scheme: "Token"}},
			func(r *http.Request) string { return r.Header.Get("X-Token") }, "Token s3cr3t"},
		{"client credentials with carrier", &air.Auth{Type: air.AuthOAuth2ClientCredentials, Carrier: &air.Carrier{In: "query", Name: "access_token"}},
			func(r *http.Request) string { return r.URL.Query().Get("access_token") }, "s3cr3t"},
		{"unknown carrier location", &air.Auth{Type: air.AuthAPIKey, Carrier: &air.Carrier{In: "body", Name: "k"}},
			func(r *http.Request) string { return r.Header.Get("Authorization") }, "Bearer s3cr3t"},
	}
	for _, tt := range tests {
		r := newReq()
		ApplyStatic(r, tt.auth, "s3cr3t")
		if got := tt.check(r); got != tt.expect {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.expect)
		}
	}
	r := newReq()
	ApplyBearer(r, "oauth-at")
	if r.Header.Get("Authorization") != "Bearer oauth-at" {
		t.Fatal("ApplyBearer")
	}
	r, _ = http.NewRequest("GET", "https://x.example/", nil)
	ApplyStatic(r, &air.Auth{Type: air.AuthAPIKey, Carrier: &air.Carrier{In: "cookie", Name: "k"}}, "v")
	if r.Header.Get("Cookie") != "k=v" {
		t.Fatalf("fresh cookie %q", r.Header.Get("Cookie"))
	}
	if !UnsupportedAuth(&air.Auth{Type: air.AuthMTLS}) || UnsupportedAuth(&air.Auth{Type: air.AuthBasic}) || UnsupportedAuth(nil) {
		t.Fatal("UnsupportedAuth")
	}
}

func envErr(t *testing.T, err error, code string) *envelope.Error {
	t.Helper()
	var e *envelope.Error
	if !errors.As(err, &e) {
		t.Fatalf("err %v is not an envelope", err)
	}
	if e.Code != code {
		t.Fatalf("code %s (%s), want %s", e.Code, e.Message, code)
	}
	return e
}

func loopbackClient(opts ClientOptions) *Client {
	opts.Allowlist = ParseAllowlist("127.0.0.1", "")
	return NewClient(&opts)
}

func TestDoEndToEndWithCredential(t *testing.T) {
	var seen atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.Store(fmt.Sprintf("%s %s auth=%s idem=%s body=%s", r.Method, r.RequestURI, r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key"), b))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(201)
		fmt.Fprint(w, `{"id":100,"big":12345678901234567890,"body":"Looks good."}`)
	}))
	defer srv.Close()
	args := decodeArgs(t, `{"owner":"oc to","repo":"a/b","issue_number":2,"body":"Looks good.","idempotency_key":"01JB"}`)
	req, err := BuildRequest(context.Background(), srv.URL, createIssueComment(), args)
	if err != nil {
		t.Fatal(err)
	}
	ApplyStatic(req, &air.Auth{Type: air.AuthBearer}, "e2e-upstream-pat")
	resp, err := loopbackClient(ClientOptions{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `POST /repos/oc%20to/a%2Fb/issues/2/comments auth=Bearer e2e-upstream-pat idem=01JB body={"body":"Looks good."}`
	if got := seen.Load(); got != want {
		t.Fatalf("upstream saw\n %v\nwant\n %s", got, want)
	}
	if resp.Status != 201 || !resp.OK() || !resp.IsJSON {
		t.Fatalf("resp %+v", resp)
	}
	m := resp.Decoded().(map[string]any)
	if m["id"] != json.Number("100") || m["big"] != json.Number("12345678901234567890") {
		t.Fatalf("JSON %v", m)
	}
	if ErrorFor(resp, createIssueComment()) != nil {
		t.Fatal("ErrorFor on 201")
	}
}

func TestDoDisallowedHost(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, c := range []*Client{
		loopbackClient(ClientOptions{}),
		NewClient(nil),
		NewClient(&ClientOptions{Allowlist: ParseAllowlist("", "prod")}),
	} {
		req, _ := http.NewRequest("GET", url+"/x?api_key=SECRET", nil)
		_, err := c.Do(req)
		e := envErr(t, err, envelope.PolicyDenied)
		if !strings.HasPrefix(e.Message, "Upstream host is not in the allowed hosts list") || strings.Contains(e.Message, "SECRET") {
			t.Fatalf("message %q", e.Message)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a refused request reached the upstream")
	}
}

func TestDoRedirectNotFollowed(t *testing.T) {
	var targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { targetHits.Add(1) }))
	defer target.Close()
	for _, status := range []int{301, 302, 303, 307, 308} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/stolen", status)
		}))
		req, _ := http.NewRequest("POST", redirector.URL+"/x", strings.NewReader(`{"a":1}`))
		ApplyBearer(req, "tok")
		_, err := loopbackClient(ClientOptions{}).Do(req)
		redirector.Close()
		e := envErr(t, err, envelope.UpstreamUnavailable)
		if !strings.Contains(e.Message, "connection_reset after response") || e.Retryable {
			t.Fatalf("message %q retryable %v", e.Message, e.Retryable)
		}
		if !strings.Contains(string(e.Details), `"transport":"connection_reset","phase":"after response"`) || e.Upstream == nil || e.Upstream.Status != status {
			t.Fatalf("details %s upstream %+v", e.Details, e.Upstream)
		}
	}
	if targetHits.Load() != 0 {
		t.Fatal("the redirect target was contacted")
	}
	// 304 is not a redirect: it comes back as a response.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(304) }))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	resp, err := loopbackClient(ClientOptions{}).Do(req)
	if err != nil || resp.Status != 304 {
		t.Fatalf("304: %v %v", resp, err)
	}
}

func TestDoResponseCap(t *testing.T) {
	const limit = DefaultMaxResponseBytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := limit
		switch r.URL.Path {
		case "/over":
			n = limit + 1
		case "/chunked-over":
			n = limit + 1
			w.Header().Set("Content-Type", "application/octet-stream")
			// No Content-Length: flush to force chunked encoding.
			chunk := bytes.Repeat([]byte("a"), 1<<20)
			for n > 0 {
				k := min(n, int64(len(chunk)))
				if _, err := w.Write(chunk[:k]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				n -= k
			}
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(n))
		_, _ = w.Write(bytes.Repeat([]byte("a"), int(n)))
	}))
	defer srv.Close()
	c := loopbackClient(ClientOptions{})
	req, _ := http.NewRequest("GET", srv.URL+"/exact", nil)
	resp, err := c.Do(req)
	if err != nil || int64(len(resp.Body)) != limit || resp.IsJSON {
		t.Fatalf("exactly 8 MiB: %v", err)
	}
	for _, p := range []string{"/over", "/chunked-over"} {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		_, err := c.Do(req)
		e := envErr(t, err, envelope.UpstreamUnavailable)
		if !strings.Contains(e.Message, "response too large") {
			t.Fatalf("%s: message %q", p, e.Message)
		}
	}
}

// TestDoTimeout: an upstream that never finishes its answer (its head, or
// its body) is given up at the client's timeout: the server never ends the
// request itself, so Do returning at all, with the timeout in its message,
// and the server seeing the request cancelled are the proof.
func TestDoTimeout(t *testing.T) {
	release := make(chan struct{})
	cancelled := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
			cancelled <- r.URL.Path
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for the handlers
	c := loopbackClient(ClientOptions{Timeout: 100 * time.Millisecond})
	for _, p := range []string{"/slow-head", "/slow-body"} {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		done := make(chan error, 1)
		go func() { _, err := c.Do(req); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatalf("%s: hung: Do did not give up at its 100 ms timeout", p)
		}
		e := envErr(t, err, envelope.UpstreamTimeout)
		if !e.Retryable || !strings.Contains(e.Message, "100 ms") {
			t.Fatalf("%s: %v", p, e)
		}
		select {
		case got := <-cancelled:
			if got != p {
				t.Fatalf("%s: the server saw %s cancelled", p, got)
			}
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatalf("%s: hung: the server never saw the request cancelled", p)
		}
	}
	// A caller's cancellation is not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/slow-head", nil)
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := loopbackClient(ClientOptions{}).Do(req)
	envErr(t, err, envelope.UpstreamUnavailable)
}

func TestDoConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	req, _ := http.NewRequest("GET", "http://"+addr+"/x?token=SECRET", nil)
	_, err = loopbackClient(ClientOptions{}).Do(req)
	e := envErr(t, err, envelope.UpstreamUnavailable)
	if !e.Retryable || !strings.Contains(string(e.Details), "connection_refused") || strings.Contains(e.Message, "SECRET") {
		t.Fatalf("refused: %s %s", e.Message, e.Details)
	}
	// A server that hangs up mid-answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer srv.Close()
	req, _ = http.NewRequest("GET", srv.URL, nil)
	_, err = loopbackClient(ClientOptions{}).Do(req)
	e = envErr(t, err, envelope.UpstreamUnavailable)
	if !strings.Contains(string(e.Details), "connection_reset") {
		t.Fatalf("hang-up: %s", e.Details)
	}
}

func TestDoBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			w.WriteHeader(204)
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, `{"looks":"like json"}`)
		case "/untyped":
			w.Header()["Content-Type"] = nil
			fmt.Fprint(w, `[1,2]`)
		case "/bad":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"a":1} trailing`)
		}
	}))
	defer srv.Close()
	c := loopbackClient(ClientOptions{})
	for path, wantJSON := range map[string]bool{"/empty": false, "/text": false, "/untyped": true, "/bad": false} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.IsJSON != wantJSON || (resp.Decoded() != nil) != wantJSON {
			t.Errorf("%s: IsJSON %v JSON %v", path, resp.IsJSON, resp.JSON)
		}
	}
}

func TestErrorFor(t *testing.T) {
	op := &air.Operation{ID: "github.issues.list", Retries: air.Retries{Mode: "safe"}}
	h := func(kv ...string) http.Header {
		hh := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			hh.Set(kv[i], kv[i+1])
		}
		return hh
	}
	js := func(s string) any {
		return decodeJSON([]byte(s))
	}
	tests := []struct {
		status    int
		header    http.Header
		body      any
		code      string
		retryable bool
		msg       string
		upCode    string
		reqID     string
		details   string
	}{
		{400, nil, js(`{"message":"Validation Failed","code":"invalid"}`), envelope.ValidationError, false, "Upstream answered 400 Bad Request: Validation Failed", "invalid", "", ""},
		{422, nil, nil, envelope.ValidationError, false, "Upstream answered 422 Unprocessable Entity (the upstream rejected the request).", "", "", ""},
		{401, h("X-GitHub-Request-Id", "ABCD:1234"), js(`{"message":"Bad credentials"}`), envelope.AuthRequired, false, "Upstream answered 401 Unauthorized: Bad credentials", "", "ABCD:1234", ""},
		{403, h("X-Request-Id", "req-1"), js(`{"error":"insufficient_scope"}`), envelope.PermissionDenied, false, "Upstream answered 403 Forbidden (the credential lacks permission).", "insufficient_scope", "req-1", ""},
		{404, nil, js(`{"message":"Not Found"}`), envelope.NotFound, false, "Upstream answered 404 Not Found: Not Found", "", "", ""},
		{409, nil, js(`{"error":{"message":"Already exists","code":"dup"}}`), envelope.Conflict, false, "Upstream answered 409 Conflict: Already exists", "dup", "", ""},
		{412, nil, nil, envelope.Conflict, false, "", "", "", ""},
		{429, h("Retry-After", "7"), js(`{"error":"Slow down please"}`), envelope.RateLimited, true, "Upstream answered 429 Too Many Requests: Slow down please", "", "", `{"retry_after":7}`},
		{500, nil, js(`{"message":"` + strings.Repeat("x", 400) + `"}`), envelope.UpstreamUnavailable, true, "Upstream answered 500 Internal Server Error (the upstream failed).", "", "", ""},
		{503, nil, "not json", envelope.UpstreamUnavailable, true, "", "", "", ""},
		{418, nil, nil, envelope.UnknownUpstreamError, false, "", "", "", ""},
		{304, nil, nil, envelope.UnknownUpstreamError, false, "", "", "", ""},
		{401, nil, js(`{"message":"Token e2e-upstream-pat is invalid; Authorization: Bearer abc.def"}`), envelope.AuthRequired, false,
			"Upstream answered 401 Unauthorized: Token *** is invalid; Authorization: Bearer ***", "", "", ""},
	}
	for _, tt := range tests {
		resp := &Response{Status: tt.status, Header: tt.header, JSON: tt.body}
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		e := ErrorFor(resp, op, "e2e-upstream-pat")
		if e == nil {
			t.Fatalf("%d: nil", tt.status)
		}
		if e.Code != tt.code || e.Retryable != tt.retryable || e.SafeToRetry != tt.retryable || e.Operation != op.ID {
			t.Errorf("%d: %+v", tt.status, e)
		}
		if tt.msg != "" && e.Message != tt.msg {
			t.Errorf("%d: message %q, want %q", tt.status, e.Message, tt.msg)
		}
		if e.Upstream == nil || e.Upstream.Status != tt.status || e.Upstream.Code != tt.upCode || e.Upstream.RequestID != tt.reqID {
			t.Errorf("%d: upstream %+v", tt.status, e.Upstream)
		}
		if string(e.Details) != tt.details {
			t.Errorf("%d: details %s, want %s", tt.status, e.Details, tt.details)
		}
		if strings.Contains(string(e.Marshal()), "e2e-upstream-pat") || strings.Contains(string(e.Marshal()), "abc.def") {
			t.Errorf("%d: envelope leaks a credential: %s", tt.status, e.Marshal())
		}
	}
	if ErrorFor(&Response{Status: 200}, op) != nil || ErrorFor(nil, op) != nil {
		t.Fatal("ErrorFor on success")
	}
	// An unsafe operation's retryable error is not safe to retry.
	e := ErrorFor(&Response{Status: 503, Header: http.Header{}}, &air.Operation{ID: "x", Retries: air.Retries{Mode: "none"}})
	if !e.Retryable || e.SafeToRetry {
		t.Fatalf("unsafe op: %+v", e)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]int64{
		"0": 0, "120": 120, "Wed, 01 Jan 2025 00:00:30 GMT": 30, "Tue, 31 Dec 2024 23:00:00 GMT": 0,
	} {
		if got, ok := retryAfter(v, now); !ok || got != want {
			t.Errorf("retryAfter(%q) = %d %v, want %d", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "-1"} {
		if _, ok := retryAfter(v, now); ok {
			t.Errorf("retryAfter(%q) accepted", v)
		}
	}
}

func TestParseTimeoutMS(t *testing.T) {
	if d, err := ParseTimeoutMS(""); err != nil || d != DefaultTimeout {
		t.Fatal(d, err)
	}
	if d, err := ParseTimeoutMS(" 1500 "); err != nil || d != 1500*time.Millisecond {
		t.Fatal(d, err)
	}
	for _, v := range []string{"0", "-5", "1.5", "abc", "99999999999999999999"} {
		if _, err := ParseTimeoutMS(v); err == nil || !strings.Contains(err.Error(), TimeoutEnv) {
			t.Errorf("ParseTimeoutMS(%q) = %v", v, err)
		}
	}
}

func TestNewClientDefaults(t *testing.T) {
	c := NewClient(nil)
	if c.Timeout() != DefaultTimeout || c.max != DefaultMaxResponseBytes || c.Allowlist().AllowsAny() {
		t.Fatal("defaults")
	}
	tr := NewTransport()
	if tr.MaxIdleConnsPerHost < 64 || tr.DisableKeepAlives {
		t.Fatal("transport not tuned")
	}
}

func TestCheckHost(t *testing.T) {
	c := loopbackClient(ClientOptions{})
	if err := c.CheckHost("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	e := envErr(t, c.CheckHost("api.github.example"), envelope.PolicyDenied)
	if string(e.Details) != `{"host":"api.github.example"}` {
		t.Fatalf("details %s", e.Details)
	}
}

func TestAsEnvelope(t *testing.T) {
	if AsEnvelope(nil) != nil {
		t.Fatal("nil")
	}
	orig := &envelope.Error{Code: envelope.UpstreamTimeout, Message: "x"}
	if AsEnvelope(fmt.Errorf("wrapped: %w", orig)) != orig {
		t.Fatal("wrapped envelope not found")
	}
	e := AsEnvelope(errors.New("Get https://x.example/?api_key=SECRET: refused"))
	if e.Code != envelope.UpstreamUnavailable || strings.Contains(e.Message, "SECRET") {
		t.Fatalf("%+v", e)
	}
}

// TestReadAll: the presized reader returns what io.ReadAll returns, for
// declared lengths that are right, short, long and unknown, and readers
// that return data with EOF or in small pieces.
func TestReadAll(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 4096, 100_000} {
		data := bytes.Repeat([]byte("abcdefghij"), size/10+1)[:size]
		for _, declared := range []int64{-1, 0, int64(size), int64(size) / 2, int64(size) * 2, int64(size) + 1} {
			for name, r := range map[string]func() io.Reader{
				"plain":   func() io.Reader { return bytes.NewReader(data) },
				"one":     func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
				"dataEOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
			} {
				got, err := readAll(r(), declared)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("size %d declared %d %s: %d bytes, %v", size, declared, name, len(got), err)
				}
			}
		}
	}
	boom := errors.New("boom")
	got, err := readAll(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 10)
	if err != boom || string(got) != "abc" {
		t.Fatalf("error reader: %q, %v", got, err)
	}
}

// TestIsJSONType: the same answer as taking mime.ParseMediaType's media
// type (or, when it fails, the part before ';'), on well-formed and
// malformed values.
func TestIsJSONType(t *testing.T) {
	ref := func(ct string) bool {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
		}
		return mt == "application/json" || strings.HasSuffix(mt, "+json")
	}
	for _, ct := range []string{"", "application/json", "Application/JSON", " application/json ; charset=utf-8",
		"application/problem+json", "application/vnd.github+json; charset=utf-8", "text/json", "application/json;;",
		"application/json; charset", "application/json foo", "application/jsonx", "+json", "application/json\u00a0",
		"application/json; a=\"unterminated", "APPLICATION/VND.API+JSON;q=1"} {
		if got, want := isJSONType(ct), ref(ct); got != want {
			t.Errorf("isJSONType(%q) = %v, want %v", ct, got, want)
		}
	}
}
