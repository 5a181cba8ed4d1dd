package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

// gatewayFixture is the compiled github-mini bundle the runtime/serve tests
// serve (they may not import the compiler). Its server stays
// https://api.github.example; the tests point it at their mock upstream.
const gatewayFixture = "../../runtime/serve/testdata/workspace/github"

// TestGatewayFixture keeps runtime/serve's committed bundle equal to what
// compile makes of the example; ANVIL_UPDATE_GOLDEN=1 (make golden) rewrites it.
func TestGatewayFixture(t *testing.T) {
	got, err := files.Read(compileExample(t))
	if err != nil {
		t.Fatal(err)
	}
	if golden.Updating() {
		if err := got.WriteTo(gatewayFixture); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := files.Read(gatewayFixture)
	if err != nil {
		t.Fatalf("%v (run `make golden` to create %s)", err, filepath.Clean(gatewayFixture))
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if !bytes.Equal(got[n].Data, want[n].Data) {
			t.Errorf("%s/%s differs from what compile writes (run `make golden`)", filepath.Clean(gatewayFixture), n)
		}
	}
}

// runWithEnv runs the anvil command in-process with its own environment.
func runWithEnv(ctx context.Context, vars map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code = runEnv(ctx, e, append([]string{"anvil"}, args...))
	return code, out.String(), errb.String()
}

// serveSetup is a workspace, yard keys and a vault key for serve tests.
type serveSetup struct {
	dir, ws string
	key     authtest.Key
	port    int
	vars    map[string]string
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// copyBundle writes the bundle of src into dst with its server URL set.
func copyBundle(t *testing.T, src, dst, serverURL string, edit func(*air.Document)) {
	t.Helper()
	doc, err := air.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	doc.Service.Servers = []air.Server{{URL: serverURL}}
	if edit != nil {
		edit(doc)
	}
	rendered, err := air.Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := files.FromBytes(rendered).WriteTo(dst); err != nil {
		t.Fatal(err)
	}
}

func newServeSetup(t *testing.T, upstreamURL string) *serveSetup {
	t.Helper()
	dir := t.TempDir()
	s := &serveSetup{dir: dir, ws: filepath.Join(dir, "workspace"), key: authtest.NewKey("by-servetest01"), port: freePort(t)}
	copyBundle(t, gatewayFixture, filepath.Join(s.ws, "github"), upstreamURL, nil)
	if err := authtest.WriteJWKS(filepath.Join(dir, "jwks.json"), s.key); err != nil {
		t.Fatal(err)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	if err := os.WriteFile(filepath.Join(dir, "vault.key"), []byte(hex.EncodeToString(k)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.vars = map[string]string{
		"ANVIL_INBOUND_AUTH_MODE": "branchyard",
		"ANVIL_INBOUND_ISSUER":    "branchyard:local:serve-test",
		"ANVIL_INBOUND_AUDIENCE":  fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port),
		"ANVIL_INBOUND_JWKS_URI":  "file://" + filepath.Join(dir, "jwks.json"),
		"ANVIL_VAULT_KEY_FILE":    filepath.Join(dir, "vault.key"),
		"ANVIL_VAULT_DIR":         filepath.Join(dir, "vault"),
		"ANVIL_AUDIT_FILE":        filepath.Join(dir, "audit.jsonl"),
		"ANVIL_ALLOWED_HOSTS":     "127.0.0.1",
	}
	return s
}

// token mints a token for the setup's yard; purpose "connect" makes a
// connect token.
func (s *serveSetup) token(purpose string) string {
	now := time.Now().Unix()
	c := map[string]any{"iss": s.vars["ANVIL_INBOUND_ISSUER"], "aud": s.vars["ANVIL_INBOUND_AUDIENCE"], "sub": "local:ada",
		"iat": now, "exp": now + 300, "by_tenant": "t"}
	if purpose == "connect" {
		c["by_purpose"], c["by_grants"] = "connect", []any{}
	} else {
		c["by_turn"], c["by_branch"] = "1", "main"
		c["by_grants"] = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}
	}
	return authtest.Mint(s.key, c)
}

// waitHealthy polls /healthz until it answers 200.
func waitHealthy(t *testing.T, port int, deadline time.Duration) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the gateway did not answer /healthz within %v", deadline)
}

func TestServeRefusals(t *testing.T) {
	s := newServeSetup(t, "http://127.0.0.1:1")
	empty := filepath.Join(s.dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	collide := filepath.Join(s.dir, "collide")
	copyBundle(t, gatewayFixture, filepath.Join(collide, "git hub"), "http://127.0.0.1:1", nil)
	copyBundle(t, gatewayFixture, filepath.Join(collide, "git_hub"), "http://127.0.0.1:1", nil)
	port := strconv.Itoa(s.port)
	without := func(k string) map[string]string {
		m := map[string]string{}
		for kk, v := range s.vars {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	none := map[string]string{"ANVIL_ALLOWED_HOSTS": "127.0.0.1"}
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want []string
	}{
		{"--http without --fleet", s.vars, []string{"serve", "mcp", s.ws, "--http", port}, []string{"--fleet"}},
		{"--host without --fleet", s.vars, []string{"serve", "mcp", s.ws, "--host", "127.0.0.1"}, []string{"--fleet"}},
		{"port 0", s.vars, []string{"serve", "mcp", s.ws, "--fleet", "--http", "0"}, []string{"1 to 65535"}},
		{"port 65536", s.vars, []string{"serve", "mcp", s.ws, "--fleet", "--http", "65536"}, []string{"1 to 65535"}},
		{"port not a number", s.vars, []string{"serve", "mcp", s.ws, "--fleet", "--http", "http"}, []string{"1 to 65535"}},
		{"no vault key", without("ANVIL_VAULT_KEY_FILE"), []string{"serve", "mcp", s.ws, "--fleet", "--http", port}, []string{"ANVIL_VAULT_KEY_FILE"}},
		{"no issuer", without("ANVIL_INBOUND_ISSUER"), []string{"serve", "mcp", s.ws, "--fleet", "--http", port}, []string{"ANVIL_INBOUND_ISSUER"}},
		{"no bundles", s.vars, []string{"serve", "mcp", empty, "--fleet", "--http", port}, []string{"no bundles found"}},
		{"collision", s.vars, []string{"serve", "mcp", collide, "--fleet", "--http", port}, []string{"tool-name collision", "git_hub"}},
		{"non-loopback with auth none", none, []string{"serve", "mcp", s.ws, "--fleet", "--http", port, "--host", "0.0.0.0"}, []string{"0.0.0.0", "none"}},
		{"branchyard over stdio", s.vars, []string{"serve", "mcp", s.ws, "--fleet"}, []string{"only by the fleet gateway over HTTP"}},
		{"two workspaces", s.vars, []string{"serve", "mcp", s.ws, s.ws, "--fleet", "--http", port}, []string{"one workspace"}},
		// The flags are runtime/serve's, parsed by urfave/cli like every
		// other command's: the flag package's messages, exit 1, no help.
		{"unknown flag", s.vars, []string{"serve", "mcp", s.ws, "--fleet", "--bogus"}, []string{"flag provided but not defined: -bogus"}},
		{"missing value", s.vars, []string{"serve", "mcp", s.ws, "--fleet", "--http"}, []string{"flag needs an argument: -http"}},
		{"missing value before the workspace", s.vars, []string{"serve", "mcp", "--fleet", "--host"}, []string{"flag needs an argument: -host"}},
		{"--flag=value", s.vars, []string{"serve", "mcp", s.ws, "--fleet=true", "--http=0"}, []string{`1 to 65535, not "0"`}},
		{"bad boolean", s.vars, []string{"serve", "mcp", s.ws, "--fleet=maybe"}, []string{`invalid boolean value "maybe" for -fleet`}},
		{"flags after --", s.vars, []string{"serve", "mcp", "--", s.ws, "--fleet"}, []string{"one workspace"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runWithEnv(context.Background(), c.vars, "", c.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			if !strings.HasPrefix(stderr, "anvil: ") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("stderr is not one anvil: line: %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "..") {
				t.Errorf("message ends with two dots: %q", stderr)
			}
		})
	}
}

// TestServeInProcess runs `anvil serve mcp` in-process until its context is
// cancelled: it logs the serving line, answers /healthz and a granted call,
// and returns 0.
func TestServeInProcess(t *testing.T) {
	s := newServeSetup(t, "http://127.0.0.1:1")
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		code           int
		stdout, stderr string
	}
	done := make(chan res, 1)
	go func() {
		c, o, e := runWithEnv(ctx, s.vars, "", "serve", "mcp", s.ws, "--fleet", "--http", strconv.Itoa(s.port))
		done <- res{c, o, e}
	}()
	waitHealthy(t, s.port, 10*time.Second)
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/call/github__github_list_issue", s.port),
		strings.NewReader(`{"arguments":{"owner":"o","repo":"r","anvil_dry_run":true}}`))
	req.Header.Set("Authorization", "Bearer "+s.token(""))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"method":"GET"`) {
		t.Errorf("dry run: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
		want := fmt.Sprintf("anvil: serving fleet of 1 bundle(s) over StreamableHTTP at http://127.0.0.1:%d/mcp (github); inbound auth branchyard; ", s.port)
		if !strings.HasPrefix(r.stderr, want) {
			t.Errorf("stderr %q, want the line %q", r.stderr, want)
		}
		if r.stdout != "" {
			t.Errorf("stdout %q", r.stdout)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after cancel")
	}
}

// TestServeBinaryStopsOnSignal builds the real binary, serves, and checks
// that SIGTERM and SIGINT each end it with exit 0, without the open MCP
// session making it wait out its shutdown grace.
func TestServeBinaryStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "anvil")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s := newServeSetup(t, "http://127.0.0.1:1")
			cmd := exec.Command(bin, "serve", "mcp", s.ws, "--fleet", "--http", strconv.Itoa(s.port))
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
			for k, v := range s.vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Stdin = nil
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			waitHealthy(t, s.port, 15*time.Second)
			// An open MCP session must not hold the process up.
			req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port),
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
			req.Header.Set("Authorization", "Bearer "+s.token(""))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
				t.Fatalf("initialize: %d", resp.StatusCode)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				if err != nil {
					t.Errorf("exit: %v\nstderr: %s", err, stderr.String())
				}
				// Had anything held shutdown up, the gateway would have
				// waited out its grace and said so.
				if strings.Contains(stderr.String(), "anvil: shutdown: connections still open") {
					t.Errorf("the open session held shutdown up until its grace:\n%s", stderr.String())
				}
			case <-time.After(30 * time.Second): // a hang guard
				t.Fatalf("hung: still running 30 s after %v", sig)
			}
			if !strings.Contains(stderr.String(), "anvil: serving fleet of 1 bundle(s)") {
				t.Errorf("stderr: %s", stderr.String())
			}
		})
	}
}
