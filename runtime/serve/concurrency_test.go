package serve

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentCallsFromManyTokens runs 200 calls at once from 20 tokens
// (10 each, half over MCP sessions, half over REST), with every token also
// trying another token's session. Every call must be audited exactly once,
// under the token that made it, and every line must be valid JSON in the
// contract's key order. Run it with -race.
func TestConcurrentCallsFromManyTokens(t *testing.T) {
	const tokens, perToken = 20, 10
	f := newFleetFixture(t, nil)
	toks := make([]string, tokens)
	sessions := make([]*mcpSession, tokens)
	for i := range toks {
		turn := strconv.Itoa(i + 1)
		toks[i] = f.turnWith(fxWriteGrant, func(c map[string]any) { c["by_turn"] = turn })
		sessions[i] = f.rawInitialize(toks[i])
	}

	type result struct {
		key, turn string
		ok        bool
		err       string
	}
	results := make(chan result, tokens*perToken)
	crossings := make(chan string, tokens)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < tokens; i++ {
		for j := 0; j < perToken; j++ {
			wg.Add(1)
			go func(i, j int) {
				defer wg.Done()
				<-start
				key := fmt.Sprintf("01JCONCURRENT%03d%03d", i, j)
				r := result{key: key, turn: strconv.Itoa(i + 1)}
				args := map[string]any{"owner": "octo", "repo": "hello", "issue_number": i + 1, "body": key}
				if j%2 == 0 {
					a := f.call(toks[i], "github__github_create_comment", string(mustJSON(map[string]any{"arguments": args})),
						http.Header{"Idempotency-Key": {key}})
					r.ok = a.status == 200
					r.err = a.body
				} else {
					s := &mcpSession{f: f, bearer: toks[i], id: sessions[i].id, next: 1000 + j}
					res := s.callTool("github__github_create_comment", args, map[string]any{"idempotency_key": key})
					r.ok = res["isError"] != true
					r.err = fmt.Sprint(res)
				}
				results <- r
				if j == 0 {
					// Present the next token's session: refused, never served.
					other := sessions[(i+1)%tokens].id
					a := f.do("POST", "/mcp", toks[i], "application/json",
						`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"o","repo":"r"}}}`,
						mcpHeaders(toks[i], other))
					if a.status != 403 {
						crossings <- fmt.Sprintf("token %d used token %d's session: %d %s", i, (i+1)%tokens, a.status, a.body)
					}
				}
			}(i, j)
		}
	}
	close(start)
	wg.Wait()
	close(results)
	close(crossings)
	for c := range crossings {
		t.Error(c)
	}
	want := map[string]string{}
	for r := range results {
		if !r.ok {
			t.Errorf("call %s failed: %.300s", r.key, r.err)
		}
		want[r.key] = r.turn
	}
	if len(want) != tokens*perToken {
		t.Fatalf("%d distinct calls", len(want))
	}

	raw, lines := f.auditLines()
	if len(lines) != tokens*perToken {
		t.Fatalf("%d audit lines for %d calls", len(lines), tokens*perToken)
	}
	seen := map[string]bool{}
	traces := map[string]bool{}
	for i, l := range lines {
		checkAuditLine(t, raw[i])
		key, _ := l["ledger_id"].(string)
		turn, ok := want[key]
		if !ok {
			t.Errorf("audit line for an unknown call: %s", raw[i])
			continue
		}
		if seen[key] {
			t.Errorf("call %s audited twice", key)
		}
		seen[key] = true
		if l["by_turn"] != turn {
			t.Errorf("call %s made with turn %s audited under turn %v", key, turn, l["by_turn"])
		}
		tr, _ := l["trace_id"].(string)
		if traces[tr] {
			t.Errorf("trace id %s reused", tr)
		}
		traces[tr] = true
		if l["decision"] != "allowed" || l["error_code"] != nil {
			t.Errorf("line %s", raw[i])
		}
	}
	if n := len(f.mock.State().Comments); n != tokens*perToken {
		t.Errorf("the mock holds %d comments", n)
	}
	for _, s := range sessions {
		if a := s.close(); a.status != 204 {
			t.Errorf("DELETE: %d", a.status)
		}
	}
}
