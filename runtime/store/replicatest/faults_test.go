package replicatest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/internal/faultproxy"
	"github.com/anvil-dev/anvil/internal/testinput"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// The fault suite (short form; make soak runs the long one). Three
// gateways share PostgreSQL through a TCP fault proxy, and reach the mock
// upstream through an HTTP fault layer (5xx bursts) and a TCP fault proxy
// (latency, resets, half-open connections). Each scenario sends keyed
// writes under one fault; after each, the invariants hold:
//
//   - no keyed write acts upstream twice: a write without a key carrier
//     reaches the upstream at most once per key, and one with a carrier
//     makes at most one comment per key (the upstream honours the key);
//   - every answered call has exactly one audit line, each replica's file
//     verifies (anvil audit verify), and the shared table holds each line
//     once and verifies;
//   - no request waits past its bound: the upstream timeout twice (the
//     call and a lookup) plus the ledger's wait plus four store round
//     trips, plus a second of slack;
//   - goroutines and heap return to their level before the scenario.
//
// kill -9 of replica processes is TestKill9Postgres (kill_test.go).

const (
	faultUpstreamTimeout = 3 * time.Second
	faultStoreTimeout    = time.Second
	faultWait            = 300 * time.Millisecond
	faultBound           = 2*faultUpstreamTimeout + faultWait + 4*faultStoreTimeout + time.Second
)

type faultRig struct {
	c          *cluster
	pg, up     *faultproxy.Proxy
	burst      *faultproxy.HTTP
	tok        string
	answered   atomic.Int64 // HTTP answers to /call requests
	mu         sync.Mutex
	slowest    time.Duration
	chainKey   []byte
	vaultKey   []byte
	dsn        string
	writesByID map[string]string // key → tool of every keyed write sent
	// postsBefore counts the upstream's writes before a scenario.
	postsBefore int
}

func newFaultRig(t *testing.T) *faultRig {
	dsn := postgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := faultproxy.Listen(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	u.Host = pg.Addr()
	r := &faultRig{pg: pg, dsn: dsn, writesByID: map[string]string{}}
	env := map[string]string{
		"ANVIL_LEDGER_LEASE": "2s", "ANVIL_LEDGER_WAIT": faultWait.String(), "ANVIL_STORE_TIMEOUT": faultStoreTimeout.String(),
		"ANVIL_UPSTREAM_TIMEOUT_MS": fmt.Sprint(faultUpstreamTimeout.Milliseconds()),
	}
	r.c = newClusterWith(t, 3, u.String(), func(doc *air.Document) {
		// gateway → TCP fault proxy → HTTP fault layer → mock upstream
		mock, _ := url.Parse(doc.Service.Servers[0].URL)
		r.burst = &faultproxy.HTTP{Next: httputil.NewSingleHostReverseProxy(mock)}
		front := httptest.NewServer(r.burst)
		t.Cleanup(front.Close)
		up, err := faultproxy.Listen(strings.TrimPrefix(front.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { up.Close() })
		r.up = up
		doc.Service.Servers = []air.Server{{URL: "http://" + up.Addr()}}
	}, env)
	r.c.connectKey(upstream)
	r.tok = r.c.turn()
	k, err := vault.LoadKey(r.c.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	r.vaultKey = k
	r.chainKey, _ = audit.ChainKey(k)
	return r
}

type write struct{ tool, args, path, key string }

func (r *faultRig) comment(key string) write {
	return write{"github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"` + key + `"}}`,
		"/repos/octo/hello/issues/2/comments", key}
}

func (r *faultRig) issue(key string) write {
	return write{"github__github_create_issue", `{"arguments":{"owner":"octo","repo":"hello","title":"` + key + `","confirm":true}}`,
		"/repos/octo/hello/issues", key}
}

// send makes one keyed call through the round-robin proxy, timing it.
func (r *faultRig) send(t *testing.T, w write) (answer, error) {
	r.mu.Lock()
	r.writesByID[w.key] = w.tool
	r.mu.Unlock()
	began := time.Now()
	a, err := r.c.try(r.c.base, "POST", "/call/"+w.tool, r.tok, w.args, http.Header{"Idempotency-Key": {w.key}})
	d := time.Since(began)
	r.mu.Lock()
	r.slowest = max(r.slowest, d)
	r.mu.Unlock()
	if err == nil {
		r.answered.Add(1)
	}
	if d > faultBound {
		t.Errorf("%s %s: answered after %v, past the bound %v", w.tool, w.key, d, faultBound)
	}
	return a, err
}

// sendAll sends every write at once and returns the answers in order.
func (r *faultRig) sendAll(t *testing.T, ws ...write) []answer {
	out := make([]answer, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); out[i], _ = r.send(t, w) }()
	}
	wg.Wait()
	return out
}

// check asserts the invariants.
func (r *faultRig) check(t *testing.T, scenario string, goroutines int, heap uint64) {
	t.Helper()
	r.pg.Set(faultproxy.Pass, 0)
	r.up.Set(faultproxy.Pass, 0)
	// Writes: per key, a carrier-less write at most once upstream, a
	// carried one at most one comment.
	posts := map[string]int{}
	for _, q := range r.c.mock.Requests() {
		if q.Method == "POST" {
			posts[q.Path]++
		}
	}
	r.mu.Lock()
	for key, tool := range r.writesByID {
		switch tool {
		case "github__github_create_issue":
			if n := countUpstream(t, r.c, "/repos/octo/hello/issues", "title", key); n > 1 {
				t.Errorf("%s: issue %s made %d times upstream", scenario, key, n)
			}
		case "github__github_create_comment":
			if n := countUpstream(t, r.c, "/repos/octo/hello/issues/2/comments", "body", key); n > 1 {
				t.Errorf("%s: comment %s made %d times upstream", scenario, key, n)
			}
		}
	}
	r.mu.Unlock()
	// Audit: one line per answered call, every file's chain intact, the
	// shared table holding each line once, intact.
	lines := 0
	for i := range r.c.backends {
		f, err := os.Open(filepath.Join(r.c.dir, fmt.Sprintf("audit%d.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := audit.Verify(f, audit.VerifyOptions{Key: r.chainKey})
		f.Close()
		if err != nil {
			t.Errorf("%s: replica %d's audit file: %v", scenario, i, err)
		}
		lines += rep.Records
	}
	if want := int(r.answered.Load()); lines != want {
		t.Errorf("%s: %d audit lines for %d answered calls", scenario, lines, want)
	}
	var table audit.Report
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rep, err := pgstore.VerifyAuditTable(ctx, r.dsn, r.vaultKey, "")
		cancel()
		if err != nil {
			t.Fatalf("%s: the shared audit table: %v", scenario, err)
		}
		table = rep
		if rep.Records == lines || time.Now().After(end) {
			break
		}
	}
	if table.Records != lines {
		t.Errorf("%s: the shared audit table holds %d records, the files %d", scenario, table.Records, lines)
	}
	// Goroutines and heap back to their level.
	r.c.client.CloseIdleConnections()
	var g int
	var h uint64
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		g, h = runtime.NumGoroutine(), ms.HeapAlloc
		if (g <= goroutines+30 && h <= heap+64<<20) || time.Now().After(end) {
			break
		}
	}
	if g > goroutines+30 || h > heap+64<<20 {
		t.Errorf("%s: %d goroutines and %d MiB of heap after, %d and %d MiB before", scenario, g, h>>20, goroutines, heap>>20)
	}
	t.Logf("%s: ok (%d answered calls so far, %d audit records, slowest call %v of %v allowed)", scenario, r.answered.Load(), lines, r.slowest.Round(time.Millisecond), faultBound)
}

func baseline() (int, uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// isCode reports whether a is a REST error with code (and sub-code).
func isCode(a answer, code, sub string) bool {
	return strings.Contains(a.body, `"code":"`+code+`"`) && (sub == "" || strings.Contains(a.body, `"`+sub+`"`))
}

func TestFaultSuite(t *testing.T) {
	r := newFaultRig(t)
	// Warm up every replica (connections, compiled schemas) before the
	// baseline.
	for i := 0; i < 6; i++ {
		if a, err := r.send(t, r.comment(fmt.Sprintf("warm-%d", i))); err != nil || a.status != 200 {
			t.Fatalf("warm-up: %d %s %v", a.status, a.body, err)
		}
	}
	g0, h0 := baseline()

	t.Run("upstream latency: repeats are answered in progress, then replayed; one write", func(t *testing.T) {
		r.up.Set(faultproxy.Latency, 350*time.Millisecond) // each way: the call takes about 0.7 s, past the 0.3 s wait
		w := r.comment("latency-1")
		as := r.sendAll(t, w, w, w)
		r.up.Set(faultproxy.Pass, 0)
		ok, busy := 0, 0
		for _, a := range as {
			switch {
			case a.status == 200:
				ok++
			case a.status == 409 && isCode(a, "conflict", "idempotency/in_progress") && a.header.Get("Retry-After") != "":
				busy++
			default:
				t.Errorf("answer: %d %s", a.status, a.body)
			}
		}
		if ok == 0 {
			t.Error("no repeat got the answer")
		}
		if a, _ := r.send(t, w); a.status != 200 {
			t.Errorf("replay: %d %s", a.status, a.body)
		}
		r.check(t, "upstream latency", g0, h0)
	})

	t.Run("upstream resets after sending: unknown outcomes are resolved, never resent blindly", func(t *testing.T) {
		r.up.Set(faultproxy.Latency, 500*time.Millisecond)
		done := make(chan []answer)
		ws := []write{r.comment("reset-c"), r.issue("reset-i")}
		go func() { done <- r.sendAll(t, ws...) }()
		time.Sleep(250 * time.Millisecond)
		r.up.ResetAll()
		<-done
		r.up.Set(faultproxy.Pass, 0)
		time.Sleep(2500 * time.Millisecond) // any lease left behind expires
		if a, _ := r.send(t, ws[0]); a.status != 200 {
			t.Errorf("comment retry: %d %s", a.status, a.body)
		}
		if a, _ := r.send(t, ws[1]); a.status != 200 && !(a.status == 409 && isCode(a, "unsafe_retry_blocked", "idempotency/outcome_unknown")) {
			t.Errorf("issue retry: %d %s", a.status, a.body)
		}
		r.check(t, "upstream resets", g0, h0)
	})

	t.Run("upstream half-open: the call times out within its bound; the retry is resolved", func(t *testing.T) {
		r.up.Set(faultproxy.Blackhole, 0)
		ws := []write{r.comment("hole-c"), r.issue("hole-i")}
		for _, a := range r.sendAll(t, ws...) {
			if a.status != 504 || !isCode(a, "upstream_timeout", "") {
				t.Errorf("half-open upstream: %d %s", a.status, a.body)
			}
		}
		r.up.Set(faultproxy.Pass, 0)
		if a, _ := r.send(t, ws[0]); a.status != 200 {
			t.Errorf("comment retry: %d %s", a.status, a.body)
		}
		if a, _ := r.send(t, ws[1]); !(a.status == 409 && isCode(a, "unsafe_retry_blocked", "idempotency/outcome_unknown")) && a.status != 200 {
			t.Errorf("issue retry: %d %s", a.status, a.body)
		}
		r.check(t, "upstream half-open", g0, h0)
	})

	t.Run("upstream 5xx burst: the answer is recorded and replayed, nothing written twice", func(t *testing.T) {
		r.burst.Burst(2, 503)
		w := r.issue("burst-i")
		first, _ := r.send(t, w)
		again, _ := r.send(t, w)
		noTrace := func(b string) string { return regexp.MustCompile(`"trace_id":"[^"]*"`).ReplaceAllString(b, "") }
		if first.status != 502 || again.status != first.status || noTrace(again.body) != noTrace(first.body) {
			t.Errorf("burst: %d %s, then %d %s", first.status, first.body, again.status, again.body)
		}
		r.burst.Burst(0, 0)
		r.check(t, "upstream 5xx burst", g0, h0)
	})

	t.Run("PostgreSQL latency: calls succeed within their bound", func(t *testing.T) {
		r.pg.Set(faultproxy.Latency, 20*time.Millisecond)
		for _, a := range r.sendAll(t, r.comment("pglat-1"), r.issue("pglat-2")) {
			if a.status != 200 {
				t.Errorf("with PostgreSQL slow: %d %s", a.status, a.body)
			}
		}
		r.pg.Set(faultproxy.Pass, 0)
		r.check(t, "PostgreSQL latency", g0, h0)
	})

	t.Run("PostgreSQL half-open: keyed writes are refused 503 within the store bound, nothing sent", func(t *testing.T) {
		before := len(r.c.mock.Requests())
		r.pg.Set(faultproxy.Blackhole, 0)
		for _, a := range r.sendAll(t, r.issue("pghole-1"), r.issue("pghole-2")) {
			if a.status != 503 || !isCode(a, "idempotency_ledger_unavailable", "") {
				t.Errorf("with PostgreSQL not answering: %d %s", a.status, a.body)
			}
		}
		r.pg.Set(faultproxy.Refuse, 0) // drop the stalled connections
		r.pg.Set(faultproxy.Pass, 0)
		if n := len(r.c.mock.Requests()) - before; n != 0 {
			t.Errorf("%d requests reached the upstream while the ledger was unreachable", n)
		}
		r.check(t, "PostgreSQL half-open", g0, h0)
	})

	t.Run("PostgreSQL restarted while writes are upstream: their answers are spooled, recorded and replayed", func(t *testing.T) {
		if !server.Owned() {
			testinput.Missing(t, "a PostgreSQL server this test owns (the one named by ANVIL_TEST_POSTGRES cannot be restarted here; unset it and scripts/ci-postgres.sh or the Debian binaries give one)")
		}
		r.postsBefore = 0
		for _, q := range r.c.mock.Requests() {
			if q.Method == "POST" && (strings.HasSuffix(q.Path, "/issues") || strings.HasSuffix(q.Path, "/comments")) {
				r.postsBefore++
			}
		}
		// The writes act upstream and their answers are held; PostgreSQL
		// stops; the answers come back with no store to record them in.
		r.burst.Hold()
		ws := []write{r.issue("restart-1"), r.comment("restart-2")}
		done := make(chan []answer)
		go func() { done <- r.sendAll(t, ws...) }()
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			acted := 0
			for _, q := range r.c.mock.Requests() {
				if q.Method == "POST" && (strings.HasSuffix(q.Path, "/issues") || strings.HasSuffix(q.Path, "/comments")) {
					acted++
				}
			}
			if acted >= r.postsBefore+2 {
				break
			}
			if time.Now().After(end) {
				t.Fatal("the writes never reached the upstream")
			}
		}
		if err := server.StopServer(); err != nil {
			t.Fatal(err)
		}
		r.burst.Release()
		first := <-done
		if err := server.StartServer(); err != nil {
			t.Fatal(err)
		}
		for i, a := range first {
			if a.status != 200 {
				t.Errorf("%s while PostgreSQL restarted: %d %s", ws[i].key, a.status, a.body)
			}
		}
		// Once the store is back the spooled answers are recorded: the
		// repeats replay them, and nothing goes upstream again.
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			a, _ := r.send(t, ws[0])
			if a.status == 200 || time.Now().After(end) {
				if a.status != 200 || a.body != first[0].body {
					t.Errorf("repeat after the restart: %d %s (first %s)", a.status, a.body, first[0].body)
				}
				break
			}
		}
		r.check(t, "PostgreSQL restart", g0, h0)
	})

	t.Run("PostgreSQL connections reset: calls fail coded, then recover", func(t *testing.T) {
		r.pg.Set(faultproxy.Refuse, 0)
		for _, a := range r.sendAll(t, r.issue("pgreset-1")) {
			if a.status != 503 {
				t.Errorf("with PostgreSQL refusing: %d %s", a.status, a.body)
			}
		}
		r.pg.Set(faultproxy.Pass, 0)
		for end := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			a, _ := r.send(t, r.issue("pgreset-2"))
			if a.status == 200 || time.Now().After(end) {
				if a.status != 200 {
					t.Errorf("after PostgreSQL came back: %d %s", a.status, a.body)
				}
				break
			}
			r.mu.Lock()
			delete(r.writesByID, "pgreset-2")
			r.mu.Unlock()
		}
		r.check(t, "PostgreSQL resets", g0, h0)
	})
}
