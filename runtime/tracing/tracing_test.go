package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFromEnvOffWithoutEndpoint(t *testing.T) {
	tr, err := FromEnv(func(string) string { return "" })
	if tr != nil || err != nil {
		t.Fatalf("FromEnv with no endpoint: %v, %v; want nil, nil", tr, err)
	}
	for _, bad := range []string{"localhost:4318", "ftp://x/v1/traces", "http://"} {
		if _, err := FromEnv(func(k string) string {
			if k == TracesEndpointEnv {
				return bad
			}
			return ""
		}); err == nil || !strings.Contains(err.Error(), TracesEndpointEnv) {
			t.Errorf("%s=%q: %v, want an error naming it", TracesEndpointEnv, bad, err)
		}
	}
}

// TestEndpointPaths: the traces endpoint is used as given, the general one
// gets /v1/traces, and the traces one wins when both are set.
func TestEndpointPaths(t *testing.T) {
	paths := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
	}))
	defer srv.Close()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EndpointEnv: srv.URL + "/"}, "/v1/traces"},
		{map[string]string{EndpointEnv: srv.URL + "/base", TracesEndpointEnv: srv.URL + "/custom"}, "/custom"},
	} {
		tr, err := FromEnv(func(k string) string { return c.env[k] })
		if err != nil || tr == nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		_, span, _ := tr.StartCall(context.Background())
		span.End()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = tr.Shutdown(ctx)
		cancel()
		select {
		case p := <-paths:
			if p != c.want {
				t.Errorf("%v: exported to %s, want %s", c.env, p, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: nothing exported", c.env)
		}
	}
}
