package jsonfetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestGet(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/json" {
			http.Error(w, "accept", 406)
			return
		}
		w.Write([]byte(`{"keys": []}`))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`"` + strings.Repeat("x", 100) + `"`)) })
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`<html>`)) })
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404); w.Write([]byte(`{}`)) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/to-http", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, srv.URL+"/ok", http.StatusFound) })

	c := Client(time.Second)
	ctx := context.Background()
	raw, err := Get(ctx, c, srv.URL+"/ok", 64, time.Second)
	if err != nil || string(raw) != `{"keys": []}` {
		t.Fatalf("ok: %q %v", raw, err)
	}
	for _, p := range []string{"/big", "/html", "/404", "/slow", "/to-http", "/nowhere\x7f"} {
		if raw, err := Get(ctx, c, srv.URL+p, 64, 200*time.Millisecond); err != ErrUnreadable || raw != nil {
			t.Errorf("%s: %q %v", p, raw, err)
		}
	}
}
