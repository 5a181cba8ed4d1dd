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
// the upstream call. With n replicas the retry goes to another one; with
// one (the embedded store) to the same replica started again on its state
// file. What the retry sees, and what the ledger cannot promise:
//
//   - while the holder lives, a retry waits (its lease is renewed for as
//     long as the upstream takes, here longer than one lease) and nothing
//     goes upstream a second time;
//   - once the holder is dead, its lease expires within ANVIL_LEDGER_LEASE
//     and the retry, already waiting or new, takes the entry over and
//     completes: it never answers conflict or waits forever;
//   - the takeover sends the write upstream again. The dead holder's
//     write may already have acted (here it did), and the ledger cannot
//     know: for an operation that carries the idempotency key upstream
//     (create_comment, Idempotency-Key) an upstream that honours it acts
//     once; for one without a carrier (create_issue) the upstream acts
//     twice. The ledger guarantees one recorded answer, replayed from then
//     on by every replica, not one upstream effect across a crash;
//   - vault records written before the kill are all there afterwards.
func killSuite(t *testing.T, n int, dsn string) {
	t.Run("kill -9 of the replica in the middle of a keyed write: the retry completes once the lease expires, no vault record is lost", func(t *testing.T) {
		const lease = 3 * time.Second
		var g *gate
		c := newClusterWith(t, n, dsn, func(doc *air.Document) {
			var gateURL string
			g, gateURL = newGate(t, doc.Service.Servers[0].URL)
			doc.Service.Servers = []air.Server{{URL: gateURL}}
		}, map[string]string{"ANVIL_LEDGER_LEASE": lease.String()})

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
		calls := []call{
			{"/call/github__github_create_comment", "/repos/octo/hello/issues/2/comments",
				`{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"killed mid-call"}}`, "kill9-comment"},
			{"/call/github__github_create_issue", "/repos/octo/hello/issues",
				`{"arguments":{"owner":"octo","repo":"hello","title":"killed mid-call","confirm":true}}`, "kill9-issue"},
		}
		send := func(base string, cl call) (answer, error) {
			return c.try(base, "POST", cl.path, tok, cl.body, http.Header{"Idempotency-Key": {cl.key}})
		}
		type result struct {
			a   answer
			err error
		}
		sendAll := func(base string) []chan result {
			out := make([]chan result, len(calls))
			for i, cl := range calls {
				out[i] = make(chan result, 1)
				go func() { a, err := send(base, cl); out[i] <- result{a, err} }()
			}
			return out
		}

		holder := c.backends[0]
		first := sendAll(holder)
		for range calls {
			select {
			case <-g.arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("the keyed writes never reached the upstream")
			}
		}
		// Retries while the holder lives: on another replica, or (one
		// replica) on the holder itself.
		retryOn := holder
		if n > 1 {
			retryOn = c.backends[1]
		}
		early := sendAll(retryOn)
		time.Sleep(lease * 3 / 2) // longer than a lease: only renewals keep it
		for i, cl := range calls {
			if got := g.count(cl.upstreamPath); got != 1 {
				t.Fatalf("%s: the upstream saw %d writes while the holder lived, want 1", cl.key, got)
			}
			select {
			case r := <-early[i]:
				t.Fatalf("%s: a retry answered while the holder lived: %d %s %v", cl.key, r.a.status, r.a.body, r.err)
			default:
			}
		}

		c.kill(0)
		killed := time.Now()
		for i, cl := range calls {
			if r := <-first[i]; r.err == nil {
				t.Fatalf("%s: the killed replica answered: %d %s", cl.key, r.a.status, r.a.body)
			}
		}
		retries := early
		if n == 1 {
			// The early retries died with their replica; the retry goes to
			// the same gateway started again on the same state file.
			for i := range calls {
				if r := <-early[i]; r.err == nil {
					t.Fatalf("%s: the killed replica answered a retry: %d %s", calls[i].key, r.a.status, r.a.body)
				}
			}
			c.restart(0)
			retries = sendAll(holder)
		}
		answers := make([]answer, len(calls))
		for i, cl := range calls {
			select {
			case r := <-retries[i]:
				if r.err != nil || r.a.status != 200 {
					t.Fatalf("%s: the retry after kill -9: %d %s %v", cl.key, r.a.status, r.a.body, r.err)
				}
				answers[i] = r.a
			case <-time.After(lease + 20*time.Second):
				t.Fatalf("%s: the retry still waits %v after the kill (lease %v)", cl.key, time.Since(killed), lease)
			}
		}
		t.Logf("the retries completed %v after the kill (lease %v)", time.Since(killed).Round(time.Millisecond), lease)
		if n > 1 {
			c.restart(0) // the killed replica comes back, and must agree
		}

		// The takeover went upstream again: the ledger cannot know whether
		// the dead holder's write acted.
		for _, cl := range calls {
			if got := g.count(cl.upstreamPath); got != 2 {
				t.Errorf("%s: the upstream saw %d writes, want 2 (the held one and the takeover)", cl.key, got)
			}
		}
		// The comment's key went upstream both times, and the mock, which
		// honours it, made one comment; the issue has no key carrier, so
		// the upstream made two.
		keys := 0
		for _, r := range c.mock.Requests() {
			if r.Method == "POST" && r.Path == calls[0].upstreamPath && r.IdempotencyKey == calls[0].key {
				keys++
			}
		}
		if keys != 2 {
			t.Errorf("the comment's writes carried the key %d times, want 2", keys)
		}
		if got := countUpstream(t, c, "/repos/octo/hello/issues/2/comments", "body", "killed mid-call"); got != 1 {
			t.Errorf("comments made: %d, want 1 (the upstream honours the key)", got)
		}
		if got := countUpstream(t, c, "/repos/octo/hello/issues", "title", "killed mid-call"); got != 2 {
			t.Errorf("issues made: %d, want 2 (no key carrier: the ledger cannot prevent the second)", got)
		}

		// From now on every replica replays the retry's answer and
		// sends nothing.
		for i, cl := range calls {
			for _, b := range c.backends {
				a := c.do(b, "POST", cl.path, tok, cl.body, http.Header{"Idempotency-Key": {cl.key}})
				if a.status != 200 || a.body != answers[i].body || a.header.Get("X-Anvil-Effect") != answers[i].header.Get("X-Anvil-Effect") {
					t.Errorf("%s: replay on %s: %d %s (retry: %s)", cl.key, b, a.status, a.body, answers[i].body)
				}
			}
			if got := g.count(cl.upstreamPath); got != 2 {
				t.Errorf("%s: after the replays the upstream saw %d writes, want 2", cl.key, got)
			}
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
