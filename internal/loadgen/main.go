// Command loadgen measures the fleet gateway against a bare reverse proxy on
// loopback (make load). It starts, in this process, the github-mini mock
// upstream, a bare httputil.ReverseProxy in front of it (tuned transport) and
// the gateway in branchyard mode (file JWKS, vault, audit log in a temporary
// directory) serving the committed github-mini bundle, then for each of
//
//   - bare proxy:   GET /repos/octo/hello/pulls through the proxy;
//   - gateway REST: POST /call/github__github_list_pull;
//   - gateway MCP:  tools/call github__github_list_pull on open sessions;
//   - the same two in inbound auth mode oidc, with access tokens of a real
//     OpenID provider (oidc.go);
//   - keyed writes through the idempotency ledger, on the embedded store
//     and on PostgreSQL (ledger.go);
//
// (and, for reference, the mock reached directly, and the bare proxy given
// the gateway's own requests, /call and tools/call with the turn token and
// JSON body, which it maps to the same upstream GET) it measures requests per second with -conns concurrent connections and
// single-client latency (p50, p99), -duration each, split into -rounds
// interleaved rounds so that background load hits every target alike, and
// prints them side by side with the gateway's ratios to the proxy. Everything binds
// 127.0.0.1 and ends when the measurements do.
package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/internal/benchrig"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
	"github.com/anvil-dev/anvil/runtime/serve"
)

const (
	issuer       = "branchyard:local:loadgen"
	upstreamPAT  = "loadgen-upstream-pat"
	upstreamPath = "/repos/octo/hello/pulls"
)

func main() {
	if role, arg, ok := childArgs(os.Args[1:]); ok { // procs.go
		if err := runChild(role, arg); err != nil {
			fmt.Fprintf(os.Stderr, "loadgen %s: %v\n", role, err)
			os.Exit(1)
		}
		return
	}
	bundle := flag.String("bundle", "runtime/serve/testdata/workspace/github", "the github-mini bundle to serve")
	duration := flag.Duration("duration", 4*time.Second, "how long each target is measured, per phase (throughput, latency)")
	conns := flag.Int("conns", 64, "concurrent connections for the throughput runs")
	rounds := flag.Int("rounds", 8, "interleaved rounds the measurements are split into")
	procsMode := flag.Bool("procs", false, "run the mock, the bare proxy and both gateways as processes of their own (the gateways as the binaries -anvil and -generated)")
	anvilBin := flag.String("anvil", "bin/anvil", "with -procs: the anvil binary (the generic gateway)")
	generatedBin := flag.String("generated", "bin/github-mini", "with -procs: the generated github-mini gateway binary")
	flag.Parse()
	if *rounds < 1 || *conns < 1 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "loadgen: -rounds and -conns must be positive, -duration too")
		os.Exit(2)
	}
	// A hung run never outlives its budget: two phases of -duration for
	// each of at most 14 targets, and set-up.
	budget := 2*14*(*duration) + 2*time.Minute
	time.AfterFunc(budget, func() {
		fmt.Fprintf(os.Stderr, "loadgen: still running after %v; giving up\n", budget)
		os.Exit(1)
	})
	var procs *procOptions
	if *procsMode {
		procs = &procOptions{anvil: *anvilBin, generated: *generatedBin}
	}
	if err := run(*bundle, *duration, *conns, *rounds, procs); err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: %v\n", err)
		os.Exit(1)
	}
}

// target is one thing to measure: newWorker returns a function that sends
// one request on its own connection state and reports an error.
type target struct {
	name      string
	newWorker func() (func() error, func(), error)
}

// result is a target's figures.
type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
}

func run(bundle string, d time.Duration, conns, rounds int, procs *procOptions) error {
	dir, err := os.MkdirTemp("", "anvil-loadgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	var st stack
	defer func() {
		if st.stop != nil {
			st.stop()
		}
	}()
	if procs != nil {
		st.mock, err = startChild(&st, "mock", upstreamPAT) // procs.go
	} else {
		var mock *mockupstream.Server
		if mock, err = mockupstream.Start(mockupstream.Options{Token: upstreamPAT}); err == nil {
			st.mock = mock.URL
			st.onStop(func() { mock.Close() })
		}
	}
	if err != nil {
		return fmt.Errorf("the mock upstream: %w", err)
	}

	// The workspace (the committed bundle pointed at the mock), keys and
	// vault key; then the gateways' common configuration.
	rig, err := benchrig.Write(dir, bundle, st.mock, "by-loadgen0001")
	if err != nil {
		return err
	}
	ws, key, vk := rig.Workspace, rig.Key, rig.VaultKey
	cfg := serve.Config{
		Host: "127.0.0.1",
		Auth: auth.Config{Mode: auth.ModeBranchyard, Issuer: issuer, Audience: audience,
			JWKSURI: "file://" + rig.JWKS, Leeway: auth.DefaultLeeway},
		VaultKeyFile: rig.VaultKeyFile, VaultDir: filepath.Join(dir, "vault"), AuditFile: filepath.Join(dir, "audit.jsonl"),
		AllowedHosts: "127.0.0.1", Getenv: func(string) string { return "" },
	}
	generatedAudit := filepath.Join(dir, "audit-generated.jsonl")
	if procs != nil {
		err = startProcesses(&st, procs, cfg, ws, generatedAudit) // procs.go
	} else {
		err = startInProcess(&st, cfg, ws, generatedAudit, conns)
	}
	if err != nil {
		return err
	}

	now := time.Now().Unix()
	mint := func(extra map[string]any) string {
		c := map[string]any{"iss": issuer, "aud": audience, "sub": "local:loadgen", "iat": now, "exp": now + 3000,
			"jti": "loadgen-" + hex.EncodeToString(vk[:4]), "by_tenant": "loadgen"}
		for k, v := range extra {
			c[k] = v
		}
		return authtest.Mint(key, c)
	}
	connectFor := func(sub string) string {
		return mint(map[string]any{"sub": sub, "exp": now + 300, "by_purpose": "connect", "by_grants": []any{}})
	}
	turnFor := func(sub string) string {
		return mint(map[string]any{"sub": sub, "by_branch": "main", "by_turn": "1",
			"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}})
	}
	connectTok, turnTok := connectFor("local:loadgen"), turnFor("local:loadgen")
	client := &http.Client{Transport: tunedTransport(conns), Timeout: 10 * time.Second}
	// A gateway holds at most mcpdoor.MaxSessionsPerSubject MCP sessions
	// per person, and the MCP rows open one per connection: they are
	// spread over enough people, each connected (the gateways share the
	// vault directory).
	mcpToks := make([]string, (conns+mcpdoor.MaxSessionsPerSubject-1)/mcpdoor.MaxSessionsPerSubject)
	for i := range mcpToks {
		sub := "local:loadgen"
		if i > 0 {
			sub = fmt.Sprintf("local:loadgen-%d", i)
		}
		mcpToks[i] = turnFor(sub)
		if err := expect200(client, "POST", st.gateway+"/connect/api-key", http.Header{"Authorization": {"Bearer " + connectFor(sub)},
			"Content-Type": {"application/json"}}, `{"connector":"github","api_key":"`+upstreamPAT+`"}`, nil); err != nil {
			return fmt.Errorf("connecting %s: %w", sub, err)
		}
	}

	upstreamHeader := http.Header{"Authorization": {"Bearer " + upstreamPAT}, "Accept": {"application/json"}}
	callHeader := http.Header{"Authorization": {"Bearer " + turnTok}, "Content-Type": {"application/json"}}
	listBody := `{"arguments":{"owner":"octo","repo":"hello"}}`
	mcpCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"octo","repo":"hello"}}}`

	simple := func(method, u string, h http.Header, body string) func() (func() error, func(), error) {
		return func() (func() error, func(), error) {
			c := &http.Client{Transport: tunedTransport(1), Timeout: 10 * time.Second}
			return func() error { return expect200(c, method, u, h, body, nil) }, c.CloseIdleConnections, nil
		}
	}
	mcpHeader := http.Header{"Authorization": {"Bearer " + turnTok}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}, "Mcp-Session-Id": {"loadgen"}, "Mcp-Protocol-Version": {"2025-06-18"}}
	oidcBase, oidcToks, err := startOIDC(&st, procs, cfg, ws, dir, len(mcpToks), client) // oidc.go
	if err != nil {
		return err
	}
	oidcCall := http.Header{"Authorization": {"Bearer " + oidcToks[0]}, "Content-Type": {"application/json"}}
	targets := []target{
		{"upstream", simple("GET", st.mock+upstreamPath, upstreamHeader, "")},
		{"bare proxy", simple("GET", st.proxy+upstreamPath, upstreamHeader, "")},
		{"proxy, /call req", simple("POST", st.proxy+"/call/github__github_list_pull", callHeader, listBody)},
		{"proxy, MCP req", simple("POST", st.proxy+"/mcp", mcpHeader, mcpCall)},
		{"gateway /call", simple("POST", st.gateway+"/call/github__github_list_pull", callHeader, listBody)},
		{"gateway MCP", mcpTarget(st.gateway, mcpToks, mcpCall)},
		{"generated /call", simple("POST", st.generated+"/call/github__github_list_pull", callHeader, listBody)},
		{"generated MCP", mcpTarget(st.generated, mcpToks, mcpCall)},
		{"gateway MCP 2026", simple("POST", st.gateway+"/mcp", rev2026Header(turnTok), mcpCall2026)},
		{"generated MCP 2026", simple("POST", st.generated+"/mcp", rev2026Header(turnTok), mcpCall2026)},
		{"oidc /call", simple("POST", oidcBase+"/call/github__github_list_pull", oidcCall, listBody)},
		{"oidc MCP", mcpTarget(oidcBase, oidcToks, mcpCall)},
	}
	reads := len(targets)
	writeTok := mint(map[string]any{"by_branch": "main", "by_turn": "1",
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write"}}})
	writes, err := ledgerTargets(&st, procs, cfg, ws, dir, writeTok, connectTok, client) // ledger.go
	if err != nil {
		return err
	}
	targets = append(targets, writes...)

	where := "in this process"
	if procs != nil {
		where = "each server in a process of its own (" + procs.anvil + ", " + procs.generated + ")"
	}
	fmt.Printf("loadgen: %s; %d rounds; per round and target %v at %d connections, then %v with one client (GOMAXPROCS %d)\n",
		where, rounds, d/time.Duration(rounds), conns, d/time.Duration(rounds), runtime.GOMAXPROCS(0))
	results, err := measureAll(targets, conns, d, rounds)
	if err != nil {
		return err
	}
	fmt.Printf("\n%-16s %12s %10s %10s %8s\n", "target", fmt.Sprintf("req/s@%d", conns), "p50", "p99", "errors")
	for i, t := range targets {
		r := results[i]
		fmt.Printf("%-16s %12.0f %10s %10s %8d\n", t.name, r.rps, fmtDur(r.p50), fmtDur(r.p99), r.errors)
	}
	bare := results[1]
	fmt.Println()
	for i := 4; i < reads; i++ {
		r := results[i]
		tp, lat := r.rps/bare.rps, float64(r.p50)/float64(bare.p50)
		fmt.Printf("%-16s throughput %.2fx the proxy (target >= 0.60) %s; p50 %.2fx (target <= 1.30) %s\n",
			targets[i].name, tp, verdict(tp >= 0.6), lat, verdict(lat <= 1.3))
	}
	printGenerated(targets, results) // generated.go
	printSameRequest(targets, results)
	printOIDC(targets, results)   // oidc.go
	printLedger(targets, results) // ledger.go
	for _, r := range results {
		if r.errors > 0 {
			return errors.New("some requests failed")
		}
	}
	return nil
}

// printSameRequest compares each gateway row with the bare proxy given the
// same request (a /call or a tools/call with the turn token and JSON body):
// what is left is the gateway's own work, without the cost of the bigger
// request that the GET rows above include on both client and server.
func printSameRequest(targets []target, results []result) {
	idx := map[string]int{}
	for i, t := range targets {
		idx[t.name] = i
	}
	fmt.Println("\nagainst the bare proxy given the same request:")
	for _, row := range []struct {
		name, base string
		limit      float64 // the p50 target
	}{
		{"gateway /call", "proxy, /call req", 1.30}, {"gateway MCP", "proxy, MCP req", 1.30},
		{"generated /call", "proxy, /call req", 1.15}, {"generated MCP", "proxy, MCP req", 1.15},
		{"gateway MCP 2026", "proxy, MCP req", 1.30}, {"generated MCP 2026", "proxy, MCP req", 1.15},
	} {
		gi, ok1 := idx[row.name]
		bi, ok2 := idx[row.base]
		if !ok1 || !ok2 {
			continue
		}
		g, b := results[gi], results[bi]
		lat := float64(g.p50) / float64(b.p50)
		fmt.Printf("%-16s throughput %.2fx, p50 %.2fx (target <= %.2f) %s\n", row.name, g.rps/b.rps, lat, row.limit, verdict(lat <= row.limit))
	}
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// mcpCall2026 is mcpCall as a client of MCP 2026-07-28 sends it: no
// session, the protocol version and the client's capabilities in _meta.
const mcpCall2026 = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"octo","repo":"hello"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1"}}}}`

// rev2026Header are the headers of mcpCall2026.
func rev2026Header(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method": {"tools/call"}, "Mcp-Name": {"github__github_list_pull"}}
}

// mcpTarget opens an MCP session on base per worker and calls mcpCall on
// it; the workers take the tokens in turn, mcpdoor.MaxSessionsPerSubject
// workers each.
func mcpTarget(base string, tokens []string, mcpCall string) func() (func() error, func(), error) {
	var workers atomic.Int64
	return func() (func() error, func(), error) {
		n := int(workers.Add(1) - 1)
		token := tokens[n/mcpdoor.MaxSessionsPerSubject%len(tokens)]
		c := &http.Client{Transport: tunedTransport(1), Timeout: 10 * time.Second}
		h := http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"},
			"Accept": {"application/json, text/event-stream"}}
		var sid string
		err := expect200(c, "POST", base+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loadgen","version":"1"}}}`,
			func(r *http.Response) { sid = r.Header.Get("Mcp-Session-Id") })
		if err != nil || sid == "" {
			return nil, nil, fmt.Errorf("initialize: %v", err)
		}
		sh := h.Clone()
		sh.Set("Mcp-Session-Id", sid)
		sh.Set("Mcp-Protocol-Version", "2025-06-18")
		req, _ := http.NewRequest("POST", base+"/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)))
		req.Header = sh.Clone()
		if resp, err := c.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		closeSession := func() {
			req, _ := http.NewRequest("DELETE", base+"/mcp", nil)
			req.Header = sh.Clone()
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
			c.CloseIdleConnections()
		}
		return func() error { return expect200(c, "POST", base+"/mcp", sh, mcpCall, nil) }, closeSession, nil
	}
}

// measureAll measures every target in rounds, interleaved (throughput with
// conns workers, then latency with one, for d/rounds each per round), so a
// change in the machine's background load hits every target alike.
func measureAll(targets []target, conns int, d time.Duration, rounds int) ([]result, error) {
	type state struct {
		workers []func() error
		closers []func()
		done    int64
		elapsed time.Duration
		lat     []time.Duration
		failed  int64
	}
	states := make([]*state, len(targets))
	defer func() {
		for _, st := range states {
			if st == nil {
				continue
			}
			for _, c := range st.closers {
				c()
			}
		}
	}()
	for i, t := range targets {
		st := &state{}
		states[i] = st
		for j := 0; j < conns; j++ {
			w, c, err := t.newWorker()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			st.workers = append(st.workers, w)
			st.closers = append(st.closers, c)
			if err := w(); err != nil { // warm the connection
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
		}
	}
	slice := d / time.Duration(rounds)
	for r := 0; r < rounds; r++ {
		for _, st := range states {
			var done, failed atomic.Int64
			stop := time.Now().Add(slice)
			var wg sync.WaitGroup
			start := time.Now()
			for _, w := range st.workers {
				wg.Add(1)
				go func(w func() error) {
					defer wg.Done()
					for time.Now().Before(stop) {
						if err := w(); err != nil {
							failed.Add(1)
							continue
						}
						done.Add(1)
					}
				}(w)
			}
			wg.Wait()
			st.elapsed += time.Since(start)
			st.done += done.Load()
			st.failed += failed.Load()
		}
		for _, st := range states {
			w := st.workers[0]
			stop := time.Now().Add(slice)
			for time.Now().Before(stop) {
				t0 := time.Now()
				if err := w(); err != nil {
					st.failed++
					continue
				}
				st.lat = append(st.lat, time.Since(t0))
			}
		}
	}
	out := make([]result, len(targets))
	for i, st := range states {
		if len(st.lat) == 0 {
			return nil, fmt.Errorf("%s: no request succeeded", targets[i].name)
		}
		sort.Slice(st.lat, func(a, b int) bool { return st.lat[a] < st.lat[b] })
		out[i] = result{rps: float64(st.done) / st.elapsed.Seconds(), p50: st.lat[len(st.lat)/2],
			p99: st.lat[len(st.lat)*99/100], errors: st.failed}
	}
	return out, nil
}

// tunedTransport keeps up to n connections to one host alive.
func tunedTransport(n int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n + 16,
		MaxIdleConnsPerHost: n + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// expect200 sends one request, reads the whole answer and wants a 200.
func expect200(c *http.Client, method, u string, h http.Header, body string, seen func(*http.Response)) error {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	req.Header = h.Clone()
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if seen != nil {
		seen(resp)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", method, u, resp.StatusCode)
	}
	return nil
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}
