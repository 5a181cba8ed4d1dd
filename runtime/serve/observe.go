package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

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

// The variables that turn metrics on (docs/observability.md).
const (
	// MetricsEnv=1 serves /metrics on the gateway's own listener; allowed
	// only in auth mode none, whose listener is loopback-only.
	MetricsEnv = "ANVIL_METRICS"
	// MetricsAddrEnv=host:port serves /metrics on a listener of its own.
	MetricsAddrEnv = "ANVIL_METRICS_ADDR"
)

// observeFromEnv builds the gateway's metrics and tracing from the
// environment and starts the separate metrics listener. Both are off unless
// asked for. stop flushes the spans not yet exported and closes the metrics
// listener; it is never nil.
//
// The metrics listener also answers GET /readyz with its details (the
// gateway's port answers the status only without a token in branchyard
// mode): ready serves it, the loading answer until set to the gateway's
// ReadyDetails.
func observeFromEnv(getenv func(string) string, authMode string, stderr io.Writer, ready http.Handler) (obs Observe, stop func(), err error) {
	stops := []func(){}
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	onMain := strings.TrimSpace(getenv(MetricsEnv))
	addr := strings.TrimSpace(getenv(MetricsAddrEnv))
	switch onMain {
	case "", "0":
	case "1":
		// The gateway's port in branchyard mode is public; tool names and
		// traffic would be readable there without a token.
		if authMode == "branchyard" {
			return obs, stop, fmt.Errorf("%s=1 serves /metrics on the gateway's public port, which branchyard mode does not allow: set %s=<private host:port> instead", MetricsEnv, MetricsAddrEnv)
		}
		obs.Route = true
	default:
		return obs, stop, fmt.Errorf("%s must be 1 or 0, not %q", MetricsEnv, onMain)
	}
	if obs.Route || addr != "" {
		obs.Metrics = metrics.New()
	}
	if addr != "" {
		ln, lerr := net.Listen("tcp", addr)
		if lerr != nil {
			return obs, stop, fmt.Errorf("%s: cannot listen on %s: %v", MetricsAddrEnv, addr, lerr)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", obs.Metrics.Handler())
		if ready != nil {
			mux.Handle("GET /readyz", ready)
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		stops = append(stops, func() { _ = srv.Close() })
		fmt.Fprintf(stderr, "anvil: metrics at http://%s/metrics\n", ln.Addr())
	}
	tr, terr := tracing.FromEnv(getenv)
	if terr != nil {
		return obs, stop, terr
	}
	if tr != nil {
		obs.Tracer = tr
		fmt.Fprintf(stderr, "anvil: tracing on, spans exported over OTLP/HTTP to %s\n", tr.Endpoint())
		stops = append(stops, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(stderr, "anvil: trace export on shutdown: %v\n", err)
			}
		})
	}
	return obs, stop, nil
}
