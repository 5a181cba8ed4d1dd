package connectdoor_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/door/connectdoor"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// newDoor serves the committed github-mini workspace (an API-key
// connector) with a vault in a temporary directory (nil records: none).
func newDoor(t *testing.T, withVault bool) (*connectdoor.Door, *vault.Store) {
	t.Helper()
	f, err := fleet.Load("../../serve/testdata/workspace")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Pointer[fleet.Fleet]
	served.Store(f)
	exec := &executor.Executor{Served: &served}
	var st *vault.Store
	var records connect.Records
	if withVault {
		if st, err = vault.Open(filepath.Join(t.TempDir(), "vault"), bytes.Repeat([]byte{9}, 32)); err != nil {
			t.Fatal(err)
		}
		records = st
	}
	d, err := connectdoor.New(exec, records, connect.New(records, nil), &connectdoor.Options{PublicURL: "http://127.0.0.1:8080/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return d, st
}

func serve(d *connectdoor.Door, method, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	d.Serve(rec, httptest.NewRequest(method, path, strings.NewReader(body)), "local:ada")
	return rec
}

// TestNeedsOAuth: the door runs OAuth flows with the gateway's service
// only, never one of its own.
func TestNeedsOAuth(t *testing.T) {
	if _, err := connectdoor.New(&executor.Executor{}, nil, nil, nil); !errors.Is(err, connectdoor.ErrNoOAuth) {
		t.Errorf("New without OAuth: %v", err)
	}
}

// TestAPIKeyThenStatus: a submitted key is stored for the person and listed
// by /connect/status, never echoed.
func TestAPIKeyThenStatus(t *testing.T) {
	d, st := newDoor(t, true)
	if rec := serve(d, "POST", "/connect/start", `{"connector":"github"}`); rec.Code != 200 ||
		rec.Body.String() != `{"kind":"static","connector":"github","submit":"/connect/api-key"}` {
		t.Errorf("start: %d %s", rec.Code, rec.Body)
	}
	rec := serve(d, "POST", "/connect/api-key", `{"connector":"github","account":"work","api_key":"s3cret-key"}`)
	if rec.Code != 200 || rec.Body.String() != `{"connected":true,"connector":"github","account":"work"}` {
		t.Fatalf("api-key: %d %s", rec.Code, rec.Body)
	}
	conn, err := st.Get("local:ada", "github", "work")
	if err != nil || conn.Secret != "s3cret-key" || conn.Kind != "static" || conn.Status != "active" {
		t.Fatalf("stored %+v, %v", conn, err)
	}
	rec = serve(d, "GET", "/connect/status", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"connector":"github","account":"work","kind":"static","status":"active"`) ||
		strings.Contains(rec.Body.String(), "s3cret") {
		t.Errorf("status: %d %s", rec.Code, rec.Body)
	}
}

// TestRefusals: bad bodies, unknown connectors and routes, and no vault
// are coded refusals.
func TestRefusals(t *testing.T) {
	d, _ := newDoor(t, true)
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/connect/start", `[]`, `"invalid_request"`},
		{"POST", "/connect/start", `{}`, `"invalid_request"`},
		{"POST", "/connect/start", `{"connector":"github","account":"a b"}`, `"invalid_request"`},
		{"POST", "/connect/start", `{"connector":"gitlab"}`, `"unknown_connector"`},
		{"POST", "/connect/api-key", `{"connector":"github","api_key":"a\nb"}`, `"invalid_secret"`},
		{"GET", "/connect/start", ``, `"not_found"`},
		{"POST", "/connect/elsewhere", `{}`, `"not_found"`},
	} {
		if rec := serve(d, c.method, c.path, c.body); !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s %s %s: %d %s, want %s", c.method, c.path, c.body, rec.Code, rec.Body, c.want)
		}
	}
	novault, _ := newDoor(t, false)
	if rec := serve(novault, "POST", "/connect/api-key", `{"connector":"github","api_key":"k"}`); rec.Code != http.StatusServiceUnavailable ||
		!strings.Contains(rec.Body.String(), `"vault_unavailable"`) {
		t.Errorf("no vault: %d %s", rec.Code, rec.Body)
	}
	if rec := serve(novault, "GET", "/connect/status", ""); rec.Code != 200 || rec.Body.String() != `{"sub":"local:ada","connections":[]}` {
		t.Errorf("status without a vault: %d %s", rec.Code, rec.Body)
	}
}

// TestCallback: the OAuth callback takes GET only and refuses an unknown
// state in plain text.
func TestCallback(t *testing.T) {
	d, _ := newDoor(t, true)
	rec := httptest.NewRecorder()
	d.ServeCallback(rec, httptest.NewRequest("POST", "/connect/callback", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
		t.Errorf("POST: %d %v", rec.Code, rec.Header())
	}
	rec = httptest.NewRecorder()
	d.ServeCallback(rec, httptest.NewRequest("GET", "/connect/callback?state=nope&code=x", nil))
	if rec.Code < 400 || !strings.HasPrefix(rec.Body.String(), "Not connected: ") || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("unknown state: %d %s", rec.Code, rec.Body)
	}
}
