package compose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/compiler/emit"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/emit/harness"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

const (
	miniSpec     = "../../../examples/github-mini/openapi.yaml"
	miniManifest = "../../../examples/github-mini/anvil.yaml"
)

var (
	miniOnce sync.Once
	miniAIR  []byte
	miniErr  error
)

// miniDoc compiles examples/github-mini into a fresh AIR document.
func miniDoc(t testing.TB) *air.Document {
	t.Helper()
	miniOnce.Do(func() {
		spec, err := openapi.Load(miniSpec, nil)
		if err != nil {
			miniErr = err
			return
		}
		man, ds := manifest.Load(miniManifest)
		if ds.HasErrors() {
			miniErr = fmt.Errorf("manifest has %d error(s)", ds.Count("error"))
			return
		}
		doc, _ := lower.Lower(spec, man, nil)
		miniAIR, miniErr = air.Marshal(doc)
	})
	if miniErr != nil {
		t.Fatalf("compile github-mini: %v", miniErr)
	}
	doc, err := air.Parse(miniAIR)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// writeHarness writes the harness package of doc for connector cid under
// root (in root/dir instead when a connector id follows dir).
func writeHarness(t testing.TB, root, dir string, doc *air.Document, connector ...string) {
	t.Helper()
	cid := dir
	if len(connector) > 0 {
		cid = connector[0]
	}
	tree, err := harness.Render(emit.Connector{ID: cid, Doc: doc})
	if err != nil {
		t.Fatalf("harness package %s: %v", cid, err)
	}
	if err := tree.WriteTo(filepath.Join(root, dir)); err != nil {
		t.Fatal(err)
	}
}

// writeComposite renders and writes the composite of conns at root/_compose.
func writeComposite(t testing.TB, root string, conns []emit.Connector, layout ...string) string {
	t.Helper()
	out := filepath.Join(root, "_compose")
	opts := Options{OutDir: out}
	if len(layout) > 0 {
		opts.Layout = layout[0]
	}
	tree, err := Render(conns, opts)
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	if err := tree.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// liveEnv is a harness home served by a live gateway in front of the
// github-mini mock upstream: connector packages and the composite under
// Root, the gateway on GatewayURL (auth mode none, static credentials in a
// vault).
type liveEnv struct {
	Root       string
	Compose    string
	GatewayURL string
	TokenFile  string
	Mock       *mockupstream.Server
	// gatewayHits counts requests that reached the gateway.
	gatewayHits *atomic.Int64
}

// upstreamToken is the mock's bearer; only the gateway's vault holds it.
const upstreamToken = "mock-upstream-token"

// startLive compiles github-mini once per connector id (adjust may change
// a connector's document), serves them, packages them and composes them.
func startLive(t *testing.T, cids []string, adjust func(cid string, doc *air.Document)) *liveEnv {
	t.Helper()
	return startLiveLayout(t, cids, adjust, LayoutHarness)
}

// startLiveLayout is startLive with the connector SDKs where layout puts
// them: harness packages under Root, or each bundle's own sdk/.
func startLiveLayout(t *testing.T, cids []string, adjust func(cid string, doc *air.Document), layout string) *liveEnv {
	t.Helper()
	mock, err := mockupstream.Start(mockupstream.Options{Token: upstreamToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })

	base := t.TempDir()
	ws := filepath.Join(base, "workspace")
	root := filepath.Join(base, "home", "connectors")
	var conns []emit.Connector
	for _, cid := range cids {
		doc := miniDoc(t)
		if adjust != nil {
			adjust(cid, doc)
		}
		served := *doc
		served.Service.Servers = []air.Server{{URL: mock.URL}}
		bundle, err := air.Files(&served)
		if err != nil {
			t.Fatal(err)
		}
		if err := files.FromBytes(bundle).WriteTo(filepath.Join(ws, cid)); err != nil {
			t.Fatal(err)
		}
		if layout == LayoutBundle {
			writeHarness(t, filepath.Join(ws, cid), "sdk", doc, cid)
			conns = append(conns, emit.Connector{ID: cid, Doc: doc, Dir: filepath.Join(ws, cid)})
		} else {
			writeHarness(t, root, cid, doc)
			conns = append(conns, emit.Connector{ID: cid, Doc: doc})
		}
	}
	out := writeComposite(t, root, conns, layout)

	keyFile := filepath.Join(base, "vault.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	fl, err := fleet.Load(ws)
	if err != nil {
		t.Fatalf("fleet: %v", err)
	}
	g, err := serve.NewGateway(serve.Config{Host: "127.0.0.1", AllowedHosts: "127.0.0.1",
		VaultKeyFile: keyFile, VaultDir: filepath.Join(base, "vault")}, fl, nil)
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	hits := &atomic.Int64{}
	h := g.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && r.Method == http.MethodPost {
			hits.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, cid := range cids {
		body := fmt.Sprintf(`{"connector":%q,"api_key":%q}`, cid, upstreamToken)
		resp, err := http.Post(srv.URL+"/connect/api-key", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connect %s: %d %s", cid, resp.StatusCode, b)
		}
	}
	tokenFile := filepath.Join(base, "turn.token")
	if err := os.WriteFile(tokenFile, []byte("local-turn-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hits.Store(0)
	return &liveEnv{Root: root, Compose: out, GatewayURL: srv.URL + "/mcp", TokenFile: tokenFile, Mock: mock, gatewayHits: hits}
}

// env is the environment of a harness process talking to the gateway.
func (e *liveEnv) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ANVIL_") || strings.HasPrefix(kv, "PYTHON") {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"ANVIL_GATEWAY_URL="+e.GatewayURL,
		"ANVIL_GATEWAY_TOKEN_FILE="+e.TokenFile,
		"PYTHONPATH="+filepath.Join(e.Compose, "python"),
		"PYTHONDONTWRITEBYTECODE=1",
	)
}

// need returns the path of a program the tests cannot do without.
func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required for the composite's tests: %v", name, err)
	}
	return p
}

// python runs a Python script against the composite and returns stdout and
// the exit code. stdin may be empty.
func (e *liveEnv) python(t *testing.T, script string, args ...string) (string, int) {
	t.Helper()
	return runPython(t, e.env(), e.Compose, script, args...)
}

func runPython(t *testing.T, env []string, dir, script string, args ...string) (string, int) {
	t.Helper()
	py := need(t, "python3")
	var cmd *exec.Cmd
	if script != "" {
		cmd = exec.Command(py, append([]string{"-c", script}, args...)...)
	} else {
		cmd = exec.Command(py, args...)
	}
	cmd.Env = env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("python: %v", err)
		}
		code = ee.ExitCode()
	}
	if stderr.Len() > 0 {
		t.Logf("python stderr:\n%s", stderr.String())
	}
	return stdout.String(), code
}

// decode parses JSON, failing the test on error.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
	return v
}

// commentBodies lists the mock's comments as "id:issue:body".
func commentBodies(s mockupstream.State) []string {
	var out []string
	for _, c := range s.Comments {
		out = append(out, fmt.Sprintf("%d:%d:%s", c.ID, c.Issue, c.Body))
	}
	return out
}

// compact is JSON text without insignificant space, keys in their order.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("not JSON (%v): %s", err, s)
	}
	return b.String()
}
