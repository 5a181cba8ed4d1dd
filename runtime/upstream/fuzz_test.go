package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// FuzzBuildRequest checks that any path and query argument gives a request
// whose path keeps the argument inside its own segment, or a coded error,
// never a panic.
func FuzzBuildRequest(f *testing.F) {
	for _, s := range []string{"octo", "a/b", "..", ".", "a b?c#d", "%2F", "ø", "\x00\r\n", ""} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, owner, state string) {
		req, err := BuildRequest(context.Background(), "https://api.github.example/v3", listIssues(),
			map[string]any{"owner": owner, "repo": "hello", "state": state})
		if err != nil {
			if AsEnvelope(err).Code == "" {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		segs := strings.Split(req.URL.EscapedPath(), "/")
		if len(segs) != 6 || segs[3] == "." || segs[3] == ".." {
			t.Fatalf("owner %q escaped its segment: %s", owner, req.URL.EscapedPath())
		}
		if got, err := url.PathUnescape(segs[3]); err != nil || got != owner {
			t.Fatalf("owner %q round-tripped as %q (%v)", owner, got, err)
		}
		if state != "" {
			if got := req.URL.Query().Get("state"); got != state {
				t.Fatalf("state %q round-tripped as %q", state, got)
			}
		}
	})
}

// FuzzDecodeBody checks ErrorFor never panics on any JSON error body.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{`{"message":"Bad credentials"}`, `{"error":{"code":1}}`, `[1]`, `"x"`, `{"error":"invalid_grant","error_description":"token abc"}`} {
		f.Add(s, 400)
	}
	f.Fuzz(func(t *testing.T, body string, status int) {
		compact, ok := compactBody("application/json", []byte(body))
		if ok != json.Valid([]byte(body)) && len(bytes.TrimSpace([]byte(body))) > 0 {
			t.Fatalf("compactBody says %v for %q", ok, body)
		}
		if ok && !json.Valid(compact) {
			t.Fatalf("compacted %q into invalid JSON %q", body, compact)
		}
		if status < 100 || status > 599 {
			status = 500
		}
		_ = ErrorFor(&Response{Status: status, Body: []byte(body), IsJSON: ok, Compact: compact}, listIssues(), "secret-value")
	})
}
