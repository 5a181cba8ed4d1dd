package air

import (
	"net/http"
	"strings"
)

// How an operation's inputs are written on the upstream request is decided
// once, by lowering, and recorded here: Param.Style and Param.Explode, and
// Body.Encoding and Body.SendContentType. Back ends (the AIR-driven request
// builder and the generated gateway) read them through Param.Wire and
// Body.Wire and decide nothing themselves.
//
// The fields are optional in anvil.air/v1: a document written before they
// were recorded leaves them out, and Wire then reads the defaults below,
// which are exactly what such a document was served with.

// ParamStyle is how a parameter's value is serialised, in OpenAPI's terms.
type ParamStyle string

// Parameter styles. A query parameter is form, spaceDelimited,
// pipeDelimited or deepObject; a path parameter simple, label or matrix; a
// header simple; a cookie form (never exploded: an array is comma-joined).
const (
	StyleForm           ParamStyle = "form"
	StyleSimple         ParamStyle = "simple"
	StyleLabel          ParamStyle = "label"
	StyleMatrix         ParamStyle = "matrix"
	StyleSpaceDelimited ParamStyle = "spaceDelimited"
	StylePipeDelimited  ParamStyle = "pipeDelimited"
	StyleDeepObject     ParamStyle = "deepObject"
)

// Location is where a parameter (Param.In) or a credential (Carrier.In)
// travels on the upstream request: lowering records the description's
// word; the request builders (runtime/upstream, generated gateways) and
// ParamWire read it.
type Location string

// Locations. A credential carrier is never InPath.
const (
	InPath   Location = "path"
	InQuery  Location = "query"
	InHeader Location = "header"
	InCookie Location = "cookie"
)

// ParamWire is how a parameter at location in with the declared style and
// explode (nil: not declared) is written: the style the request builders
// implement for that location (an unknown or inapplicable style becomes the
// location's default, form for a query and a cookie, simple for a path and
// a header), and whether arrays and objects explode (the declared value,
// else true for a form query; never for spaceDelimited and pipeDelimited
// queries, headers and cookies).
//
// Lowering records its result in every Param; for a v1 document that
// predates the recorded fields, Param.Wire applies it to what is there.
func ParamWire(in Location, style string, explode *bool) (ParamStyle, bool) {
	s := ParamStyle(style)
	switch in {
	case InQuery:
		switch s {
		case StyleSpaceDelimited, StylePipeDelimited:
			return s, false
		case StyleDeepObject:
		default:
			s = StyleForm
		}
		return s, explode == nil || *explode
	case InPath:
		switch s {
		case StyleLabel, StyleMatrix:
		default:
			s = StyleSimple
		}
		return s, explode != nil && *explode
	case InCookie:
		return StyleForm, false
	}
	return StyleSimple, false
}

// Wire is how the parameter is written: its recorded style and explode,
// read through ParamWire, which leaves what lowering records as it is and
// completes a document that predates the recorded fields (its style may be
// missing, or the description's own word for another location).
func (p *Param) Wire() (ParamStyle, bool) {
	return ParamWire(p.In, string(p.Style), p.Explode)
}

// BodyEncoding is how a request body is written.
type BodyEncoding string

// Body encodings.
const (
	// BodyJSON writes the body as JSON.
	BodyJSON BodyEncoding = "json"
	// BodyForm writes the body as application/x-www-form-urlencoded pairs
	// (an object's members; arrays as repeated keys).
	BodyForm BodyEncoding = "form"
	// BodyRaw writes a string body as it is (text/*,
	// application/octet-stream); any other value, and a body of fields, is
	// written as JSON with Content-Type application/json.
	BodyRaw BodyEncoding = "raw"
)

// BodyWire is how a body declared with the media type contentType is
// written, and the Content-Type sent with it: JSON for application/json and
// +json types (sent as declared), form pairs for
// application/x-www-form-urlencoded (sent without parameters), raw text for
// text/* and application/octet-stream (as declared), and JSON sent as
// application/json for anything else (multipart/form-data included).
//
// Lowering records its result in every Body; for a v1 document that
// predates the recorded fields, Body.Wire applies it to the content type.
func BodyWire(contentType string) (BodyEncoding, string) {
	mt := strings.ToLower(strings.TrimSpace(contentType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return BodyJSON, contentType
	case mt == "application/x-www-form-urlencoded":
		return BodyForm, "application/x-www-form-urlencoded"
	case strings.HasPrefix(mt, "text/") || mt == "application/octet-stream":
		return BodyRaw, contentType
	}
	return BodyJSON, "application/json"
}

// Wire is how the body is written and the Content-Type sent with it: the
// recorded encoding, completed by BodyWire where a document predating it
// leaves it out.
func (b *Body) Wire() (BodyEncoding, string) {
	if b.Encoding != "" {
		if b.SendContentType == "" {
			return b.Encoding, b.ContentType
		}
		return b.Encoding, b.SendContentType
	}
	return BodyWire(b.ContentType)
}

// HTTPMethod is the upstream request's method: the recorded method in upper
// case, GET when none is recorded.
func (r *SourceRef) HTTPMethod() string {
	if r.Method == "" {
		return http.MethodGet
	}
	return strings.ToUpper(r.Method)
}

// Accept is the Accept header of the upstream request: the success
// response's media type, application/json when it declares none.
func (o *Output) Accept() string {
	if o.ContentType == "" {
		return "application/json"
	}
	return o.ContentType
}

// UndeclaredCarrier reports whether the operation's idempotency key reaches
// its carrier (a header, query parameter or body property named
// Idempotency.Key) from the IdempotencyInputKey argument because no
// declared input carries it: no parameter or body field takes that input
// key, and none already is the carrier (a header matched without regard to
// case). Lowering makes this so for a whole body whose carrier is one of its
// properties; a request builder then sends the argument, when given,
// through the carrier.
func (op *Operation) UndeclaredCarrier() bool {
	idem := op.Idempotency
	if !idem.HasCarrier() {
		return false
	}
	switch idem.Mechanism {
	case MechanismHeader, MechanismQuery, MechanismBody:
	default:
		return false
	}
	for i := range op.Input.Params {
		p := &op.Input.Params[i]
		if p.InputKey() == IdempotencyInputKey {
			return false
		}
		if in := idem.Mechanism.ParamIn(); in != "" && p.In == in && (p.Name == idem.Key || (p.In == InHeader && strings.EqualFold(p.Name, idem.Key))) {
			return false
		}
	}
	if bd := op.Input.Body; bd != nil {
		for i := range bd.Fields {
			if f := &bd.Fields[i]; f.InputKey() == IdempotencyInputKey || (idem.Mechanism == MechanismBody && f.Name == idem.Key) {
				return false
			}
		}
	}
	return true
}
