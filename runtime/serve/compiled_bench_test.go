package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/handler"
	"github.com/anvil-dev/anvil/runtime/serve"
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

// newBenchGateway serves the bench workspace; a non-nil transport replaces
// the network to the mock upstream.
func newBenchGateway(b *testing.B, compiled bool, transport http.RoundTripper) *benchGateway {
	b.Helper()
	dir := b.TempDir()
	key := authtest.NewKey("bench-key")
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		b.Fatal(err)
	}
	d, env, ln := newDoorFiles(b, "bench", jwks, 0)
	ln.Close()
	cfg, err := serve.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	cfg.Host = "127.0.0.1"
	var g *serve.Gateway
	if compiled {
		g, err = serve.NewGenerated(cfg, workspace.Workspace(), &serve.GatewayOptions{Transport: transport, Observe: benchObserve(b)})
	} else {
		g, err = serve.NewFromDir(cfg, "testdata/workspace", &serve.GatewayOptions{Transport: transport, Observe: benchObserve(b)})
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
	benchRESTOn(b, newBenchGateway(b, compiled, nil))
}

func benchRESTOn(b *testing.B, bg *benchGateway) {
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
	benchMCPOn(b, newBenchGateway(b, compiled, nil))
}

func benchMCPOn(b *testing.B, bg *benchGateway) {
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
	bg := newBenchGateway(b, false, nil)
	benchBareProxy(b, bg.mock, nil)
}

func benchBareProxy(b *testing.B, mock string, transport http.RoundTripper) {
	u, _ := url.Parse(mock)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = transport
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

// memoryUpstream answers every request with the mock's pulls list without
// a network, so BenchmarkOwnWork measures what each door adds by itself.
type memoryUpstream struct{}

func (memoryUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	const body = `[{"number":3,"title":"Fix the first issue","state":"merged"}]`
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, ProtoMajor: 1, ProtoMinor: 1, Request: r, ContentLength: int64(len(body)),
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Content-Length": {strconv.Itoa(len(body))}},
		Body:   io.NopCloser(strings.NewReader(body))}, nil
}

// BenchmarkOwnWork is one POST /call/github__github_list_pull (and one
// tools/call of it on an open MCP session) through the
// whole handler (token, body, grant, vault credential, request, effect,
// audit line, answer) with the upstream in memory, next to a bare
// httputil.ReverseProxy's handler on the same in-memory upstream: the CPU
// each adds to a call, without the network's wake-ups and copies that
// dominate the single-client latency of make load.
func BenchmarkOwnWork(b *testing.B) {
	b.Run("generic", func(b *testing.B) { benchRESTOn(b, newBenchGateway(b, false, memoryUpstream{})) })
	b.Run("generated", func(b *testing.B) { benchRESTOn(b, newBenchGateway(b, true, memoryUpstream{})) })
	b.Run("generic-mcp", func(b *testing.B) { benchMCPOn(b, newBenchGateway(b, false, memoryUpstream{})) })
	b.Run("generated-mcp", func(b *testing.B) { benchMCPOn(b, newBenchGateway(b, true, memoryUpstream{})) })
	b.Run("bare-proxy", func(b *testing.B) { benchBareProxy(b, "http://127.0.0.1:9", memoryUpstream{}) })
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
	pb := handler.ParseBase(base)
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			in, err := p.c.Decode(raw)
			if err != nil {
				b.Fatal(err)
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
