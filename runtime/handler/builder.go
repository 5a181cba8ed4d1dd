package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// Builder builds one upstream request for a generated request builder, one
// call per path segment, parameter or body field, in the order
// upstream.BuildRequest places them. The first problem sticks: every later
// call does nothing and Do returns it, worded as upstream.BuildRequest
// words it, so a generated builder is a straight list of calls with no
// error handling of its own. compiled_test.go checks every generated
// builder against upstream.BuildRequest.
//
// A Builder lives on its builder's stack (NewBuilder returns it by value;
// nothing keeps a pointer to it).
type Builder struct {
	op      string // the operation id, for errors
	base    *Base
	err     error
	started bool // the URL holds base.Prefix
	u       strings.Builder
	q       string
	hdr     [4]header
	nh      int
	more    []header
	cookies []string

	// The body: either body (set by WholeBody or EndBody) or one being
	// written field by field (Body ... EndBody).
	body         []byte
	ctype        string
	enc          air.BodyEncoding
	bodyRequired bool
	w            []byte // a JSON body: '{' and the members so far
	form         string // a form body
	nf           int    // form fields given (null ones too)
	keyName      string // the carrier of a whole body (BodyKey)
	keyValue     any
}

// header is a header input kept until the request exists.
type header struct{ name, value string }

// NewBuilder starts the request of operation opID on base.
func NewBuilder(base *Base, opID string) Builder {
	b := Builder{op: opID, base: base, q: base.Query}
	if base.Err {
		b.err = buildError(opID, "The operation's server URL is not an http(s) URL.", true)
	}
	return b
}

// begin writes the base URL's prefix before the first path segment.
func (b *Builder) begin() {
	if !b.started {
		b.started = true
		b.u.WriteString(b.base.Prefix)
	}
}

// Path writes a literal part of the path template.
func (b *Builder) Path(s string) {
	if b.err == nil {
		b.begin()
		b.u.WriteString(s)
	}
}

// PathMatrix writes the ";name=" a matrix-style path parameter starts with.
func (b *Builder) PathMatrix(name string) { b.Path(";" + upstream.PathSegment(name) + "=") }

// PathParam writes a scalar path parameter: input key must be present and
// not empty.
func (b *Builder) PathParam(key string, v Opt[string]) {
	switch {
	case b.err != nil:
	case !v.Present():
		b.Missing(key)
	case v.Value == "":
		b.err = buildError(b.op, "Path input "+key+" must not be empty.", false)
	default:
		b.begin()
		b.u.WriteString(upstream.PathSegment(v.Value))
	}
}

// PathValue writes a path parameter of any type (upstream.PathValue).
func (b *Builder) PathValue(key, name string, style air.ParamStyle, explode bool, v Opt[any]) {
	if b.err != nil {
		return
	}
	if !v.Present() {
		b.Missing(key)
		return
	}
	s, ok := upstream.PathValue(v.Value, name, string(style), explode)
	if !ok {
		b.err = buildError(b.op, "Path input "+key+" must not be empty.", false)
		return
	}
	b.begin()
	b.u.WriteString(s)
}

// Missing refuses the request: required input key is absent.
func (b *Builder) Missing(key string) {
	if b.err == nil {
		b.err = buildError(b.op, "Missing required input "+key+".", false)
	}
}

// Require refuses the request when required input key is not present.
func (b *Builder) Require(key string, present bool) {
	if !present {
		b.Missing(key)
	}
}

// Undeclared refuses the request: the path template names a parameter the
// operation does not declare.
func (b *Builder) Undeclared(name string) {
	if b.err == nil {
		b.err = buildError(b.op, "Path parameter {"+name+"} is not declared by the operation.", true)
	}
}

// Query adds a scalar query parameter when present.
func (b *Builder) Query(name string, v Opt[string]) {
	if b.err == nil && v.Present() {
		b.q = upstream.AppendQuery(b.q, name, v.Value)
	}
}

// QueryValue adds a query parameter of any type when present
// (upstream.AppendQueryValue).
func (b *Builder) QueryValue(name string, style air.ParamStyle, explode bool, v Opt[any]) {
	if b.err == nil && v.Present() {
		b.q = upstream.AppendQueryValue(b.q, name, string(style), explode, v.Value)
	}
}

// Header sets header name from input key when present.
func (b *Builder) Header(name, key string, v Opt[string]) {
	b.header(name, v, "Header input "+key+" must not contain line breaks.")
}

// KeyHeader sets the idempotency key's header when the carrier is present.
func (b *Builder) KeyHeader(name string, v Opt[string]) {
	b.header(name, v, "The idempotency key must not contain line breaks.")
}

func (b *Builder) header(name string, v Opt[string], bad string) {
	if b.err != nil || !v.Present() {
		return
	}
	if strings.ContainsAny(v.Value, "\r\n\x00") {
		b.err = buildError(b.op, bad, false)
		return
	}
	if b.nh < len(b.hdr) {
		b.hdr[b.nh] = header{name, v.Value}
		b.nh++
		return
	}
	b.more = append(b.more, header{name, v.Value})
}

// Cookie adds cookie name when present.
func (b *Builder) Cookie(name string, v Opt[string]) {
	if b.err == nil && v.Present() {
		b.cookies = append(b.cookies, name+"="+upstream.CookieValue(v.Value))
	}
}

// BodyKey gives WholeBody the idempotency carrier, added to an object body
// as member name when it is present.
func (b *Builder) BodyKey(name string, v Opt[any]) {
	if v.Present() {
		b.keyName, b.keyValue = name, v.Value
	}
}

// WholeBody sets the body from one input of any type, key
// (upstream.EncodeBody: raw text, form pairs or JSON, with the carrier
// BodyKey gave), sent as ctype; required says whether the operation
// requires it.
func (b *Builder) WholeBody(key string, enc air.BodyEncoding, ctype string, required bool, v Opt[any]) {
	if b.err != nil {
		return
	}
	if !v.Present() {
		if required {
			b.Missing(key)
		}
		return
	}
	b.body, b.ctype, b.err = upstream.EncodeBody(b.op, enc, ctype, v.Value, b.keyName, b.keyValue)
}

// Body starts a body written field by field: a form (air.BodyForm) or a
// JSON object (anything else), sent with content type ctype when a field is
// given or the operation requires the body.
func (b *Builder) Body(enc air.BodyEncoding, ctype string, required bool) {
	b.enc, b.ctype, b.bodyRequired = enc, ctype, required
	if enc != air.BodyForm {
		b.w = append(make([]byte, 0, 128), '{')
	}
}

// jsonKey starts a member of the JSON body.
func (b *Builder) jsonKey(name string) {
	if len(b.w) > 1 {
		b.w = append(b.w, ',')
	}
	b.w = upstream.AppendJSONString(b.w, name)
	b.w = append(b.w, ':')
}

// bodyField writes a scalar body field when set: its form text, or its
// JSON appended by appendJSON; null is null in JSON and nothing in a form
// (the field still counts as given).
func (b *Builder) bodyField(name string, set, null bool, text func() string, appendJSON func([]byte) []byte) {
	if b.err != nil || !set {
		return
	}
	if b.enc == air.BodyForm {
		b.nf++
		if !null {
			b.form = upstream.AppendQuery(b.form, name, text())
		}
		return
	}
	b.jsonKey(name)
	if null {
		b.w = append(b.w, "null"...)
		return
	}
	b.w = appendJSON(b.w)
}

// BodyString writes a string body field.
func (b *Builder) BodyString(name string, v Opt[string]) {
	b.bodyField(name, v.Set, v.Null, func() string { return v.Value }, func(w []byte) []byte {
		return upstream.AppendJSONString(w, v.Value)
	})
}

// BodyNumber writes a number body field.
func (b *Builder) BodyNumber(name string, v Opt[json.Number]) {
	b.bodyField(name, v.Set, v.Null, func() string { return upstream.NumberString(v.Value) }, func(w []byte) []byte {
		out, err := upstream.AppendJSON(w, v.Value)
		if err != nil {
			return append(w, "null"...)
		}
		return out
	})
}

// BodyBool writes a boolean body field.
func (b *Builder) BodyBool(name string, v Opt[bool]) {
	b.bodyField(name, v.Set, v.Null, func() string { return strconv.FormatBool(v.Value) }, func(w []byte) []byte {
		return strconv.AppendBool(w, v.Value)
	})
}

// BodyValue writes a body field of any type when set (null included).
func (b *Builder) BodyValue(name string, v Opt[any]) {
	if b.err == nil && v.Set {
		b.bodyValue(name, v.Value)
	}
}

// BodyCarrier writes the idempotency carrier as body field name when it is
// present.
func (b *Builder) BodyCarrier(name string, v Opt[any]) {
	if b.err == nil && v.Present() {
		b.bodyValue(name, v.Value)
	}
}

func (b *Builder) bodyValue(name string, v any) {
	if b.enc == air.BodyForm {
		b.nf++
		b.form = upstream.AppendFormValue(b.form, name, v)
		return
	}
	b.jsonKey(name)
	w, err := upstream.AppendJSON(b.w, v)
	if err != nil {
		b.err = buildError(b.op, "Body input "+name+" cannot be encoded as JSON.", false)
		return
	}
	b.w = w
}

// inUse reports whether the body being written is sent: a field is given,
// or the operation requires it.
func (b *Builder) inUse() bool {
	if b.enc == air.BodyForm {
		return b.bodyRequired || b.nf > 0
	}
	return b.bodyRequired || len(b.w) > 1
}

// BodyRequire refuses the request when a required body field is not
// present in a body that is sent.
func (b *Builder) BodyRequire(key string, present bool) {
	if !present && b.inUse() {
		b.Missing(key)
	}
}

// EndBody ends a body written field by field.
func (b *Builder) EndBody() {
	if b.err != nil || !b.inUse() {
		return
	}
	if b.enc == air.BodyForm {
		b.body = []byte(b.form)
		return
	}
	b.body = append(b.w, '}')
}

// Do makes the request: method on the URL written, with the query, the
// headers, cookies and body given, and the headers every upstream request
// carries unless an input set them (Accept: accept; User-Agent). A URL that
// does not parse, or whose path has a dot segment (upstream.KeepsPathShape),
// is refused as upstream.BuildRequest refuses it.
func (b *Builder) Do(ctx context.Context, method, accept string) (*http.Request, error) {
	if b.err != nil {
		return nil, b.err
	}
	b.begin()
	if b.q != "" {
		b.u.WriteByte('?')
		b.u.WriteString(b.q)
	}
	var rd io.Reader
	if b.body != nil {
		rd = bytes.NewReader(b.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.u.String(), rd)
	if err != nil {
		return nil, buildError(b.op, "The arguments do not make a valid upstream URL.", false)
	}
	// The check upstream.BuildRequest applies: no path value may make a
	// dot segment, as written or percent-decoded, whatever its style.
	if !upstream.KeepsPathShape(req.URL.EscapedPath()) {
		return nil, buildError(b.op, upstream.DotSegmentMessage, false)
	}
	for _, h := range b.hdr[:b.nh] {
		req.Header.Set(h.name, h.value)
	}
	for _, h := range b.more {
		req.Header.Set(h.name, h.value)
	}
	if len(b.cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(b.cookies, "; "))
	}
	if b.body != nil {
		req.Header.Set("Content-Type", b.ctype)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", accept)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return req, nil
}

// userAgent is the User-Agent of upstream requests.
const userAgent = "anvil-gateway/" + air.AnvilVersion

// buildError is the error of a request that cannot be built, as
// upstream.BuildRequest words it (validation_error; internal_error when
// internal is set).
func buildError(opID, message string, internal bool) error {
	code := envelope.ValidationError
	if internal {
		code = envelope.InternalError
	}
	return &envelope.Error{Code: code, Message: message, Operation: opID}
}
