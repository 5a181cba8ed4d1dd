// Command scalebench measures how the fleet gateway's start grows with the
// size of what it serves (make scale, docs/scale.md). For the real-world
// descriptions of -specs (default GitHub's and Microsoft Graph beta's,
// $ANVIL_SPECS_DIR/<name>.json, each skipped when absent: see
// scripts/fetch-specs.sh) and for synthetic descriptions of -sizes
// operations (discovereval.SyntheticSpec) it compiles
// a workspace with each anvil binary given (anvil init, every operation's
// state set to approved in the manifest, anvil compile, as a new user
// would; cached under -cache by the binary's and the description's hashes), then, for each binary and workspace, starts
// `anvil serve mcp <ws> --fleet --http <port>` with a loopback mock upstream
// and reports:
//
//   - bundle: the bytes of the workspace's files on disk;
//   - healthz: from starting the process to its first /healthz 200;
//   - first call: from starting the process to the first 200 of a REST call
//     (POST /call/<tool>) through the gateway to the mock upstream;
//   - peak RSS: the gateway process's VmHWM (/proc/<pid>/status) after the
//     first call, and again after tools/list;
//   - search p50: the median latency of GET /tools?search= over a fixed set
//     of plain-language tasks, once the index is built;
//   - tools/list: the bytes of every page of MCP tools/list in the full
//     surface (ANVIL_TOOL_SURFACE=full) and in the discover surface (a
//     second start, whose timings are reported too).
//
// With -base, the same is measured for an older binary in the same run,
// interleaved, and printed side by side. Everything binds 127.0.0.1.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/anvil-dev/anvil/internal/discovereval"
	"github.com/anvil-dev/anvil/internal/scalebench/realspec"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

// workload is one description to serve.
type workload struct {
	name    string // the row label
	service string // --service, and the connector id
	spec    []byte
}

// result is one binary serving one workload.
type result struct {
	bundle                 int64
	healthz, firstCall     time.Duration
	hwmCall, hwmList       int64 // VmHWM in KiB
	listFull, listDiscover int
	healthzDisc, firstDisc time.Duration
	hwmDiscover            int64
	search                 time.Duration // p50 of a search, full surface
	err                    error
}

func main() {
	anvil := flag.String("anvil", "bin/anvil", "the anvil binary measured")
	base := flag.String("base", "", "an older anvil binary measured alongside (before/after)")
	specs := flag.String("specs", "github,msgraph-beta", "real-world descriptions served: names of $ANVIL_SPECS_DIR/<name>.json or paths (comma-separated; empty for none)")
	sizes := flag.String("sizes", "20000,100000", "operation counts of the synthetic descriptions (comma-separated; empty for none)")
	cache := flag.String("cache", ".cache/scale", "where the compiled workspaces are kept")
	compile := flag.String("compile", "", "the anvil binary that compiles every workspace (default: each binary compiles the one it serves)")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long a gateway may take to serve its first call")
	flag.Parse()
	if err := run(*anvil, *base, *compile, *specs, *sizes, *cache, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "scalebench: %v\n", err)
		os.Exit(1)
	}
}

func run(anvil, base, compile, specs, sizes, cache string, timeout time.Duration) error {
	// The binaries run in the workspaces' directories: name them absolutely.
	for _, p := range []*string{&anvil, &base, &compile} {
		if *p != "" && strings.ContainsRune(*p, filepath.Separator) {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return err
			}
			*p = abs
		}
	}
	var loads []workload
	named, missing := realspec.Resolve(realspec.Dir(), specs)
	for _, m := range missing {
		fmt.Fprintf(os.Stderr, "scalebench: %s not present (scripts/fetch-specs.sh), its row is skipped\n", m)
	}
	for _, s := range named {
		b, err := os.ReadFile(s.Path)
		if err != nil {
			return err
		}
		loads = append(loads, workload{name: s.Label(), service: s.Service, spec: b})
	}
	for _, s := range strings.Split(sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 5 {
			return fmt.Errorf("-sizes: %q is not a count of at least 5", s)
		}
		b, err := discovereval.SyntheticSpec(n)
		if err != nil {
			return err
		}
		loads = append(loads, workload{name: fmt.Sprintf("synthetic %d", n), service: "synthetic", spec: b})
	}
	bins := []string{anvil}
	if base != "" {
		bins = []string{base, anvil}
	}
	mock, stop, err := startMock()
	if err != nil {
		return err
	}
	defer stop()
	results := make([][]result, len(loads))
	for i, w := range loads {
		results[i] = make([]result, len(bins))
		var call [2]string                    // the first call, chosen in the newest binary's workspace
		for j := len(bins) - 1; j >= 0; j-- { // the newest first: it reads its own AIR
			bin := bins[j]
			fmt.Fprintf(os.Stderr, "scalebench: %s with %s\n", w.name, bin)
			compiler := bin
			if compile != "" {
				compiler = compile
			}
			results[i][j] = measure(bin, compiler, w, cache, mock, timeout, &call)
		}
	}
	print(os.Stdout, loads, bins, results)
	for i := range results {
		for j := range results[i] {
			if results[i][j].err != nil {
				return errors.New("some measurements failed (see above)")
			}
		}
	}
	return nil
}

// measure compiles (or reuses) w's workspace with compiler and serves it
// with bin twice. call is the tool and arguments of the first call: chosen
// in this workspace when empty, else kept (an older binary's workspace may
// hold an AIR version this build no longer reads; the tool names are the
// same).
func measure(bin, compiler string, w workload, cache, mock string, timeout time.Duration, call *[2]string) result {
	var r result
	ws, err := workspace(compiler, w, cache)
	if err != nil {
		r.err = err
		return r
	}
	if r.bundle, _, err = realspec.Size(ws); err != nil {
		r.err = err
		return r
	}
	if call[0] == "" {
		t, a, err := firstCall(filepath.Join(ws, w.service), w.service)
		if err != nil {
			r.err = err
			return r
		}
		*call = [2]string{t, a}
	}
	tool, args := call[0], call[1]
	env := []string{
		fleet.UpstreamURLEnv(w.service) + "=" + mock,
		"ANVIL_ALLOWED_HOSTS=127.0.0.1",
		"ANVIL_INBOUND_AUTH_MODE=none",
	}
	full, err := serveOnce(bin, ws, tool, args, append(env, "ANVIL_TOOL_SURFACE=full"), timeout)
	if err != nil {
		r.err = err
		return r
	}
	r.healthz, r.firstCall, r.hwmCall, r.hwmList, r.listFull = full.healthz, full.firstCall, full.hwmCall, full.hwmList, full.list
	r.search = full.search
	disc, err := serveOnce(bin, ws, tool, args, append(env, "ANVIL_TOOL_SURFACE=discover"), timeout)
	if err != nil {
		r.err = err
		return r
	}
	r.healthzDisc, r.firstDisc, r.hwmDiscover, r.listDiscover = disc.healthz, disc.firstCall, disc.hwmList, disc.list
	return r
}

// workspace returns the directory of w compiled by bin: cache/<bin hash>/
// <spec hash>/ws, written by anvil init, the manifest's approval of every
// operation and anvil compile the first time.
func workspace(bin string, w workload, cache string) (string, error) {
	bh, err := fileHash(bin)
	if err != nil {
		return "", err
	}
	sh := sha256.Sum256(w.spec)
	dir, err := filepath.Abs(filepath.Join(cache, bh[:16], hex.EncodeToString(sh[:8])))
	if err != nil {
		return "", err
	}
	ws := filepath.Join(dir, "ws")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return ws, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	spec := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(spec, w.spec, 0o644); err != nil {
		return "", err
	}
	bundle := filepath.Join("ws", w.service)
	for _, args := range [][]string{
		{"init", spec, "--service", w.service},
		{"approve-in-manifest"},
		{"compile", spec, "--manifest", "anvil.yaml", "--out", bundle},
	} {
		if args[0] == "approve-in-manifest" {
			// Every operation approved as a manifest author would, with
			// `state: approved` (anvil init's header offers this or anvil
			// approve; the approve command is not what is measured here).
			m := filepath.Join(dir, "anvil.yaml")
			b, err := os.ReadFile(m)
			if err != nil {
				return "", err
			}
			b = bytes.ReplaceAll(b, []byte("state: review_required"), []byte("state: approved"))
			if err := os.WriteFile(m, b, 0o644); err != nil {
				return "", err
			}
			continue
		}
		start := time.Now()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, tail(out))
		}
		fmt.Fprintf(os.Stderr, "scalebench:   anvil %s: %.1f s\n", args[0], time.Since(start).Seconds())
	}
	return ws, os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
}

// firstCall picks the call the measurement waits for: the first approved
// read of the bundle, with a value for each required argument ("1" for a
// string, 1 for a number).
func firstCall(dir, connector string) (tool, args string, err error) {
	doc, err := air.Load(dir)
	if err != nil {
		return "", "", err
	}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if !air.IsServed(op) || op.Effect.Kind != air.KindRead || op.Input.Schema == nil {
			continue
		}
		a := map[string]any{}
		for _, name := range op.Input.Schema.Required {
			p := op.Input.Schema.Properties[name]
			switch {
			case p != nil && len(p.Type) > 0 && (p.Type[0] == "integer" || p.Type[0] == "number"):
				a[name] = 1
			case p != nil && len(p.Type) > 0 && p.Type[0] == "string":
				a[name] = "1"
			default:
				a = nil
			}
			if a == nil {
				break
			}
		}
		if a == nil {
			continue
		}
		b, _ := json.Marshal(a)
		return air.WireToolName(connector, op), string(b), nil
	}
	return "", "", fmt.Errorf("%s serves no read without body", dir)
}

// served is what one start of a gateway measured.
type served struct {
	healthz, firstCall time.Duration
	hwmCall, hwmList   int64
	list               int
	search             time.Duration // p50 of GET /tools?search= (searchQueries)
}

// searchQueries are the plain-language tasks whose GET /tools?search=
// latency is measured, each several times.
var searchQueries = []string{"list the users", "create an issue", "delete a comment", "update the account settings",
	"get a repository", "send a message", "merge a pull request", "upload a file"}

// searchP50 times searchRounds rounds of searchQueries against the
// gateway at url (after a first search, which builds the index) and
// returns the median.
func searchP50(client *http.Client, url string) (time.Duration, error) {
	const searchRounds = 5
	var times []time.Duration
	for round := -1; round < searchRounds; round++ {
		for _, q := range searchQueries {
			start := time.Now()
			resp, err := client.Get(url + "/tools?limit=10&search=" + neturl.QueryEscape(q))
			if err != nil {
				return 0, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return 0, fmt.Errorf("GET /tools?search= answered %s", resp.Status)
			}
			if round >= 0 {
				times = append(times, time.Since(start))
			}
		}
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// serveOnce starts bin serving ws, waits for /healthz and a first call of
// tool, lists the tools over MCP and stops it.
func serveOnce(bin, ws, tool, args string, env []string, timeout time.Duration) (s served, err error) {
	port, err := freePort()
	if err != nil {
		return s, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "mcp", ws, "--fleet", "--http", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, tail(stderr.Bytes()))
		}
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	client := &http.Client{Timeout: timeout}
	deadline := start.Add(timeout)
	for {
		if time.Now().After(deadline) {
			return s, fmt.Errorf("no /healthz 200 within %s", timeout)
		}
		if resp, err := client.Get(url + "/healthz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.healthz = time.Since(start)
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	var last string
	for {
		if time.Now().After(deadline) {
			return s, fmt.Errorf("no successful call of %s within %s (last: %s)", tool, timeout, last)
		}
		resp, err := client.Post(url+"/call/"+tool, "application/json", strings.NewReader(`{"arguments":`+args+`}`))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.firstCall = time.Since(start)
				break
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, tail(b))
			if resp.StatusCode != http.StatusServiceUnavailable {
				return s, fmt.Errorf("the call of %s answered %s", tool, last)
			}
		} else {
			last = err.Error()
		}
		time.Sleep(2 * time.Millisecond)
	}
	if s.hwmCall, err = vmHWM(cmd.Process.Pid); err != nil {
		return s, err
	}
	if s.search, err = searchP50(client, url); err != nil {
		return s, err
	}
	if s.list, err = toolsListBytes(client, url+"/mcp"); err != nil {
		return s, fmt.Errorf("tools/list: %w", err)
	}
	s.hwmList, err = vmHWM(cmd.Process.Pid)
	return s, err
}

// toolsListBytes opens an MCP session and returns the bytes of every
// tools/list answer, following nextCursor.
func toolsListBytes(client *http.Client, url string) (int, error) {
	session := ""
	post := func(body string) ([]byte, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("%d %s", resp.StatusCode, tail(b))
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			return sseData(b), nil
		}
		return b, nil
	}
	if _, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"scalebench","version":"1"}}}`); err != nil {
		return 0, err
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return 0, err
	}
	total, cursor := 0, ""
	for page := 0; page < 100000; page++ {
		params := `{}`
		if cursor != "" {
			c, _ := json.Marshal(cursor)
			params = `{"cursor":` + string(c) + `}`
		}
		b, err := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + params + `}`)
		if err != nil {
			return 0, err
		}
		total += len(b)
		var v struct {
			Result *struct {
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &v); err != nil || v.Result == nil {
			return 0, fmt.Errorf("not a tools/list result: %s", tail(b))
		}
		if cursor = v.Result.NextCursor; cursor == "" {
			return total, nil
		}
	}
	return 0, errors.New("tools/list pages without end")
}

// sseData joins the data lines of an event stream.
func sseData(b []byte) []byte {
	var out []byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(d)...)
		}
	}
	return out
}

// vmHWM reads the peak resident set size (KiB) of a process.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/<pid>/status")
}

// startMock serves every request 200 {"id":"1","name":"mock"} on loopback.
func startMock() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"1","name":"mock"}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}

// print writes one row per workload and measure, one column per binary.
func print(out io.Writer, loads []workload, bins []string, results [][]result) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "workload\tmeasure\t"
	for _, b := range bins {
		head += b + "\t"
	}
	fmt.Fprintln(tw, head)
	for i, w := range loads {
		rows := []struct {
			name string
			f    func(r result) string
		}{
			{"bundle on disk", func(r result) string { return mib(r.bundle) }},
			{"start → /healthz 200", func(r result) string { return secs(r.healthz) }},
			{"start → first call 200", func(r result) string { return secs(r.firstCall) }},
			{"peak RSS at first call", func(r result) string { return mib(r.hwmCall * 1024) }},
			{"peak RSS after tools/list", func(r result) string { return mib(r.hwmList * 1024) }},
			{"tools/list bytes, full", func(r result) string { return strconv.Itoa(r.listFull) }},
			{"tools/list bytes, discover", func(r result) string { return strconv.Itoa(r.listDiscover) }},
			{"discover: start → first call", func(r result) string { return secs(r.firstDisc) }},
			{"discover: peak RSS", func(r result) string { return mib(r.hwmDiscover * 1024) }},
			{"search p50 (GET /tools?search=)", func(r result) string { return fmt.Sprintf("%.2f ms", float64(r.search)/1e6) }},
		}
		for _, row := range rows {
			line := w.name + "\t" + row.name + "\t"
			for _, r := range results[i] {
				if r.err != nil {
					line += "error\t"
					continue
				}
				line += row.f(r) + "\t"
			}
			fmt.Fprintln(tw, line)
		}
	}
	tw.Flush()
	for i, w := range loads {
		for j, r := range results[i] {
			if r.err != nil {
				fmt.Fprintf(out, "%s with %s: %v\n", w.name, bins[j], r.err)
			}
		}
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
