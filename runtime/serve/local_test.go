package serve

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// TestAuthModeNone: on loopback without inbound auth every caller is the
// local person, unrestricted by grants, and the vault holds its connections
// under sub "local".
func TestAuthModeNone(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(cfg *Config) { cfg.Auth = auth.Config{Mode: auth.ModeNone} }})
	a := f.do("POST", "/connect/api-key", "", "application/json", `{"connector":"github","api_key":"`+fxUpstream+`"}`, nil)
	if a.status != 200 {
		t.Fatalf("/connect/api-key: %d %s", a.status, a.body)
	}
	if a := f.do("GET", "/connect/status", "", "", "", nil); a.status != 200 || !strings.HasPrefix(a.body, `{"sub":"local","connections":[{"connector":"github"`) {
		t.Errorf("/connect/status: %d %s", a.status, a.body)
	}
	s := f.rawInitialize("")
	defer s.close()
	if n := len(s.toolNames()); n != 12 {
		t.Errorf("tools/list shows %d tools, want all 12", n)
	}
	res := s.callTool("github__github_create_issue", map[string]any{"owner": "octo", "repo": "hello", "title": "local", "confirm": true}, nil)
	if res["isError"] == true {
		t.Fatalf("create issue: %v", res)
	}
	if a := f.call("", "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil); a.status != 200 || !strings.Contains(a.body, `"title":"local"`) {
		t.Errorf("/call: %d %s", a.status, a.body)
	}
	_, lines := f.auditLines()
	if len(lines) != 2 || lines[0]["sub"] != "local" || lines[0]["grant"] != nil || lines[0]["decision"] != "allowed" || lines[0]["by_turn"] != nil {
		t.Errorf("audit: %v", lines)
	}
}

// TestServeStdio serves the fleet over stdin/stdout to the official SDK
// client as the local, unrestricted caller.
func TestServeStdio(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(cfg *Config) { cfg.Auth = auth.Config{Mode: auth.ModeNone} }})
	f.connectKey("github", "", fxUpstream) // mode none: the connect routes take no token
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.g.ServeStdio(ctx, inR, outW); outW.Close() }()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := cs.ListTools(ctx, nil)
	if err != nil || len(lr.Tools) != 12 {
		t.Fatalf("tools/list: %v %d", err, len(lr.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_pull", Arguments: map[string]any{"owner": "o", "repo": "r"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	if rep, _ := res.Meta["effect"].(map[string]any); rep["class"] != "read" {
		t.Errorf("effect: %v", res.Meta)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_pull", Arguments: map[string]any{"owner": "o", "repo": "r"}}); err != nil || res.IsError {
		t.Fatalf("second call: %v %v", err, res)
	}
	// Another process (anvil connect) replaces the stored key: the very next
	// call uses the new one.
	key, err := vault.LoadKey(f.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	other, err := vault.Open(f.vaultDir, key)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Get("local", "github", "default")
	if err != nil {
		t.Fatal(err)
	}
	conn.Secret = "not-the-upstream-key"
	if err := other.Put(conn); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_pull", Arguments: map[string]any{"owner": "o", "repo": "r"}})
	if err != nil || !res.IsError {
		t.Fatalf("a call after the key was replaced: %v %v", err, res)
	}
	cs.Close()
	inW.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("ServeStdio did not return when stdin closed")
	}
}
