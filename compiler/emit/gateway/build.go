package gateway

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Idempotency key carriers (air.Idempotency.Mechanism).
const (
	mechanismHeader = "header"
	mechanismQuery  = "query"
	mechanismBody   = "body"
)

// builder prints one operation's request builder: a straight list of
// handler.Builder calls in the order upstream.BuildRequest places the
// inputs.
type builder struct {
	op    *air.Operation
	in    *input
	stmts []jen.Code
	// done is set once a statically known error is printed: nothing after
	// it is (the Builder would ignore it).
	done bool
	// usesIn is set once a statement reads the typed input.
	usesIn bool
}

// call prints b.<method>(args...).
func (b *builder) call(method string, args ...jen.Code) {
	if !b.done {
		b.stmts = append(b.stmts, jen.Id("b").Dot(method).Call(args...))
	}
}

// stop prints b.<method>(args...), a statically known error, and ends the
// builder.
func (b *builder) stop(method string, args ...jen.Code) {
	b.call(method, args...)
	b.done = true
}

// arg is a field read by the builder.
func (b *builder) arg(fl *field) *jen.Statement {
	if !b.done {
		b.usesIn = true
	}
	return ref(fl)
}

// present is "the field is given and not null".
func (b *builder) present(fl *field) *jen.Statement { return b.arg(fl).Dot("Present").Call() }

// text is a scalar field as a URL, header or form writes it (an
// Opt[string]).
func (b *builder) text(fl *field) jen.Code {
	switch fl.kind {
	case kNumber:
		return jen.Qual(pkgHandler, "NumberText").Call(b.arg(fl))
	case kBool:
		return jen.Qual(pkgHandler, "BoolText").Call(b.arg(fl))
	case kAny:
		return jen.Qual(pkgHandler, "ScalarText").Call(b.arg(fl))
	}
	return b.arg(fl)
}

// headerText is a field as a header or cookie writes it.
func (b *builder) headerText(fl *field) jen.Code {
	if fl.kind == kAny {
		return jen.Qual(pkgHandler, "HeaderText").Call(b.arg(fl))
	}
	return b.text(fl)
}

// boxed is a field as an Opt[any].
func (b *builder) boxed(fl *field) jen.Code {
	if fl.kind == kAny {
		return b.arg(fl)
	}
	return jen.Qual(pkgHandler, "Boxed").Call(b.arg(fl))
}

// httpMethods are net/http's names of the methods.
var httpMethods = map[string]string{"GET": "MethodGet", "HEAD": "MethodHead", "POST": "MethodPost", "PUT": "MethodPut",
	"PATCH": "MethodPatch", "DELETE": "MethodDelete", "CONNECT": "MethodConnect", "OPTIONS": "MethodOptions", "TRACE": "MethodTrace"}

// emitBuild prints the request builder of t.
func (g *generator) emitBuild(f *jen.File, t *Tool, n opNames, in *input) {
	op := t.Op
	b := &builder{op: op, in: in}
	b.path(op.SourceRef.Path)
	b.params()
	b.body()
	b.carrier()
	method := op.SourceRef.HTTPMethod()
	m := jen.Code(jen.Lit(method))
	if name, ok := httpMethods[method]; ok {
		m = jen.Qual(pkgHTTP, name)
	}
	body := []jen.Code{jen.Id("b").Op(":=").Qual(pkgHandler, "NewBuilder").Call(jen.Id("base"), jen.Lit(op.ID))}
	param := jen.Id("_").Qual(pkgHandler, "Input")
	if b.usesIn {
		param = jen.Id("in0").Qual(pkgHandler, "Input")
		body = append([]jen.Code{jen.Id("in").Op(":=").Id("in0").Assert(jen.Op("*").Id(n.input))}, body...)
	}
	body = append(body, b.stmts...)
	body = append(body, jen.Return(jen.Id("b").Dot("Do").Call(jen.Id("ctx"), m, jen.Lit(op.Output.Accept()))))
	f.Commentf("%s builds the upstream request of %s.", n.build, op.ID)
	f.Func().Id(n.build).Params(
		jen.Id("ctx").Qual("context", "Context"),
		jen.Id("base").Op("*").Qual(pkgHandler, "Base"),
		param,
	).Params(jen.Op("*").Qual(pkgHTTP, "Request"), jen.Error()).Block(body...)
}

// path prints the path template's expansion.
func (b *builder) path(tmpl string) {
	for tmpl != "" && !b.done {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.call("Path", jen.Lit(tmpl))
			return
		}
		if i > 0 {
			b.call("Path", jen.Lit(tmpl[:i]))
		}
		name := tmpl[i+1 : i+j]
		tmpl = tmpl[i+j+1:]
		var p *air.Param
		for k := range b.op.Input.Params {
			if q := &b.op.Input.Params[k]; q.In == air.InPath && q.Name == name {
				p = q
				break
			}
		}
		if p == nil {
			b.stop("Undeclared", jen.Lit(name))
			return
		}
		key := p.InputKey()
		fl := b.in.byProp[key]
		if fl == nil || air.IsControlInput(key) || fl.never {
			b.stop("Missing", jen.Lit(key))
			return
		}
		style, explode := p.Wire()
		if fl.kind == kAny {
			b.call("PathValue", jen.Lit(key), jen.Lit(p.Name), styleConst(style), jen.Lit(explode), b.arg(fl))
			continue
		}
		switch style {
		case air.StyleLabel:
			b.call("Path", jen.Lit("."))
		case air.StyleMatrix:
			b.call("PathMatrix", jen.Lit(p.Name))
		}
		b.call("PathParam", jen.Lit(key), b.text(fl))
	}
}

// params prints the query, header and cookie inputs in declaration order.
func (b *builder) params() {
	for i := range b.op.Input.Params {
		p := &b.op.Input.Params[i]
		key := p.InputKey()
		if b.done || p.In == air.InPath || air.IsControlInput(key) {
			continue
		}
		fl := b.in.byProp[key]
		if fl == nil || fl.never {
			if p.Required {
				b.stop("Missing", jen.Lit(key))
			}
			continue
		}
		if p.Required {
			b.call("Require", jen.Lit(key), b.present(fl))
		}
		switch p.In {
		case air.InQuery:
			if fl.kind == kAny {
				style, explode := p.Wire()
				b.call("QueryValue", jen.Lit(p.Name), styleConst(style), jen.Lit(explode), b.arg(fl))
			} else {
				b.call("Query", jen.Lit(p.Name), b.text(fl))
			}
		case air.InHeader:
			b.call("Header", jen.Lit(p.Name), jen.Lit(key), b.headerText(fl))
		case air.InCookie:
			b.call("Cookie", jen.Lit(p.Name), b.headerText(fl))
		}
	}
}

// carrierField is the typed field of the undeclared carrier input, or nil
// when no key can go that way.
func (b *builder) carrierField() *field {
	if !b.op.UndeclaredCarrier() {
		return nil
	}
	fl := b.in.byProp[air.IdempotencyInputKey]
	if fl == nil || fl.never {
		return nil
	}
	return fl
}

// body prints the request body.
func (b *builder) body() {
	bd := b.op.Input.Body
	if bd == nil || b.done {
		return
	}
	enc, ctype := bd.Wire()
	carrier := b.carrierField()
	inBody := carrier != nil && b.op.Idempotency.Mechanism == mechanismBody
	if bd.Projection == air.ProjectionWhole {
		key := air.WholeBodyKey
		if len(bd.Fields) == 1 && bd.Fields[0].Key != "" {
			key = bd.Fields[0].Key
		}
		fl := b.in.byProp[key]
		if fl == nil || fl.never {
			if bd.Required {
				b.stop("Missing", jen.Lit(key))
			}
			return
		}
		if inBody {
			b.call("BodyKey", jen.Lit(b.op.Idempotency.Key), b.boxed(carrier))
		}
		b.call("WholeBody", jen.Lit(key), bodyEncodingConst(enc), jen.Lit(ctype), jen.Lit(bd.Required), b.boxed(fl))
		return
	}

	// Fields projection: the present fields, in declaration order; a
	// raw-text type with fields is sent as JSON.
	if enc == air.BodyRaw {
		enc, ctype = air.BodyJSON, "application/json"
	}
	b.call("Body", bodyEncodingConst(enc), jen.Lit(ctype), jen.Lit(bd.Required))
	carrierNamed := false
	for _, bf := range bd.Fields {
		key := bf.InputKey()
		fl := b.in.byProp[key]
		if air.IsControlInput(key) || fl == nil || fl.never {
			continue
		}
		if bf.Name == b.op.Idempotency.Key {
			carrierNamed = true
		}
		b.call(bodyMethods[fl.kind], jen.Lit(bf.Name), b.arg(fl))
	}
	if inBody && !carrierNamed {
		b.call("BodyCarrier", jen.Lit(b.op.Idempotency.Key), b.boxed(carrier))
	}
	for _, bf := range bd.Fields {
		if !bf.Required {
			continue
		}
		key := bf.InputKey()
		fl := b.in.byProp[key]
		if fl == nil || fl.never {
			b.call("BodyRequire", jen.Lit(key), jen.False())
			break
		}
		b.call("BodyRequire", jen.Lit(key), b.present(fl))
	}
	b.call("EndBody")
}

// bodyMethods are the Builder methods that write a body field of a kind.
var bodyMethods = map[kind]string{kString: "BodyString", kNumber: "BodyNumber", kBool: "BodyBool", kAny: "BodyValue"}

// carrier prints the undeclared idempotency carrier for a header or query.
func (b *builder) carrier() {
	fl := b.carrierField()
	if fl == nil || b.done {
		return
	}
	switch idem := b.op.Idempotency; idem.Mechanism {
	case mechanismHeader:
		b.call("KeyHeader", jen.Lit(idem.Key), b.headerText(fl))
	case mechanismQuery:
		b.call("Query", jen.Lit(idem.Key), b.text(fl))
	}
}

// bodyEncodingConst names enc by its air constant in generated code.
func bodyEncodingConst(enc air.BodyEncoding) jen.Code {
	switch enc {
	case air.BodyForm:
		return jen.Qual(pkgAir, "BodyForm")
	case air.BodyRaw:
		return jen.Qual(pkgAir, "BodyRaw")
	}
	return jen.Qual(pkgAir, "BodyJSON")
}

// styleConst names a parameter style by its air constant.
func styleConst(s air.ParamStyle) jen.Code {
	name, ok := map[air.ParamStyle]string{air.StyleForm: "StyleForm", air.StyleSimple: "StyleSimple", air.StyleLabel: "StyleLabel",
		air.StyleMatrix: "StyleMatrix", air.StyleSpaceDelimited: "StyleSpaceDelimited", air.StylePipeDelimited: "StylePipeDelimited",
		air.StyleDeepObject: "StyleDeepObject"}[s]
	if !ok {
		return jen.Qual(pkgAir, "ParamStyle").Call(jen.Lit(fmt.Sprint(s)))
	}
	return jen.Qual(pkgAir, name)
}
