package frontdoor

import (
	"errors"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/metrics"
	"github.com/anvil-dev/anvil/runtime/tracing"
)

// Observe is a gateway's metrics and tracing (docs/observability.md).
type Observe struct {
	// Metrics records calls, upstream legs, token, vault and upstream
	// errors and MCP sessions; nil records nothing.
	Metrics *metrics.Metrics
	// Route serves Metrics at /metrics on the gateway's own listener (the
	// command line allows it only in auth mode none; otherwise metrics get a
	// listener of their own, ANVIL_METRICS_ADDR).
	Route bool
	// Tracer traces calls and continues an incoming traceparent; nil traces
	// nothing.
	Tracer *tracing.Tracer
}

// observe wires o into the gateway's executor and routes.
func (g *Gateway) observe(o Observe) {
	g.exec.Metrics = o.Metrics
	g.exec.Tracer = o.Tracer
	if o.Metrics == nil {
		return
	}
	o.Metrics.Sessions(g.mcp.sessionCount)
	if o.Route {
		g.metricsRoute = o.Metrics.Handler()
	}
}

// sessionCount is the number of open MCP sessions (read at each scrape).
func (m *mcpServer) sessionCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// tokenErrorCode is the bounded label of a refused token: its auth code.
func tokenErrorCode(err error) string {
	var e *auth.Error
	if errors.As(err, &e) && e != nil {
		return e.Code
	}
	return auth.CodeInvalidToken
}
