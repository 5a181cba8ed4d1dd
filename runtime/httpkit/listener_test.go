package httpkit

import (
	"strings"
	"testing"
	"time"
)

// TestHTTPLimitsFromEnv reads the ANVIL_HTTP_* variables and refuses bad values.
func TestHTTPLimitsFromEnv(t *testing.T) {
	env := map[string]string{"ANVIL_HTTP_HEADER_TIMEOUT_MS": "1500", "ANVIL_HTTP_BODY_TIMEOUT_MS": "2500",
		"ANVIL_HTTP_IDLE_TIMEOUT_MS": "60000", "ANVIL_HTTP_MAX_CONNS": "64"}
	l, err := LimitsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{HeaderTimeout: 1500 * time.Millisecond, BodyTimeout: 2500 * time.Millisecond, IdleTimeout: time.Minute, MaxConns: 64}
	if l != want {
		t.Errorf("%+v", l)
	}
	if d := (Limits{}).WithDefaults(); d.BodyTimeout > 30*time.Second || d.IdleTimeout > 2*time.Minute || d.MaxConns != DefaultMaxConns || d.HeaderTimeout != DefaultHeaderTimeout {
		t.Errorf("defaults %+v", d)
	}
	for _, k := range []string{"ANVIL_HTTP_HEADER_TIMEOUT_MS", "ANVIL_HTTP_BODY_TIMEOUT_MS", "ANVIL_HTTP_IDLE_TIMEOUT_MS", "ANVIL_HTTP_MAX_CONNS"} {
		for _, v := range []string{"0", "-1", "x", "1.5"} {
			if _, err := LimitsFromEnv(func(n string) string {
				if n == k {
					return v
				}
				return ""
			}); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=%s: %v", k, v, err)
			}
		}
	}
}
