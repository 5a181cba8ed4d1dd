package replicatest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

// gate sits between the gateways and the mock upstream. The first POST to
// each path is forwarded to the mock (the upstream acts on it) and then
// never answered: the gateway that sent it is in the middle of a keyed
// write when it is killed. Every later request passes straight through.
type gate struct {
	proxy   *httputil.ReverseProxy
	arrived chan string // the path of each held POST, once the mock has acted on it
	release chan struct{}
	mu      sync.Mutex
	posts   map[string]int
}

func newGate(t *testing.T, mockURL string) (*gate, string) {
	u, err := url.Parse(mockURL)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{proxy: httputil.NewSingleHostReverseProxy(u), arrived: make(chan string, 8),
		release: make(chan struct{}), posts: map[string]int{}}
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(g.release) }) // runs first: held requests end
	return g, ts.URL
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		g.proxy.ServeHTTP(w, r)
		return
	}
	g.mu.Lock()
	g.posts[r.URL.Path]++
	first := g.posts[r.URL.Path] == 1
	g.mu.Unlock()
	if !first {
		g.proxy.ServeHTTP(w, r)
		return
	}
	g.proxy.ServeHTTP(httptest.NewRecorder(), r) // the upstream acts; the answer is lost
	g.arrived <- r.URL.Path
	select {
	case <-r.Context().Done(): // the gateway died
	case <-g.release:
	}
}

// count is how many POSTs to path reached the gate.
func (g *gate) count(path string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.posts[path]
}

// killSuite: kill -9 of the replica holding a keyed write in the middle of
// the upstream call, after the upstream acted. With n replicas the retry
// goes to another one; with one (the embedded store) to the same replica
// started again on its state file. What the retry sees:
//
//   - while the holder lives (its lease renewed for longer than one lease),
//     a retry is answered 409 conflict idempotency/in_progress, retryable,
//     with Retry-After, within the ledger's short wait: never a hang, and
//     nothing goes upstream a second time;
//   - once the holder is dead, its lease expires within ANVIL_LEDGER_LEASE
//     (at once on the embedded store, whose file lock proves the holder
//     gone) and the retry resolves the unknown outcome without sending the
//     write blindly: the comment (its Idempotency-Key goes upstream) is
//     sent again with the same key and the upstream, which honours it,
//     acts once; the issue (no key carrier, no lookup) is refused 409
//     unsafe_retry_blocked idempotency/outcome_unknown, and the upstream
//     saw it once;
//   - every replica then answers the same: the comment's recorded answer,
//     the issue's refusal;
//   - vault records written before the kill are all there afterwards.
func killSuite(t *testing.T, n int, dsn string) {
	t.Run("kill -9 of the replica in the middle of a keyed write: retries are answered in progress, then resolved without a blind resend; no vault record is lost", func(t *testing.T) {
		const lease = 3 * time.Second
		var g *gate
		c := newClusterWith(t, n, dsn, func(doc *air.Document) {
			var gateURL string
			g, gateURL = newGate(t, doc.Service.Servers[0].URL)
			doc.Service.Servers = []air.Server{{URL: gateURL}}
		}, map[string]string{"ANVIL_LEDGER_LEASE": lease.String(), "ANVIL_LEDGER_WAIT": "500ms"})

		// Vault records, written through the proxy (every replica in turn).
		accounts := []string{"default", "work", "home", "ops", "old"}
		for _, acct := range accounts {
			a := c.do(c.base, "POST", "/connect/api-key", c.connectToken(),
				`{"connector":"github","account":"`+acct+`","api_key":"`+upstream+`"}`, nil)
			if a.status != 200 {
				t.Fatalf("/connect/api-key %s: %d %s", acct, a.status, a.body)
			}
		}

		tok := c.turn()
		type call struct{ path, upstreamPath, body, key string }
		comment := call{"/call/github__github_create_comment", "/repos/octo/hello/issues/2/comments",
			`{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"killed mid-call"}}`, "kill9-comment"}
		issue := call{"/call/github__github_create_issue", "/repos/octo/hello/issues",
			`{"arguments":{"owner":"octo","repo":"hello","title":"killed mid-call","confirm":true}}`, "kill9-issue"}
		calls := []call{comment, issue}
		send := func(base string, cl call) (answer, error) {
			return c.try(base, "POST", cl.path, tok, cl.body, http.Header{"Idempotency-Key": {cl.key}})
		}
		type result struct {
			a   answer
			err error
		}
		holder := c.backends[0]
		first := make([]chan result, len(calls))
		for i, cl := range calls {
			first[i] = make(chan result, 1)
			go func() { a, err := send(holder, cl); first[i] <- result{a, err} }()
		}
		for range calls {
			select {
			case <-g.arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("the keyed writes never reached the upstream")
			}
		}
		// Retries while the holder lives, for longer than a lease (only
		// renewals keep it): on another replica, or (one replica) on the
		// holder itself. Each is answered in progress within the wait: the
		// gate holds the first writes until the kill, so a retry that
		// waited for them would not be answered at all (the client's 30 s
		// timeout is the hang guard).
		retryOn := holder
		if n > 1 {
			retryOn = c.backends[1]
		}
		for end := time.Now().Add(lease * 3 / 2); time.Now().Before(end); {
			for _, cl := range calls {
				a, err := send(retryOn, cl)
				if err != nil || a.status != http.StatusConflict || !strings.Contains(a.body, `"idempotency/in_progress"`) ||
					!strings.Contains(a.body, `"retryable":true`) || a.header.Get("Retry-After") == "" {
					t.Fatalf("%s: a retry while the holder lives: %d %s %v", cl.key, a.status, a.body, err)
				}
			}
			time.Sleep(300 * time.Millisecond)
		}
		for _, cl := range calls {
			if got := g.count(cl.upstreamPath); got != 1 {
				t.Fatalf("%s: the upstream saw %d writes while the holder lived, want 1", cl.key, got)
			}
		}

		c.kill(0)
		for i, cl := range calls {
			if r := <-first[i]; r.err == nil {
				t.Fatalf("%s: the killed replica answered: %d %s", cl.key, r.a.status, r.a.body)
			}
		}
		if n == 1 {
			c.restart(0) // the same gateway on the same state file
		}
		// Retries, as a client honouring Retry-After makes them (a second
		// apart), until they are resolved: the dead holder's lease runs out
		// after at most a lease, so a bounded number of them suffices.
		resolved := make([]answer, len(calls))
		maxRetries := int((lease + 20*time.Second) / time.Second)
		for i, cl := range calls {
			for retry := 1; ; retry++ {
				a, err := send(retryOn, cl)
				if err == nil && !(a.status == http.StatusConflict && strings.Contains(a.body, `"idempotency/in_progress"`)) {
					resolved[i] = a
					t.Logf("%s: resolved at retry %d after the kill (lease %v)", cl.key, retry, lease)
					break
				}
				if retry == maxRetries {
					t.Fatalf("%s: still unresolved after %d retries a second apart (lease %v): %d %s %v", cl.key, retry, lease, a.status, a.body, err)
				}
				time.Sleep(time.Second)
			}
		}
		if a := resolved[0]; a.status != 200 {
			t.Errorf("comment after the kill: %d %s, want 200 (sent again with its key)", a.status, a.body)
		}
		if a := resolved[1]; a.status != http.StatusConflict || !strings.Contains(a.body, `"code":"unsafe_retry_blocked"`) ||
			!strings.Contains(a.body, `"idempotency/outcome_unknown"`) || !strings.Contains(a.body, `"retryable":false`) {
			t.Errorf("issue after the kill: %d %s, want 409 unsafe_retry_blocked outcome_unknown", a.status, a.body)
		}
		if n > 1 {
			c.restart(0) // the killed replica comes back, and must agree
		}

		// The comment went upstream twice with the same key, and the mock,
		// which honours it, made one comment; the issue went once.
		if got := g.count(comment.upstreamPath); got != 2 {
			t.Errorf("comment: the upstream saw %d writes, want 2 (the held one and the keyed resend)", got)
		}
		keys := 0
		for _, r := range c.mock.Requests() {
			if r.Method == "POST" && r.Path == comment.upstreamPath && r.IdempotencyKey == comment.key {
				keys++
			}
		}
		if keys != 2 {
			t.Errorf("the comment's writes carried the key %d times, want 2", keys)
		}
		if got := countUpstream(t, c, comment.upstreamPath, "body", "killed mid-call"); got != 1 {
			t.Errorf("comments made: %d, want 1 (the upstream honours the key)", got)
		}
		if got := g.count(issue.upstreamPath); got != 1 {
			t.Errorf("issue: the upstream saw %d writes, want 1 (never resent blindly)", got)
		}
		if got := countUpstream(t, c, issue.upstreamPath, "title", "killed mid-call"); got != 1 {
			t.Errorf("issues made: %d, want 1", got)
		}

		// From now on every replica answers the same and sends nothing.
		for i, cl := range calls {
			for _, b := range c.backends {
				a := c.do(b, "POST", cl.path, tok, cl.body, http.Header{"Idempotency-Key": {cl.key}})
				if a.status != resolved[i].status || (a.status == 200 && (a.body != resolved[i].body ||
					a.header.Get("X-Anvil-Effect") != resolved[i].header.Get("X-Anvil-Effect"))) {
					t.Errorf("%s: again on %s: %d %s (resolved: %d %s)", cl.key, b, a.status, a.body, resolved[i].status, resolved[i].body)
				}
			}
		}
		if got := g.count(comment.upstreamPath) + g.count(issue.upstreamPath); got != 3 {
			t.Errorf("after the repeats the upstream saw %d writes, want 3", got)
		}

		// Every vault record written before the kill is there, on every
		// replica.
		want := append([]string(nil), accounts...)
		sort.Strings(want)
		for _, b := range c.backends {
			a := c.do(b, "GET", "/connect/status", c.connectToken(), "", nil)
			var st struct {
				Connections []struct{ Connector, Account, Status string }
			}
			if err := json.Unmarshal([]byte(a.body), &st); a.status != 200 || err != nil {
				t.Fatalf("/connect/status on %s: %d %s", b, a.status, a.body)
			}
			var got []string
			for _, cn := range st.Connections {
				if cn.Connector == "github" && cn.Status == "active" {
					got = append(got, cn.Account)
				}
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("connections on %s after kill -9: %v, want %v", b, got, want)
			}
		}
	})
}

// countUpstream counts the objects listed at the mock's path whose field
// is value.
func countUpstream(t *testing.T, c *cluster, path, field, value string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", c.mock.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+upstream)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var items []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	n := 0
	for _, it := range items {
		if fmt.Sprint(it[field]) == value {
			n++
		}
	}
	return n
}

// TestKill9Postgres: three gateway processes on PostgreSQL; the holder of
// a keyed write is killed and another replica's retry completes.
func TestKill9Postgres(t *testing.T) {
	dsn := postgresDSN(t)
	withProcesses(t)
	killSuite(t, 3, dsn)
}

// TestKill9Embedded: one gateway process on the embedded store, killed
// in the middle of a keyed write and started again on its state file.
func TestKill9Embedded(t *testing.T) {
	withProcesses(t)
	killSuite(t, 1, "")
}
