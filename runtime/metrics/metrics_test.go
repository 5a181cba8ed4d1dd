package metrics

import (
	"io"
	"maps"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNilRecordsNothing(t *testing.T) {
	var m *Metrics
	m.Call("github", "github__list", "allowed", 200, "", time.Millisecond)
	m.Upstream("github", "github__list", time.Millisecond, "upstream_timeout")
	m.VaultError("github", "auth_required")
	m.TokenError("invalid_token")
	m.Sessions(func() int { return 1 })
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestLabelsStayBounded: a call naming no served tool is counted under
// Unknown (never under the name the caller sent), and a call without an
// upstream answer under NoStatus.
func TestLabelsStayBounded(t *testing.T) {
	m := New()
	m.Call("", "", "allowed", 0, "not_found", 3*time.Millisecond)
	m.Call("github", "github__list", "allowed", 0, "upstream_timeout", time.Second)
	m.Upstream("github", "github__list", time.Second, "upstream_timeout")
	m.VaultError("github", "auth_required")
	n := 2
	m.Sessions(func() int { return n })
	out := scrape(t, m)
	for _, want := range []string{
		`anvil_tool_calls_total{connector="unknown_tool",decision="unknown_tool",tool="unknown_tool",upstream_status="none"} 1`,
		`anvil_tool_call_errors_total{code="not_found",connector="unknown_tool",tool="unknown_tool"} 1`,
		`anvil_tool_calls_total{connector="github",decision="allowed",tool="github__list",upstream_status="none"} 1`,
		`anvil_upstream_errors_total{code="upstream_timeout",connector="github"} 1`,
		`anvil_upstream_request_duration_seconds_count{connector="github",tool="github__list"} 1`,
		`anvil_vault_errors_total{code="auth_required",connector="github"} 1`,
		`anvil_mcp_sessions 2`,
		`go_goroutines `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestDocumentedMetrics: docs/observability.md names exactly the metrics
// the registry serves.
func TestDocumentedMetrics(t *testing.T) {
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("\\| `(anvil_[a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	m := New()
	m.Sessions(func() int { return 0 })
	m.Call("c", "t", "allowed", 200, "x", 0)
	m.Upstream("c", "t", 0, "x")
	m.VaultError("c", "x")
	m.TokenError("x")
	served := map[string]bool{}
	for _, f := range regexp.MustCompile(`(?m)^# TYPE (anvil_[a-z_]+) `).FindAllStringSubmatch(scrape(t, m), -1) {
		served[f[1]] = true
	}
	if len(served) == 0 || !maps.Equal(documented, served) {
		t.Errorf("documented %v, served %v", slices.Sorted(maps.Keys(documented)), slices.Sorted(maps.Keys(served)))
	}
}
