package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Check names of the set-up steps (seed steps 1 to 5).
const (
	chkToolchain = "go toolchain and repository are found"
	chkAnvil     = "anvil binary is ready"
	chkExamples  = "mock-upstream builds"
	chkMock      = "mock upstream starts"
	chkCompile   = "spec compiles against the mock"
	chkPackage   = "harness package is written"
	chkIndex     = "index lists github"
	chkKeys      = "yard keys are made"
	chkVaultKey  = "vault key is written 0600"
	chkGenerated = "generated gateway binary builds"
	chkGateway   = "gateway is healthy"
	chkHealthz   = "healthz reports one bundle"
)

// Fixture values from the seed.
const (
	modulePath    = "github.com/anvil-dev/anvil"
	specServer    = "https://api.github.example"
	upstreamToken = "e2e-upstream-pat"
	wrongToken    = "wrong-github-token-never-used"
	issuer        = "branchyard:local:e2e"
	subject       = "local:e2e-person"
	tenant        = "e2e"
	readGrant     = `[{"connector":"github","operations":["*"],"mode":"read"}]`
	writeGrant    = `[{"connector":"github","operations":["*"],"mode":"write","confirm":"allow"}]`
)

// Time limits of the set-up steps (the builds have theirs: build.go).
const (
	commandTimeout = time.Minute
	startTimeout   = 30 * time.Second
)

// setup is seed steps 1 to 5, after the builds.
func (r *runner) setup() {
	r.step(chkMock, []string{chkExamples}, r.startMock)
	r.step(chkCompile, []string{chkAnvil, chkMock}, r.compileSpec)
	r.step(chkPackage, []string{chkCompile}, r.packageHarness)
	r.step(chkIndex, []string{chkCompile}, r.writeIndex)
	r.step(chkKeys, []string{chkAnvil}, r.keygen)
	r.step(chkVaultKey, []string{chkAnvil}, r.writeVaultKey)
	gatewayNeeds := []string{chkAnvil, chkCompile, chkKeys, chkVaultKey}
	if r.opts.Gateway == GatewayGenerated {
		gatewayNeeds = append(gatewayNeeds, chkGenerated)
	}
	r.step(chkGateway, gatewayNeeds, r.startGateway)
	r.step(chkHealthz, []string{chkGateway}, r.checkHealthz)
}

// findToolchain locates the module root and the go command.
func (r *runner) findToolchain(context.Context) error {
	repo, err := findRepo(r.opts.Repo)
	if err != nil {
		return err
	}
	r.repo = repo
	goBin, err := exec.LookPath("go")
	if err != nil {
		alt := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, serr := os.Stat(alt); serr != nil {
			return errors.New("the go command is not on PATH")
		}
		goBin = alt
	}
	r.goBin = goBin
	for _, d := range []string{r.paths.bin, r.paths.logs, r.paths.scripts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// findRepo returns start (or the current directory) or its nearest parent
// whose go.mod declares the Anvil module.
func findRepo(start string) (string, error) {
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		start = wd
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isAnvilModule(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod for %s above %s (run from the Anvil checkout)", modulePath, start)
		}
		dir = parent
	}
}

// isAnvilModule reports whether a go.mod declares the Anvil module.
func isAnvilModule(gomod []byte) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			return true
		}
	}
	return false
}

func (r *runner) buildAnvil(ctx context.Context) error {
	if r.opts.Anvil != "" {
		p, err := filepath.Abs(r.opts.Anvil)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("--anvil %s: %v", r.opts.Anvil, err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("--anvil %s is not an executable file", r.opts.Anvil)
		}
		r.anvilBin = p
		return nil
	}
	out := filepath.Join(r.paths.bin, "anvil")
	stop := r.heartbeat("go build ./cmd/anvil", nil)
	res := runCmd(ctx, cmdSpec{argv: []string{r.goBin, "build", "-o", out, "./cmd/anvil"}, dir: r.repo, timeout: r.buildTimeout()})
	stop("")
	if res.err != nil || res.code != 0 {
		return res.failure("go build ./cmd/anvil")
	}
	r.anvilBin = out
	return nil
}

func (r *runner) buildExamples(ctx context.Context) error {
	stop := r.heartbeat("go build ./examples/github-mini/cmd/mock-upstream", nil)
	res := runCmd(ctx, cmdSpec{
		argv: []string{r.goBin, "build", "-o", r.paths.bin + string(filepath.Separator),
			"./examples/github-mini/cmd/mock-upstream"},
		dir:     r.repo,
		timeout: r.buildTimeout(),
	})
	stop("")
	if res.err != nil || res.code != 0 {
		return res.failure("go build ./examples/github-mini/cmd/...")
	}
	r.mockBin = filepath.Join(r.paths.bin, "mock-upstream")
	return nil
}

// startMock is step 1: mock-upstream --port 0 --token e2e-upstream-pat.
func (r *runner) startMock(ctx context.Context) error {
	p, lines, err := startProc("mock-upstream",
		[]string{r.mockBin, "--port", "0", "--token", upstreamToken},
		baseEnv(), r.work, filepath.Join(r.paths.logs, "mock-upstream.log"), true)
	if err != nil {
		return fmt.Errorf("cannot start the mock upstream: %v", err)
	}
	r.mock = p
	var line string
	select {
	case l, ok := <-lines:
		if !ok {
			return fmt.Errorf("the mock upstream printed nothing and exited %d: %s", p.exitCode(), p.logTail())
		}
		line = l
	case <-time.After(startTimeout):
		return fmt.Errorf("the mock upstream printed no URL within %s", startTimeout)
	case <-ctx.Done():
		return errors.New(stopReason(ctx) + " while the mock upstream started")
	}
	var out struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(line), &out); err != nil || !strings.HasPrefix(out.URL, "http://127.0.0.1:") {
		return fmt.Errorf(`the mock upstream printed %q, want {"url":"http://127.0.0.1:<port>"}`, line)
	}
	r.mockURL = out.URL
	return nil
}

// compileSpec is step 2.
func (r *runner) compileSpec(ctx context.Context) error {
	spec, err := os.ReadFile(filepath.Join(r.repo, "examples", "github-mini", "openapi.yaml"))
	if err != nil {
		return err
	}
	if !bytes.Contains(spec, []byte(specServer)) {
		return fmt.Errorf("openapi.yaml no longer names %s", specServer)
	}
	if err := os.MkdirAll(r.paths.src, 0o755); err != nil {
		return err
	}
	spec = bytes.ReplaceAll(spec, []byte(specServer), []byte(r.mockURL))
	if err := os.WriteFile(r.paths.spec, spec, 0o644); err != nil {
		return err
	}
	res := r.anvil(ctx, nil, "", "compile", r.paths.spec,
		"--manifest", filepath.Join(r.repo, "examples", "github-mini", "anvil.yaml"),
		"--out", r.paths.bundle)
	if res.err != nil || res.code != 0 {
		return res.failure("anvil compile")
	}
	if !exists(filepath.Join(r.paths.bundle, "air.json")) && !exists(filepath.Join(r.paths.bundle, "air.yaml")) {
		return fmt.Errorf("anvil compile exited 0 but %s has no air.json", r.paths.bundle)
	}
	return nil
}

// anvil runs the anvil binary with the work directory as its current
// directory (compile may write .anvil/ there).
func (r *runner) anvil(ctx context.Context, env []string, stdin string, args ...string) cmdResult {
	return runCmd(ctx, cmdSpec{argv: append([]string{r.anvilBin}, args...), env: env, dir: r.work, stdin: stdin, timeout: commandTimeout})
}

// packageHarness is step 3's first half.
func (r *runner) packageHarness(ctx context.Context) error {
	res := r.anvil(ctx, nil, "", "package", "harness", r.paths.bundle, "--out", r.paths.pkg)
	if res.err != nil || res.code != 0 {
		return res.failure("anvil package harness")
	}
	var missing []string
	for _, rel := range []string{"SKILL.md", "harness.json", "python/anvil_github/__init__.py", "python/anvil_github/_gateway.py", "bin/github"} {
		if !exists(filepath.Join(r.paths.pkg, rel)) {
			missing = append(missing, rel)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the package lacks %s", strings.Join(missing, ", "))
	}
	if st, err := os.Stat(filepath.Join(r.paths.pkg, "bin", "github")); err == nil && st.Mode()&0o111 == 0 {
		return errors.New("bin/github is not executable")
	}
	var h struct {
		Connector string `json:"connector"`
	}
	b, _ := os.ReadFile(filepath.Join(r.paths.pkg, "harness.json"))
	if err := json.Unmarshal(b, &h); err != nil || h.Connector != "github" {
		return fmt.Errorf("harness.json does not name connector github: %s", brief(b))
	}
	return nil
}

// writeIndex is step 3's second half.
func (r *runner) writeIndex(ctx context.Context) error {
	if err := os.WriteFile(r.paths.grants, []byte(readGrant+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.MkdirAll(r.paths.connectors, 0o755); err != nil {
		return err
	}
	res := r.anvil(ctx, nil, "", "connectors", "index", "--grants", r.paths.grants, "--out", r.paths.index, r.paths.bundle)
	if res.err != nil || res.code != 0 {
		return res.failure("anvil connectors index")
	}
	b, err := os.ReadFile(r.paths.index)
	if err != nil {
		return fmt.Errorf("anvil connectors index exited 0 but wrote no INDEX.md: %v", err)
	}
	if !hasHeading(string(b), "## github") {
		return fmt.Errorf("INDEX.md has no \"## github\" entry: %s", brief(b))
	}
	return nil
}

// keygen is step 4's first half: anvil keys init. The keys of an earlier
// run in the same work directory are removed first (keys init never
// replaces a key).
func (r *runner) keygen(ctx context.Context) error {
	if err := os.RemoveAll(r.paths.yard); err != nil {
		return err
	}
	res := r.anvil(ctx, nil, "", "keys", "init", r.paths.yard)
	if res.err != nil || res.code != 0 {
		return res.failure("anvil keys init")
	}
	st, err := os.Stat(filepath.Join(r.paths.yard, "signing.jwk.json"))
	if err != nil {
		return err
	}
	if st.Mode().Perm() != 0o600 {
		return fmt.Errorf("signing.jwk.json has mode %o, want 600", st.Mode().Perm())
	}
	if !exists(r.paths.jwks) {
		return errors.New("anvil keys init wrote no jwks.json")
	}
	return nil
}

// writeVaultKey is step 4's second half: anvil vault keygen (32 random
// bytes as 64 hex characters, mode 0600), after removing an earlier run's
// key (keygen never replaces one).
func (r *runner) writeVaultKey(ctx context.Context) error {
	if err := os.Remove(r.paths.vaultKey); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	res := r.anvil(ctx, nil, "", "vault", "keygen", r.paths.vaultKey)
	if res.err != nil || res.code != 0 {
		return res.failure("anvil vault keygen")
	}
	st, err := os.Stat(r.paths.vaultKey)
	if err != nil {
		return err
	}
	if st.Mode().Perm() != 0o600 {
		return fmt.Errorf("the vault key has mode %o, want 600", st.Mode().Perm())
	}
	return nil
}

func (r *runner) buildGeneratedGateway(ctx context.Context) error {
	stop := r.heartbeat("go build ./gen/...", nil)
	bin, err := buildGenerated(ctx, r.goBin, r.repo, r.paths.bin, r.buildTimeout())
	stop("")
	if err != nil {
		return err
	}
	r.gatewayBin = bin
	return nil
}

// gatewayEnv is step 5's environment, plus a wrong upstream token the
// gateway must never use. ANVIL_UPSTREAM_GITHUB_URL points the generated
// gateway (whose bundles, and so server URLs, are compiled in from the
// unmodified example) at the mock; the generic gateway already reads the
// mock's URL from the compiled workspace and honours the same override.
func (r *runner) gatewayEnv() []string {
	return withEnv(baseEnv(),
		"ANVIL_UPSTREAM_GITHUB_URL="+r.mockURL,
		"ANVIL_INBOUND_AUTH_MODE=branchyard",
		"ANVIL_INBOUND_ISSUER="+issuer,
		"ANVIL_INBOUND_AUDIENCE="+r.audience(),
		"ANVIL_INBOUND_JWKS_URI=file://"+r.paths.jwks,
		"ANVIL_VAULT_KEY_FILE="+r.paths.vaultKey,
		"ANVIL_VAULT_DIR="+r.paths.vault,
		"ANVIL_AUDIT_FILE="+r.paths.audit,
		"ANVIL_ALLOWED_HOSTS=127.0.0.1",
		"GITHUB_TOKEN="+wrongToken,
	)
}

// audience is the gateway's /mcp URL.
func (r *runner) audience() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", r.port) }

// base is the gateway's origin.
func (r *runner) base() string { return fmt.Sprintf("http://127.0.0.1:%d", r.port) }

// startGateway is step 5.
func (r *runner) startGateway(ctx context.Context) error {
	port, err := pickPort()
	if err != nil {
		return err
	}
	r.port = port
	argv := gatewayArgv(r.opts.Gateway, r.anvilBin, r.gatewayBin, r.paths.workspace, port)
	p, _, err := startProc("gateway", argv, r.gatewayEnv(), r.work, filepath.Join(r.paths.logs, "gateway.log"), false)
	if err != nil {
		return fmt.Errorf("cannot start the gateway: %v", err)
	}
	r.gateway = p
	deadline := time.Now().Add(startTimeout)
	var last string
	for {
		if p.exited() {
			return fmt.Errorf("the gateway exited %d before /healthz answered: %s", p.exitCode(), p.logTail())
		}
		ans, err := do(ctx, r.http, http.MethodGet, r.base()+"/healthz", nil, nil)
		// The listener answers /healthz while the workspace still loads
		// ("loading":true); the gateway has started once that is gone.
		if err == nil && ans.status == http.StatusOK && !bytes.Contains(ans.body, []byte(`"loading":true`)) {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("HTTP %d %s", ans.status, brief(ans.body))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("/healthz did not answer 200 within %s (last: %s); log: %s", startTimeout, last, p.logTail())
		}
		select {
		case <-ctx.Done():
			return errors.New(stopReason(ctx) + " while the gateway started")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (r *runner) checkHealthz(ctx context.Context) error {
	ans, err := do(ctx, r.http, http.MethodGet, r.base()+"/healthz", nil, nil)
	if err != nil {
		return err
	}
	var h map[string]any
	if err := decodeJSON(ans.body, &h); err != nil {
		return fmt.Errorf("/healthz body %s: %v", brief(ans.body), err)
	}
	if !sameJSON(h, map[string]any{"status": "ok", "fleet": true, "bundles": 1}) {
		return fmt.Errorf(`/healthz answered %s, want {"status":"ok","fleet":true,"bundles":1}`, brief(ans.body))
	}
	return nil
}

// pickPort returns a loopback TCP port that was free a moment ago.
func pickPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cannot find a free port: %v", err)
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || addr.Port <= 0 {
		return 0, errors.New("cannot find a free port")
	}
	return addr.Port, nil
}

// writeSecret writes s to path with mode 0600 (also when path existed).
func writeSecret(path, s string) error {
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// hasHeading reports whether some line of s is heading, alone or followed
// by a space and more ("## github — GitHub Mini").
func hasHeading(s, heading string) bool {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == heading || strings.HasPrefix(l, heading+" ") {
			return true
		}
	}
	return false
}
