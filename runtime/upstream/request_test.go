package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

func ptr[T any](v T) *T { return &v }

func pathParam(name string) air.Param {
	return air.Param{Name: name, Key: name, In: "path", Required: true, Schema: &air.Schema{Type: air.Types{"string"}}}
}

// createIssueComment is github-mini's createIssueComment as AIR describes it.
func createIssueComment() *air.Operation {
	return &air.Operation{
		ID:        "github.comments.create",
		SourceRef: air.SourceRef{Kind: "openapi", Path: "/repos/{owner}/{repo}/issues/{issue_number}/comments", Method: "POST", OperationID: "createIssueComment"},
		Input: air.Input{
			Params: []air.Param{
				pathParam("owner"), pathParam("repo"),
				{Name: "issue_number", Key: "issue_number", In: "path", Required: true, Schema: &air.Schema{Type: air.Types{"integer"}}},
				{Name: "Idempotency-Key", Key: "idempotency_key", In: "header", Schema: &air.Schema{Type: air.Types{"string"}}},
			},
			Body: &air.Body{Required: true, ContentType: "application/json", Projection: air.ProjectionFields,
				Fields: []air.BodyField{{Name: "body", Key: "body", Required: true}}},
		},
		Idempotency: air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "client_supplied"},
	}
}

func listIssues() *air.Operation {
	return &air.Operation{
		ID:        "github.issues.list",
		SourceRef: air.SourceRef{Path: "/repos/{owner}/{repo}/issues", Method: "GET"},
		Input: air.Input{Params: []air.Param{
			pathParam("owner"), pathParam("repo"),
			{Name: "state", Key: "state", In: "query"},
		}},
	}
}

func decodeArgs(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func body(t *testing.T, r *http.Request) string {
	t.Helper()
	if r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuildCreateIssueComment(t *testing.T) {
	args := decodeArgs(t, `{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks <good> & fine.",
		"idempotency_key":"01JBRANCHYARDLEDGER00000001","confirm":true,"anvil_dry_run":false,"anvil_projection":"x"}`)
	req, err := BuildRequest(context.Background(), "http://127.0.0.1:9/", createIssueComment(), args)
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != "POST" || req.URL.String() != "http://127.0.0.1:9/repos/octo/hello/issues/2/comments" {
		t.Fatalf("%s %s", req.Method, req.URL)
	}
	if got := req.Header.Get("Idempotency-Key"); got != "01JBRANCHYARDLEDGER00000001" {
		t.Fatalf("Idempotency-Key = %q", got)
	}
	if req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Accept") != "application/json" {
		t.Fatalf("headers %v", req.Header)
	}
	if got := body(t, req); got != `{"body":"Looks <good> & fine."}` {
		t.Fatalf("body %s", got)
	}
	if req.ContentLength != int64(len(`{"body":"Looks <good> & fine."}`)) || req.GetBody == nil {
		t.Fatal("content length / GetBody not set")
	}
	for _, k := range []string{"confirm", "anvil"} {
		if strings.Contains(req.URL.String(), k) {
			t.Fatalf("control input %s sent: %s", k, req.URL)
		}
		for h := range req.Header {
			if strings.Contains(strings.ToLower(h), k) {
				t.Fatalf("control input %s sent as header %s", k, h)
			}
		}
	}
	// Without a key no header is sent.
	delete(args, "idempotency_key")
	req, err = BuildRequest(context.Background(), "http://127.0.0.1:9", createIssueComment(), args)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := req.Header["Idempotency-Key"]; ok {
		t.Fatal("Idempotency-Key sent without a key")
	}
}

func TestBuildPathEscaping(t *testing.T) {
	tests := []struct {
		owner, want string
	}{
		{"a/b c", "/repos/a%2Fb%20c/hello/issues"},
		{"...", "/repos/.../hello/issues"},
		{"a..b", "/repos/a..b/hello/issues"},
		{"ø?#&=+%", "/repos/%C3%B8%3F%23%26%3D%2B%25/hello/issues"},
		{"it's(ok)!*~_-", "/repos/it's(ok)!*~_-/hello/issues"},
	}
	for _, tt := range tests {
		args := map[string]any{"owner": tt.owner, "repo": "hello"}
		req, err := BuildRequest(context.Background(), "https://api.github.example", listIssues(), args)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.URL.EscapedPath(); got != tt.want {
			t.Errorf("owner %q: path %s, want %s", tt.owner, got, tt.want)
		}
		if req.URL.RawQuery != "" {
			t.Errorf("owner %q: query %q", tt.owner, req.URL.RawQuery)
		}
	}
}

// TestDotSegmentsRefused is the regression test of issue 30: a path value
// that is, or decodes to, a dot segment was escaped (%2E%2E) and sent, and
// an upstream or proxy that normalises the encoding climbed the path. It
// is now a validation_error in every path style, however it is decoded.
func TestDotSegmentsRefused(t *testing.T) {
	tr := true
	for _, tt := range []struct {
		style   string
		explode bool
		owner   any
	}{
		{"", false, ".."}, {"", false, "."}, {"", false, "../admin"}, {"", false, `..\x`},
		{"", false, "%2E%2E"}, {"", false, "%252e%252E"}, {"", false, "..;jsessionid=1"},
		{"", false, "a/../../b"}, {"", false, []any{"x", "/.."}}, {"", false, map[string]any{"a": "/.."}},
		{"label", false, "."}, {"label", true, []any{"%2E"}}, {"label", false, "%2E"},
		{"matrix", true, []any{"x", "/.."}},
	} {
		op := listIssues()
		op.Input.Params[0].Style = air.ParamStyle(tt.style)
		if tt.explode {
			op.Input.Params[0].Explode = &tr
		}
		req, err := BuildRequest(context.Background(), "https://api.github.example/v3", op, map[string]any{"owner": tt.owner, "repo": "r"})
		if env := AsEnvelope(err); env == nil || env.Code != envelope.ValidationError || env.Message != DotSegmentMessage {
			path := ""
			if req != nil {
				path = req.URL.EscapedPath()
			}
			t.Errorf("%s explode=%v %#v: path %q, err %v", tt.style, tt.explode, tt.owner, path, err)
		}
	}
	for _, ok := range []any{[]any{"..", "x"}, "...", "a.b", ".x", "x.", "%2E%2E%2E", "a%2Fb", "100%", "%zz"} {
		if _, err := BuildRequest(context.Background(), "https://api.github.example", listIssues(), map[string]any{"owner": ok, "repo": "r"}); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

func TestBuildPathErrors(t *testing.T) {
	for _, args := range []map[string]any{
		{"repo": "hello"},
		{"owner": nil, "repo": "hello"},
		{"owner": "", "repo": "hello"},
	} {
		_, err := BuildRequest(context.Background(), "https://x.example", listIssues(), args)
		var e *envelope.Error
		if !errors.As(err, &e) || e.Code != envelope.ValidationError || e.Operation != "github.issues.list" {
			t.Fatalf("args %v: err %v", args, err)
		}
		if !strings.Contains(e.Message, "owner") || !strings.Contains(string(e.Details), `"argument":"owner"`) {
			t.Fatalf("message %q details %s", e.Message, e.Details)
		}
	}
	op := listIssues()
	op.SourceRef.Path = "/repos/{nope}"
	if _, err := BuildRequest(context.Background(), "https://x.example", op, map[string]any{"nope": "x"}); err == nil {
		t.Fatal("undeclared path param accepted")
	}
	for _, base := range []string{"", "ftp://x.example", "/relative", "http://"} {
		_, err := BuildRequest(context.Background(), base, listIssues(), map[string]any{"owner": "o", "repo": "r"})
		var e *envelope.Error
		if !errors.As(err, &e) || e.Code != envelope.InternalError {
			t.Fatalf("base %q: %v", base, err)
		}
	}
	if _, err := BuildRequest(context.Background(), "https://x", nil, nil); err == nil {
		t.Fatal("nil op accepted")
	}
}

func TestBuildBasePrefixAndQuery(t *testing.T) {
	req, err := BuildRequest(context.Background(), "https://ghe.example/api/v3/?tenant=a%20b",
		listIssues(), map[string]any{"owner": "o", "repo": "r", "state": "all"})
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.String(); got != "https://ghe.example/api/v3/repos/o/r/issues?tenant=a%20b&state=all" {
		t.Fatalf("url %s", got)
	}
}

func TestBuildQueryTypes(t *testing.T) {
	op := &air.Operation{ID: "svc.things.list", SourceRef: air.SourceRef{Path: "/things", Method: "get"},
		Input: air.Input{Params: []air.Param{
			{Name: "tag", Key: "tags", In: "query"},
			{Name: "ids", Key: "ids", In: "query", Explode: ptr(false)},
			{Name: "pipes", Key: "pipes", In: "query", Style: "pipeDelimited"},
			{Name: "spaces", Key: "spaces", In: "query", Style: "spaceDelimited"},
			{Name: "filter", Key: "filter", In: "query", Style: "deepObject"},
			{Name: "meta", Key: "meta", In: "query"},
			{Name: "on", Key: "on", In: "query"},
			{Name: "n", Key: "n", In: "query"},
			{Name: "big", Key: "big", In: "query"},
			{Name: "huge", Key: "huge", In: "query"},
			{Name: "half", Key: "half", In: "query"},
			{Name: "tiny", Key: "tiny", In: "query"},
			{Name: "q", Key: "q", In: "query"},
			{Name: "absent", Key: "absent", In: "query"},
			{Name: "null", Key: "null", In: "query"},
			{Name: "anvil_dry_run", Key: "anvil_dry_run", In: "query"},
		}}}
	argsJSON := `{"tags":["a","b c"],"ids":[1,2,3],"pipes":["x","y"],"spaces":["x","y"],
		"filter":{"state":"open","labels":["bug"],"n":2},"meta":{"b":1,"a":"<&>"},"on":true,"n":3,
		"big":12345678901234567890,"huge":1e21,"half":0.5,"tiny":1e-7,"q":"a+b&c=d é","null":null,"anvil_dry_run":true}`
	want := "tag=a&tag=b+c&ids=1%2C2%2C3&pipes=x%7Cy&spaces=x+y" +
		"&filter%5Blabels%5D=%5B%22bug%22%5D&filter%5Bn%5D=2&filter%5Bstate%5D=open" +
		"&meta=%7B%22a%22%3A%22%3C%26%3E%22%2C%22b%22%3A1%7D&on=true&n=3"
	for _, mode := range []string{"float64", "json.Number"} {
		var args map[string]any
		dec := json.NewDecoder(strings.NewReader(argsJSON))
		if mode == "json.Number" {
			dec.UseNumber()
		}
		if err := dec.Decode(&args); err != nil {
			t.Fatal(err)
		}
		req, err := BuildRequest(context.Background(), "https://x.example", op, args)
		if err != nil {
			t.Fatal(err)
		}
		if req.Method != "GET" {
			t.Fatalf("method %s", req.Method)
		}
		bigWant := "12345678901234567890"
		if mode == "float64" {
			bigWant = "12345678901234567000" // shortest form, as JavaScript prints it
		}
		full := want + "&big=" + bigWant + "&huge=1000000000000000000000&half=0.5&tiny=0.0000001&q=a%2Bb%26c%3Dd+%C3%A9"
		if req.URL.RawQuery != full {
			t.Errorf("%s query\n got %s\nwant %s", mode, req.URL.RawQuery, full)
		}
	}
	// A required query input that is missing.
	op.Input.Params[0].Required = true
	if _, err := BuildRequest(context.Background(), "https://x.example", op, map[string]any{}); err == nil {
		t.Fatal("missing required query input accepted")
	}
}

func TestBuildPathStyles(t *testing.T) {
	op := &air.Operation{ID: "s.x.get", SourceRef: air.SourceRef{Path: "/a/{ids}/b/{lab}/c{mat}/d/{obj}", Method: "GET"},
		Input: air.Input{Params: []air.Param{
			pathParam("ids"),
			{Name: "lab", Key: "lab", In: "path", Style: "label", Explode: ptr(true)},
			{Name: "mat", Key: "mat", In: "path", Style: "matrix"},
			{Name: "obj", Key: "obj", In: "path"},
		}}}
	args := decodeArgs(t, `{"ids":[1,"x/y"],"lab":["p","q"],"mat":[true,false],"obj":{"k":"v","a":1}}`)
	req, err := BuildRequest(context.Background(), "https://x.example", op, args)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.EscapedPath(), "/a/1,x%2Fy/b/.p.q/c;mat=true,false/d/a,1,k,v"; got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
}

func TestBuildHeadersAndCookies(t *testing.T) {
	op := &air.Operation{ID: "s.x.get", SourceRef: air.SourceRef{Path: "/x", Method: "GET"},
		Input: air.Input{Params: []air.Param{
			{Name: "X-Trace", Key: "trace", In: "header"},
			{Name: "X-List", Key: "list", In: "header"},
			{Name: "X-Obj", Key: "obj", In: "header"},
			{Name: "X-Num", Key: "num", In: "header"},
			{Name: "session_pref", Key: "pref", In: "cookie"},
			{Name: "lang", Key: "lang", In: "cookie"},
		}}}
	args := decodeArgs(t, `{"trace":"abc","list":["a","b"],"obj":{"k":1},"num":2.5,"pref":"dark; evil=1","lang":"en"}`)
	req, err := BuildRequest(context.Background(), "https://x.example", op, args)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"X-Trace": "abc", "X-List": "a,b", "X-Obj": `{"k":1}`, "X-Num": "2.5",
		"Cookie": "session_pref=dark%3B%20evil=1; lang=en",
	} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	args["trace"] = "a\r\nInjected: 1"
	_, err = BuildRequest(context.Background(), "https://x.example", op, args)
	var e *envelope.Error
	if !errors.As(err, &e) || e.Code != envelope.ValidationError {
		t.Fatalf("CRLF header: %v", err)
	}
}

func bodyOp(ct string, projection air.Projection, fields ...air.BodyField) *air.Operation {
	return &air.Operation{ID: "s.x.create", SourceRef: air.SourceRef{Path: "/x", Method: "POST"},
		Input: air.Input{Body: &air.Body{ContentType: ct, Projection: projection, Fields: fields}}}
}

func TestBuildBodies(t *testing.T) {
	fields := []air.BodyField{{Name: "tag_name", Key: "tag_name", Required: true}, {Name: "name", Key: "name"}, {Name: "draft", Key: "is_draft"}, {Name: "labels", Key: "labels"}}
	tests := []struct {
		name     string
		op       *air.Operation
		args     string
		wantBody string
		wantCT   string
		wantErr  bool
	}{
		{"fields in declaration order", bodyOp("application/json", air.ProjectionFields, fields...),
			`{"is_draft":true,"tag_name":"v1","labels":["a"],"other":1}`, `{"tag_name":"v1","draft":true,"labels":["a"]}`, "application/json", false},
		{"fields with null", bodyOp("application/json", air.ProjectionFields, fields...),
			`{"tag_name":"v1","name":null}`, `{"tag_name":"v1","name":null}`, "application/json", false},
		{"fields none given, body optional", bodyOp("application/json", air.ProjectionFields, fields[1:]...),
			`{}`, "", "", false},
		{"fields required missing", bodyOp("application/json", air.ProjectionFields, fields...),
			`{"name":"x"}`, "", "", true},
		{"vendor json", bodyOp("application/vnd.api+json", air.ProjectionFields, fields...),
			`{"tag_name":"v1"}`, `{"tag_name":"v1"}`, "application/vnd.api+json", false},
		{"whole", bodyOp("application/json", air.ProjectionWhole),
			`{"body":{"b":[1,2.5],"a":"<x>"}}`, `{"a":"<x>","b":[1,2.5]}`, "application/json", false},
		{"whole array", bodyOp("application/json", air.ProjectionWhole),
			`{"body":[1,"two"]}`, `[1,"two"]`, "application/json", false},
		{"whole absent", bodyOp("application/json", air.ProjectionWhole), `{}`, "", "", false},
		{"form fields", bodyOp("application/x-www-form-urlencoded", air.ProjectionFields, fields...),
			`{"tag_name":"v 1","is_draft":false,"labels":["a","b"],"name":{"x":1}}`,
			`tag_name=v+1&name=%7B%22x%22%3A1%7D&draft=false&labels=a&labels=b`, "application/x-www-form-urlencoded", false},
		{"form whole", bodyOp("application/x-www-form-urlencoded; charset=utf-8", air.ProjectionWhole),
			`{"body":{"grant_type":"refresh_token","n":1}}`, `grant_type=refresh_token&n=1`, "application/x-www-form-urlencoded", false},
		{"text whole", bodyOp("text/plain", air.ProjectionWhole), `{"body":"hello <world>"}`, "hello <world>", "text/plain", false},
		{"multipart falls back to JSON", bodyOp("multipart/form-data", air.ProjectionFields, fields...),
			`{"tag_name":"v1"}`, `{"tag_name":"v1"}`, "application/json", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := BuildRequest(context.Background(), "https://x.example", tt.op, decodeArgs(t, tt.args))
			if tt.wantErr {
				var e *envelope.Error
				if !errors.As(err, &e) || e.Code != envelope.ValidationError {
					t.Fatalf("err %v, want validation_error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := body(t, req); got != tt.wantBody {
				t.Fatalf("body %q, want %q", got, tt.wantBody)
			}
			if got := req.Header.Get("Content-Type"); got != tt.wantCT {
				t.Fatalf("content type %q, want %q", got, tt.wantCT)
			}
			if tt.wantBody == "" && req.Body != nil && req.Body != http.NoBody {
				t.Fatal("a body was sent")
			}
		})
	}
}

func TestBuildUndeclaredCarrier(t *testing.T) {
	op := bodyOp("application/json", air.ProjectionFields, air.BodyField{Name: "title", Key: "title"})
	op.Idempotency = air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "X-Idem"}
	args := map[string]any{"title": "t", "idempotency_key": "k1"}
	req, err := BuildRequest(context.Background(), "https://x.example", op, args)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("X-Idem") != "k1" || body(t, req) != `{"title":"t"}` {
		t.Fatalf("header carrier: %v", req.Header)
	}
	op.Idempotency.Mechanism, op.Idempotency.Key = "query", "idem"
	req, _ = BuildRequest(context.Background(), "https://x.example", op, args)
	if req.URL.RawQuery != "idem=k1" {
		t.Fatalf("query carrier: %s", req.URL.RawQuery)
	}
	op.Idempotency.Mechanism, op.Idempotency.Key = "body", "client_token"
	req, _ = BuildRequest(context.Background(), "https://x.example", op, args)
	if got := body(t, req); got != `{"title":"t","client_token":"k1"}` {
		t.Fatalf("body carrier: %s", got)
	}
	// A declared carrier input is sent as declared, once.
	op.Input.Body.Fields = append(op.Input.Body.Fields, air.BodyField{Name: "client_token", Key: "idempotency_key"})
	req, _ = BuildRequest(context.Background(), "https://x.example", op, args)
	if got := body(t, req); got != `{"title":"t","client_token":"k1"}` {
		t.Fatalf("declared body carrier: %s", got)
	}
	// No carrier declared: the key is not sent.
	op = bodyOp("application/json", air.ProjectionFields, air.BodyField{Name: "title", Key: "title"})
	req, _ = BuildRequest(context.Background(), "https://x.example", op, args)
	if got := body(t, req); got != `{"title":"t"}` || len(req.Header.Values("Idempotency-Key")) != 0 {
		t.Fatalf("no carrier: %s", got)
	}
}

func TestBuildGoValues(t *testing.T) {
	op := listIssues()
	op.Input.Params = append(op.Input.Params, air.Param{Name: "labels", Key: "labels", In: "query"}, air.Param{Name: "page", Key: "page", In: "query"})
	req, err := BuildRequest(context.Background(), "https://x.example", op,
		map[string]any{"owner": "o", "repo": "r", "labels": []string{"a", "b"}, "page": 2})
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.RawQuery != "labels=a&labels=b&page=2" {
		t.Fatalf("query %s", req.URL.RawQuery)
	}
}

func BenchmarkBuildRequest(b *testing.B) {
	op := createIssueComment()
	args := decodeArgs(b, `{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good.","idempotency_key":"01JBRANCHYARDLEDGER00000001"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildRequest(ctx, "https://api.github.example", op, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildRequestQuery(b *testing.B) {
	op := listIssues()
	args := decodeArgs(b, `{"owner":"octo","repo":"hello","state":"open"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildRequest(ctx, "https://api.github.example", op, args); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuildReadsRecordedWire: the builder writes what lowering recorded
// (air.Body.Encoding and SendContentType, air.Param.Style and Explode),
// not what it would derive from the content type or the location.
func TestBuildReadsRecordedWire(t *testing.T) {
	no := false
	op := bodyOp("text/plain", air.ProjectionWhole)
	op.Input.Body.Encoding, op.Input.Body.SendContentType = air.BodyForm, "application/x-www-form-urlencoded"
	op.Input.Params = []air.Param{{Name: "ids", Key: "ids", In: "query", Style: air.StylePipeDelimited, Explode: &no}}
	req, err := BuildRequest(context.Background(), "https://x.example", op, map[string]any{"body": map[string]any{"a": "b c"}, "ids": []any{"1", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(req.Body)
	if string(b) != "a=b+c" || req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || req.URL.RawQuery != "ids=1%7C2" {
		t.Errorf("body %q, Content-Type %q, query %q", b, req.Header.Get("Content-Type"), req.URL.RawQuery)
	}
}
