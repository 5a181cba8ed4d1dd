package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// Reserved input keys. They control the gateway and are never sent upstream,
// even when an operation declares an input under the same key.
const (
	// ProjectionKey is air.ProjectionKey.
	ProjectionKey = air.ProjectionKey
	// WholeBodyKey is air.WholeBodyKey.
	WholeBodyKey = air.WholeBodyKey
	// IdempotencyInputKey is air.IdempotencyInputKey.
	IdempotencyInputKey = air.IdempotencyInputKey
)

// BuildRequest builds the upstream request for op from the caller's
// arguments (decoded JSON: map[string]any whose numbers are float64 or
// json.Number; Go slices, maps and structs are accepted too and go through
// encoding/json).
//
// base is the upstream server URL (AIR service.servers[0].url), possibly
// with a path prefix; the operation's path (op.SourceRef.Path) is appended
// to it. Inputs are looked up by Param.Key / BodyField.Key and sent under
// Param.Name / BodyField.Name:
//
//   - path: substituted with encodeURIComponent escaping ("/" → %2F, space
//     → %20); arrays and objects use the simple, label or matrix style
//     lowering recorded (air.Param.Wire); a path with a "." or ".." segment,
//     as written or percent-decoded (KeepsPathShape), is refused;
//   - query: in declaration order, in the recorded style; arrays as repeated
//     keys (form, explode) or joined (explode false, spaceDelimited,
//     pipeDelimited); objects as name[key]=value (deepObject) or as compact
//     JSON;
//   - header: arrays comma-joined, objects as JSON; a CR, LF or NUL is refused;
//   - cookie: name=value pairs in one Cookie header;
//   - body: "fields" projection → an object of the provided fields by wire
//     name, in declaration order; "whole" → the "body" input as it is.
//     Written in the encoding lowering recorded (air.Body.Wire: JSON, flat
//     form pairs, or a string as raw text) with the Content-Type it
//     recorded. No body input → no body.
//
// Scalars are written as JSON would (true/false; integers without exponent;
// other numbers in the shortest form without exponent). A missing required
// input, or any missing path input, is a validation_error. Numbers are
// rendered by NumberString (an integer within [MinInteger, MaxInteger] as
// exact digits: 1.5e3 is sent as 1500); the integer range itself is checked
// where arguments are validated (IntegerArgument), before this. Reserved control
// inputs (anvil_dry_run, anvil_projection) are never sent, nor is any input
// the operation does not declare. When op declares an idempotency carrier
// that no declared input carries, the "idempotency_key" input is sent
// through it.
//
// Errors are *envelope.Error: validation_error for bad arguments,
// internal_error for an unusable base URL or operation.
func BuildRequest(ctx context.Context, base string, op *air.Operation, args map[string]any) (*http.Request, error) {
	if op == nil {
		return nil, internalError("", "No operation to call.")
	}
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, internalError(op.ID, "The operation's server URL is not an http(s) URL.")
	}
	b := builder{op: op, args: args}
	path, err := b.path(op.SourceRef.Path)
	if err != nil {
		return nil, err
	}
	query := u.RawQuery
	var cookies []string
	header := http.Header{}
	for i := range op.Input.Params {
		p := &op.Input.Params[i]
		key := p.InputKey()
		if p.In == air.InPath || air.IsControlInput(key) {
			continue
		}
		v, ok := args[key]
		if !ok || v == nil {
			if p.Required {
				return nil, missing(op.ID, key, string(p.In))
			}
			continue
		}
		v = normalize(v)
		switch p.In {
		case air.InQuery:
			style, explode := p.Wire()
			query = AppendQueryValue(query, p.Name, string(style), explode, v)
		case air.InHeader:
			s := HeaderValue(v)
			if strings.ContainsAny(s, "\r\n\x00") {
				return nil, validation(op.ID, key, string(p.In), fmt.Sprintf("Header input %s must not contain line breaks.", key))
			}
			header.Set(p.Name, s)
		case air.InCookie:
			cookies = append(cookies, p.Name+"="+CookieValue(HeaderValue(v)))
		}
	}
	body, contentType, err := b.body()
	if err != nil {
		return nil, err
	}
	// An idempotency carrier that no declared input carries.
	if key, ok := b.undeclaredCarrier(); ok {
		switch op.Idempotency.Mechanism {
		case air.MechanismHeader:
			s := HeaderValue(key)
			if strings.ContainsAny(s, "\r\n\x00") {
				return nil, validation(op.ID, IdempotencyInputKey, "header", "The idempotency key must not contain line breaks.")
			}
			header.Set(op.Idempotency.Key, s)
		case air.MechanismQuery:
			query = AppendQuery(query, op.Idempotency.Key, ScalarString(key))
		}
	}

	var sb strings.Builder
	sb.Grow(len(base) + len(path) + len(query) + 8)
	sb.WriteString(u.Scheme)
	sb.WriteString("://")
	sb.WriteString(u.Host)
	sb.WriteString(strings.TrimSuffix(u.EscapedPath(), "/"))
	sb.WriteString(path)
	if query != "" {
		sb.WriteByte('?')
		sb.WriteString(query)
	}
	method := op.SourceRef.HTTPMethod()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, sb.String(), rd)
	if err != nil {
		return nil, validation(op.ID, "", "path", "The arguments do not make a valid upstream URL.")
	}
	if !KeepsPathShape(req.URL.EscapedPath()) {
		return nil, validation(op.ID, "", "path", DotSegmentMessage)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", op.Output.Accept())
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "anvil-gateway/"+air.AnvilVersion)
	}
	return req, nil
}

type builder struct {
	op   *air.Operation
	args map[string]any
}

// path expands the {name} templates of the operation path.
func (b *builder) path(tmpl string) (string, error) {
	if tmpl == "" {
		return "", nil
	}
	var sb strings.Builder
	sb.Grow(len(tmpl) + 16)
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			sb.WriteString(tmpl)
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			sb.WriteString(tmpl)
			break
		}
		sb.WriteString(tmpl[:i])
		name := tmpl[i+1 : i+j]
		tmpl = tmpl[i+j+1:]
		p := b.pathParam(name)
		if p == nil {
			return "", internalError(b.op.ID, fmt.Sprintf("Path parameter {%s} is not declared by the operation.", name))
		}
		key := p.InputKey()
		v, ok := b.args[key]
		if !ok || v == nil || air.IsControlInput(key) {
			return "", missing(b.op.ID, key, "path")
		}
		style, explode := p.Wire()
		s, ok := PathValue(normalize(v), p.Name, string(style), explode)
		if !ok {
			return "", validation(b.op.ID, key, "path", fmt.Sprintf("Path input %s must not be empty.", key))
		}
		sb.WriteString(s)
	}
	return sb.String(), nil
}

func (b *builder) pathParam(name string) *air.Param {
	for i := range b.op.Input.Params {
		if p := &b.op.Input.Params[i]; p.In == air.InPath && p.Name == name {
			return p
		}
	}
	return nil
}

// normalize turns Go values that are not decoded JSON (typed slices and
// maps, structs, pointers) into decoded JSON with json.Number numbers.
func normalize(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, uint64, json.Number, []any, map[string]any:
		return v
	}
	b, err := AppendJSON(nil, v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return v
	}
	return out
}

// body encodes the request body; nil when there is none.
func (b *builder) body() ([]byte, string, error) {
	bd := b.op.Input.Body
	if bd == nil {
		return nil, "", nil
	}
	enc, ctype := bd.Wire()
	carrier, hasCarrier := b.undeclaredCarrier()
	carrier = normalize(carrier)
	inBody := hasCarrier && b.op.Idempotency.Mechanism == air.MechanismBody

	if bd.Projection == air.ProjectionWhole {
		key := WholeBodyKey
		if len(bd.Fields) == 1 && bd.Fields[0].Key != "" {
			key = bd.Fields[0].Key
		}
		v, ok := b.args[key]
		if !ok || v == nil {
			if bd.Required {
				return nil, "", missing(b.op.ID, key, "body")
			}
			return nil, "", nil
		}
		carrierKey := ""
		if inBody {
			carrierKey = b.op.Idempotency.Key
		}
		out, ctype, problem := wholeBody(enc, ctype, normalize(v), carrierKey, carrier)
		if problem != "" {
			return nil, "", validation(b.op.ID, key, "body", problem)
		}
		return out, ctype, nil
	}

	// Fields projection: the provided fields, in declaration order.
	type field struct {
		name string
		v    any
	}
	fields := make([]field, 0, len(bd.Fields)+1)
	for _, f := range bd.Fields {
		key := f.InputKey()
		if air.IsControlInput(key) {
			continue
		}
		if v, ok := b.args[key]; ok {
			fields = append(fields, field{f.Name, normalize(v)})
		}
	}
	if inBody && !slices.ContainsFunc(fields, func(f field) bool { return f.name == b.op.Idempotency.Key }) {
		fields = append(fields, field{b.op.Idempotency.Key, carrier})
	}
	if len(fields) == 0 && !bd.Required {
		return nil, "", nil
	}
	for _, f := range bd.Fields {
		key := f.InputKey()
		if v, ok := b.args[key]; f.Required && (!ok || v == nil) {
			return nil, "", missing(b.op.ID, key, "body")
		}
	}
	if enc == air.BodyForm {
		q := ""
		for _, f := range fields {
			q = AppendFormValue(q, f.name, f.v)
		}
		return []byte(q), ctype, nil
	}
	if enc == air.BodyRaw {
		ctype = "application/json"
	}
	out := make([]byte, 0, 64)
	out = append(out, '{')
	for i, f := range fields {
		if i > 0 {
			out = append(out, ',')
		}
		out, _ = AppendJSON(out, f.name)
		out = append(out, ':')
		var err error
		if out, err = AppendJSON(out, f.v); err != nil {
			return nil, "", validation(b.op.ID, f.name, "body", fmt.Sprintf("Body input %s cannot be encoded as JSON.", f.name))
		}
	}
	out = append(out, '}')
	return out, ctype, nil
}

// undeclaredCarrier returns the idempotency key to send through the
// operation's carrier when no declared input already carries it: the
// "idempotency_key" argument, unless an operation input is itself named so.
func (b *builder) undeclaredCarrier() (any, bool) {
	if !b.op.UndeclaredCarrier() {
		return nil, false
	}
	v, ok := b.args[IdempotencyInputKey]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func internalError(opID, msg string) *envelope.Error {
	return &envelope.Error{Code: envelope.InternalError, Message: msg, Operation: opID}
}

func missing(opID, key, in string) *envelope.Error {
	return validation(opID, key, in, fmt.Sprintf("Missing required input %s.", key))
}

func validation(opID, key, in, msg string) *envelope.Error {
	e := &envelope.Error{Code: envelope.ValidationError, Message: msg, Operation: opID}
	if key != "" {
		e.Details = orderedJSON("argument", key, "in", in)
	}
	return e
}

// orderedJSON builds a JSON object from alternating keys and values, in order.
func orderedJSON(kv ...any) json.RawMessage {
	out := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := AppendJSON(nil, kv[i])
		v, err := AppendJSON(nil, kv[i+1])
		if err != nil {
			v = []byte("null")
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, '}')
}
