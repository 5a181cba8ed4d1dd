package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// TestGitHubGeneratedGateway generates the gateway of GitHub's full REST
// description (every operation approved), builds it in a module of its own
// as a user would, and checks it against the generic gateway serving the
// same workspace: tools/list byte for byte, and a dry run of every tool
// (which builds each operation's upstream request without sending it).
// It reports generation time, go build time and binary size, and logs each
// phase as it ends: make test runs it on its own with -v, so CI shows its
// progress (it takes about a minute on two cores).
func TestGitHubGeneratedGateway(t *testing.T) {
	began := time.Now()
	phase := func(format string, args ...any) {
		t.Logf("%5.1f s: %s", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	spec := githubSpec(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	bundle := filepath.Join(ws, "github")
	if code, _, stderr := runCLI(t, "", "compile", spec, "--service", "github", "--out", bundle); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, stderr)
	}
	doc, err := air.Load(bundle)
	if err != nil {
		t.Fatal(err)
	}
	approved := 0
	for i := range doc.Operations {
		if doc.Operations[i].State != air.StateBlocked {
			doc.Operations[i].State = air.StateApproved
			approved++
		}
	}
	rendered, err := air.Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := files.FromBytes(rendered).WriteTo(bundle); err != nil {
		t.Fatal(err)
	}
	phase("compiled GitHub's description, %d operations approved", approved)

	mod := filepath.Join(dir, "yard")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/yard\n\ngo 1.26\n\nrequire github.com/anvil-dev/anvil v0.0.0\n\nreplace github.com/anvil-dev/anvil => " + root + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	code, stdout, stderr := runCLI(t, "", "compile", "--workspace", ws, "--yard", "github", "--gen", filepath.Join(mod, "gen"))
	genTime := time.Since(start)
	if code != 0 {
		t.Fatalf("compile --workspace: exit %d: %s", code, stderr)
	}
	tree, err := files.Read(filepath.Join(mod, "gen", "github"))
	if err != nil {
		t.Fatal(err)
	}
	var genBytes int
	for _, f := range tree {
		genBytes += len(f.Data)
	}
	phase("generated the gateway (%d files)", len(tree))

	bin := filepath.Join(dir, "github-gateway")
	start = time.Now()
	build := exec.Command("go", "build", "-o", bin, "./gen/github")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	buildTime := time.Since(start)
	phase("built it")
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	vet := exec.Command("go", "vet", "./gen/...")
	vet.Dir = mod
	vet.Env = build.Env
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet ./gen/...: %v\n%s", err, out)
	}
	report := fmt.Sprintf("GitHub REST description: %d operations approved; %s\ngeneration %.1f s (%d files, %.1f MB of Go); go build %.1f s (cold for the generated package); binary %.1f MB",
		approved, strings.TrimSpace(stdout), genTime.Seconds(), len(tree), float64(genBytes)/1e6, buildTime.Seconds(), float64(st.Size())/1e6)
	phase("vetted it")
	t.Log(report)
	if p := os.Getenv("ANVIL_REPORT"); p != "" {
		_ = os.WriteFile(p, []byte(report+"\n"), 0o644)
	}

	// Both doors serve the workspace with inbound auth off (loopback): every
	// tool is listed (the full tool surface, not discovery), and dry runs
	// never reach the upstream.
	generic := serveGeneric(t, ws)
	compiled := serveBinary(t, bin)
	if a, b := toolsList(t, generic), toolsList(t, compiled); a != b {
		t.Fatalf("tools/list differs (%d and %d bytes)", len(a), len(b))
	}
	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(toolsList(t, generic)), &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) < approved/2 {
		t.Fatalf("only %d tools listed", len(tools.Tools))
	}
	phase("both gateways list the same %d tools", len(tools.Tools))
	differ := 0
	for i, tool := range tools.Tools {
		if i > 0 && i%400 == 0 {
			phase("dry runs: %d of %d", i, len(tools.Tools))
		}
		args := sampleArgs(tool.InputSchema)
		body, _ := json.Marshal(map[string]any{"arguments": args})
		a, b := restCall(t, generic, tool.Name, body), restCall(t, compiled, tool.Name, body)
		if a != b {
			differ++
			if differ <= 5 {
				t.Errorf("%s %s:\n generic  %s\n compiled %s", tool.Name, body, a, b)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d dry runs differ", differ, len(tools.Tools))
	}
	phase("%d dry runs compared", len(tools.Tools))
}

// serveGeneric serves ws with the generic gateway, inbound auth off.
func serveGeneric(t *testing.T, ws string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	g, err := serve.NewGateway(serve.Config{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, ToolSurface: "full"}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = g.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String()
}

// serveBinary runs a generated gateway binary, inbound auth off.
func serveBinary(t *testing.T, bin string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "serve", "mcp", "unused", "--fleet", "--http", strconv.Itoa(port))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ANVIL_TOOL_SURFACE=full"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the generated gateway did not start: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// toolsList returns every page of tools/list of an MCP session, joined.
func toolsList(t *testing.T, base string) string {
	t.Helper()
	post := func(sid, body string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	var all []json.RawMessage
	cursor := ""
	for page := 0; page < 100; page++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		_, b := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":`+params+`}`)
		var res struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("tools/list: %v: %.300s", err, b)
		}
		all = append(all, res.Result.Tools...)
		if cursor = res.Result.NextCursor; cursor == "" {
			break
		}
	}
	b, _ := json.Marshal(map[string]any{"tools": all})
	return string(b)
}

var reTraceID = regexp.MustCompile(`trace_[0-9a-f]{32}`)

// restCall posts a dry run and returns status, effect header and body.
func restCall(t *testing.T, base, tool string, body []byte) string {
	t.Helper()
	resp, err := http.Post(base+"/call/"+tool, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("X-Anvil-Effect"), sortProblems(string(b)))
	return reTraceID.ReplaceAllString(strings.ReplaceAll(s, base, "BASE"), "trace_X")
}

// sortProblems puts the top-level problems of a validator message in
// order: the JSON Schema validator reports the problems of several
// properties in map order, which varies from one call to the next in
// either gateway.
func sortProblems(body string) string {
	const sep = "; - at '"
	i := strings.Index(body, sep)
	if i < 0 {
		return body
	}
	j := strings.Index(body[i:], `","retryable"`)
	if j < 0 {
		return body
	}
	if strings.HasSuffix(body[i:i+j], "…") {
		// Cut at 500 characters after a random order: keep the head.
		return body[:i] + "; …" + body[i+j:]
	}
	parts := strings.Split(body[i+len(sep):i+j], sep)
	sort.Strings(parts)
	return body[:i] + sep + strings.Join(parts, sep) + body[i+j:]
}

// sampleArgs makes a dry run's arguments from an input schema: every
// required input with a value of its type, and confirm.
func sampleArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{air.DryRunKey: true}
	names := append([]string(nil), s.Required...)
	sort.Strings(names)
	for _, n := range names {
		var p struct {
			Type  any               `json:"type"`
			Enum  []json.RawMessage `json:"enum"`
			Const json.RawMessage   `json:"const"`
		}
		_ = json.Unmarshal(s.Properties[n], &p)
		switch {
		case p.Const != nil:
			args[n] = json.RawMessage(p.Const)
		case len(p.Enum) > 0:
			args[n] = p.Enum[0]
		default:
			typ, _ := p.Type.(string)
			switch typ {
			case "integer", "number":
				args[n] = 42
			case "boolean":
				args[n] = true
			case "array":
				args[n] = []any{"a b", "c"}
			case "object":
				args[n] = map[string]any{"k": "v/1"}
			default:
				args[n] = "x y/ø"
			}
		}
	}
	return args
}
