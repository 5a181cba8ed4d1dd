package serve

import (
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/audit"
	"regexp"
	"strings"
	"testing"
)

// auditKeys is the audit line's key order (anvil-reference §e "Audit log").
var auditKeys = []string{"time", "sub", "by_tenant", "by_branch", "by_turn", "connector", "account", "operation",
	"decision", "grant", "upstream_status", "latency_ms", "input_sha256", "error_code", "rule", "dry_run", "trace_id",
	"effect_class", "ledger_id", "staged_for"}

// jsonKeys returns the top-level keys of a JSON object in document order.
func jsonKeys(t testing.TB, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// checkAuditLine checks a line's key order and fixed formats.
func checkAuditLine(t testing.TB, line string) {
	t.Helper()
	// Every line ends with the audit chain's seq and prev, after the
	// contract's keys.
	if _, _, ok := audit.ParseChained([]byte(line)); !ok {
		t.Errorf("audit line without the chain: %s", line)
	}
	if got := strings.Join(jsonKeys(t, string(audit.Record([]byte(line)))), ","); got != strings.Join(auditKeys, ",") {
		t.Errorf("audit keys\n got %s\nwant %s", got, strings.Join(auditKeys, ","))
	}
	for _, re := range []string{`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"`, `"input_sha256":"sha256:[0-9a-f]{64}"`, `"trace_id":"trace_[0-9a-f]+"`} {
		if !regexp.MustCompile(re).MatchString(line) {
			t.Errorf("audit line does not match %s: %s", re, line)
		}
	}
}

// TestSeedDriveItStepByStep follows the seed's "Drive it step by step" with
// Go stand-ins: the mock upstream (1), the compiled bundle pointed at it (2),
// the yard's keys and a vault key (4), the gateway in branchyard mode (5), a
// read turn token (6), the person's key connection (7), the harness's calls
// over MCP as the SDKs make them (8) and the audit log (9).
func TestSeedDriveItStepByStep(t *testing.T) {
	f := newFleetFixture(t, nil) // 1, 2, 4, 5 and 7 (connect through /connect/api-key)
	if a := f.do("GET", "/healthz", "", "", "", nil); a.status != 200 {
		t.Fatalf("healthz %d", a.status)
	}
	turn := f.turn(fxReadGrant) // 6

	// 8. The SDK's protocol: one short-lived session per call.
	s := f.rawInitialize(turn)
	res := s.callTool("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, nil)
	if res["isError"] == true {
		t.Fatalf("list issues failed: %v", res)
	}
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	want := `[{"number":2,"title":"Second issue","state":"open","body":"Still open."},{"number":1,"title":"First issue","state":"closed","body":"Done."}]`
	if text != want {
		t.Errorf("list issues text\n got %s\nwant %s", text, want)
	}
	if c := s.close(); c.status != 204 {
		t.Errorf("DELETE session: %d %s", c.status, c.body)
	}

	s = f.rawInitialize(turn)
	res = s.callTool("github__github_create_issue", map[string]any{"owner": "octo", "repo": "hello", "title": "x", "confirm": true}, nil)
	e := toolError(t, res)
	details, _ := e["details"].(map[string]any)
	if e["code"] != "policy_denied" || details["code"] != "policy/grant_denied" {
		t.Errorf("create issue: want policy_denied policy/grant_denied, got %v", e)
	}
	s.close()

	// The CLI's "pulls list".
	a := f.call(turn, "github__github_list_pull", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil)
	if a.status != 200 || a.body != `[{"number":3,"title":"Fix the first issue","state":"merged"}]` {
		t.Errorf("pulls list: %d %s", a.status, a.body)
	}
	for _, r := range f.mock.Requests() {
		if r.Method == "POST" {
			t.Errorf("the upstream saw a POST: %+v", r)
		}
		if !r.Authorized {
			t.Errorf("the upstream saw an unauthorized request: %+v", r)
		}
	}

	// 9. The audit log.
	raw, lines := f.auditLines()
	if len(lines) != 3 {
		t.Fatalf("want 3 audit lines, got %d:\n%s", len(lines), strings.Join(raw, "\n"))
	}
	for _, l := range raw {
		checkAuditLine(t, l)
	}
	grant := `"grant":{"index":0,"connector":"github","operations":["*"],"mode":"read"}`
	first := `"sub":"local:ada","by_tenant":"e2e","by_branch":"main","by_turn":"1","connector":"github","account":"default","operation":"github.issues.list","decision":"allowed",` + grant + `,"upstream_status":200,"latency_ms":`
	if !strings.Contains(raw[0], first) || !strings.Contains(raw[0], `"error_code":null,"rule":null,"dry_run":false,"trace_id":"trace_`) ||
		!strings.HasSuffix(string(audit.Record([]byte(raw[0]))), `"effect_class":"read","ledger_id":null,"staged_for":null}`) {
		t.Errorf("first line: %s", raw[0])
	}
	second := `"operation":"github.issues.create","decision":"denied",` + grant + `,"upstream_status":null,"latency_ms":`
	if !strings.Contains(raw[1], second) || !strings.Contains(raw[1], `"error_code":"policy_denied","rule":"policy/grant_denied","dry_run":false`) ||
		!strings.HasSuffix(string(audit.Record([]byte(raw[1]))), `"effect_class":"compensable","ledger_id":null,"staged_for":null}`) {
		t.Errorf("second line: %s", raw[1])
	}
	if lines[1]["trace_id"] != e["trace_id"] {
		t.Errorf("the refusal's trace id %v is not the audit line's %v", e["trace_id"], lines[1]["trace_id"])
	}
	if lines[0]["input_sha256"] != lines[2]["input_sha256"] || lines[0]["input_sha256"] == lines[1]["input_sha256"] {
		t.Errorf("input hashes: same input must hash the same, a different one differently: %v", lines)
	}
}
