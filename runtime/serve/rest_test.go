package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/door/restdoor"
)

// effectHeader decodes X-Anvil-Effect, checking it is printable ASCII.
func effectHeader(t *testing.T, a answer) map[string]any {
	t.Helper()
	v := a.header.Get("X-Anvil-Effect")
	if v == "" {
		t.Fatalf("no X-Anvil-Effect (%d %s)", a.status, a.body)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			t.Fatalf("X-Anvil-Effect byte %d is %#x: %q", i, v[i], v)
		}
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("X-Anvil-Effect is not JSON: %q", v)
	}
	return m
}

func TestRESTRoute(t *testing.T) {
	f := newFleetFixture(t, nil)
	write := f.turn(fxWriteGrant)
	read := f.turn(fxReadGrant)
	comment := `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good."}}`
	key := http.Header{"Idempotency-Key": {"01JBRANCHYARDLEDGER00000001"}}

	t.Run("Idempotency-Key is forwarded and a replay returns the same comment", func(t *testing.T) {
		a := f.call(write, "github__github_create_comment", comment, key)
		if a.status != 200 || a.body != `{"id":100,"body":"Looks good."}` {
			t.Fatalf("create: %d %s", a.status, a.body)
		}
		want := `{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JBRANCHYARDLEDGER00000001","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}},"deadline_ms":null,"lookup":null}`
		if got := a.header.Get("X-Anvil-Effect"); got != want {
			t.Errorf("X-Anvil-Effect\n got %s\nwant %s", got, want)
		}
		if a.header.Get("Cache-Control") != "no-store" || a.header.Get("Content-Type") != "application/json" {
			t.Errorf("headers: %v", a.header)
		}
		b := f.call(write, "github__github_create_comment", comment, key)
		if b.status != 200 || b.body != a.body {
			t.Errorf("replay: %d %s", b.status, b.body)
		}
		if n := len(f.mock.State().Comments); n != 1 {
			t.Errorf("the mock holds %d comments", n)
		}
		reqs := f.mock.Requests()
		// The replay came from the gateway's idempotency ledger: one request.
		if len(reqs) != 1 || reqs[0].IdempotencyKey != "01JBRANCHYARDLEDGER00000001" {
			t.Errorf("upstream requests: %+v", reqs)
		}
		_, lines := f.auditLines()
		if replay := lines[len(lines)-1]; replay["replay"] != true || replay["upstream_status"] != nil {
			t.Errorf("replay audit line: %v", replay)
		}
		last := lines[len(lines)-2]
		if last["ledger_id"] != "01JBRANCHYARDLEDGER00000001" || last["effect_class"] != "reversible" || last["staged_for"] != nil ||
			last["operation"] != "github.comments.create" || last["upstream_status"] != json.Number("201") {
			t.Errorf("audit line: %v", last)
		}
	})

	t.Run("a read grant calling the delete is refused with a report", func(t *testing.T) {
		before := f.upstreamCount()
		a := f.call(read, "github__github_delete_comment", `{"arguments":{"owner":"octo","repo":"hello","comment_id":100,"confirm":true}}`, nil)
		if a.status != 403 || a.errCode() != "policy_denied" || !strings.Contains(a.body, `"code":"policy/grant_denied"`) {
			t.Fatalf("delete with a read grant: %d %s", a.status, a.body)
		}
		rep := effectHeader(t, a)
		if rep["class"] != "irreversible" || rep["undo"] != nil {
			t.Errorf("report: %v", rep)
		}
		if f.upstreamCount() != before {
			t.Error("the upstream saw the refused delete")
		}
	})

	t.Run("the inverse deletes the comment and a 204 answers null", func(t *testing.T) {
		a := f.call(write, "github__github_delete_comment", `{"arguments":{"owner":"octo","repo":"hello","comment_id":100,"confirm":true}}`, nil)
		if a.status != 200 || a.body != "null" {
			t.Fatalf("delete: %d %q", a.status, a.body)
		}
		rep := effectHeader(t, a)
		if rep["class"] != "irreversible" || rep["undo"] != nil || rep["operation"] != "github.comments.delete" {
			t.Errorf("report: %v", rep)
		}
		if n := len(f.mock.State().Comments); n != 0 {
			t.Errorf("the mock still holds %d comments", n)
		}
	})

	t.Run("a non-ASCII argument gives a printable ASCII header that decodes back", func(t *testing.T) {
		a := f.call(write, "github__github_create_comment", `{"arguments":{"owner":"øcto","repo":"hé\u2028llo","issue_number":2,"body":"ünïcode ✓"}}`, nil)
		if a.status != 200 {
			t.Fatalf("create: %d %s", a.status, a.body)
		}
		rep := effectHeader(t, a)
		args := rep["undo"].(map[string]any)["arguments"].(map[string]any)
		if args["owner"] != "øcto" || args["repo"] != "hé\u2028llo" {
			t.Errorf("decoded arguments: %v", args)
		}
		if !strings.Contains(a.body, "ünïcode ✓") {
			t.Errorf("the body keeps UTF-8: %s", a.body)
		}
	})

	t.Run("an undeclared read reports class read", func(t *testing.T) {
		a := f.call(read, "github__github_get_issue", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1}}`, nil)
		if a.status != 200 || !strings.Contains(a.body, `"title":"First issue"`) {
			t.Fatalf("get: %d %s", a.status, a.body)
		}
		if got := a.header.Get("X-Anvil-Effect"); got != `{"class":"read","operation":"github.issues.get","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}` {
			t.Errorf("report %s", got)
		}
	})

	t.Run("an upstream 404 is not_found with a report", func(t *testing.T) {
		a := f.call(read, "github__github_get_issue", `{"arguments":{"owner":"octo","repo":"hello","issue_number":99}}`, nil)
		if a.status != 404 || a.errCode() != "not_found" {
			t.Fatalf("get missing: %d %s", a.status, a.body)
		}
		if rep := effectHeader(t, a); rep["class"] != "read" {
			t.Errorf("report %v", rep)
		}
	})

	t.Run("stage then promote", func(t *testing.T) {
		a := f.call(write, "github__github_create_release", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v1","name":"One","confirm":true},"stage":true}`, nil)
		if a.status != 200 {
			t.Fatalf("stage: %d %s", a.status, a.body)
		}
		if !strings.Contains(a.body, `"draft":true`) {
			t.Errorf("the staged answer is the draft: %s", a.body)
		}
		rep := effectHeader(t, a)
		staged, _ := rep["staged"].(map[string]any)
		promote, _ := staged["promote"].(map[string]any)
		if rep["class"] != "irreversible" || rep["undo"] != nil || promote["tool"] != "github__github_update_release" {
			t.Fatalf("staged report: %v", rep)
		}
		pargs := promote["arguments"].(map[string]any)
		pargs["confirm"] = true
		b := f.call(write, promote["tool"].(string), string(mustJSON(map[string]any{"arguments": pargs})), nil)
		if b.status != 200 || !strings.Contains(b.body, `"draft":false`) {
			t.Errorf("promote: %d %s", b.status, b.body)
		}
		if rels := f.mock.State().Releases; len(rels) != 1 || rels[0].Draft {
			t.Errorf("releases: %+v", rels)
		}
		_, lines := f.auditLines()
		staging := lines[len(lines)-2]
		if staging["staged_for"] != "github.releases.create" || staging["operation"] != "github.releases.create" {
			t.Errorf("staged audit line: %v", staging)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		before := f.upstreamCount()
		_, linesBefore := f.auditLines()
		cases := []struct {
			name, method, tool, ctype, body string
			header                          http.Header
			bearer                          string
			status                          int
			code                            string
		}{
			{"unknown tool", "POST", "github__nope", "application/json", `{"arguments":{}}`, nil, read, 404, "not_found"},
			{"tool name with a bad character", "POST", "github__list%20issue", "application/json", `{}`, nil, read, 404, "not_found"},
			{"tool name too long", "POST", strings.Repeat("a", 129), "application/json", `{}`, nil, read, 404, "not_found"},
			{"body [1]", "POST", "github__github_list_issue", "application/json", `[1]`, nil, read, 400, "validation_error"},
			{"stage yes", "POST", "github__github_list_issue", "application/json", `{"arguments":{"owner":"o","repo":"r"},"stage":"yes"}`, nil, read, 400, "validation_error"},
			{"owner 1", "POST", "github__github_list_issue", "application/json", `{"arguments":{"owner":1,"repo":"r"}}`, nil, read, 400, "validation_error"},
			{"arguments a list", "POST", "github__github_list_issue", "application/json", `{"arguments":[1]}`, nil, read, 400, "validation_error"},
			{"arguments a string", "POST", "github__github_list_issue", "application/json", `{"arguments":"x"}`, nil, read, 400, "validation_error"},
			{"two JSON values", "POST", "github__github_list_issue", "application/json", `{} {}`, nil, read, 400, "validation_error"},
			{"empty body misses required arguments", "POST", "github__github_list_issue", "application/json", ``, nil, read, 400, "validation_error"},
			{"no token", "POST", "github__github_list_issue", "application/json", `{}`, nil, "", 401, "invalid_request"},
			{"GET", "GET", "github__github_list_issue", "", ``, nil, read, 405, "method_not_allowed"},
			{"text/plain", "POST", "github__github_list_issue", "text/plain", `{}`, nil, read, 415, "unsupported_media_type"},
			{"two Idempotency-Key headers", "POST", "github__github_create_comment", "application/json", comment,
				http.Header{"Idempotency-Key": {"a", "b"}}, write, 400, "validation_error"},
			{"body over 64 KiB", "POST", "github__github_list_issue", "application/json",
				`{"arguments":{"owner":"o","repo":"r","x":"` + strings.Repeat("x", restdoor.MaxBody) + `"}}`, nil, read, 400, "validation_error"},
		}
		for _, c := range cases {
			a := f.do(c.method, "/call/"+c.tool, c.bearer, c.ctype, c.body, c.header)
			if a.status != c.status || a.errCode() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, a.status, a.body, c.status, c.code)
			}
			if c.status == 401 && a.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate", c.name)
			}
		}
		if f.upstreamCount() != before {
			t.Errorf("bad requests reached the upstream")
		}
		// Only the argument-schema failures are calls (audited allowed, validation_error).
		_, lines := f.auditLines()
		for _, l := range lines[len(linesBefore):] {
			if l["error_code"] != "validation_error" || l["decision"] != "allowed" {
				t.Errorf("audit line for a bad request: %v", l)
			}
		}
		if n := len(lines) - len(linesBefore); n != 2 {
			t.Errorf("want 2 audited schema failures, got %d", n)
		}
	})

	t.Run("64 KiB is the limit, not less", func(t *testing.T) {
		pad := restdoor.MaxBody - len(`{"arguments":{"owner":"octo","repo":"hello"}}`)
		body := `{"arguments":{"owner":"octo","repo":"hello"}}` + strings.Repeat(" ", pad)
		if a := f.call(read, "github__github_list_issue", body, nil); a.status != 200 {
			t.Errorf("a body of exactly 64 KiB: %d %s", a.status, a.body)
		}
		if a := f.call(read, "github__github_list_issue", body+" ", nil); a.status != 400 {
			t.Errorf("a body of 64 KiB + 1: %d %s", a.status, a.body)
		}
	})

	t.Run("a key in the arguments that differs from the header", func(t *testing.T) {
		before := f.upstreamCount()
		a := f.call(write, "github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"x","idempotency_key":"other"}}`, key)
		if a.status != 400 || a.errCode() != "validation_error" || !strings.Contains(a.body, "effect/idempotency_key_conflict") {
			t.Errorf("conflict: %d %s", a.status, a.body)
		}
		if f.upstreamCount() != before {
			t.Error("the conflicting call reached the upstream")
		}
	})

	t.Run("dry run returns the plan without a report", func(t *testing.T) {
		before := f.upstreamCount()
		a := f.call(write, "github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"x","anvil_dry_run":true}}`, key)
		if a.status != 200 || a.header.Get("X-Anvil-Effect") != "" {
			t.Fatalf("dry run: %d %v %s", a.status, a.header, a.body)
		}
		plan := a.json(t)
		if plan["method"] != "POST" || plan["operation"] != "github.comments.create" || strings.Contains(a.body, fxUpstream) {
			t.Errorf("plan: %s", a.body)
		}
		if f.upstreamCount() != before {
			t.Error("a dry run reached the upstream")
		}
		_, lines := f.auditLines()
		if l := lines[len(lines)-1]; l["dry_run"] != true {
			t.Errorf("dry run audit line: %v", l)
		}
	})
}
