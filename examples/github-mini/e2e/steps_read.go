package e2e

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Check names of the read turn (seed steps 6 to 9).
const (
	chkTurnToken       = "turn token is minted"
	chkTurnOnConnect   = "turn token is refused on the connect routes"
	chkVaultEmpty      = "vault stays empty after the turn token"
	chkConnectToken    = "connect token is minted"
	chkConnectOnMCP    = "connect token is refused on /mcp"
	chkConnect         = "anvil connect stores the key"
	chkConnectStatus   = "connect status shows github without the secret"
	chkPythonGateway   = "python SDK starts in gateway mode"
	chkPythonList      = "python lists issues through the gateway"
	chkCreateRefused   = "issues.create is refused policy_denied"
	chkNoPost          = "refused create never reaches the upstream"
	chkPythonEnv       = "python reads no upstream credential"
	chkCLIPulls        = "cli lists pulls through the gateway"
	chkUpstreamAuth    = "upstream saw only the connected key"
	chkReadAuditLines  = "audit has one line per read-turn call"
	chkReadAuditOrder  = "read-turn audit lines keep the field order"
	chkAuditAllowed    = "audit records the allowed list"
	chkAuditDenied     = "audit records the denied create"
	harnessReadTimeout = time.Minute
)

//go:embed scripts/harness_read.py
var harnessReadPy string

// harnessRead is what scripts/harness_read.py printed.
type harnessRead struct {
	ImportError *pyError         `json:"import_error"`
	GatewayMode bool             `json:"gateway_mode"`
	Connector   any              `json:"connector"`
	Issues      []map[string]any `json:"issues"`
	IssuesError *pyError         `json:"issues_error"`
	Created     any              `json:"created"`
	CreateError *pyError         `json:"create_error"`
	EnvReads    []string         `json:"env_reads"`
}

// pyError is a Python exception as the scripts describe it.
type pyError struct {
	Type    string         `json:"type"`
	Message string         `json:"message"`
	Code    any            `json:"code"`
	Details map[string]any `json:"details"`
	Bases   []string       `json:"bases"`
}

// is reports whether the exception is an instance of the named class.
func (e *pyError) is(class string) bool {
	for _, b := range e.Bases {
		if b == class {
			return true
		}
	}
	return e.Type == class
}

func (e *pyError) String() string {
	if e == nil {
		return "no error"
	}
	b, _ := json.Marshal(e)
	return string(b)
}

func (r *runner) readTurn() {
	var hr harnessRead
	r.step(chkTurnToken, []string{chkGateway}, func(ctx context.Context) (err error) {
		r.turnToken, err = r.mint(ctx, r.paths.turnToken, "--branch", "main", "--turn", "1", "--grants", readGrant)
		return err
	})
	r.step(chkTurnOnConnect, []string{chkTurnToken}, r.turnTokenOnConnect)
	r.step(chkVaultEmpty, []string{chkTurnOnConnect}, r.vaultEmpty)
	r.step(chkConnectToken, []string{chkGateway}, func(ctx context.Context) (err error) {
		r.connectToken, err = r.mint(ctx, r.paths.connectToken, "--purpose", "connect", "--grants", "[]")
		return err
	})
	r.step(chkConnectOnMCP, []string{chkConnectToken}, r.connectTokenOnMCP)
	r.step(chkConnect, []string{chkConnectToken}, r.connect)
	r.step(chkConnectStatus, []string{chkConnect}, r.connectStatus)

	harness := []string{chkPackage, chkTurnToken, chkConnect}
	r.step(chkPythonGateway, harness, func(ctx context.Context) error {
		return r.runHarnessRead(ctx, &hr)
	})
	r.step(chkPythonList, []string{chkPythonGateway}, func(context.Context) error {
		if hr.IssuesError != nil {
			return fmt.Errorf("list_issue raised %s", hr.IssuesError)
		}
		return checkMockIssues(hr.Issues)
	})
	r.step(chkCreateRefused, []string{chkPythonGateway}, func(context.Context) error {
		if hr.CreateError == nil {
			return fmt.Errorf("create_issue returned %v instead of raising", hr.Created)
		}
		dcode, _ := hr.CreateError.Details["code"].(string)
		if hr.CreateError.Type != "PolicyDenied" || !hr.CreateError.is("AnvilError") || hr.CreateError.Code != "policy_denied" || dcode != "policy/grant_denied" {
			return fmt.Errorf("create_issue raised %s, want PolicyDenied (an AnvilError) policy_denied with details.code policy/grant_denied", hr.CreateError)
		}
		return nil
	})
	r.step(chkNoPost, []string{chkPythonGateway}, func(ctx context.Context) error {
		reqs, err := r.mockRequests(ctx)
		if err != nil {
			return err
		}
		for _, q := range reqs {
			if q.Method == http.MethodPost {
				return fmt.Errorf("the mock saw POST %s", q.Path)
			}
		}
		return nil
	})
	r.step(chkPythonEnv, []string{chkPythonGateway}, func(context.Context) error {
		if bad := credentialReads(hr.EnvReads); len(bad) > 0 {
			return fmt.Errorf("the SDK read %s", strings.Join(bad, ", "))
		}
		return nil
	})
	r.step(chkCLIPulls, harness, r.cliPulls)
	r.step(chkUpstreamAuth, []string{chkConnect}, r.upstreamAuthorized)

	var lines []auditLine
	r.step(chkReadAuditLines, []string{chkPythonGateway, chkCLIPulls}, func(ctx context.Context) error {
		want := []string{"github.issues.list", "github.issues.create", "github.pulls.list"}
		got, err := r.waitAudit(ctx, len(want))
		lines = got
		r.readAudit = got
		r.auditCount = len(got)
		if err != nil {
			return err
		}
		return sameOperations(got, want)
	})
	r.step(chkReadAuditOrder, []string{chkReadAuditLines}, func(context.Context) error {
		return fieldOrder(lines)
	})
	r.step(chkAuditAllowed, []string{chkReadAuditLines}, func(context.Context) error {
		return checkAllowedList(lines[0])
	})
	r.step(chkAuditDenied, []string{chkReadAuditLines}, func(context.Context) error {
		return checkDeniedCreate(lines[1])
	})
}

// mint runs anvil token mint for this gateway and writes the token to a
// 0600 file.
func (r *runner) mint(ctx context.Context, file string, extra ...string) (string, error) {
	argv := []string{"token", "mint", r.paths.yard, "--iss", issuer, "--aud", r.audience(), "--sub", subject, "--tenant", tenant}
	res := r.anvil(ctx, nil, "", append(argv, extra...)...)
	if res.err != nil || res.code != 0 {
		return "", res.failure("anvil token mint")
	}
	token := strings.TrimSpace(res.stdout)
	if strings.Count(token, ".") != 2 {
		return "", errors.New("anvil token mint printed something that is not a compact JWT")
	}
	if err := writeSecret(file, token); err != nil {
		return "", err
	}
	return token, nil
}

// turnTokenOnConnect checks 403 connect_token_required on every connect route.
func (r *runner) turnTokenOnConnect(ctx context.Context) error {
	type route struct{ method, path, body string }
	var bad []string
	for _, rt := range []route{
		{http.MethodPost, "/connect/start", `{"connector":"github"}`},
		{http.MethodPost, "/connect/api-key", `{"connector":"github","api_key":"not-the-person-s-key"}`},
		{http.MethodGet, "/connect/status", ""},
	} {
		var body []byte
		h := bearer(r.turnToken)
		if rt.body != "" {
			body = []byte(rt.body)
			h["Content-Type"] = "application/json"
		}
		ans, err := do(ctx, r.http, rt.method, r.base()+rt.path, h, body)
		if err != nil {
			return err
		}
		if ans.status != http.StatusForbidden || errorCode(ans.body) != "connect_token_required" {
			bad = append(bad, fmt.Sprintf("%s %s answered %d %s", rt.method, rt.path, ans.status, brief(ans.body)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("want 403 connect_token_required: %s", strings.Join(bad, "; "))
	}
	return nil
}

func (r *runner) vaultEmpty(context.Context) error {
	entries, err := os.ReadDir(r.paths.vault)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return fmt.Errorf("the vault holds %s", strings.Join(names, ", "))
	}
	return nil
}

func (r *runner) connectTokenOnMCP(ctx context.Context) error {
	m := newMCP(r.http, r.audience(), r.connectToken)
	ans, err := m.post(ctx, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcpProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "anvil-e2e", "version": "1"},
	}})
	if err != nil {
		return err
	}
	if ans.status != http.StatusForbidden || errorCode(ans.body) != "turn_token_required" {
		if sid := ans.header.Get("Mcp-Session-Id"); sid != "" {
			m.session, m.protocol = sid, mcpProtocolVersion
			_ = m.close(ctx)
		}
		return fmt.Errorf("initialize with the connect token answered %d %s, want 403 turn_token_required", ans.status, brief(ans.body))
	}
	return nil
}

// connect is step 7's anvil connect.
func (r *runner) connect(ctx context.Context) error {
	res := r.anvil(ctx, nil, upstreamToken+"\n", "connect", r.paths.workspace, "github",
		"--gateway", r.audience(), "--token-file", r.paths.connectToken, "--api-key-stdin")
	if res.err != nil || res.code != 0 {
		return res.failure("anvil connect")
	}
	const want = "Connected github (account default)."
	if !hasHeading(res.stdout, want) {
		return fmt.Errorf("anvil connect printed %q, want %q", brief([]byte(res.stdout)), want)
	}
	return nil
}

func (r *runner) connectStatus(ctx context.Context) error {
	ans, err := do(ctx, r.http, http.MethodGet, r.base()+"/connect/status", bearer(r.connectToken), nil)
	if err != nil {
		return err
	}
	if ans.status != http.StatusOK {
		return fmt.Errorf("GET /connect/status answered %d %s", ans.status, brief(ans.body))
	}
	if strings.Contains(string(ans.body), upstreamToken) {
		return errors.New("GET /connect/status shows the stored key")
	}
	var st struct {
		Sub         string           `json:"sub"`
		Connections []map[string]any `json:"connections"`
	}
	if err := decodeJSON(ans.body, &st); err != nil {
		return fmt.Errorf("GET /connect/status: %v", err)
	}
	if st.Sub != subject {
		return fmt.Errorf("sub is %q, want %q", st.Sub, subject)
	}
	for _, c := range st.Connections {
		if c["connector"] == "github" && c["account"] == "default" && c["kind"] == "static" && c["status"] == "active" {
			return nil
		}
	}
	return fmt.Errorf("no active static github/default connection in %s", brief(ans.body))
}

// harnessEnv is what Branchyard gives a harness: the two gateway variables
// (no other ANVIL_*), plus a wrong upstream token that must never be used.
func (r *runner) harnessEnv(tokenFile, pythonPath string) []string {
	kv := []string{
		"ANVIL_GATEWAY_URL=" + r.audience(),
		"ANVIL_GATEWAY_TOKEN_FILE=" + tokenFile,
		"GITHUB_TOKEN=" + wrongToken,
	}
	if pythonPath != "" {
		kv = append(kv, "PYTHONPATH="+pythonPath, "PYTHONDONTWRITEBYTECODE=1")
	}
	return withEnv(baseEnv(), kv...)
}

// runPython runs one embedded script with the harness environment and
// decodes the JSON object it prints.
func (r *runner) runPython(ctx context.Context, name, script, tokenFile, pythonPath string, out any, args ...string) error {
	if r.python == "" {
		p, err := exec.LookPath("python3")
		if err != nil {
			return errors.New("python3 is not on PATH")
		}
		r.python = p
	}
	path := filepath.Join(r.paths.scripts, name)
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		return err
	}
	res := runCmd(ctx, cmdSpec{
		argv:    append([]string{r.python, path}, args...),
		env:     r.harnessEnv(tokenFile, pythonPath),
		dir:     r.work,
		timeout: harnessReadTimeout,
	})
	if res.err != nil || res.code != 0 {
		return res.failure("python3 " + name)
	}
	if err := decodeJSON([]byte(strings.TrimSpace(res.stdout)), out); err != nil {
		return fmt.Errorf("%s printed %s: %v%s", name, brief([]byte(res.stdout)), err, stderrNote(res.stderr))
	}
	return nil
}

func (r *runner) runHarnessRead(ctx context.Context, hr *harnessRead) error {
	if err := r.runPython(ctx, "harness_read.py", harnessReadPy, r.paths.turnToken, filepath.Join(r.paths.pkg, "python"), hr); err != nil {
		return err
	}
	if hr.ImportError != nil {
		return fmt.Errorf("from anvil_github import GithubClient, AnvilError; GithubClient() raised %s", hr.ImportError)
	}
	if !hr.GatewayMode || hr.Connector != "github" {
		return fmt.Errorf("GithubClient() is not in gateway mode for connector github (gateway mode %v, connector %v)", hr.GatewayMode, hr.Connector)
	}
	return nil
}

// checkMockIssues checks the two seeded issues, #2 then #1.
func checkMockIssues(issues []map[string]any) error {
	want := []map[string]any{
		{"number": 2, "title": "Second issue", "state": "open"},
		{"number": 1, "title": "First issue", "state": "closed"},
	}
	if len(issues) != len(want) {
		b, _ := json.Marshal(issues)
		return fmt.Errorf("got %d issues, want the mock's 2: %s", len(issues), brief(b))
	}
	for i, w := range want {
		for k, v := range w {
			if !sameJSON(issues[i][k], v) {
				b, _ := json.Marshal(issues)
				return fmt.Errorf("issue %d has %s %v, want %v: %s", i, k, issues[i][k], v, brief(b))
			}
		}
	}
	return nil
}

// credentialReads lists environment variables read by name that look like
// upstream credentials (the gateway's own token file variable excepted).
func credentialReads(reads []string) []string {
	var bad []string
	for _, k := range reads {
		u := strings.ToUpper(k)
		if strings.HasPrefix(u, "ANVIL_GATEWAY_") {
			continue
		}
		if u == "GITHUB_TOKEN" || strings.Contains(u, "TOKEN") || strings.Contains(u, "SECRET") ||
			strings.Contains(u, "API_KEY") || strings.Contains(u, "PASSWORD") {
			bad = append(bad, k)
		}
	}
	return bad
}

// cliPulls runs bin/github pulls list as the harness.
func (r *runner) cliPulls(ctx context.Context) error {
	res := runCmd(ctx, cmdSpec{
		argv:    []string{filepath.Join(r.paths.pkg, "bin", "github"), "pulls", "list", "--owner", "octo", "--repo", "hello"},
		env:     r.harnessEnv(r.paths.turnToken, ""),
		dir:     r.work,
		timeout: harnessReadTimeout,
	})
	if res.err != nil || res.code != 0 {
		return res.failure("bin/github pulls list")
	}
	var pulls []map[string]any
	if err := decodeJSON([]byte(strings.TrimSpace(res.stdout)), &pulls); err != nil {
		return fmt.Errorf("bin/github pulls list printed %s: %v", brief([]byte(res.stdout)), err)
	}
	if len(pulls) != 1 || !sameJSON(pulls[0]["number"], 3) || pulls[0]["title"] != "Fix the first issue" {
		return fmt.Errorf("bin/github pulls list printed %s, want the mock's pull #3", brief([]byte(res.stdout)))
	}
	return nil
}

// mockRequest is one entry of the mock's request log.
type mockRequest struct {
	Method         string `json:"method"`
	Path           string `json:"path"`
	Authorized     bool   `json:"authorized"`
	IdempotencyKey string `json:"idempotency_key"`
}

func (r *runner) mockRequests(ctx context.Context) ([]mockRequest, error) {
	ans, err := do(ctx, r.http, http.MethodGet, r.mockURL+"/__requests", nil, nil)
	if err != nil {
		return nil, err
	}
	var reqs []mockRequest
	if ans.status != http.StatusOK || decodeJSON(ans.body, &reqs) != nil {
		return nil, fmt.Errorf("GET /__requests answered %d %s", ans.status, brief(ans.body))
	}
	return reqs, nil
}

// mockGet reads the mock's state directly, with the upstream token.
func (r *runner) mockGet(ctx context.Context, path string, out any) (int, error) {
	ans, err := do(ctx, r.http, http.MethodGet, r.mockURL+path, bearer(upstreamToken), nil)
	if err != nil {
		return 0, err
	}
	if ans.status == http.StatusOK {
		if err := decodeJSON(ans.body, out); err != nil {
			return ans.status, fmt.Errorf("GET %s: %v", path, err)
		}
	}
	return ans.status, nil
}

func (r *runner) upstreamAuthorized(ctx context.Context) error {
	reqs, err := r.mockRequests(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, q := range reqs {
		if !q.Authorized {
			return fmt.Errorf("the mock refused %s %s: it did not carry the connected key", q.Method, q.Path)
		}
		n++
	}
	if n == 0 {
		return errors.New("no request reached the mock")
	}
	return nil
}

// waitAudit waits (up to 3 s) until the audit log has at least n lines
// and returns them all.
func (r *runner) waitAudit(ctx context.Context, n int) ([]auditLine, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		lines, err := readAuditFile(r.paths.audit)
		if err == nil && len(lines) >= n {
			return lines, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return lines, err
			}
			return lines, fmt.Errorf("the audit log has %d line(s), want %d: %s", len(lines), n, operations(lines))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// operations lists the lines' operations and decisions, for details.
func operations(lines []auditLine) string {
	var ops []string
	for _, l := range lines {
		ops = append(ops, l.str("operation")+" "+l.str("decision"))
	}
	return "[" + strings.Join(ops, ", ") + "]"
}

func sameOperations(lines []auditLine, want []string) error {
	if len(lines) != len(want) {
		return fmt.Errorf("got %d line(s) %s, want %d: %s", len(lines), operations(lines), len(want), strings.Join(want, ", "))
	}
	for i, w := range want {
		if lines[i].str("operation") != w {
			return fmt.Errorf("line %d is %s, want %s (all: %s)", i+1, lines[i].str("operation"), w, operations(lines))
		}
	}
	return nil
}

func fieldOrder(lines []auditLine) error {
	for i, l := range lines {
		if p := fieldOrderProblem(l.Keys); p != "" {
			return fmt.Errorf("line %d (%s): %s", i+1, l.str("operation"), p)
		}
	}
	return nil
}

var (
	sha256Field = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	rfc3339ish  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}`)
)

// checkCommonAudit checks the fields every line of this run shares.
func checkCommonAudit(l auditLine, turn string) error {
	var bad []string
	if !rfc3339ish.MatchString(l.str("time")) {
		bad = append(bad, fmt.Sprintf("time %v is not RFC 3339", l.Fields["time"]))
	}
	if !sha256Field.MatchString(l.str("input_sha256")) {
		bad = append(bad, fmt.Sprintf("input_sha256 %v is not sha256:<hex>", l.Fields["input_sha256"]))
	}
	if l.str("trace_id") == "" {
		bad = append(bad, "trace_id is empty")
	}
	if _, ok := l.Fields["latency_ms"].(json.Number); !ok {
		bad = append(bad, fmt.Sprintf("latency_ms %v is not a number", l.Fields["latency_ms"]))
	}
	if err := expectFields(l, map[string]any{
		"sub": subject, "by_tenant": tenant, "by_branch": "main", "by_turn": turn,
		"connector": "github", "dry_run": false,
	}, []string{"sub", "by_tenant", "by_branch", "by_turn", "connector", "dry_run"}); err != nil {
		bad = append(bad, err.Error())
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

var readGrantEntry = map[string]any{"index": 0, "connector": "github", "operations": []any{"*"}, "mode": "read"}

func checkAllowedList(l auditLine) error {
	if err := checkCommonAudit(l, "1"); err != nil {
		return err
	}
	want := map[string]any{
		"account": "default", "operation": "github.issues.list", "decision": "allowed",
		"grant": readGrantEntry, "upstream_status": 200, "error_code": nil, "rule": nil,
		"effect_class": "read", "ledger_id": nil, "staged_for": nil,
	}
	return expectFields(l, want, []string{"account", "operation", "decision", "grant", "upstream_status",
		"error_code", "rule", "effect_class", "ledger_id", "staged_for"})
}

func checkDeniedCreate(l auditLine) error {
	if err := checkCommonAudit(l, "1"); err != nil {
		return err
	}
	want := map[string]any{
		"operation": "github.issues.create", "decision": "denied", "grant": readGrantEntry,
		"upstream_status": nil, "error_code": "policy_denied", "rule": "policy/grant_denied",
		"effect_class": "compensable", "staged_for": nil,
	}
	if err := expectFields(l, want, []string{"operation", "decision", "grant", "upstream_status",
		"error_code", "rule", "effect_class", "staged_for"}); err != nil {
		return err
	}
	if _, ok := l.Fields["ledger_id"]; !ok {
		return errors.New("ledger_id missing")
	}
	return nil
}
