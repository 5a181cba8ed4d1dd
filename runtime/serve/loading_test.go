package serve

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
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

// TestLoadingThenServing: while the fleet loads the listener answers
// /healthz 200, /readyz 503 and refuses a call 503 gateway_loading once it
// has waited its hold; a call held when the gateway arrives is answered by
// it, and so is every connection after the handoff, on the same listener.
func TestLoadingThenServing(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := newHandoff(raw)
	ln := h.phase(true)
	defer ln.Close()
	l := newLoading()
	l.hold = 50 * time.Millisecond
	stop := serveLoading(h, l)
	base := "http://" + raw.Addr().String()

	st, body, hdr := get(t, base+"/healthz", "")
	if st != 200 || !strings.Contains(body, `"loading":true`) || hdr.Get("Connection") != "close" {
		t.Errorf("/healthz while loading: %d %s %v", st, body, hdr)
	}
	st, body, _ = get(t, base+"/readyz", "")
	var z struct {
		Ready   *bool `json:"ready"`
		Loading bool  `json:"loading"`
	}
	if err := json.Unmarshal([]byte(body), &z); st != 503 || err != nil || z.Ready == nil || *z.Ready || !z.Loading {
		t.Errorf("/readyz while loading: %d %s", st, body)
	}
	st, body, hdr = get(t, base+"/call/x__y", `{"arguments":{}}`)
	var e struct {
		Error struct {
			Code      string `json:"code"`
			Retryable bool   `json:"retryable"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); st != 503 || err != nil || e.Error.Code != "gateway_loading" || !e.Error.Retryable || hdr.Get("Retry-After") == "" {
		t.Errorf("a call while loading: %d %s", st, body)
	}

	// A call held while the gateway arrives is answered by it.
	l.hold = 10 * time.Second
	gw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "gateway "+r.URL.Path) })
	answered := make(chan string, 1)
	go func() {
		_, body, hdr := get(t, base+"/call/x__y", `{}`)
		answered <- body + " " + hdr.Get("Connection")
	}()
	time.Sleep(50 * time.Millisecond)
	l.serving(gw)
	if body := <-answered; body != "gateway /call/x__y close" {
		t.Errorf("held call answered %q (want the gateway's answer, closing the connection)", body)
	}
	stop()
	srv := &http.Server{Handler: gw}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if st, body, _ := get(t, base+"/healthz", ""); st != 200 || body != "gateway /healthz" {
		t.Errorf("/healthz after the handoff: %d %q", st, body)
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
