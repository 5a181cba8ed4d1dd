package serve

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestObserveOffByDefault(t *testing.T) {
	obs, stop, err := observeFromEnv(envOf(nil), "branchyard", io.Discard, nil)
	defer stop()
	if err != nil || obs.Metrics != nil || obs.Route || obs.Tracer != nil {
		t.Fatalf("no variables: %+v, %v; want everything off", obs, err)
	}
}

func TestObserveRefusesMetricsOnPublicPort(t *testing.T) {
	_, stop, err := observeFromEnv(envOf(map[string]string{MetricsEnv: "1"}), "branchyard", io.Discard, nil)
	stop()
	if err == nil || !strings.Contains(err.Error(), MetricsAddrEnv) {
		t.Fatalf("ANVIL_METRICS=1 in branchyard mode: %v, want a refusal naming %s", err, MetricsAddrEnv)
	}
	obs, stop, err := observeFromEnv(envOf(map[string]string{MetricsEnv: "1"}), "none", io.Discard, nil)
	stop()
	if err != nil || obs.Metrics == nil || !obs.Route {
		t.Fatalf("ANVIL_METRICS=1 in mode none: %+v, %v", obs, err)
	}
	for _, bad := range []map[string]string{
		{MetricsEnv: "yes"},
		{MetricsAddrEnv: "127.0.0.1:notaport"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
	} {
		_, stop, err := observeFromEnv(envOf(bad), "none", io.Discard, nil)
		stop()
		if err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestObserveMetricsListener serves /metrics on ANVIL_METRICS_ADDR, and
// the readiness details at /readyz there, and nothing else.
func TestObserveMetricsListener(t *testing.T) {
	var log bytes.Buffer
	ready := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"ready":true,"bundles":[]}`) })
	obs, stop, err := observeFromEnv(envOf(map[string]string{MetricsAddrEnv: "127.0.0.1:0"}), "branchyard", &log, ready)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if obs.Route || obs.Metrics == nil {
		t.Fatalf("%+v: want metrics on their own listener only", obs)
	}
	m := regexp.MustCompile(`metrics at (http://\S+/metrics)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("log %q names no metrics URL", log.String())
	}
	obs.Metrics.TokenError("invalid_token")
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `anvil_token_errors_total{code="invalid_token"} 1`) {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(strings.TrimSuffix(m[1], "/metrics") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"bundles"`) {
		t.Fatalf("GET /readyz on the metrics listener: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(strings.TrimSuffix(m[1], "/metrics") + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET /mcp on the metrics listener: %d", resp.StatusCode)
	}
}

func TestObserveTracingLogsEndpoint(t *testing.T) {
	var log bytes.Buffer
	obs, stop, err := observeFromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}), "none", &log, nil)
	stop()
	if err != nil || obs.Tracer == nil || obs.Metrics != nil {
		t.Fatalf("%+v, %v: want tracing alone", obs, err)
	}
	if !strings.Contains(log.String(), "http://127.0.0.1:4318/v1/traces") {
		t.Errorf("startup log %q does not name the traces endpoint", log.String())
	}
}
