package serve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string, body string) (int, string, http.Header) {
	t.Helper()
	var resp *http.Response
	var err error
	if body == "" {
		resp, err = http.Get(url)
	} else {
		resp, err = http.Post(url, "application/json", strings.NewReader(body))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.Close {
		resp.Header.Set("Connection", "close") // net/http moves it to resp.Close
	}
	return resp.StatusCode, string(b), resp.Header
}

// TestLoadingThenServing: while the fleet loads the server answers
// /healthz 200, /readyz 503 and refuses a call 503 gateway_loading once it
// has waited its hold; a call held when the gateway arrives is answered by
// it, and a connection opened while loading is served by the gateway
// afterwards (one server throughout: no connection changes hands).
func TestLoadingThenServing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLoading()
	l.hold = 50 * time.Millisecond
	var h switchHandler
	h.set(l)
	srv := &http.Server{Handler: &h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	// A keep-alive connection opened while loading.
	var conns int
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !info.Reused {
			conns++
		}
	}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	keep := func(path string) (int, string) {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, base+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := keep("/healthz"); st != 200 || !strings.Contains(body, `"loading":true`) {
		t.Errorf("/healthz while loading: %d %s", st, body)
	}
	st, body, _ := get(t, base+"/readyz", "")
	var z struct {
		Ready   *bool `json:"ready"`
		Loading bool  `json:"loading"`
	}
	if err := json.Unmarshal([]byte(body), &z); st != 503 || err != nil || z.Ready == nil || *z.Ready || !z.Loading {
		t.Errorf("/readyz while loading: %d %s", st, body)
	}
	st, body, hdr := get(t, base+"/call/x__y", `{"arguments":{}}`)
	var e struct {
		Error struct {
			Code      string `json:"code"`
			Retryable bool   `json:"retryable"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); st != 503 || err != nil || e.Error.Code != "gateway_loading" || !e.Error.Retryable ||
		hdr.Get("Retry-After") == "" || hdr.Get("Connection") != "close" {
		t.Errorf("a call while loading: %d %s %v", st, body, hdr)
	}

	// A call held while the gateway arrives is answered by it.
	l.hold = 10 * time.Second
	gw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "gateway "+r.URL.Path) })
	answered := make(chan string, 1)
	go func() {
		_, body, _ := get(t, base+"/call/x__y", `{}`)
		answered <- body
	}()
	time.Sleep(50 * time.Millisecond)
	h.set(gw)
	l.serving(gw)
	if body := <-answered; body != "gateway /call/x__y" {
		t.Errorf("held call answered %q (want the gateway's answer)", body)
	}
	if st, body := keep("/healthz"); st != 200 || body != "gateway /healthz" {
		t.Errorf("/healthz once the gateway serves: %d %q", st, body)
	}
	if conns != 1 {
		t.Errorf("the keep-alive client opened %d connections, want 1 (the loading one, kept)", conns)
	}
}

// TestLoadingFailedRefuses: when the load fails, held calls are refused at
// once rather than waiting out their hold.
func TestLoadingFailedRefuses(t *testing.T) {
	l := newLoading()
	l.hold = time.Hour
	l.serving(nil)
	rec := &recorder{h: http.Header{}}
	req, _ := http.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	l.ServeHTTP(rec, req)
	if rec.status != 503 || !strings.Contains(rec.body.String(), "gateway_loading") {
		t.Errorf("got %d %s", rec.status, rec.body.String())
	}
}

type recorder struct {
	h      http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
