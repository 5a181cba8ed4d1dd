package serve

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/anvil-dev/anvil/runtime/metrics"
	"github.com/anvil-dev/anvil/runtime/tracing"
)

// otlpSpan is one span an OTLP receiver was sent.
type otlpSpan struct {
	name                    string
	traceID, spanID, parent string
}

// otlpReceiver is a loopback OTLP/HTTP trace receiver: it decodes the
// exporter's protobuf POSTs and keeps their spans.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []otlpSpan
	posts int
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != "POST" || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP receiver: %s %s (%s)", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "bad request", 400)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var msg collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			t.Errorf("OTLP receiver: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		r.mu.Lock()
		r.posts++
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans = append(r.spans, otlpSpan{name: s.Name, traceID: hex.EncodeToString(s.TraceId),
						spanID: hex.EncodeToString(s.SpanId), parent: hex.EncodeToString(s.ParentSpanId)})
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) received() []otlpSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]otlpSpan(nil), r.spans...)
}

// headerRecorder is a reverse proxy in front of the mock upstream that
// keeps each request's traceparent header.
type headerRecorder struct {
	mu     sync.Mutex
	target *url.URL
	seen   []string
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Get("Traceparent"))
	target := h.target
	h.mu.Unlock()
	httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
}

func (h *headerRecorder) traceparents() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// scrape parses the gateway's /metrics.
func scrape(t *testing.T, f *fleetFixture) map[string]*dto.MetricFamily {
	t.Helper()
	a := f.do("GET", "/metrics", "", "", "", nil)
	if a.status != 200 {
		t.Fatalf("/metrics: %d %s", a.status, a.body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(a.body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample is the value of the series of fam whose labels include want
// (counter, gauge, or a histogram's count); -1 when there is none.
func sample(fams map[string]*dto.MetricFamily, fam string, want map[string]string) float64 {
	mf := fams[fam]
	if mf == nil {
		return -1
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsAndTraces makes real calls over HTTP with metrics and tracing
// on: the counters move, the upstream gets a traceparent of the call's
// trace, and the audit line's trace id is the exported span's.
func TestMetricsAndTraces(t *testing.T) {
	recv := newOTLPReceiver(t)
	tr, err := tracing.FromEnv(func(k string) string {
		if k == tracing.EndpointEnv {
			return recv.URL
		}
		return ""
	})
	if err != nil || tr == nil {
		t.Fatalf("tracing.FromEnv: %v, %v", tr, err)
	}
	rec := &headerRecorder{}
	proxy := httptest.NewServer(rec)
	t.Cleanup(proxy.Close)
	f := newFleetFixture(t, &fleetOptions{
		observe: Observe{Metrics: metrics.New(), Route: true, Tracer: tr},
		edit: func(cfg *Config) {
			cfg.Getenv = func(k string) string {
				if k == "ANVIL_UPSTREAM_GITHUB_URL" {
					return proxy.URL
				}
				return ""
			}
		},
	})
	rec.target, _ = url.Parse(f.mock.URL)

	const tool = "github__github_list_issue"
	const args = `{"arguments":{"owner":"octo","repo":"hello"}}`
	// A call sent with the caller's traceparent: the gateway's trace is its
	// own, linked to the caller's (parent_trace_id in the audit line).
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	h := http.Header{"Traceparent": {"00-" + callerTrace + "-" + callerSpan + "-01"}}
	if a := f.call(f.turn(fxReadGrant), tool, args, h); a.status != 200 {
		t.Fatalf("call: %d %s", a.status, a.body)
	}
	// A call starting its own trace, and one the grant refuses.
	if a := f.call(f.turn(fxReadGrant), tool, args, nil); a.status != 200 {
		t.Fatalf("call: %d %s", a.status, a.body)
	}
	other := []any{map[string]any{"connector": "tracker", "operations": []any{"*"}, "mode": "read"}}
	if a := f.call(f.turn(other), tool, args, nil); a.status != 403 {
		t.Fatalf("refused call: %d %s", a.status, a.body)
	}
	if a := f.call("not-a-token", tool, args, nil); a.status != 401 {
		t.Fatalf("bad token: %d %s", a.status, a.body)
	}
	s := f.rawInitialize(f.turn(fxReadGrant))
	// tools/call on /mcp the same, on the fast path and on the path the
	// MCP SDK answers; the first sends the same caller trace as the REST
	// call, and still gets a trace (an audit id) of its own.
	mcpTraces := []string{callerTrace, "6bf92f3577b34da6a3ce929d0e0e4738"}
	for i, trace := range mcpTraces {
		f.g.mcp.SetFastPath(i != 1)
		h := mcpHeaders(s.bearer, s.id)
		h.Set("Traceparent", "00-"+trace+"-"+callerSpan+"-01")
		body := `{"jsonrpc":"2.0","id":` + itoa(10+i) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"owner":"octo","repo":"hello"}}}`
		if a := f.do("POST", "/mcp", s.bearer, "application/json", body, h); a.status != 200 || !strings.Contains(a.body, `"structuredContent"`) || strings.Contains(a.body, `"isError":true`) {
			t.Fatalf("MCP tools/call (slow %v): %d %s", i == 1, a.status, a.body)
		}
	}
	f.g.mcp.SetFastPath(true)

	fams := scrape(t, f)
	for _, c := range []struct {
		fam    string
		labels map[string]string
		want   float64
	}{
		{"anvil_tool_calls_total", map[string]string{"connector": "github", "tool": tool, "decision": "allowed", "upstream_status": "200"}, 4},
		{"anvil_tool_calls_total", map[string]string{"connector": "github", "tool": tool, "decision": "denied", "upstream_status": "none"}, 1},
		{"anvil_tool_call_errors_total", map[string]string{"connector": "github", "tool": tool, "code": "policy_denied"}, 1},
		{"anvil_tool_call_duration_seconds", map[string]string{"connector": "github", "tool": tool}, 5},
		{"anvil_upstream_request_duration_seconds", map[string]string{"connector": "github", "tool": tool}, 4},
		{"anvil_token_errors_total", map[string]string{"code": "invalid_token"}, 1},
		{"anvil_mcp_sessions", nil, 1},
	} {
		if got := sample(fams, c.fam, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.fam, c.labels, got, c.want)
		}
	}
	_ = s.close()
	if got := sample(scrape(t, f), "anvil_mcp_sessions", nil); got != 0 {
		t.Errorf("anvil_mcp_sessions after close = %v, want 0", got)
	}
	for name := range fams {
		if strings.Contains(name, "sub") {
			t.Errorf("metric %s", name)
		}
	}
	if strings.Contains(f.do("GET", "/metrics", "", "", "", nil).body, fxSub) {
		t.Errorf("/metrics names the caller's subject %q", fxSub)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("flush spans: %v", err)
	}
	spans := recv.received()
	_, lines := f.auditLines()
	if len(lines) != 5 {
		t.Fatalf("audit lines: %d, want 5", len(lines))
	}
	parents := rec.traceparents()
	if len(parents) != 4 {
		t.Fatalf("upstream requests: %d, want 4", len(parents))
	}
	// The denied REST call sent nothing upstream: the MCP calls' requests
	// are the third and fourth.
	upstreamOf := map[int]int{0: 0, 1: 1, 3: 2, 4: 3}
	byID := map[string]otlpSpan{}
	for _, sp := range spans {
		byID[sp.spanID] = sp
	}
	seen := map[string]bool{}
	for i, line := range lines {
		id, _ := line["trace_id"].(string)
		traceHex, ok := strings.CutPrefix(id, "trace_")
		if !ok {
			t.Fatalf("audit line %d trace_id %q", i, id)
		}
		var call *otlpSpan
		for _, sp := range spans {
			if sp.traceID == traceHex && sp.name == "tools/call "+tool {
				call = &sp
			}
		}
		if call == nil {
			t.Fatalf("audit line %d: no exported tools/call span of trace %s in %+v", i, traceHex, spans)
		}
		if seen[traceHex] {
			t.Errorf("audit line %d repeats trace id %s", i, traceHex)
		}
		seen[traceHex] = true
		if call.parent != "" {
			t.Errorf("call %d: span parent %q, want the root of the gateway's own trace", i, call.parent)
		}
		parent, _ := line["parent_trace_id"].(string)
		if i == 0 && (traceHex == callerTrace || parent != "trace_"+callerTrace) {
			t.Errorf("first call: trace %s parent_trace_id %q, want a new trace with the caller's %s as parent", traceHex, parent, callerTrace)
		}
		if i == 1 && (traceHex == callerTrace || line["parent_trace_id"] != nil) {
			t.Errorf("second call: trace %s parent_trace_id %v, want a new root trace and none", traceHex, line["parent_trace_id"])
		}
		if i >= 3 && (traceHex == mcpTraces[i-3] || parent != "trace_"+mcpTraces[i-3]) {
			t.Errorf("MCP call %d: trace %s parent_trace_id %q, want a new trace with parent %s", i-3, traceHex, parent, mcpTraces[i-3])
		}
		if u, sent := upstreamOf[i]; sent {
			// The upstream got a traceparent naming this trace and the
			// call's upstream client span, a child of the call's span.
			parts := strings.Split(parents[u], "-")
			if len(parts) != 4 || parts[1] != traceHex {
				t.Fatalf("upstream traceparent %q, want trace %s", parents[u], traceHex)
			}
			up, ok := byID[parts[2]]
			if !ok || up.parent != call.spanID || up.name != "GET" {
				t.Errorf("upstream span %s = %+v, want a GET child of %s", parts[2], up, call.spanID)
			}
		}
	}
	if recv.posts == 0 {
		t.Error("no OTLP export")
	}
}

// TestMetricsCountVaultAndUpstreamErrors: a call whose person has not
// connected counts a vault error; one whose upstream refuses the
// connection counts an upstream error, both over HTTP.
func TestMetricsCountVaultAndUpstreamErrors(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there any more
	const tool = "github__github_list_issue"
	const args = `{"arguments":{"owner":"octo","repo":"hello"}}`

	f := newFleetFixture(t, &fleetOptions{noConnect: true, observe: Observe{Metrics: metrics.New(), Route: true}})
	if a := f.call(f.turn(fxReadGrant), tool, args, nil); a.status == 200 {
		t.Fatalf("unconnected call: %d %s", a.status, a.body)
	}
	code := f.call(f.turn(fxReadGrant), tool, args, nil).errCode()
	if got := sample(scrape(t, f), "anvil_vault_errors_total", map[string]string{"connector": "github", "code": code}); got != 2 {
		t.Errorf("anvil_vault_errors_total{code=%q} = %v, want 2", code, got)
	}

	g := newFleetFixture(t, &fleetOptions{observe: Observe{Metrics: metrics.New(), Route: true},
		edit: func(cfg *Config) {
			cfg.Getenv = func(k string) string {
				if k == "ANVIL_UPSTREAM_GITHUB_URL" {
					return deadURL
				}
				return ""
			}
		}})
	a := g.call(g.turn(fxReadGrant), tool, args, nil)
	fams := scrape(t, g)
	if got := sample(fams, "anvil_upstream_errors_total", map[string]string{"connector": "github", "code": a.errCode()}); a.errCode() != "upstream_unavailable" || got != 1 {
		t.Errorf("refused upstream: %s, anvil_upstream_errors_total = %v, want upstream_unavailable counted once", a.errCode(), got)
	}
	if got := sample(fams, "anvil_tool_calls_total", map[string]string{"tool": tool, "upstream_status": "none"}); got != 1 {
		t.Errorf("anvil_tool_calls_total{upstream_status=none} = %v, want 1", got)
	}
}
