package handler

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// requestLine renders a built request, or its error, for comparison.
func requestLine(t *testing.T, b *Builder, method string) string {
	t.Helper()
	req, err := b.Do(context.Background(), method, "application/json")
	if err != nil {
		var e *envelope.Error
		if !errors.As(err, &e) || e.Operation != "svc.x.do" {
			t.Fatalf("error %#v is not the builder's coded error", err)
		}
		return string(e.Code) + ": " + e.Message
	}
	var keys []string
	for k := range req.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := req.Method + " " + req.URL.String()
	for _, k := range keys {
		out += "\n" + k + ": " + strings.Join(req.Header[k], ", ")
	}
	if req.Body != nil {
		body, _ := io.ReadAll(req.Body)
		out += "\n\n" + string(body)
	}
	return out
}

func TestBuilder(t *testing.T) {
	base := ParseBase("http://h/api/?k=1")
	null := Opt[string]{Set: true, Null: true}
	for _, c := range []struct {
		name  string
		build func(b *Builder)
		want  string
	}{
		{"path and query", func(b *Builder) {
			b.Path("/items/")
			b.PathParam("id", Of("a b/c"))
			b.Path(".")
			b.PathParam("n", NumberText(Of(json.Number("2"))))
			b.PathMatrix("m")
			b.PathValue("v", "v", air.StyleSimple, false, Of[any]([]any{"x", json.Number("1")}))
			b.Query("q", Of("x y"))
			b.Query("none", Opt[string]{})
			b.Query("nul", null)
			b.QueryValue("tags", air.StyleForm, true, Of[any]([]any{"a", "b"}))
			b.Query("flag", BoolText(Of(true)))
		}, "GET http://h/api/items/a%20b%2Fc.2;m=x,1?k=1&q=x+y&tags=a&tags=b&flag=true\nAccept: application/json\nUser-Agent: anvil-gateway/" + air.AnvilVersion},
		{"headers and cookies", func(b *Builder) {
			b.Path("/x")
			for _, h := range []string{"A", "B", "C", "D", "E"} {
				b.Header("X-"+h, strings.ToLower(h), Of(h))
			}
			b.Header("Accept", "accept", Of("text/plain"))
			b.Header("X-Null", "null", null)
			b.KeyHeader("Idempotency-Key", HeaderText(Of[any]("k1")))
			b.Cookie("s", Of("a;b"))
			b.Cookie("t", HeaderText(Of[any](json.Number("3"))))
		}, "GET http://h/api/x?k=1\nAccept: text/plain\nCookie: s=a%3Bb; t=3\nIdempotency-Key: k1\nUser-Agent: anvil-gateway/" + air.AnvilVersion +
			"\nX-A: A\nX-B: B\nX-C: C\nX-D: D\nX-E: E"},
		{"JSON body", func(b *Builder) {
			b.Path("/x")
			b.Body(air.BodyJSON, "application/json", false)
			b.BodyString("s", Of("<é>"))
			b.BodyNumber("n", Of(json.Number("1.50")))
			b.BodyBool("b", Opt[bool]{Set: true, Null: true})
			b.BodyValue("v", Opt[any]{Set: true, Null: true})
			b.BodyValue("o", Of[any](map[string]any{"k": []any{true}}))
			b.BodyCarrier("key", Opt[any]{})
			b.BodyCarrier("idem", Of[any]("k"))
			b.BodyRequire("s", true)
			b.EndBody()
		}, "GET http://h/api/x?k=1\nAccept: application/json\nContent-Type: application/json\nUser-Agent: anvil-gateway/" + air.AnvilVersion +
			"\n\n" + `{"s":"<é>","n":1.50,"b":null,"v":null,"o":{"k":[true]},"idem":"k"}`},
		{"an empty optional body is not sent", func(b *Builder) {
			b.Path("/x")
			b.Body(air.BodyJSON, "application/json", false)
			b.BodyString("s", Opt[string]{})
			b.BodyRequire("title", false)
			b.EndBody()
		}, "GET http://h/api/x?k=1\nAccept: application/json\nUser-Agent: anvil-gateway/" + air.AnvilVersion},
		{"a body field missing from a sent body", func(b *Builder) {
			b.Body(air.BodyJSON, "application/json", false)
			b.BodyString("s", Of("x"))
			b.BodyRequire("title", false)
			b.EndBody()
		}, "validation_error: Missing required input title."},
		{"form body", func(b *Builder) {
			b.Body(air.BodyForm, "application/x-www-form-urlencoded", true)
			b.BodyString("a", Of("x y"))
			b.BodyNumber("n", Opt[json.Number]{Set: true, Null: true})
			b.BodyBool("z", Of(false))
			b.BodyValue("l", Of[any]([]any{"1", "2"}))
			b.EndBody()
		}, "GET http://h/api?k=1\nAccept: application/json\nContent-Type: application/x-www-form-urlencoded\nUser-Agent: anvil-gateway/" + air.AnvilVersion +
			"\n\na=x+y&z=false&l=1&l=2"},
		{"whole body with the carrier", func(b *Builder) {
			b.BodyKey("request_id", Of[any]("k"))
			b.WholeBody("body", air.BodyJSON, "application/merge-patch+json", true, Of[any](map[string]any{"a": json.Number("1")}))
		}, "GET http://h/api?k=1\nAccept: application/json\nContent-Type: application/merge-patch+json\nUser-Agent: anvil-gateway/" + air.AnvilVersion +
			"\n\n" + `{"a":1,"request_id":"k"}`},
		{"missing whole body", func(b *Builder) {
			b.WholeBody("body", air.BodyJSON, "application/json", true, Opt[any]{Set: true, Null: true})
		}, "validation_error: Missing required input body."},
		{"the first error sticks", func(b *Builder) {
			b.PathParam("id", null)
			b.PathParam("other", Of(""))
			b.Undeclared("p")
		}, "validation_error: Missing required input id."},
		{"empty path input", func(b *Builder) { b.PathParam("id", Of("")) }, "validation_error: Path input id must not be empty."},
		{"empty path value", func(b *Builder) { b.PathValue("ids", "ids", air.StyleSimple, false, Of[any]([]any{})) },
			"validation_error: Path input ids must not be empty."},
		{"undeclared path parameter", func(b *Builder) { b.Undeclared("p") },
			"internal_error: Path parameter {p} is not declared by the operation."},
		{"required query", func(b *Builder) { b.Require("need", false) }, "validation_error: Missing required input need."},
		{"header line break", func(b *Builder) { b.Header("X-A", "a", Of("x\r\ny")) },
			"validation_error: Header input a must not contain line breaks."},
		{"key header line break", func(b *Builder) { b.KeyHeader("Idempotency-Key", Of("x\n")) },
			"validation_error: The idempotency key must not contain line breaks."},
		{"a body value that is not JSON", func(b *Builder) {
			b.Body(air.BodyJSON, "application/json", false)
			b.BodyValue("f", Of[any](func() {}))
		}, "validation_error: Body input f cannot be encoded as JSON."},
		{"a URL that does not parse", func(b *Builder) { b.Path("/%zz") }, "validation_error: The arguments do not make a valid upstream URL."},
	} {
		b := NewBuilder(base, "svc.x.do")
		c.build(&b)
		if got := requestLine(t, &b, "GET"); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	bad := NewBuilder(ParseBase("ftp://h"), "svc.x.do")
	bad.Path("/x")
	if got := requestLine(t, &bad, "GET"); got != "internal_error: The operation's server URL is not an http(s) URL." {
		t.Errorf("a bad base: %s", got)
	}
}
