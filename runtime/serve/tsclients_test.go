package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth"
)

// The real clients of tools/mcp (npm ci --prefix tools/mcp, pinned in its
// package-lock.json): the official conformance suite, and the TypeScript
// SDK's v2 and v1 clients, run on Node 22 from the same lockfile.

// mcpTools returns tools/mcp's directory and its Node, or fails the test.
func mcpTools(t *testing.T) (dir, node string) {
	t.Helper()
	dir, err := filepath.Abs("../../tools/mcp")
	if err != nil {
		t.Fatal(err)
	}
	node = filepath.Join(dir, "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node 22 not found at tools/mcp/node_modules/.bin/node: run `npm ci --prefix tools/mcp` first (make deps)")
	}
	return dir, node
}

// TestConformanceSuite runs @modelcontextprotocol/conformance's active
// server suite against a gateway in auth mode none (the suite sends no
// token): every scenario that applies passes; those that do not are listed,
// with why, in tools/mcp/conformance-baseline.yaml.
func TestConformanceSuite(t *testing.T) {
	dir, node := mcpTools(t)
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(c *Config) {
		c.Auth = auth.Config{Mode: auth.ModeNone}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", f.aud, "--expected-failures", filepath.Join(dir, "conformance-baseline.yaml"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	out, err := cmd.CombinedOutput()
	var results []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "✓ ") || strings.HasPrefix(l, "✗ ") {
			results = append(results, l)
		}
	}
	t.Logf("conformance results:\n%s", strings.Join(results, "\n"))
	if err != nil || !strings.Contains(string(out), "Baseline check passed") {
		t.Fatalf("conformance suite: %v\n%s", err, out)
	}
	for _, want := range []string{"server-initialize", "ping", "tools-list", "logging-set-level", "dns-rebinding-protection", "server-sse-multiple-streams"} {
		if !strings.Contains(string(out), "✓ "+want+":") {
			t.Errorf("scenario %s did not pass", want)
		}
	}
}

// tsResult is what tools/mcp/clients.mjs prints.
type tsResult struct {
	Version   string          `json:"version"`
	SessionID *string         `json:"sessionId"`
	Tools     []string        `json:"tools"`
	Read      json.RawMessage `json:"read"`
	Confirmed struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           json.RawMessage `json:"content"`
	} `json:"confirmed"`
	Asked []string `json:"asked"`
}

// TestTypeScriptClients: the TypeScript SDK's v2 client agrees 2026-07-28
// (no session) and its v1 client 2025-11-25 (a session); each lists the
// tools its grant shows, calls a read, and is asked, in the protocol,
// before a write that needs confirmation, which then runs once.
func TestTypeScriptClients(t *testing.T) {
	dir, node := mcpTools(t)
	f := newFleetFixture(t, nil)
	tok := f.turn(fxWriteGrant)
	for _, c := range []struct{ client, version string }{{"v2", "2026-07-28"}, {"v1", "2025-11-25"}} {
		t.Run(c.client, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			before := f.upstreamCount()
			cmd := exec.CommandContext(ctx, node, "clients.mjs", c.client, f.aud, tok,
				"github__github_list_issue", `{"owner":"octo","repo":"hello"}`,
				"github__github_create_issue", `{"owner":"octo","repo":"hello","title":"From TypeScript `+c.client+`"}`)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("clients.mjs %s: %v\n%s\n%s", c.client, err, out, stderr)
			}
			var r tsResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("clients.mjs printed %s", out)
			}
			t.Logf("%s agreed %s (session %v)", c.client, r.Version, r.SessionID != nil)
			if r.Version != c.version || (r.SessionID == nil) != (c.version == "2026-07-28") {
				t.Errorf("agreed %s with session %v, want %s", r.Version, r.SessionID, c.version)
			}
			if len(r.Tools) != 12 || !strings.Contains(string(r.Read), `"structuredContent"`) {
				t.Errorf("tools %v, read %s", r.Tools, r.Read)
			}
			if len(r.Asked) != 1 || !strings.Contains(r.Asked[0], "github__github_create_issue") || !strings.Contains(r.Asked[0], "From TypeScript") {
				t.Errorf("asked %q", r.Asked)
			}
			if r.Confirmed.IsError || len(r.Confirmed.StructuredContent) == 0 {
				t.Errorf("the confirmed call: %s", r.Confirmed.Content)
			}
			if n := f.upstreamCount() - before; n != 2 {
				t.Errorf("%d upstream requests, want the read and the confirmed write", n)
			}
		})
	}
}
