// Command soak is make soak: three gateway processes (bin/anvil serve) on
// one PostgreSQL under mixed load for a bounded time, with faults injected
// on a schedule through internal/faultproxy (upstream latency, resets and
// 5xx bursts; PostgreSQL latency, resets and a restart; kill -9 of a
// replica, started again). Every interval it prints calls, errors by code,
// p50/p99, and each replica's RSS and goroutines; at the end it checks the
// invariants of the fault suite over the whole run (no keyed write acted
// twice upstream, one audit line per answered call, every audit file and
// the shared table verify) and exits 1 if one fails. Everything runs on
// loopback and stops by itself.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/internal/benchrig"
	"github.com/anvil-dev/anvil/internal/faultproxy"
	"github.com/anvil-dev/anvil/internal/pgtest"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
)

const (
	issuer   = "branchyard:local:soak"
	token    = "e2e-upstream-pat"
	replicas = 3
)

func main() {
	d := flag.Duration("duration", 10*time.Minute, "how long to run the load (SOAK_TIME)")
	every := flag.Duration("every", 30*time.Second, "reporting interval")
	workers := flag.Int("workers", 12, "concurrent clients")
	bin := flag.String("anvil", "bin/anvil", "the anvil binary the replicas run")
	bundle := flag.String("bundle", "runtime/serve/testdata/workspace/github", "the bundle served")
	flag.Parse()
	if err := run(*d, *every, *workers, *bin, *bundle); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// replica is one gateway process.
type replica struct {
	i       int
	port    int
	metrics string
	cmd     *exec.Cmd
	done    chan struct{}
	env     []string
}

type rig struct {
	bin, ws, dir string
	env          []string
	reps         []*replica
	mu           sync.Mutex
	stopping     atomic.Bool
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (g *rig) start(r *replica) error {
	cmd := exec.Command(g.bin, "serve", "mcp", g.ws, "--fleet", "--http", strconv.Itoa(r.port), "--host", "127.0.0.1")
	cmd.Env = append(append(os.Environ(), g.env...), r.env...)
	logf, err := os.OpenFile(filepath.Join(g.dir, fmt.Sprintf("replica%d.log", r.i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	r.cmd, r.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(r.done) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", r.port)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
	}
	out, _ := os.ReadFile(filepath.Join(g.dir, fmt.Sprintf("replica%d.log", r.i)))
	return fmt.Errorf("replica %d did not become ready:\n%s", r.i, out)
}

// stats is one interval's figures.
type stats struct {
	mu    sync.Mutex
	lat   []time.Duration
	codes map[string]int
	calls int
}

func (s *stats) add(d time.Duration, code string) {
	s.mu.Lock()
	s.lat = append(s.lat, d)
	s.codes[code]++
	s.calls++
	s.mu.Unlock()
}

func (s *stats) take() (calls int, codes map[string]int, p50, p99 time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls, codes = s.calls, s.codes
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	if n := len(s.lat); n > 0 {
		p50, p99 = s.lat[n/2], s.lat[min(n-1, int(math.Ceil(float64(n)*0.99))-1)]
	}
	s.lat, s.codes, s.calls = nil, map[string]int{}, 0
	return
}

func run(d, every time.Duration, workers int, bin, bundle string) error {
	dir, err := os.MkdirTemp("", "anvil-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pg, err := pgtest.StartDurable()
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	defer pg.Close()
	dsn, err := pg.NewSchema()
	if err != nil {
		return err
	}
	mock, err := mockupstream.Start(mockupstream.Options{Token: token})
	if err != nil {
		return err
	}
	defer mock.Close()
	// gateway → TCP faults → HTTP faults (5xx bursts) → mock
	mu, _ := url.Parse(mock.URL)
	rp := httputil.NewSingleHostReverseProxy(mu)
	rp.ErrorLog = log.New(io.Discard, "", 0) // the faults make it fail on purpose
	burst := &faultproxy.HTTP{Next: rp}
	front := httptest.NewServer(burst)
	defer front.Close()
	up, err := faultproxy.Listen(strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		return err
	}
	defer up.Close()
	pu, _ := url.Parse(dsn)
	pgp, err := faultproxy.Listen(pu.Host)
	if err != nil {
		return err
	}
	defer pgp.Close()
	pu.Host = pgp.Addr()

	setup, err := benchrig.Write(dir, bundle, "http://"+up.Addr(), "soak-key")
	if err != nil {
		return err
	}
	ws, key, vk := setup.Workspace, setup.Key, setup.VaultKey
	aud := "http://localhost:1/mcp" // one audience for the fleet; requests name its host
	g := &rig{bin: bin, ws: ws, dir: dir, env: []string{
		"ANVIL_INBOUND_AUTH_MODE=branchyard", "ANVIL_INBOUND_ISSUER=" + issuer, "ANVIL_INBOUND_AUDIENCE=" + aud,
		"ANVIL_INBOUND_JWKS_URI=file://" + setup.JWKS, "ANVIL_VAULT_KEY_FILE=" + setup.VaultKeyFile, "ANVIL_ALLOWED_HOSTS=127.0.0.1",
		"ANVIL_STORE=" + pu.String(), "ANVIL_LEDGER_LEASE=3s", "ANVIL_LEDGER_WAIT=500ms", "ANVIL_STORE_TIMEOUT=2s",
		"ANVIL_UPSTREAM_TIMEOUT_MS=2000",
	}}
	for i := 0; i < replicas; i++ {
		r := &replica{i: i, port: freePort(), metrics: fmt.Sprintf("127.0.0.1:%d", freePort())}
		r.env = []string{"ANVIL_VAULT_DIR=" + filepath.Join(dir, fmt.Sprintf("vault%d", i)),
			"ANVIL_AUDIT_FILE=" + filepath.Join(dir, fmt.Sprintf("audit%d.jsonl", i)), "ANVIL_METRICS_ADDR=" + r.metrics}
		if err := g.start(r); err != nil {
			return err
		}
		g.reps = append(g.reps, r)
	}
	defer func() {
		for _, r := range g.reps {
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	}()
	mint := func(extra map[string]any) string {
		now := time.Now().Unix()
		c := map[string]any{"iss": issuer, "aud": aud, "sub": "local:soak", "iat": now, "exp": now + 1800,
			"jti": "soak-" + hex.EncodeToString(vk[:4]), "by_tenant": "soak"}
		for k, v := range extra {
			c[k] = v
		}
		return authtest.Mint(key, c)
	}
	// A turn token lives at most an hour: a fresh one every interval.
	var turnTok atomic.Pointer[string]
	newTurn := func() {
		t := mint(map[string]any{"by_branch": "main", "by_turn": "1",
			"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write", "confirm": "allow"}}})
		turnTok.Store(&t)
	}
	newTurn()
	connect := mint(map[string]any{"by_purpose": "connect", "by_grants": []any{}, "exp": time.Now().Unix() + 300})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	post := func(base, path, bearer, body string, h http.Header) (int, string, error) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Host = "localhost:1"
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	if st, body, err := post(fmt.Sprintf("http://127.0.0.1:%d", g.reps[0].port), "/connect/api-key", connect,
		`{"connector":"github","api_key":"`+token+`"}`, nil); err != nil || st != 200 {
		return fmt.Errorf("connecting the upstream key: %d %s %v", st, body, err)
	}

	fmt.Printf("soak: %d replicas (anvil serve) on PostgreSQL, %d clients, %v, faults every %v (this line, then one per interval)\n", replicas, workers, d, every/3)
	st := &stats{codes: map[string]int{}}
	var answered, issues atomic.Int64
	issueKeys := sync.Map{}
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := mrand.New(mrand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			n := 0
			for time.Now().Before(end) {
				n++
				base := fmt.Sprintf("http://127.0.0.1:%d", g.reps[rnd.IntN(replicas)].port)
				var path, body string
				var h http.Header
				switch x := rnd.IntN(100); {
				case x < 60:
					path, body = "/call/github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`
				case x < 85:
					k := fmt.Sprintf("c-%d-%d", w, n-rnd.IntN(2)) // now and then the previous key again
					path, body, h = "/call/github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"`+k+`"}}`, http.Header{"Idempotency-Key": {k}}
				default:
					k := fmt.Sprintf("i-%d-%d", w, n)
					issueKeys.Store(k, true)
					issues.Add(1)
					path, body, h = "/call/github__github_create_issue", `{"arguments":{"owner":"octo","repo":"hello","title":"`+k+`","confirm":true}}`, http.Header{"Idempotency-Key": {k}}
				}
				began := time.Now()
				status, resp, err := post(base, path, *turnTok.Load(), body, h)
				code := "ok"
				switch {
				case err != nil:
					code = "transport"
				case status != 200:
					var e struct {
						Error struct{ Code string } `json:"error"`
					}
					_ = json.Unmarshal([]byte(resp), &e)
					code = e.Error.Code
					if code == "" {
						code = strconv.Itoa(status)
					}
				}
				if err == nil {
					answered.Add(1)
				}
				st.add(time.Since(began), code)
			}
		}()
	}
	// Faults, one every every/3, in turn.
	faults := []struct {
		name string
		do   func()
	}{
		{"upstream latency 400ms for 5s", func() {
			up.Set(faultproxy.Latency, 400*time.Millisecond)
			time.Sleep(5 * time.Second)
			up.Set(faultproxy.Pass, 0)
		}},
		{"upstream connections reset", func() { up.ResetAll() }},
		{"upstream 5xx burst of 20", func() { burst.Burst(20, 503) }},
		{"upstream half-open for 3s", func() {
			up.Set(faultproxy.Blackhole, 0)
			time.Sleep(3 * time.Second)
			up.Set(faultproxy.Refuse, 0)
			up.Set(faultproxy.Pass, 0)
		}},
		{"PostgreSQL latency 20ms for 5s", func() {
			pgp.Set(faultproxy.Latency, 20*time.Millisecond)
			time.Sleep(5 * time.Second)
			pgp.Set(faultproxy.Pass, 0)
		}},
		{"PostgreSQL connections reset", func() { pgp.ResetAll() }},
		{"PostgreSQL restarted", func() { _ = pg.StopServer(); time.Sleep(2 * time.Second); _ = pg.StartServer() }},
		{"kill -9 of a replica, started again", func() {
			r := g.reps[mrand.IntN(replicas)]
			_ = r.cmd.Process.Signal(syscall.SIGKILL)
			<-r.done
			if err := g.start(r); err != nil {
				fmt.Fprintln(os.Stderr, "soak: restarting a replica:", err)
			}
		}},
	}
	stopFaults := make(chan struct{})
	faultsDone := make(chan struct{})
	var faultLog []string
	go func() {
		defer close(faultsDone)
		t := time.NewTicker(every / 3)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopFaults:
				return
			case <-t.C:
			}
			f := faults[i%len(faults)]
			faultLog = append(faultLog, f.name)
			f.do()
		}
	}()
	began := time.Now()
	tick := time.NewTicker(every)
	fmt.Printf("%8s %7s %8s %8s  %-34s %s\n", "t", "calls", "p50", "p99", "RSS MiB / goroutines per replica", "errors by code")
	for time.Now().Before(end) {
		select {
		case <-tick.C:
		case <-time.After(time.Until(end)):
		}
		newTurn()
		calls, codes, p50, p99 := st.take()
		var res []string
		for _, r := range g.reps {
			res = append(res, fmt.Sprintf("%d/%d", rss(r.cmd.Process.Pid)>>20, goroutines(r.metrics)))
		}
		var errs []string
		for c, n := range codes {
			if c != "ok" {
				errs = append(errs, fmt.Sprintf("%s=%d", c, n))
			}
		}
		sort.Strings(errs)
		fmt.Printf("%8s %7d %8s %8s  %-34s %s\n", time.Since(began).Round(time.Second), calls, p50.Round(100*time.Microsecond),
			p99.Round(100*time.Microsecond), strings.Join(res, "  "), strings.Join(errs, " "))
	}
	tick.Stop()
	close(stopFaults)
	<-faultsDone
	wg.Wait()
	up.Set(faultproxy.Pass, 0)
	pgp.Set(faultproxy.Pass, 0)
	fmt.Printf("soak: faults injected: %d (%s …)\n", len(faultLog), strings.Join(faultLog[:min(len(faultLog), len(faults))], ", "))

	// The invariants over the whole run.
	var failed []string
	made := map[string]int{}
	resp, err := http.DefaultClient.Do(func() *http.Request {
		r, _ := http.NewRequest("GET", mock.URL+"/repos/octo/hello/issues", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		return r
	}())
	if err != nil {
		return err
	}
	var list []struct{ Title string }
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	for _, is := range list {
		made[is.Title]++
	}
	dups := 0
	for t, n := range made {
		if _, ours := issueKeys.Load(t); ours && n > 1 {
			dups++
		}
	}
	if dups > 0 {
		failed = append(failed, fmt.Sprintf("%d issue keys were made more than once upstream", dups))
	}
	chain, _ := audit.ChainKey(vk)
	lines := 0
	for i := range g.reps {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("audit%d.jsonl", i)))
		if err != nil {
			return err
		}
		rep, err := audit.Verify(bufio.NewReader(f), audit.VerifyOptions{Key: chain})
		f.Close()
		if err != nil {
			failed = append(failed, fmt.Sprintf("replica %d's audit file: %v", i, err))
		}
		lines += rep.Records
	}
	// A call answered by a replica killed just after answering may miss
	// its line only if the kill came between the answer and the write:
	// the line is written before the answer, so none may be missing.
	if int64(lines) < answered.Load() {
		failed = append(failed, fmt.Sprintf("%d audit lines for %d answered calls", lines, answered.Load()))
	}
	var table audit.Report
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		table, err = pgstore.VerifyAuditTable(ctx, dsn, vk, "")
		cancel()
		if err != nil || table.Records >= lines || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		failed = append(failed, fmt.Sprintf("the shared audit table: %v", err))
	} else if table.Records != lines {
		failed = append(failed, fmt.Sprintf("the shared audit table holds %d records, the files %d", table.Records, lines))
	}
	fmt.Printf("soak: %d answered calls, %d keyed issue writes, %d audit lines (every file and the shared table verified: %v), issues made twice: %d\n",
		answered.Load(), issues.Load(), lines, err == nil, dups)
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	fmt.Println("soak: ok")
	return nil
}

// rss is a process's resident set in bytes (Linux /proc), 0 when unknown.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// goroutines reads go_goroutines from a replica's metrics listener.
func goroutines(addr string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return -1
}
