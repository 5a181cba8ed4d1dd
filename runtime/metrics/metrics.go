// Package metrics is the gateway's Prometheus instrumentation: calls by
// connector, tool, decision and upstream status, call and upstream-leg
// latency, token, vault and upstream errors, and the open MCP sessions.
//
// A nil *Metrics is valid and records nothing, so a gateway without metrics
// pays one nil check per hook. Labels take only values the gateway bounds:
// connector ids and tool names of the served set, grant decisions, envelope
// and token error codes, HTTP status codes. A caller's subject, arguments or
// an unknown tool name never become a label value.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Unknown is the connector and tool label of a call naming no served tool,
// and its decision label.
const Unknown = "unknown_tool"

// NoStatus is the upstream_status label of a call that got no upstream
// answer (refused, dry run, transport failure).
const NoStatus = "none"

// Metrics holds the gateway's collectors in a registry of its own (never the
// process-global default one, so two gateways in one process do not clash).
type Metrics struct {
	reg             *prometheus.Registry
	calls           *prometheus.CounterVec
	callErrors      *prometheus.CounterVec
	callSeconds     *prometheus.HistogramVec
	upstreamSeconds *prometheus.HistogramVec
	upstreamErrors  *prometheus.CounterVec
	vaultErrors     *prometheus.CounterVec
	tokenErrors     *prometheus.CounterVec
}

// latencyBuckets span a fast local answer (1 ms) to the upstream timeout's
// order of magnitude (30 s).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns a Metrics whose registry also holds the Go runtime and process
// collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_tool_calls_total",
		Help: "Tool calls by connector, tool, grant decision and upstream HTTP status (\"none\" when no upstream answer).",
	}, []string{"connector", "tool", "decision", "upstream_status"})
	m.callErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_tool_call_errors_total",
		Help: "Tool calls that answered an error, by connector, tool and error code.",
	}, []string{"connector", "tool", "code"})
	m.callSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "anvil_tool_call_duration_seconds",
		Help:    "Whole tool call latency, from the executor's start to its answer.",
		Buckets: latencyBuckets,
	}, []string{"connector", "tool"})
	m.upstreamSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "anvil_upstream_request_duration_seconds",
		Help:    "Upstream leg latency: sending the request to reading the whole answer.",
		Buckets: latencyBuckets,
	}, []string{"connector", "tool"})
	m.upstreamErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_upstream_errors_total",
		Help: "Upstream exchanges that failed without an HTTP answer (timeout, connection, oversized body), by connector and error code.",
	}, []string{"connector", "code"})
	m.vaultErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_vault_errors_total",
		Help: "Upstream credentials the vault could not supply, by connector and error code.",
	}, []string{"connector", "code"})
	m.tokenErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_token_errors_total",
		Help: "Inbound bearer tokens refused, by error code.",
	}, []string{"code"})
	m.reg.MustRegister(m.calls, m.callErrors, m.callSeconds, m.upstreamSeconds,
		m.upstreamErrors, m.vaultErrors, m.tokenErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Call records one finished tool call. connector and tool are the served
// tool's (empty for a call naming no served tool, recorded as Unknown);
// status is the upstream's HTTP status, 0 when none; code is the error
// envelope's code, empty on success.
func (m *Metrics) Call(connector, tool, decision string, status int, code string, d time.Duration) {
	if m == nil {
		return
	}
	if tool == "" {
		connector, tool, decision = Unknown, Unknown, Unknown
	}
	m.calls.WithLabelValues(connector, tool, decision, statusLabel(status)).Inc()
	m.callSeconds.WithLabelValues(connector, tool).Observe(d.Seconds())
	if code != "" {
		m.callErrors.WithLabelValues(connector, tool, code).Inc()
	}
}

// Upstream records one upstream exchange: its latency, and code when it
// failed without an HTTP answer.
func (m *Metrics) Upstream(connector, tool string, d time.Duration, code string) {
	if m == nil {
		return
	}
	m.upstreamSeconds.WithLabelValues(connector, tool).Observe(d.Seconds())
	if code != "" {
		m.upstreamErrors.WithLabelValues(connector, code).Inc()
	}
}

// VaultError records a credential the vault could not supply.
func (m *Metrics) VaultError(connector, code string) {
	if m == nil {
		return
	}
	m.vaultErrors.WithLabelValues(connector, code).Inc()
}

// TokenError records a refused inbound token.
func (m *Metrics) TokenError(code string) {
	if m == nil {
		return
	}
	m.tokenErrors.WithLabelValues(code).Inc()
}

// Sessions exposes count as the gauge anvil_mcp_sessions, read at each
// scrape (nothing is paid per call). Call it once per Metrics.
func (m *Metrics) Sessions(count func() int) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "anvil_mcp_sessions",
		Help: "Open MCP sessions.",
	}, func() float64 { return float64(count()) }))
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// statusLabels are the labels of the HTTP status codes, made once so that
// a call's label costs no allocation.
var statusLabels = func() (l [600]string) {
	for i := 100; i < len(l); i++ {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

// statusLabel is the upstream_status label of status.
func statusLabel(status int) string {
	switch {
	case status <= 0:
		return NoStatus
	case status < len(statusLabels) && statusLabels[status] != "":
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}
