package air

import "testing"

func TestBodyWire(t *testing.T) {
	for _, tc := range []struct {
		ct, send string
		enc      BodyEncoding
	}{
		{"application/json", "application/json", BodyJSON},
		{"application/vnd.api+json; charset=utf-8", "application/vnd.api+json; charset=utf-8", BodyJSON},
		{"application/x-www-form-urlencoded; charset=utf-8", "application/x-www-form-urlencoded", BodyForm},
		{"text/csv", "text/csv", BodyRaw},
		{"application/octet-stream", "application/octet-stream", BodyRaw},
		{"multipart/form-data", "application/json", BodyJSON},
		{"image/png", "application/json", BodyJSON},
	} {
		enc, send := BodyWire(tc.ct)
		if enc != tc.enc || send != tc.send {
			t.Errorf("BodyWire(%q) = %s, %q; want %s, %q", tc.ct, enc, send, tc.enc, tc.send)
		}
		// A body recorded without an encoding (a document that predates
		// the field) reads the same; a recorded one is read as it is.
		if enc, send := (&Body{ContentType: tc.ct}).Wire(); enc != tc.enc || send != tc.send {
			t.Errorf("legacy body %q: %s %q", tc.ct, enc, send)
		}
	}
	if enc, send := (&Body{ContentType: "text/plain", Encoding: BodyJSON, SendContentType: "application/json"}).Wire(); enc != BodyJSON || send != "application/json" {
		t.Errorf("recorded encoding not read: %s %q", enc, send)
	}
}

func TestParamWire(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		in      Location
		style   string
		explode *bool
		want    ParamStyle
		wantEx  bool
	}{
		{"query", "", nil, StyleForm, true},
		{"query", "form", &no, StyleForm, false},
		{"query", "spaceDelimited", &yes, StyleSpaceDelimited, false},
		{"query", "pipeDelimited", nil, StylePipeDelimited, false},
		{"query", "deepObject", nil, StyleDeepObject, true},
		{"query", "matrix", nil, StyleForm, true},
		{"path", "", nil, StyleSimple, false},
		{"path", "label", &yes, StyleLabel, true},
		{"path", "matrix", nil, StyleMatrix, false},
		{"path", "form", &yes, StyleSimple, true},
		{"header", "", &yes, StyleSimple, false},
		{"cookie", "form", &yes, StyleForm, false},
	} {
		style, explode := ParamWire(tc.in, tc.style, tc.explode)
		if style != tc.want || explode != tc.wantEx {
			t.Errorf("ParamWire(%s, %q, %v) = %s, %v; want %s, %v", tc.in, tc.style, tc.explode, style, explode, tc.want, tc.wantEx)
		}
		p := Param{In: tc.in, Style: ParamStyle(tc.style), Explode: tc.explode}
		if s, e := p.Wire(); s != style || e != explode {
			t.Errorf("legacy param %+v reads %s %v", tc, s, e)
		}
	}
	// A recorded style and explode are read as they are.
	if s, e := (&Param{In: "query", Style: StyleForm, Explode: &no}).Wire(); s != StyleForm || e {
		t.Errorf("recorded: %s %v", s, e)
	}
}

func TestMethodAndAccept(t *testing.T) {
	if m := (&SourceRef{Method: "post"}).HTTPMethod(); m != "POST" {
		t.Errorf("method %q", m)
	}
	if m := (&SourceRef{}).HTTPMethod(); m != "GET" {
		t.Errorf("no method: %q", m)
	}
	if a := (&Output{}).Accept(); a != "application/json" {
		t.Errorf("no media type: %q", a)
	}
	if a := (&Output{ContentType: "text/csv"}).Accept(); a != "text/csv" {
		t.Errorf("accept %q", a)
	}
}

func TestUndeclaredCarrier(t *testing.T) {
	op := func(mech KeyMechanism, key string, params []Param, fields ...BodyField) *Operation {
		o := &Operation{Idempotency: Idempotency{Mode: IdemKeySupported, Mechanism: mech, Key: key}, Input: Input{Params: params}}
		if fields != nil {
			o.Input.Body = &Body{Projection: ProjectionFields, Fields: fields}
		}
		return o
	}
	for _, tc := range []struct {
		name string
		op   *Operation
		want bool
	}{
		{"whole-body property", op("body", "request_id", nil), true},
		{"header nobody declares", op("header", "Idempotency-Key", nil), true},
		{"declared header, other case", op("header", "Idempotency-Key", []Param{{Name: "idempotency-key", Key: "k", In: "header"}}), false},
		{"an input already named idempotency_key", op("query", "key", []Param{{Name: "x", Key: IdempotencyInputKey, In: "query"}}), false},
		{"declared body field", op("body", "request_id", nil, BodyField{Name: "request_id", Key: "rid"}), false},
		{"legacy field without a key", op("body", "k", nil, BodyField{Name: IdempotencyInputKey}), false},
		{"path carrier", op("path", "k", nil), false},
		{"no carrier", op("none", "", nil), false},
	} {
		if got := tc.op.UndeclaredCarrier(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
