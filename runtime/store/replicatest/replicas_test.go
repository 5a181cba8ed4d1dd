package replicatest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/internal/pgtest"
	"github.com/anvil-dev/anvil/internal/testinput"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

var (
	server     *pgtest.Server
	skipReason error
)

func TestMain(m *testing.M) {
	server, skipReason = pgtest.Start()
	if skipReason != nil {
		fmt.Println(pgtest.SkipLine(skipReason)) // one clear line, even without -v
	}
	code := m.Run()
	if server != nil {
		server.Close()
	}
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

const (
	issuer   = "branchyard:local:replica-test"
	sub      = "local:ada"
	upstream = "e2e-upstream-pat" // the mock's only accepted bearer
)

var writeGrant = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write", "confirm": "allow"}}

// cluster is n gateways sharing one store (ANVIL_STORE), one mock
// upstream, one vault key and one token issuer, each with its own vault
// directory and audit log, behind a round-robin proxy.
type cluster struct {
	t        *testing.T
	mock     *mockupstream.Server
	key      authtest.Key
	base     string // the proxy
	aud      string
	gateways []*serve.Gateway
	backends []string
	jti      atomic.Int64
	client   *http.Client
	// With gateway processes (anvilBin): what starts replica i again,
	// and the running processes.
	dir, ws, jwks, keyFile string
	env                    map[string]string
	procs                  []*replicaProc
}

func newCluster(t *testing.T, n int, dsn string) *cluster {
	t.Helper()
	return newClusterWith(t, n, dsn, nil, nil)
}

// newClusterWith is newCluster with the bundle edited and further
// environment variables.
func newClusterWith(t *testing.T, n int, dsn string, edit func(*air.Document), extraEnv map[string]string) *cluster {
	t.Helper()
	mock, err := mockupstream.Start(mockupstream.Options{Token: upstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	doc, err := air.Load("../../serve/testdata/workspace/github")
	if err != nil {
		t.Fatal(err)
	}
	doc.Service.Servers = []air.Server{{URL: mock.URL}}
	if edit != nil {
		edit(doc)
	}
	if err := air.WriteBundle(filepath.Join(ws, doc.Service.ID), doc); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, mock: mock, key: authtest.NewKey("replica-key"),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	t.Cleanup(c.client.CloseIdleConnections)
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, c.key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "vault.key")
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(k)), 0o600); err != nil {
		t.Fatal(err)
	}

	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.base = "http://" + proxyLn.Addr().String()
	c.aud = c.base + "/mcp"
	env := map[string]string{"ANVIL_STORE": dsn}
	for k, v := range extraEnv {
		env[k] = v
	}
	c.dir, c.ws, c.jwks, c.keyFile, c.env = dir, ws, jwks, keyFile, env
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if anvilBin != "" {
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			c.procs = append(c.procs, c.startProcess(i, port))
			c.backends = append(c.backends, fmt.Sprintf("http://127.0.0.1:%d", port))
			continue
		}
		cfg := serve.Config{
			Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port,
			Auth: auth.Config{Mode: auth.ModeBranchyard, Issuer: issuer, Audience: c.aud,
				JWKSURI: "file://" + jwks, Leeway: auth.DefaultLeeway},
			VaultKeyFile: keyFile, VaultDir: filepath.Join(dir, fmt.Sprintf("vault%d", i)),
			AuditFile: filepath.Join(dir, fmt.Sprintf("audit%d.jsonl", i)), AllowedHosts: "127.0.0.1",
			Getenv: func(k string) string { return env[k] },
		}
		if ms := env["ANVIL_UPSTREAM_TIMEOUT_MS"]; ms != "" {
			n, err := strconv.Atoi(ms)
			if err != nil {
				t.Fatal(err)
			}
			cfg.UpstreamTimeout = time.Duration(n) * time.Millisecond
		}
		f, err := fleet.Load(ws)
		if err != nil {
			t.Fatal(err)
		}
		g, err := serve.NewGateway(cfg, f, &serve.GatewayOptions{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- g.Serve(ctx, ln) }()
		t.Cleanup(func() { cancel(); <-done })
		c.gateways = append(c.gateways, g)
		c.backends = append(c.backends, "http://"+ln.Addr().String())
	}
	for _, b := range c.backends {
		waitHealthy(t, b)
	}
	var next atomic.Int64
	// Each cluster has its own connections to its replicas: a port freed
	// by an earlier cluster's replica must not meet a pooled connection.
	proxyTransport := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(proxyTransport.CloseIdleConnections)
	proxy := &httputil.ReverseProxy{Transport: proxyTransport, Rewrite: func(r *httputil.ProxyRequest) {
		u, _ := url.Parse(c.backends[int(next.Add(1)-1)%len(c.backends)])
		r.SetURL(u)
		r.Out.Host = r.In.Host // the audience names the proxy
	}}
	srv := &http.Server{Handler: proxy}
	go func() { _ = srv.Serve(proxyLn) }()
	t.Cleanup(func() { _ = srv.Close() })
	return c
}

func (c *cluster) token(claims map[string]any) string {
	now := time.Now().Unix()
	base := map[string]any{"iss": issuer, "aud": c.aud, "sub": sub, "iat": now, "exp": now + 600,
		"jti": fmt.Sprintf("jti-%d", c.jti.Add(1)), "by_tenant": "e2e"}
	for k, v := range claims {
		base[k] = v
	}
	return authtest.Mint(c.key, base)
}

func (c *cluster) turn() string {
	return c.token(map[string]any{"by_branch": "main", "by_turn": "1", "by_grants": writeGrant})
}

func (c *cluster) connectToken() string {
	return c.token(map[string]any{"by_branch": "", "by_turn": "", "by_grants": []any{}, "by_purpose": "connect"})
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (c *cluster) do(base, method, path, bearer, body string, h http.Header) answer {
	c.t.Helper()
	a, err := c.try(base, method, path, bearer, body, h)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

// try is do for a request that may fail (a replica killed under it), and
// for goroutines other than the test's.
func (c *cluster) try(base, method, path, bearer, body string, h http.Header) (answer, error) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.Host = strings.TrimPrefix(c.base, "http://")
	resp, err := c.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	// A body cut short is returned as far as it came: the suites judge
	// the status and what the body holds.
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}, nil
}

// connectKey stores the person's upstream key through the proxy (one
// replica); the others read it from the shared store.
func (c *cluster) connectKey(key string) {
	c.t.Helper()
	a := c.do(c.base, "POST", "/connect/api-key", c.connectToken(), `{"connector":"github","api_key":"`+key+`"}`, nil)
	if a.status != 200 {
		c.t.Fatalf("/connect/api-key: %d %s", a.status, a.body)
	}
}

func postgresDSN(t *testing.T) string {
	t.Helper()
	if server == nil {
		testinput.Missing(t, "%s (scripts/ci-postgres.sh installs PostgreSQL)", pgtest.SkipLine(skipReason))
	}
	dsn, err := server.NewSchema()
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// suite is the behaviour every store must give a cluster of its replicas.
func suite(t *testing.T, n int, dsn string) {
	t.Run("same ledger id on every replica at once: one upstream write, identical answers", func(t *testing.T) {
		c := newCluster(t, n, dsn)
		c.connectKey(upstream)
		tok := c.turn()
		const body = `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"once"}}`
		key := http.Header{"Idempotency-Key": {"replicated-ledger-1"}}
		answers := make([]answer, 3)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = c.do(c.base, "POST", "/call/github__github_create_comment", tok, body, key)
			}()
		}
		wg.Wait()
		posts := 0
		for _, r := range c.mock.Requests() {
			if r.Method == "POST" {
				posts++
			}
		}
		if posts != 1 {
			t.Errorf("the upstream saw %d writes, want 1", posts)
		}
		for i, a := range answers {
			if a.status != 200 || a.body != answers[0].body || a.header.Get("X-Anvil-Effect") != answers[0].header.Get("X-Anvil-Effect") {
				t.Errorf("answer %d: %d %s %s (first: %s)", i, a.status, a.body, a.header.Get("X-Anvil-Effect"), answers[0].body)
			}
		}
		// The same id with other arguments is a conflict on any replica.
		for i := 0; i < n; i++ {
			a := c.do(c.base, "POST", "/call/github__github_create_comment", tok,
				`{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"other"}}`, key)
			if a.status != http.StatusConflict || !strings.Contains(a.body, `"code":"conflict"`) {
				t.Errorf("conflict: %d %s", a.status, a.body)
			}
		}
	})
}

func vaultSuite(t *testing.T, n int, dsn string) {
	t.Run("a connection made on one replica, and its replacement, serve every replica's next call", func(t *testing.T) {
		c := newCluster(t, n, dsn)
		tok := c.turn()
		list := func() []int {
			var got []int
			for i := 0; i < n; i++ {
				got = append(got, c.do(c.base, "POST", "/call/github__github_list_issue", tok, `{"arguments":{"owner":"octo","repo":"hello"}}`, nil).status)
			}
			return got
		}
		c.connectKey("wrong-key")
		for _, s := range list() {
			if s != 401 && s != 403 && s != 502 {
				t.Fatalf("with the wrong key: %v", list())
			}
		}
		c.connectKey(upstream) // reconnect, through one replica
		for _, s := range list() {
			if s != 200 {
				t.Fatalf("after reconnecting: %v", list())
			}
		}
	})
}

func TestReplicasPostgres(t *testing.T) {
	suite(t, 3, postgresDSN(t))
	vaultSuite(t, 3, postgresDSN(t))
	oauthSuite(t, 3, postgresDSN(t))
	sessionSuite(t, 3, postgresDSN(t))
}

func TestEmbeddedOneReplica(t *testing.T) {
	suite(t, 1, "")
	vaultSuite(t, 1, "")
	oauthSuite(t, 1, "")
	sessionSuite(t, 1, "")
}

// anvilBin is a built cmd/anvil when the cluster runs gateway processes
// (TestReplicasPostgresProcesses); empty: gateways run in this process.
var anvilBin string

// replicaProc is one gateway process of a cluster.
type replicaProc struct {
	cmd  *exec.Cmd
	port int
	done chan struct{} // closed once the process has exited and been waited for
}

// startProcess runs replica i as `anvil serve mcp <ws> --fleet --http
// <port>` with the cluster's environment, its own vault directory and
// audit log (the same ones when it is started again); it is killed when
// the test ends.
func (c *cluster) startProcess(i, port int) *replicaProc {
	c.t.Helper()
	cmd := exec.Command(anvilBin, "serve", "mcp", c.ws, "--fleet", "--http", fmt.Sprint(port), "--host", "127.0.0.1")
	vars := map[string]string{
		"ANVIL_INBOUND_AUTH_MODE": "branchyard",
		"ANVIL_INBOUND_ISSUER":    issuer,
		"ANVIL_INBOUND_AUDIENCE":  c.aud,
		"ANVIL_INBOUND_JWKS_URI":  "file://" + c.jwks,
		"ANVIL_VAULT_KEY_FILE":    c.keyFile,
		"ANVIL_VAULT_DIR":         filepath.Join(c.dir, fmt.Sprintf("vault%d", i)),
		"ANVIL_AUDIT_FILE":        filepath.Join(c.dir, fmt.Sprintf("audit%d.jsonl", i)),
		"ANVIL_ALLOWED_HOSTS":     "127.0.0.1",
	}
	for k, v := range c.env {
		vars[k] = v
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.dir}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p := &replicaProc{cmd: cmd, port: port, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	c.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if c.t.Failed() {
			c.t.Logf("replica %d (pid %d):\n%s", i, cmd.Process.Pid, logs.String())
		}
	})
	return p
}

// kill ends replica i's process with SIGKILL and waits for it to be gone.
func (c *cluster) kill(i int) {
	c.t.Helper()
	p := c.procs[i]
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	<-p.done
}

// restart starts replica i again on its port, directories and state file.
func (c *cluster) restart(i int) {
	c.t.Helper()
	c.procs[i] = c.startProcess(i, c.procs[i].port)
	waitHealthy(c.t, c.backends[i])
}

// syncBuffer is a strings.Builder that a process's two output pipes and
// the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitHealthy polls base's /readyz until it answers 200 (10 s at most):
// the replica has loaded its workspace and reaches the store, as a load
// balancer in front of replicas would check (/healthz answers while the
// workspace still loads; docs/scale.md).
func waitHealthy(t *testing.T, base string) {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not become healthy", base)
}

// TestReplicasPostgresProcesses runs the suite with three gateway
// processes (cmd/anvil, built here) sharing one PostgreSQL.
func TestReplicasPostgresProcesses(t *testing.T) {
	dsn := postgresDSN(t)
	withProcesses(t)
	suite(t, 3, dsn)
	vaultSuite(t, 3, postgresDSN(t))
	oauthSuite(t, 3, postgresDSN(t))
	sessionSuite(t, 3, postgresDSN(t))
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// withProcesses makes the clusters of the rest of t run gateway processes
// (cmd/anvil, built once per test binary) instead of in-process gateways.
func withProcesses(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds cmd/anvil; skipped with -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "anvil-replicatest-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "anvil")
		if out, err := exec.Command("go", "build", "-o", builtBin, "github.com/anvil-dev/anvil/cmd/anvil").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	anvilBin = builtBin
	t.Cleanup(func() { anvilBin = "" })
}

// Without PostgreSQL every test above skips, and the binary says so in
// exactly one line.
func TestNoPostgresSkipsWithOneLine(t *testing.T) {
	pgtest.CheckSkipLine(t, "^(TestReplicasPostgres|TestReplicasPostgresProcesses|TestKill9Postgres)$")
}
