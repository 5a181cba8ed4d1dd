package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/gateway"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// The benchmarks serve one call of github__github_list_pull (a read that
// reaches the mock upstream over loopback) through the gateway's handler,
// generic and generated, in branchyard mode with a vault and an audit log,
// and a bare httputil.ReverseProxy in front of the same mock for scale.
// Allocations per call are the gateway's own plus its upstream client's.
// internal/loadgen (make load) measures the same targets over the network
// with many connections.

// benchGateway is a gateway handler with a stored connection and a token.
type benchGateway struct {
	h     http.Handler
	token string
	mock  string
}

func newBenchGateway(b *testing.B, compiled bool) *benchGateway {
	b.Helper()
	dir := b.TempDir()
	key := authtest.NewKey("bench-key")
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		b.Fatal(err)
	}
	d, env, ln := newDoorFiles(b, "bench", jwks, 0)
	ln.Close()
	cfg, err := gateway.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	cfg.Workspace, cfg.Host = "testdata/workspace", "127.0.0.1"
	var g *gateway.Gateway
	if compiled {
		g, err = gateway.NewCompiled(cfg, workspace.Workspace(), nil)
	} else {
		g, err = gateway.New(cfg, nil)
	}
	if err != nil {
		b.Fatal(err)
	}
	tokens := dfTokens(key, key, d.aud, time.Now().Unix())
	bg := &benchGateway{h: g.Handler(), token: tokens["read"], mock: d.mock.URL}
	rec := bg.do(b, "POST", "/connect/api-key", tokens["connect"], "", `{"connector":"github","api_key":"`+dfUpstream+`"}`)
	if rec.Code != 200 {
		b.Fatalf("connect: %d %s", rec.Code, rec.Body)
	}
	return bg
}

func (bg *benchGateway) do(b *testing.B, method, path, token, session, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if path == "/mcp" {
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
	}
	rec := httptest.NewRecorder()
	bg.h.ServeHTTP(rec, req)
	return rec
}

func benchREST(b *testing.B, compiled bool) {
	bg := newBenchGateway(b, compiled)
	const body = `{"arguments":{"owner":"octo","repo":"hello"}}`
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rec := bg.do(b, "POST", "/call/github__github_list_pull", bg.token, "", body); rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

func benchMCP(b *testing.B, compiled bool) {
	bg := newBenchGateway(b, compiled)
	rec := bg.do(b, "POST", "/mcp", bg.token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != 200 || sid == "" {
		b.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	bg.do(b, "POST", "/mcp", bg.token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"octo","repo":"hello"}}}`
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rec := bg.do(b, "POST", "/mcp", bg.token, sid, call); rec.Code != 200 || strings.Contains(rec.Body.String(), `"isError":true`) {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkDoorsREST is POST /call/<tool>.
func BenchmarkDoorsREST(b *testing.B) {
	b.Run("generic", func(b *testing.B) { benchREST(b, false) })
	b.Run("generated", func(b *testing.B) { benchREST(b, true) })
}

// BenchmarkDoorsMCP is tools/call on an open session.
func BenchmarkDoorsMCP(b *testing.B) {
	b.Run("generic", func(b *testing.B) { benchMCP(b, false) })
	b.Run("generated", func(b *testing.B) { benchMCP(b, true) })
}

// BenchmarkDoorsBareProxy is the same upstream request through a bare
// httputil.ReverseProxy.
func BenchmarkDoorsBareProxy(b *testing.B) {
	bg := newBenchGateway(b, false)
	u, _ := url.Parse(bg.mock)
	rp := httputil.NewSingleHostReverseProxy(u)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("GET", "http://127.0.0.1/repos/octo/hello/pulls", nil)
		req.Header.Set("Authorization", "Bearer "+dfUpstream)
		req.Header.Set("Accept", "application/json")
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCompiledHandlers is the part the generator replaces, alone:
// decode, validate, hash and build the upstream request of a comment, the
// generic way (decodeArgs-like decoding, the JSON Schema validator,
// audit.InputSHA256, upstream.BuildRequest) and the generated way.
func BenchmarkCompiledHandlers(b *testing.B) {
	pairs, _ := compiledPairs(b)
	var p pair
	for _, x := range pairs {
		if x.op.ID == "github.comments.create" {
			p = x
		}
	}
	raw := []byte(`{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good.","idempotency_key":"01JLEDGER0001"}`)
	base := "http://127.0.0.1:9"
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			args := decodeNumbers(b, raw)
			if err := p.schema.Validate(args); err != nil {
				b.Fatal(err)
			}
			_ = auditHash(args)
			if _, err := buildGeneric(p, base, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	pb := gateway.ParseBase(base)
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			in, ok := p.c.Decode(raw)
			if !ok {
				b.Fatal("not decoded")
			}
			_ = in.InputSHA256()
			if _, err := p.c.Build(b.Context(), pb, in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func auditHash(args map[string]any) string { return audit.InputSHA256(args) }

func buildGeneric(p pair, base string, args map[string]any) (*http.Request, error) {
	return upstream.BuildRequest(context.Background(), base, p.op, args)
}
