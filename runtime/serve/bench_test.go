package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/executor"
)

// The benchmarks compare one read call (github.pulls.list) made four ways
// against the same mock upstream on loopback:
//
//   - Direct: the mock itself, with its bearer;
//   - ReverseProxy: through a bare httputil.ReverseProxy with a tuned
//     transport (the floor any gateway pays for a hop);
//   - GatewayREST: POST /call/<tool> through the gateway (JWT verification,
//     grant, vault credential, upstream call, effect report, audit line);
//   - GatewayMCP: tools/call on an open MCP session, the same work plus
//     JSON-RPC.
//
// Each has a sequential variant (single-client latency, ns/op) and a
// Parallel one (b.RunParallel, throughput). BenchmarkExecutor is the
// gateway's own work per call without the network. `make load` runs the load
// generator (internal/loadgen) for req/s at 64 connections and p50/p99.

// benchTransport is the tuned client transport every variant uses.
func benchTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// benchRequest is a prepared request sent many times.
type benchRequest struct {
	method, url string
	header      http.Header
	body        []byte
	// bodyFor, when set, makes the body of the i-th request (JSON-RPC ids
	// must differ between concurrent requests of one session).
	bodyFor func(i int64) []byte
	n       atomic.Int64
}

func (r *benchRequest) send(b *testing.B, c *http.Client) {
	body := r.body
	if r.bodyFor != nil {
		body = r.bodyFor(r.n.Add(1))
	}
	req, err := http.NewRequest(r.method, r.url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header = r.header
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s %s: status %d", r.method, r.url, resp.StatusCode)
	}
}

func runBench(b *testing.B, r *benchRequest) {
	c := &http.Client{Transport: benchTransport()}
	defer c.CloseIdleConnections()
	r.send(b, c) // warm the connection and caches
	b.Run("Sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.send(b, c)
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.send(b, c)
			}
		})
	})
}

func BenchmarkCall(b *testing.B) {
	f := newFleetFixture(b, nil)
	tok := f.turn(fxReadGrant)
	upstreamHeader := http.Header{"Authorization": {"Bearer " + fxUpstream}, "Accept": {"application/json"}}

	b.Run("Direct", func(b *testing.B) {
		runBench(b, &benchRequest{method: "GET", url: f.mock.URL + "/repos/octo/hello/pulls", header: upstreamHeader})
	})

	b.Run("ReverseProxy", func(b *testing.B) {
		target, _ := url.Parse(f.mock.URL)
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.Transport = benchTransport()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: rp}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		runBench(b, &benchRequest{method: "GET", url: "http://" + ln.Addr().String() + "/repos/octo/hello/pulls", header: upstreamHeader})
	})

	b.Run("GatewayREST", func(b *testing.B) {
		runBench(b, &benchRequest{method: "POST", url: f.base + "/call/github__github_list_pull",
			header: http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"}},
			body:   []byte(`{"arguments":{"owner":"octo","repo":"hello"}}`)})
	})

	b.Run("GatewayMCP", func(b *testing.B) {
		s := f.rawInitialize(tok)
		defer s.close()
		h := mcpHeaders(tok, s.id)
		h.Set("Authorization", "Bearer "+tok)
		h.Set("Content-Type", "application/json")
		runBench(b, &benchRequest{method: "POST", url: f.aud, header: h, bodyFor: func(i int64) []byte {
			return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(i, 10) +
				`,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"octo","repo":"hello"}}}`)
		}})
	})
}

// cannedUpstream answers every request with the mock's pulls list, in
// memory, so BenchmarkExecutor measures the gateway's own work.
type cannedUpstream struct{}

func (cannedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(`[{"number":3,"title":"Fix the first issue","state":"merged"}]`))}, nil
}

// BenchmarkExecutor is one granted read through Executor.Call alone (grant,
// validation, vault credential, request building, effect report and the
// audit line) with an in-memory upstream: the gateway's cost per call
// without the network.
func BenchmarkExecutor(b *testing.B) {
	f := newFleetFixture(b, nil)
	g, err := NewFromDir(f.config(1), f.ws, &GatewayOptions{Transport: cannedUpstream{}})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/call/github__github_list_pull", nil)
	r.Header.Set("Authorization", "Bearer "+f.turn(fxReadGrant))
	c, refused := g.ident.Authenticate(context.Background(), r)
	if refused != nil {
		b.Fatal(refused.Message)
	}
	p := c.Principal
	args := json.RawMessage(`{"owner":"octo","repo":"hello"}`)
	b.ReportAllocs()
	for b.Loop() {
		if out := g.exec.Call(context.Background(), executor.Call{Tool: "github__github_list_pull", Args: args, Principal: p}); out.Err != nil {
			b.Fatal(out.Err.Message)
		}
	}
}
