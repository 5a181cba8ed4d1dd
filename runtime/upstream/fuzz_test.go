package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
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
		if len(segs) != 6 || !KeepsPathShape(req.URL.EscapedPath()) {
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

// FuzzPathValueShape: whatever array or object is given, in every style, a
// path parameter that fills a whole segment either is refused or leaves the
// path's segments as the template has them, none of them empty or a dot
// segment (issue 15, finding 8).
func FuzzPathValueShape(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a", "\x00", ".\x00.", "a\x00\x00", "\x00\x00", "/", "%2e"} {
		f.Add(s, byte(0))
	}
	styles := []string{"", "simple", "label", "matrix"}
	f.Fuzz(func(t *testing.T, elems string, shape byte) {
		// elems holds the elements separated by NUL bytes.
		parts := strings.Split(elems, "\x00")
		var v any
		if shape&1 == 0 {
			arr := make([]any, len(parts))
			for i, p := range parts {
				arr[i] = p
			}
			v = arr
		} else {
			obj := map[string]any{}
			for i := 0; i+1 < len(parts); i += 2 {
				obj[parts[i]] = parts[i+1]
			}
			v = obj
		}
		style := styles[int(shape>>1)%len(styles)]
		explode := shape&0x80 != 0
		s, ok := PathValue(v, "id", style, explode)
		if !ok {
			return
		}
		p := "/repos/" + s + "/issues"
		segs := strings.Split(p, "/")
		if len(segs) != 4 || !SafePathSegment(segs[2]) || path.Clean(p) != p {
			t.Fatalf("%s explode=%v %#v renders %q: the path changes shape", style, explode, v, p)
		}
	})
}

// TestPathArrayOfEmptiesRefused is the request-level regression test for
// finding 8: ["",""] in an exploded label path parameter reached the
// upstream as /repos/o/../issues; it is now a validation error.
func TestPathArrayOfEmptiesRefused(t *testing.T) {
	op := listIssues()
	tr := true
	op.Input.Params[1].Style, op.Input.Params[1].Explode = "label", &tr
	for _, repo := range [][]any{{"", ""}, {""}, {nil}} {
		_, err := BuildRequest(context.Background(), "https://api.github.example", op, map[string]any{"owner": "o", "repo": repo})
		if env := AsEnvelope(err); env.Code != "validation_error" {
			t.Errorf("repo %#v: %v", repo, err)
		}
	}
	op.Input.Params[1].Style, op.Input.Params[1].Explode = "", nil
	if _, err := BuildRequest(context.Background(), "https://api.github.example", op, map[string]any{"owner": "o", "repo": []any{""}}); AsEnvelope(err).Code != "validation_error" {
		t.Errorf("simple [\"\"]: %v", err)
	}
}

// FuzzDotSegmentsRefused: whatever a path value is and whatever the style,
// a request the AIR-driven handler builds never has a dot segment in its
// path, as written or percent-decoded (issue 30), and a refusal is the
// validation_error of DotSegmentMessage or another coded error.
func FuzzDotSegmentsRefused(f *testing.F) {
	for _, s := range []string{"..", ".", "%2E%2E", "%252E.", "../x", `..\x`, "..;x", "a", "a\x00..", ".\x00"} {
		f.Add(s, byte(0))
		f.Add(s, byte(0x83))
	}
	styles := []air.ParamStyle{"", "simple", "label", "matrix"}
	f.Fuzz(func(t *testing.T, value string, shape byte) {
		var v any = value
		if shape&1 != 0 { // NUL-separated array elements
			parts := strings.Split(value, "\x00")
			arr := make([]any, len(parts))
			for i, p := range parts {
				arr[i] = p
			}
			v = arr
		}
		op := listIssues()
		op.Input.Params[0].Style = styles[int(shape>>1)%len(styles)]
		explode := shape&0x80 != 0
		op.Input.Params[0].Explode = &explode
		req, err := BuildRequest(context.Background(), "https://api.github.example/v3", op, map[string]any{"owner": v, "repo": "r"})
		if err != nil {
			if AsEnvelope(err).Code != envelope.ValidationError {
				t.Fatalf("%#v: %v", v, err)
			}
			return
		}
		p := req.URL.EscapedPath()
		for range 8 {
			for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
				if seg, _, _ = strings.Cut(seg, ";"); seg == "." || seg == ".." {
					t.Fatalf("%#v (%s) sent as %s: dot segment %q after decoding", v, op.Input.Params[0].Style, req.URL.EscapedPath(), seg)
				}
			}
			if d, err := url.PathUnescape(p); err == nil {
				p = d
			}
		}
	})
}
