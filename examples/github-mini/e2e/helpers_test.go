package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPickPort(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < 5; i++ {
		p, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		if p < 1 || p > 65535 {
			t.Fatalf("port %d out of range", p)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("picked port %d cannot be bound: %v", p, err)
		}
		ln.Close()
	}
	if len(seen) < 2 {
		t.Errorf("five picks gave %d distinct port(s)", len(seen))
	}
}

const goodAuditLine = `{"time":"2026-01-01T00:00:00.000Z","sub":"local:e2e-person","by_tenant":"e2e","by_branch":"main","by_turn":"1","connector":"github","account":"default","operation":"github.issues.list","decision":"allowed","grant":{"index":0,"connector":"github","operations":["*"],"mode":"read"},"upstream_status":200,"latency_ms":17,"input_sha256":"sha256:0000000000000000000000000000000000000000000000000000000000000000","error_code":null,"rule":null,"dry_run":false,"trace_id":"trace_1","effect_class":"read","ledger_id":null,"staged_for":null}`

func TestParseAudit(t *testing.T) {
	lines, err := parseAudit([]byte(goodAuditLine + "\n" + goodAuditLine + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2", len(lines))
	}
	l := lines[0]
	if !reflect.DeepEqual(l.Keys, AuditFields) { // the seed's line, written before the chain
		t.Errorf("keys %v, want %v", l.Keys, AuditFields)
	}
	if p := fieldOrderProblem(l.Keys); p != "" {
		t.Errorf("field order problem on a good line: %s", p)
	}
	if l.str("operation") != "github.issues.list" || l.str("missing") != "" {
		t.Errorf("str() reads %q / %q", l.str("operation"), l.str("missing"))
	}
	if err := checkAllowedList(l); err != nil {
		t.Errorf("checkAllowedList on the seed's line: %v", err)
	}
	if n, ok := l.Fields["latency_ms"].(json.Number); !ok || n.String() != "17" {
		t.Errorf("numbers are not kept exact: %#v", l.Fields["latency_ms"])
	}

	bad := []struct {
		name, data string
	}{
		{"unterminated", goodAuditLine},
		{"not an object", "[1]\n"},
		{"not JSON", "nope\n"},
		{"trailing data", goodAuditLine + " {}\n"},
		{"blank line", goodAuditLine + "\n\n"},
	}
	for _, tc := range bad {
		if _, err := parseAudit([]byte(tc.data)); err == nil {
			t.Errorf("%s: parseAudit accepted %q", tc.name, tc.data)
		}
	}
	if lines, err := parseAudit(nil); err != nil || lines != nil {
		t.Errorf("an empty log gives %v, %v", lines, err)
	}
}

func TestAuditChecks(t *testing.T) {
	swapped := strings.Replace(goodAuditLine, `"sub":"local:e2e-person","by_tenant":"e2e"`, `"by_tenant":"e2e","sub":"local:e2e-person"`, 1)
	l, err := parseAuditLine([]byte(swapped))
	if err != nil {
		t.Fatal(err)
	}
	if fieldOrderProblem(l.Keys) == "" {
		t.Error("a swapped pair passes the field order check")
	}
	denied := strings.NewReplacer(
		`"operation":"github.issues.list","decision":"allowed"`, `"operation":"github.issues.create","decision":"denied"`,
		`"upstream_status":200`, `"upstream_status":null`,
		`"error_code":null,"rule":null`, `"error_code":"policy_denied","rule":"policy/grant_denied"`,
		`"effect_class":"read"`, `"effect_class":"compensable"`,
	).Replace(goodAuditLine)
	d, err := parseAuditLine([]byte(denied))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDeniedCreate(d); err != nil {
		t.Errorf("checkDeniedCreate: %v", err)
	}
	if err := checkAllowedList(d); err == nil {
		t.Error("checkAllowedList accepts the denied line")
	}
	noSHA := strings.Replace(goodAuditLine, `"sha256:0000`, `"md5:0000`, 1)
	n, _ := parseAuditLine([]byte(noSHA))
	if err := checkAllowedList(n); err == nil || !strings.Contains(err.Error(), "input_sha256") {
		t.Errorf("a bad input_sha256 gives %v", err)
	}
}

func TestObjectKeys(t *testing.T) {
	keys, err := objectKeys([]byte(`{"owner":"o","repo":"r","comment_id":1,"x":{"b":1,"a":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "owner,repo,comment_id,x" {
		t.Errorf("keys %v", keys)
	}
	for _, bad := range []string{`[]`, `{"a":1`, `{"a":1} 2`, ``} {
		if _, err := objectKeys([]byte(bad)); err == nil {
			t.Errorf("objectKeys(%q) gave no error", bad)
		}
	}
}

func TestJSONLine(t *testing.T) {
	cases := []struct {
		name string
		res  Result
		want string
	}{
		{"no checks", Result{Work: "/tmp/w"}, `{"ok":false,"work":"/tmp/w","checks":[]}`},
		{"detail omitted when empty", Result{OK: true, Work: "/w", Checks: []Check{{Name: "index lists github", OK: true}}},
			`{"ok":true,"work":"/w","checks":[{"name":"index lists github","ok":true}]}`},
		{"detail kept", Result{Work: "/w", Checks: []Check{{Name: "a", Detail: "x <y> & z"}}},
			`{"ok":false,"work":"/w","checks":[{"name":"a","ok":false,"detail":"x <y> & z"}]}`},
		{"newline in detail stays on one line", Result{Work: "/w", Checks: []Check{{Name: "a", Detail: "1\n2"}}},
			`{"ok":false,"work":"/w","checks":[{"name":"a","ok":false,"detail":"1\n2"}]}`},
	}
	for _, tc := range cases {
		got := string(tc.res.JSONLine())
		if !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
			t.Errorf("%s: not one line: %q", tc.name, got)
		}
		if strings.TrimSuffix(got, "\n") != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		keys, err := objectKeys([]byte(got))
		if err != nil || strings.Join(keys, ",") != "ok,work,checks" {
			t.Errorf("%s: top-level keys %v (%v)", tc.name, keys, err)
		}
	}
}

func TestStep(t *testing.T) {
	res := &Result{}
	var progress strings.Builder
	r := newRunner(context.Background(), Options{Progress: &progress}, t.TempDir(), res)
	r.step("first", nil, func(context.Context) error { return nil })
	r.step("second", nil, func(context.Context) error { return errors.New("boom") })
	ran := false
	r.step("third", []string{"second"}, func(context.Context) error { ran = true; return nil })
	r.step("fourth", []string{"never"}, func(context.Context) error { ran = true; return nil })
	r.step("fifth", []string{"first"}, func(context.Context) error { panic("kaboom") })
	r.step("first", nil, func(context.Context) error { return nil })
	if ran {
		t.Error("a step whose needs failed ran")
	}
	want := []struct {
		name   string
		ok     bool
		detail string
	}{
		{"first", true, ""},
		{"second", false, "boom"},
		{"third", false, `not run: "second" did not pass`},
		{"fourth", false, `not run: it needs "never", which has not run`},
		{"fifth", false, "internal error in the runner: kaboom"},
		{"first (repeated check name)", false, ""},
	}
	if len(res.Checks) != len(want) {
		t.Fatalf("got %d checks: %+v", len(res.Checks), res.Checks)
	}
	for i, w := range want {
		c := res.Checks[i]
		if c.Name != w.name || c.OK != w.ok || !strings.HasPrefix(c.Detail, w.detail) {
			t.Errorf("check %d is %+v, want %+v", i, c, w)
		}
	}
	if !strings.Contains(progress.String(), "ok   first\n") || !strings.Contains(progress.String(), "FAIL second: boom\n") {
		t.Errorf("progress is %q", progress.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r2 := newRunner(ctx, Options{}, t.TempDir(), &Result{})
	r2.step("late", nil, func(context.Context) error { ran = true; return nil })
	if ran || r2.res.Checks[0].OK || !strings.Contains(r2.res.Checks[0].Detail, "interrupted") {
		t.Errorf("a step after the deadline: ran=%v %+v", ran, r2.res.Checks[0])
	}
}

func TestRunBadOptions(t *testing.T) {
	res := Run(context.Background(), Options{Gateway: "other"})
	if res.OK || len(res.Checks) != 1 || res.Checks[0].Name != "options are valid" || !strings.Contains(res.Checks[0].Detail, "--gateway") {
		t.Errorf("bad gateway mode gives %+v", res)
	}
	if err := (&Options{Timeout: -1}).Validate(); !errors.Is(err, ErrOptions) {
		t.Errorf("negative timeout: %v", err)
	}
	for _, m := range []string{"", GatewayGeneric, GatewayGenerated} {
		if err := (&Options{Gateway: m}).Validate(); err != nil {
			t.Errorf("mode %q: %v", m, err)
		}
	}
}

func TestDecodeRPC(t *testing.T) {
	cases := []struct {
		name, ctype, body string
		want              string // result, or "" for an error
	}{
		{"json object", "application/json", `{"jsonrpc":"2.0","id":2,"result":{"a":1}}`, `{"a":1}`},
		{"json array", "application/json; charset=utf-8", `[{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"result":{"b":2}}]`, `{"b":2}`},
		{"sse", "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\n data:\"result\":{\"c\":3}}\n\n", ""},
		{"sse multi-line data", "text/event-stream", "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\r\ndata: \"result\":{\"c\":3}}\r\n\r\n", `{"c":3}`},
		{"other id", "application/json", `{"jsonrpc":"2.0","id":3,"result":{}}`, ""},
		{"request with same id", "application/json", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, ""},
		{"garbage", "application/json", `<html>`, ""},
	}
	for _, tc := range cases {
		msg, err := decodeRPC(tc.ctype, []byte(tc.body), 2)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: got %s, want an error", tc.name, msg.Result)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(msg.Result) != tc.want {
			t.Errorf("%s: result %s, want %s", tc.name, msg.Result, tc.want)
		}
	}
	msg, err := decodeRPC("application/json", []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}`), 2)
	if err != nil || msg.Error == nil || msg.Error.Code != -32602 {
		t.Errorf("error answer: %+v, %v", msg, err)
	}
}

func TestConfirmArgs(t *testing.T) {
	cases := []struct {
		schema string
		want   []string
	}{
		{`{"type":"object","properties":{"confirm":{"type":"boolean","const":true},"owner":{"type":"string"}},"required":["owner","confirm"]}`, []string{"confirm"}},
		{`{"properties":{"anvil_confirm":{"type":"boolean","enum":[true]}},"required":["anvil_confirm"]}`, []string{"anvil_confirm"}},
		{`{"properties":{"confirm":{"type":"boolean","const":true}}}`, nil},
		{`{"properties":{"flag":{"type":"boolean"}},"required":["flag"]}`, nil},
		{`{"properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`, []string{"confirm"}},
		{`not json`, nil},
	}
	for _, tc := range cases {
		if got := confirmArgs(json.RawMessage(tc.schema)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("confirmArgs(%s) = %v, want %v", tc.schema, got, tc.want)
		}
	}
}

func TestCredentialReads(t *testing.T) {
	got := credentialReads([]string{"ANVIL_GATEWAY_TOKEN_FILE", "ANVIL_GATEWAY_URL", "GITHUB_TOKEN", "HTTP_PROXY", "ANVIL_DEFAULT_TOKEN", "MY_API_KEY", "HOME"})
	want := []string{"GITHUB_TOKEN", "ANVIL_DEFAULT_TOKEN", "MY_API_KEY"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("credentialReads = %v, want %v", got, want)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("ANVIL_INBOUND_AUTH_MODE", "none")
	t.Setenv("GITHUB_TOKEN", "leak")
	t.Setenv("PYTHONPATH", "/elsewhere")
	t.Setenv("E2E_KEEP_ME", "1")
	env := baseEnv()
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, gone := range []string{"ANVIL_INBOUND_AUTH_MODE=", "GITHUB_TOKEN=", "PYTHONPATH="} {
		if strings.Contains(joined, "\n"+gone) {
			t.Errorf("baseEnv keeps %s", gone)
		}
	}
	if !strings.Contains(joined, "\nE2E_KEEP_ME=1\n") {
		t.Error("baseEnv drops an unrelated variable")
	}
	got := withEnv([]string{"A=1", "B=2"}, "B=3", "C=4")
	if strings.Join(got, ",") != "A=1,B=3,C=4" {
		t.Errorf("withEnv = %v", got)
	}
}

func TestRunCmd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	res := runCmd(ctx, cmdSpec{argv: []string{"/bin/sh", "-c", "read x; echo got $x; echo err >&2; exit 3"}, stdin: "in\n", timeout: 10 * time.Second})
	if res.err != nil || res.code != 3 || res.stdout != "got in\n" || res.stderr != "err\n" {
		t.Errorf("sh: %+v", res)
	}
	if err := res.failure("sh"); err == nil || !strings.Contains(err.Error(), "sh exited 3: err") {
		t.Errorf("failure: %v", err)
	}
	// A command (and a child holding its output) that would run for far
	// longer than the test is ended by the timeout: runCmd returning at all
	// is the event, the 60 s guard only catches a hang.
	done := make(chan cmdResult, 1)
	go func() {
		done <- runCmd(ctx, cmdSpec{argv: []string{"/bin/sh", "-c", "sleep 1000 & sleep 1000"}, timeout: 200 * time.Millisecond})
	}()
	select {
	case res = <-done:
	case <-time.After(time.Minute):
		t.Fatal("hung: runCmd did not end a command past its timeout")
	}
	if res.err == nil || !strings.Contains(res.err.Error(), "timed out after 200ms") {
		t.Errorf("a hanging command gives %+v", res)
	}
	res = runCmd(ctx, cmdSpec{argv: []string{filepath.Join(t.TempDir(), "missing")}})
	if res.err == nil {
		t.Error("a missing program gives no error")
	}
}

func TestProcStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "p.log")
	p, lines, err := startProc("p", []string{"/bin/sh", "-c", `trap 'exit 0' TERM; echo '{"url":"x"}'; while :; do sleep 0.05; done`}, os.Environ(), dir, log, true)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lines:
		if l != `{"url":"x"}` {
			t.Errorf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no first line")
	}
	code, graceful := p.stop()
	if !graceful || code != 0 {
		t.Errorf("stop: code %d graceful %v", code, graceful)
	}
	if c2, g2 := p.stop(); c2 != code || g2 != graceful {
		t.Error("a second stop gives another answer")
	}
	if !strings.Contains(p.logTail(), `{"url":"x"}`) {
		t.Errorf("log is %q", p.logTail())
	}

	// A process ignoring SIGTERM outlives it until the grace runs out, and
	// is then killed. The test fires the grace timer itself: the order of
	// events is what it checks, not how long they took.
	p, lines, err = startProc("stubborn", []string{"/bin/sh", "-c", `trap '' TERM; echo ready; while :; do sleep 0.05; done`}, os.Environ(), dir, log, true)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lines: // the trap is set
	case <-time.After(30 * time.Second):
		t.Fatal("hung: the stubborn process never said it was ready")
	}
	graces, fire := make(chan time.Duration, 2), make(chan time.Time)
	p.after = func(d time.Duration) <-chan time.Time { graces <- d; return fire }
	stopped := make(chan bool, 1)
	go func() { _, g := p.stop(); stopped <- g }()
	if d := <-graces; d != termGrace { // stop has sent SIGTERM and waits out the grace
		t.Fatalf("the first grace is %v, want termGrace %v", d, termGrace)
	}
	if p.exited() {
		t.Fatal("the process ignoring SIGTERM exited before its grace ran out")
	}
	fire <- time.Time{} // the grace runs out: SIGKILL
	select {
	case graceful = <-stopped:
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatal("hung: stop did not return after the SIGKILL")
	}
	if graceful || !p.exited() {
		t.Errorf("a process ignoring SIGTERM: graceful %v exited %v", graceful, p.exited())
	}
	if d := <-graces; d != killGrace {
		t.Errorf("the wait after SIGKILL is %v, want killGrace %v", d, killGrace)
	}
}

func TestGatewayArgv(t *testing.T) {
	got := gatewayArgv(GatewayGeneric, "/b/anvil", "/b/gen/yard", "/w/workspace", 8931)
	if strings.Join(got, " ") != "/b/anvil serve mcp /w/workspace --fleet --http 8931" {
		t.Errorf("generic: %v", got)
	}
	got = gatewayArgv(GatewayGenerated, "/b/anvil", "/b/gen/yard", "/w/workspace", 8931)
	if got[0] != "/b/gen/yard" || strings.Join(got[1:], " ") != "serve mcp /w/workspace --fleet --http 8931" {
		t.Errorf("generated: %v", got)
	}
	repo := t.TempDir()
	if _, err := buildGenerated(context.Background(), "go", repo, t.TempDir(), time.Minute); !errors.Is(err, errNoGenerated) {
		t.Errorf("no gen/ tree gives %v", err)
	}
}

func TestFindRepo(t *testing.T) {
	dir := t.TempDir()
	nested := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module github.com/anvil-dev/anvil\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findRepo(nested); err != nil || got != dir {
		t.Errorf("findRepo = %q, %v; want %q", got, err, dir)
	}
	if isAnvilModule([]byte("module github.com/other/anvil\n")) {
		t.Error("another module is taken for Anvil")
	}
}

func TestHasHeading(t *testing.T) {
	md := "# Connectors\n\n## github — GitHub Mini\n- **For:** x\n## githubber\n"
	if !hasHeading(md, "## github") || hasHeading(md, "## git") || !hasHeading("## github\r\n", "## github") {
		t.Error("hasHeading misreads headings")
	}
}

func TestCheckFlowCompensation(t *testing.T) {
	run := map[string]any{"steps": map[string]any{"comment": map[string]any{"result": []any{
		map[string]any{"id": json.Number("101")}, map[string]any{"id": json.Number("102")},
	}}}}
	entry := func(id int) compensation {
		var c compensation
		_ = json.Unmarshal([]byte(`{"step":"comment","call":0,"operation":"github.comments.create","undo":{"kind":"inverse","operation":"github.comments.delete","arguments":{"owner":"octo","repo":"hello","comment_id":`+strconv.Itoa(id)+`}}}`), &c)
		return c
	}
	good := flowOut{Run: run, Compensation: []compensation{entry(102), entry(101)}}
	if err := checkFlowCompensation(good); err != nil {
		t.Errorf("newest first: %v", err)
	}
	if err := checkFlowCompensation(flowOut{Run: run, Compensation: []compensation{entry(101), entry(102)}}); err == nil {
		t.Error("oldest first passes")
	}
	if err := checkFlowCompensation(flowOut{Run: run, Compensation: []compensation{entry(102)}}); err == nil {
		t.Error("a missing entry passes")
	}
	if err := checkFlowCompensation(flowOut{Run: map[string]any{}}); err == nil {
		t.Error("a run without the map step's results passes")
	}
}

func TestEffectReport(t *testing.T) {
	raw := `{"class":"reversible","operation":"github.comments.create","idempotency_key":"K","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}},"deadline_ms":null,"lookup":null}`
	e, err := parseEffect([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	args, err := e.Undo.args()
	if err != nil {
		t.Fatal(err)
	}
	if args["comment_id"] != json.Number("100") || *e.IdempotencyKey != "K" {
		t.Errorf("args %v key %v", args, e.IdempotencyKey)
	}
	if got := followJSON(e.Undo); got != `{"operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}}` {
		t.Errorf("followJSON = %s", got)
	}
	if _, err := parseEffect(nil); err == nil {
		t.Error("an absent header parses")
	}
}
