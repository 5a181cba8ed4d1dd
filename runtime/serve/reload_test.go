package serve_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// fixtureBundle is the compiled github-mini bundle the gateway
// tests serve (kept equal to what compile writes by cmd/anvil's tests).
const fixtureBundle = "testdata/workspace/github"

// running is a fleet gateway served by serve.Main from a workspace
// directory, with a mock upstream that can hold a call.
type running struct {
	t      *testing.T
	ws     string // the workspace directory
	bundle string // its github bundle
	base   string
	stderr *syncWriter
	hold   chan struct{} // closed (release) to let held upstream calls answer
	once   sync.Once
	held   chan struct{} // receives when the upstream holds a call
	done   chan int
	cancel context.CancelFunc
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start serves a copy of the fixture bundle; poll is serve.Options.ReloadPoll.
func start(t *testing.T, poll time.Duration) *running {
	t.Helper()
	dir := t.TempDir()
	r := &running{t: t, ws: filepath.Join(dir, "ws"), stderr: &syncWriter{}, hold: make(chan struct{}), held: make(chan struct{}, 8), done: make(chan int, 1)}
	r.bundle = filepath.Join(r.ws, "github")
	copyDir(t, fixtureBundle, r.bundle)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.URL.Path, "/hold/") {
			r.held <- struct{}{}
			<-r.hold
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"number":1,"title":"one"}]`)
	}))
	t.Cleanup(up.Close)
	t.Cleanup(r.release)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyFile := filepath.Join(dir, "vault.key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"ANVIL_VAULT_KEY_FILE":      keyFile,
		"ANVIL_VAULT_DIR":           filepath.Join(dir, "vault"),
		"ANVIL_ALLOWED_HOSTS":       "127.0.0.1",
		"ANVIL_UPSTREAM_GITHUB_URL": up.URL,
	}
	port := freePort(t)
	r.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		r.done <- serve.Main(ctx, []string{"anvil", "serve", "mcp", r.ws, "--fleet", "--http", fmt.Sprint(port)}, nil,
			serve.Options{Getenv: func(k string) string { return vars[k] }, Stderr: r.stderr, ReloadPoll: poll})
	}()
	t.Cleanup(r.stop)
	r.waitFor("the gateway to serve", func() bool {
		resp, err := http.Get(r.base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	if st, body := r.post("/connect/api-key", `{"connector":"github","api_key":"pat"}`); st != 200 {
		t.Fatalf("connect: %d %s", st, body)
	}
	return r
}

// release lets the upstream calls it holds answer.
func (r *running) release() { r.once.Do(func() { close(r.hold) }) }

func (r *running) stop() {
	r.cancel()
	select {
	case code := <-r.done:
		if code != 0 {
			r.t.Errorf("exit %d: %s", code, r.stderr)
		}
		r.done <- code
	case <-time.After(5 * time.Second):
		r.t.Error("the gateway did not stop")
	}
}

func (r *running) waitFor(what string, ok func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s; stderr:\n%s", what, r.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *running) post(path, body string) (int, string) {
	req, _ := http.NewRequest("POST", r.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ready is /readyz: its status and the served tool count per bundle.
type readyz struct {
	Ready   bool `json:"ready"`
	Bundles []struct {
		ID         string `json:"id"`
		ToolCount  int    `json:"toolCount"`
		BundleHash string `json:"bundleHash"`
	} `json:"bundles"`
	Reload string `json:"reload"`
}

func (r *running) ready() (int, readyz) {
	resp, err := http.Get(r.base + "/readyz")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var z readyz
	if err := json.NewDecoder(resp.Body).Decode(&z); err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, z
}

func (r *running) toolCount() int {
	_, z := r.ready()
	if len(z.Bundles) != 1 {
		r.t.Fatalf("readyz bundles: %+v", z.Bundles)
	}
	return z.Bundles[0].ToolCount
}

// setState rewrites the bundle (atomically, as compile and approve do:
// air.json and its generation.json) with operation id in state.
func (r *running) setState(id string, state air.OperationState) {
	r.t.Helper()
	doc, err := air.Load(r.bundle)
	if err != nil {
		r.t.Fatal(err)
	}
	op := doc.Operation(id)
	if op == nil {
		r.t.Fatalf("no operation %s", id)
	}
	op.State = state
	files, err := air.Files(doc)
	if err != nil {
		r.t.Fatal(err)
	}
	r.writeFile(air.GenerationFile, files[air.GenerationFile])
	r.writeAIR(files[air.DocumentFile])
}

func (r *running) writeAIR(b []byte) {
	r.t.Helper()
	r.writeFile(air.DocumentFile, b)
}

// writeFile replaces one file of the bundle atomically.
func (r *running) writeFile(name string, b []byte) {
	r.t.Helper()
	tmp := filepath.Join(r.bundle, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.bundle, name)); err != nil {
		r.t.Fatal(err)
	}
}

func hup(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

const listIssues = "/call/github__github_list_issue"

func TestReloadOnSIGHUP(t *testing.T) {
	r := start(t, -1) // no polling: only the signal reloads
	if n := r.toolCount(); n != 12 {
		t.Fatalf("tool count %d before reload", n)
	}
	r.setState("github.issues.list", "blocked")
	time.Sleep(50 * time.Millisecond)
	if n := r.toolCount(); n != 12 {
		t.Fatalf("tool count %d changed without SIGHUP or polling", n)
	}
	hup(t)
	r.waitFor("the reload", func() bool { return r.toolCount() == 11 })
	if st, body := r.post(listIssues, `{"arguments":{"owner":"o","repo":"r"}}`); st != 404 {
		t.Errorf("a tool removed by the reload: %d %s", st, body)
	}
	r.waitFor("the reload's log line", func() bool {
		return strings.Contains(r.stderr.String(), "anvil: reloaded (SIGHUP): 1 bundle(s), 11 tool(s): github")
	})
	// approve brings it back
	r.setState("github.issues.list", "approved")
	hup(t)
	r.waitFor("the second reload", func() bool { return r.toolCount() == 12 })
	if st, body := r.post(listIssues, `{"arguments":{"owner":"o","repo":"r"}}`); st != 200 {
		t.Errorf("the tool the reload restored: %d %s", st, body)
	}
}

func TestReloadOnDiskChange(t *testing.T) {
	r := start(t, 20*time.Millisecond)
	r.setState("github.pulls.list", "blocked")
	r.waitFor("the reload", func() bool { return r.toolCount() == 11 })
	r.waitFor("the reload's log line", func() bool {
		return strings.Contains(r.stderr.String(), "anvil: reloaded (bundles changed on disk): 1 bundle(s), 11 tool(s): github")
	})
	// A second bundle appearing is picked up too.
	copyDir(t, fixtureBundle, filepath.Join(r.ws, "mirror"))
	r.waitFor("the new bundle", func() bool { _, z := r.ready(); return len(z.Bundles) == 2 })
	_, z := r.ready()
	g, err := air.LoadGeneration(fixtureBundle)
	if err != nil {
		t.Fatal(err)
	}
	// The mirror is the fixture as committed; the github bundle was
	// rewritten (one operation blocked), so its hash moved with it.
	if z.Bundles[1].ID != "mirror" || z.Bundles[1].BundleHash != g.BundleHash || z.Bundles[0].BundleHash == g.BundleHash {
		t.Errorf("readyz after adding a bundle: %+v", z)
	}
}

func TestFailedReloadKeepsTheFleet(t *testing.T) {
	r := start(t, -1)
	r.writeAIR([]byte(`{"not": "air"`))
	hup(t)
	r.waitFor("the failed reload", func() bool {
		return strings.Contains(r.stderr.String(), "anvil: reload (SIGHUP) failed, still serving the fleet loaded before: ")
	})
	st, z := r.ready()
	if st != 200 || !z.Ready || z.Reload != "failed" || len(z.Bundles) != 1 || z.Bundles[0].ToolCount != 12 {
		t.Errorf("readyz after a failed reload: %d %+v", st, z)
	}
	if st, body := r.post(listIssues, `{"arguments":{"owner":"o","repo":"r"}}`); st != 200 {
		t.Errorf("a call after a failed reload: %d %s", st, body)
	}
	// Fixing the bundle reloads it and clears the failure.
	copyDir(t, fixtureBundle, r.bundle)
	hup(t)
	r.waitFor("the good reload", func() bool { _, z := r.ready(); return z.Reload == "ok" })
}

// TestHandApprovalRefusedOnReload: an operation approved by editing
// air.json (its content no longer matches generation.json's bundle hash)
// is refused on reload, with a message naming the file; the fleet loaded
// before keeps serving, and the blocked operation stays blocked.
func TestHandApprovalRefusedOnReload(t *testing.T) {
	r := start(t, -1)
	r.setState("github.issues.list", "blocked")
	hup(t)
	r.waitFor("the reload", func() bool { return r.toolCount() == 11 })
	b, err := os.ReadFile(filepath.Join(r.bundle, air.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"state":"blocked"`, `"state":"approved"`, 1)
	if edited == string(b) {
		t.Fatal("no blocked state in air.json to edit")
	}
	r.writeAIR([]byte(edited))
	hup(t)
	r.waitFor("the refused reload", func() bool {
		return strings.Contains(r.stderr.String(), "reload (SIGHUP) failed") && strings.Contains(r.stderr.String(), filepath.Join(r.bundle, air.DocumentFile)+" was changed after it was written")
	})
	if st, z := r.ready(); z.Reload != "failed" || r.toolCount() != 11 {
		t.Errorf("readyz after the refused reload: %d %+v", st, z)
	}
	if st, body := r.post(listIssues, `{"arguments":{"owner":"o","repo":"r"}}`); st == 200 {
		t.Errorf("the hand-approved operation was served: %d %s", st, body)
	}
}

func TestInFlightCallFinishesOnTheOldFleet(t *testing.T) {
	r := start(t, -1)
	type answer struct {
		status int
		body   string
	}
	got := make(chan answer, 1)
	go func() {
		st, body := r.post(listIssues, `{"arguments":{"owner":"hold","repo":"r"}}`)
		got <- answer{st, body}
	}()
	select {
	case <-r.held:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not reach the upstream")
	}
	r.setState("github.issues.list", "blocked")
	hup(t)
	r.waitFor("the reload", func() bool { return r.toolCount() == 11 })
	if st, _ := r.post(listIssues, `{"arguments":{"owner":"o","repo":"r"}}`); st != 404 {
		t.Errorf("a new call to the removed tool: %d", st)
	}
	r.release()
	a := <-got
	if a.status != 200 || !strings.Contains(a.body, `"title":"one"`) {
		t.Errorf("the in-flight call: %d %s", a.status, a.body)
	}
}
