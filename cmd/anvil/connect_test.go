package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/cmdline"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// connectGateway is a gateway serving github (a key connector, upstream the
// mock) and tracker (an OAuth connector), started in-process.
type connectGateway struct {
	*serveSetup
	mock *mockupstream.Server
	url  string // the /mcp URL
}

func newConnectGateway(t *testing.T) *connectGateway {
	t.Helper()
	mock, err := mockupstream.Start(mockupstream.Options{Token: "e2e-upstream-pat"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	s := newServeSetup(t, mock.URL)
	copyBundle(t, gatewayFixture, filepath.Join(s.ws, "tracker"), mock.URL, func(doc *air.Document) {
		doc.Service.ID = "tracker"
		doc.Service.Auth = air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: "oauth", Scopes: []string{"tickets:read"},
			Provider: &air.Provider{AuthorizationEndpoint: "http://127.0.0.1:9/authorize", TokenEndpoint: "http://127.0.0.1:9/token"}}
		for i := range doc.Operations {
			doc.Operations[i].Auth = nil
		}
	})
	vars := map[string]string{}
	for k, v := range s.vars {
		vars[k] = v
	}
	vars["ANVIL_CONNECT_TRACKER_CLIENT_ID"] = "tracker-client"
	serveFleet(t, s.ws, s.port, vars)
	return &connectGateway{serveSetup: s, mock: mock, url: s.vars["ANVIL_INBOUND_AUDIENCE"]}
}

// serveFleet serves the workspace ws on 127.0.0.1:port with the gateway
// environment vars until the test ends.
func serveFleet(t *testing.T, ws string, port int, vars map[string]string) {
	t.Helper()
	cfg, err := serve.ConfigFromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host, cfg.Port = "127.0.0.1", port
	f, err := fleet.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	g, err := serve.NewGateway(cfg, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = g.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// tokenFile writes tok to a 0600 file and returns its path.
func (c *connectGateway) tokenFile(t *testing.T, name, tok string) string {
	t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConnectCommand(t *testing.T) {
	saved := gatewayStartWait
	gatewayStartWait = 600 * time.Millisecond
	t.Cleanup(func() { gatewayStartWait = saved })
	c := newConnectGateway(t)
	connectTok := c.tokenFile(t, "connect.token", c.token("connect"))
	turnTok := c.tokenFile(t, "turn.token", c.token(""))
	emptyTok := c.tokenFile(t, "empty.token", "  ")
	emptyWS := filepath.Join(c.dir, "emptyws")
	if err := os.MkdirAll(emptyWS, 0o755); err != nil {
		t.Fatal(err)
	}
	// A workspace naming a connector the gateway does not serve.
	cliWS := filepath.Join(c.dir, "cliws")
	copyBundle(t, gatewayFixture, filepath.Join(cliWS, "extra"), "http://127.0.0.1:1", nil)
	deadGateway := fmt.Sprintf("http://127.0.0.1:%d/mcp", freePort(t))

	cases := []struct {
		name   string
		vars   map[string]string
		stdin  string
		args   []string
		code   int
		stdout string   // exact
		stderr []string // substrings
	}{
		{"unknown connector", nil, "", []string{"connect", c.ws, "jira", "--gateway", c.url, "--token-file", connectTok}, 1, "",
			[]string{"anvil: no connector 'jira' in " + c.ws + " (it serves: github, tracker)."}},
		{"no bundles", nil, "", []string{"connect", emptyWS, "github", "--gateway", c.url, "--token-file", connectTok}, 1, "",
			[]string{"anvil: no connector 'github' in " + emptyWS + " (no bundles found)."}},
		{"no gateway URL", nil, "", []string{"connect", c.ws, "github", "--token-file", connectTok}, 1, "", []string{"--gateway", "ANVIL_GATEWAY_URL"}},
		{"gateway URL with userinfo", nil, "", []string{"connect", c.ws, "github", "--gateway", "http://u:p@127.0.0.1:1/mcp", "--token-file", connectTok}, 1, "",
			[]string{"without credentials"}},
		{"gateway URL not http", nil, "", []string{"connect", c.ws, "github", "--gateway", "ftp://127.0.0.1/mcp", "--token-file", connectTok}, 1, "", []string{"http(s)"}},
		{"no token", nil, "", []string{"connect", c.ws, "github", "--gateway", c.url}, 4, "",
			[]string{"anvil: the gateway wants a connect token (it verifies Branchyard tokens): pass --token-file or set ANVIL_GATEWAY_TOKEN_FILE"}},
		{"empty token file", nil, "", []string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", emptyTok}, 4, "", []string{"missing or empty"}},
		{"missing token file", nil, "", []string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", filepath.Join(c.dir, "nope")}, 4, "", []string{"missing or empty"}},
		{"gateway unreachable", nil, "", []string{"connect", c.ws, "github", "--gateway", deadGateway, "--token-file", connectTok}, 7, "",
			[]string{"anvil: waiting for the gateway to answer (up to 600ms)...", "could not be reached"}},
		{"turn token refused", nil, "", []string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", turnTok, "--api-key-stdin"}, 4, "",
			[]string{"anvil: the gateway refused (403 connect_token_required): "}},
		{"connector the gateway does not serve", nil, "", []string{"connect", cliWS, "extra", "--gateway", c.url, "--token-file", connectTok}, 1, "",
			[]string{"anvil: the gateway refused (404 unknown_connector): "}},
		{"key connector without --api-key-stdin", nil, "", []string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", connectTok}, 1, "",
			[]string{"--api-key-stdin"}},
		{"empty stdin", nil, " \n", []string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", connectTok, "--api-key-stdin"}, 1, "",
			[]string{"no key on stdin"}},
		{"key with a line break inside", nil, "a\nb\n", []string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", connectTok, "--api-key-stdin"}, 1, "",
			[]string{"anvil: the gateway refused (400 invalid_secret): "}},
		{"oauth connector prints the URL", nil, "", []string{"connect", c.ws, "tracker", "--account", "work", "--gateway", c.url, "--token-file", connectTok, "--no-wait"}, 0, "*oauth",
			[]string{"open this URL"}},
		{"oauth connector waits for the login until its timeout", nil, "", []string{"connect", c.ws, "tracker", "--gateway", c.url, "--token-file", connectTok, "--timeout", "1500ms"}, 1, "*oauth",
			[]string{"open this URL", "anvil: waiting for the login to complete (until ", "anvil: the login of tracker did not complete by "}},
		{"key connector from the environment", map[string]string{"ANVIL_GATEWAY_URL": c.url, "ANVIL_GATEWAY_TOKEN_FILE": connectTok}, "e2e-upstream-pat\n",
			[]string{"connect", c.ws, "github", "--api-key-stdin"}, 0, "Connected github (account default).\n", nil},
		{"key connector, another account", nil, "pat-work\n",
			[]string{"connect", c.ws, "github", "--gateway", c.url, "--token-file", connectTok, "--api-key-stdin", "--account", "work"}, 0,
			"Connected github (account work).\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runWithEnv(context.Background(), tc.vars, tc.stdin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", code, tc.code, stdout, stderr)
			}
			switch {
			case tc.stdout == "*oauth":
				u, err := url.Parse(strings.TrimSpace(stdout))
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				if err != nil || strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, "http://127.0.0.1:9/authorize?") ||
					q.Get("client_id") != "tracker-client" || q.Get("code_challenge_method") != "S256" ||
					q.Get("redirect_uri") != fmt.Sprintf("http://127.0.0.1:%d/connect/callback", c.port) {
					t.Errorf("stdout %q", stdout)
				}
			case stdout != tc.stdout:
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "e2e-upstream-pat") || strings.Contains(stdout, "e2e-upstream-pat") {
				t.Error("the key was printed")
			}
		})
	}

	// The stored key now authorizes a granted call upstream.
	req, _ := http.NewRequest("POST", strings.TrimSuffix(c.url, "/mcp")+"/call/github__github_list_issue",
		strings.NewReader(`{"arguments":{"owner":"octo","repo":"hello"}}`))
	req.Header.Set("Authorization", "Bearer "+c.token(""))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("call after connect: %d", resp.StatusCode)
	}
	if reqs := c.mock.Requests(); len(reqs) != 1 || !reqs[0].Authorized {
		t.Errorf("upstream: %+v", reqs)
	}
}

// TestConnectInAuthModeNone: a gateway that verifies no tokens (auth mode
// none) takes a connection without a connect token, so anvil connect needs
// no token file there; against a Branchyard-mode gateway the missing token
// is named.
func TestConnectInAuthModeNone(t *testing.T) {
	mock, err := mockupstream.Start(mockupstream.Options{Token: "e2e-upstream-pat"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	s := newServeSetup(t, mock.URL)
	vars := map[string]string{}
	for k, v := range s.vars {
		if !strings.HasPrefix(k, "ANVIL_INBOUND_") {
			vars[k] = v
		}
	}
	serveFleet(t, s.ws, s.port, vars)

	gw := fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port)
	code, stdout, stderr := runWithEnv(context.Background(), nil, "e2e-upstream-pat\n", "connect", s.ws, "github", "--gateway", gw, "--api-key-stdin")
	if code != 0 || stdout != "Connected github (account default).\n" {
		t.Fatalf("connect without a token in auth mode none: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The stored key reaches the upstream.
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/call/github__github_list_issue", s.port), "application/json",
		strings.NewReader(`{"arguments":{"owner":"octo","repo":"hello"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if reqs := mock.Requests(); resp.StatusCode != 200 || len(reqs) != 1 || !reqs[0].Authorized {
		t.Errorf("call after connect: %d, upstream %+v", resp.StatusCode, reqs)
	}
}

// TestConnectWaitsForTheLogin: anvil connect polls /connect/status after
// printing the authorization URL and returns once the gateway stores a new
// connection for the connector and account (a connection stored before the
// flow, or another account's, does not count), printing it and the granted
// scopes; a refused token stops the wait.
func TestConnectWaitsForTheLogin(t *testing.T) {
	var polls atomic.Int32
	refuse := atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/connect/status" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		if refuse.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		conns := `{"connector":"music","account":"default","kind":"oauth","status":"active","scope":"music.read","updatedAt":"2026-01-01T00:00:00.000Z"},` +
			`{"connector":"music","account":"work","kind":"oauth","status":"active","scope":"x","updatedAt":"2026-01-02T00:00:00.000Z"}`
		if polls.Add(1) > 3 {
			conns = `{"connector":"music","account":"default","kind":"oauth","status":"active","scope":"music.read playlists.write","updatedAt":"2026-01-03T00:00:00.000Z"}`
		}
		fmt.Fprintf(w, `{"sub":"local","connections":[%s]}`, conns)
	}))
	defer srv.Close()
	client := srv.Client()
	statusURL := srv.URL + "/connect/status"
	before, code := connectionOf(client, statusURL, "tok", "music", "default")
	if code != 200 || before == nil || before.Scope != "music.read" {
		t.Fatalf("before: %+v %d", before, code)
	}
	var stdout, stderr strings.Builder
	w := &loginWait{e: &env{stdout: &stdout, stderr: &stderr}, client: client, status: statusURL, token: "tok",
		connector: "music", account: "default", before: before, poll: 10 * time.Millisecond}
	if err := w.wait(context.Background(), time.Now().Add(10*time.Second)); err != nil {
		t.Fatalf("wait: %v (stderr %s)", err, stderr.String())
	}
	if stdout.String() != "Connected music (account default).\n" || !strings.Contains(stderr.String(), "anvil: the provider granted: music.read playlists.write\n") || polls.Load() != 4 {
		t.Errorf("stdout %q stderr %q after %d polls", stdout.String(), stderr.String(), polls.Load())
	}

	refuse.Store(true)
	err := w.wait(context.Background(), time.Now().Add(10*time.Second))
	var ee *cmdline.Error
	if !errors.As(err, &ee) || ee.Code() != 4 || !strings.Contains(ee.Error(), "no longer accepts the connect token (401)") {
		t.Errorf("wait with a refused token: %v", err)
	}
}
