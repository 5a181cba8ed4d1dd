package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/metrics"
	"github.com/anvil-dev/anvil/runtime/serve"
	"github.com/anvil-dev/anvil/runtime/tracing"
)

// benchObserve is the metrics and tracing of a benchmark gateway, from
// ANVIL_BENCH_OBSERVE ("metrics", "tracing" or "metrics,tracing"; empty:
// off), so one benchmark measures the cost of each: tracing exports over
// OTLP/HTTP to a loopback receiver that reads and drops every batch.
func benchObserve(b *testing.B) serve.Observe {
	var o serve.Observe
	want := os.Getenv("ANVIL_BENCH_OBSERVE")
	if strings.Contains(want, "metrics") {
		o.Metrics = metrics.New()
	}
	if strings.Contains(want, "tracing") {
		sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		b.Cleanup(sink.Close)
		tr, err := tracing.FromEnv(func(k string) string {
			if k == tracing.EndpointEnv {
				return sink.URL
			}
			return ""
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = tr.Shutdown(ctx)
		})
		o.Tracer = tr
	}
	return o
}
