package gateway

import (
	"bytes"
	"encoding/json"
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

// jsonString is s as a request body writes it (encoding/json without HTML
// escaping).
func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// builder prints one operation's request builder.
type builder struct {
	op    *air.Operation
	in    *input
	stmts []jen.Code
	// done is set once a statically known error returns: nothing after it
	// is printed.
	done bool
	// usesIn is set once a statement reads the typed input.
	usesIn bool
}

func (b *builder) add(c ...jen.Code) {
	if !b.done {
		b.stmts = append(b.stmts, c...)
	}
}

func (b *builder) opID() jen.Code { return jen.Id("opID") }

func (b *builder) fail(err jen.Code) jen.Code { return jen.Return(jen.Nil(), err) }

func (b *builder) missing(key string) jen.Code {
	return b.fail(jen.Qual(pkgHandler, "MissingInput").Call(b.opID(), jen.Lit(key)))
}

func (b *builder) buildError(msg string, internal bool) jen.Code {
	return b.fail(jen.Qual(pkgHandler, "BuildError").Call(b.opID(), jen.Lit(msg), jen.Lit(internal)))
}

// returnNow prints a statically known error and ends the builder.
func (b *builder) returnNow(c jen.Code) {
	b.add(c)
	b.done = true
}

// scalarString is the expression of a present, non-null typed field as
// a URL, header or form writes it.
func scalarString(fl *field) *jen.Statement {
	x := jen.Id("in." + fl.goName)
	switch fl.kind {
	case kString:
		return x
	case kNumber:
		return jen.Qual(pkgUpstream, "NumberString").Call(x)
	case kBool:
		return jen.Qual("strconv", "FormatBool").Call(x)
	}
	return jen.Qual(pkgUpstream, "ScalarString").Call(x)
}

// emitBuild prints the request builder of t.
func (g *generator) emitBuild(f *jen.File, t *Tool, n opNames, in *input) {
	op := t.Op
	b := &builder{op: op, in: in}
	b.add(
		jen.Const().Id("opID").Op("=").Lit(op.ID),
		jen.If(jen.Id("base").Dot("Err")).Block(b.fail(jen.Qual(pkgHandler, "BadBase").Call(b.opID()))),
		jen.Var().Id("u").Qual("strings", "Builder"),
		jen.Id("u").Dot("WriteString").Call(jen.Id("base").Dot("Prefix")),
	)
	b.path(op.SourceRef.Path)
	b.add(jen.Id("q").Op(":=").Id("base").Dot("Query"))
	headers, cookies := b.params()
	hasBody := b.body()
	b.carrier(&headers)
	b.finish(op, hasBody, headers, cookies)
	param := jen.Id("_").Qual(pkgHandler, "Input")
	if b.usesIn {
		param = jen.Id("in0").Qual(pkgHandler, "Input")
		b.stmts = append([]jen.Code{jen.Id("in").Op(":=").Id("in0").Assert(jen.Op("*").Id(n.input))}, b.stmts...)
	}

	f.Commentf("%s builds the upstream request of %s.", n.build, op.ID)
	f.Func().Id(n.build).Params(
		jen.Id("ctx").Qual("context", "Context"),
		jen.Id("base").Op("*").Qual(pkgHandler, "Base"),
		param,
	).Params(jen.Op("*").Qual(pkgHTTP, "Request"), jen.Error()).Block(b.stmts...)
}

// path prints the path template's expansion.
func (b *builder) path(tmpl string) {
	for tmpl != "" && !b.done {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.add(jen.Id("u").Dot("WriteString").Call(jen.Lit(tmpl)))
			return
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.add(jen.Id("u").Dot("WriteString").Call(jen.Lit(tmpl)))
			return
		}
		if i > 0 {
			b.add(jen.Id("u").Dot("WriteString").Call(jen.Lit(tmpl[:i])))
		}
		name := tmpl[i+1 : i+j]
		tmpl = tmpl[i+j+1:]
		var p *air.Param
		for k := range b.op.Input.Params {
			if q := &b.op.Input.Params[k]; q.In == "path" && q.Name == name {
				p = q
				break
			}
		}
		if p == nil {
			b.returnNow(b.buildError(fmt.Sprintf("Path parameter {%s} is not declared by the operation.", name), true))
			return
		}
		key := p.InputKey()
		fl := b.in.byProp[key]
		if fl == nil || air.IsControlInput(key) || fl.never {
			b.returnNow(b.missing(key))
			return
		}
		b.usesIn = true
		b.add(jen.If(noValue(fl)).Block(b.missing(key)))
		empty := b.buildError(fmt.Sprintf("Path input %s must not be empty.", key), false)
		style, explode := p.Wire()
		if fl.kind == kAny {
			b.add(jen.Block(
				jen.List(jen.Id("s"), jen.Id("ok")).Op(":=").Qual(pkgUpstream, "PathValue").Call(jen.Id("in."+fl.goName), jen.Lit(p.Name), jen.Lit(string(style)), jen.Lit(explode)),
				jen.If(jen.Op("!").Id("ok")).Block(empty),
				jen.Id("u").Dot("WriteString").Call(jen.Id("s")),
			))
			continue
		}
		if fl.kind == kString {
			b.add(jen.If(jen.Id("in." + fl.goName).Op("==").Lit("")).Block(empty))
		}
		switch style {
		case air.StyleLabel:
			b.add(jen.Id("u").Dot("WriteByte").Call(jen.LitRune('.')))
		case air.StyleMatrix:
			b.add(jen.Id("u").Dot("WriteString").Call(jen.Lit(";").Op("+").Qual(pkgUpstream, "PathSegment").Call(jen.Lit(p.Name)).Op("+").Lit("=")))
		}
		b.add(jen.Id("u").Dot("WriteString").Call(jen.Qual(pkgUpstream, "PathSegment").Call(scalarString(fl))))
	}
}

// headerSet is a header input kept until the request exists.
type headerSet struct {
	name string // the header name
	v    string // the Go variable holding the value
	ok   string // the Go variable telling it is set
}

// params prints the query, header and cookie inputs in declaration order.
func (b *builder) params() (headers []headerSet, cookies bool) {
	for i := range b.op.Input.Params {
		if b.done {
			return
		}
		p := &b.op.Input.Params[i]
		key := p.InputKey()
		if p.In == "path" || air.IsControlInput(key) {
			continue
		}
		fl := b.in.byProp[key]
		if fl == nil || fl.never {
			if p.Required {
				b.returnNow(b.missing(key))
			}
			continue
		}
		if !b.done {
			b.usesIn = true
		}
		var present []jen.Code
		switch p.In {
		case "query":
			if fl.kind == kAny {
				style, explode := p.Wire()
				present = append(present, jen.Id("q").Op("=").Qual(pkgUpstream, "AppendQueryValue").Call(
					jen.Id("q"), jen.Lit(p.Name), jen.Lit(string(style)), jen.Lit(explode), jen.Id("in."+fl.goName)))
			} else {
				present = append(present, jen.Id("q").Op("=").Qual(pkgUpstream, "AppendQuery").Call(jen.Id("q"), jen.Lit(p.Name), scalarString(fl)))
			}
		case "header":
			h := headerSet{name: p.Name, v: fmt.Sprintf("h%d", len(headers)), ok: fmt.Sprintf("h%dSet", len(headers))}
			headers = append(headers, h)
			b.add(jen.Var().Id(h.v).String(), jen.Id(h.ok).Op(":=").False())
			val := scalarString(fl)
			if fl.kind == kAny {
				val = jen.Qual(pkgUpstream, "HeaderValue").Call(jen.Id("in." + fl.goName))
			}
			present = append(present,
				jen.List(jen.Id(h.v), jen.Id(h.ok)).Op("=").List(val, jen.True()),
				jen.If(jen.Qual(pkgHandler, "BadHeader").Call(jen.Id(h.v))).Block(
					b.buildError(fmt.Sprintf("Header input %s must not contain line breaks.", key), false)))
		case "cookie":
			if !cookies {
				cookies = true
				b.add(jen.Var().Id("cookies").Index().String())
			}
			val := scalarString(fl)
			if fl.kind == kAny {
				val = jen.Qual(pkgUpstream, "HeaderValue").Call(jen.Id("in." + fl.goName))
			}
			present = append(present, jen.Id("cookies").Op("=").Append(jen.Id("cookies"),
				jen.Lit(p.Name+"=").Op("+").Qual(pkgUpstream, "CookieValue").Call(val)))
		}
		stmt := jen.If(value(fl)).Block(present...)
		if p.Required {
			stmt = stmt.Else().Block(b.missing(key))
		}
		if len(present) == 0 {
			if p.Required {
				b.add(jen.If(noValue(fl)).Block(b.missing(key)))
			}
			continue
		}
		b.add(stmt)
	}
	return headers, cookies
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

// boxed is a present field's value as any.
func boxed(fl *field) jen.Code { return jen.Id("in." + fl.goName) }

// body prints the request body; it reports whether there may be one.
func (b *builder) body() bool {
	bd := b.op.Input.Body
	if bd == nil || b.done {
		return false
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
				b.returnNow(b.missing(key))
			}
			return false
		}
		b.add(jen.Var().Id("body").Index().Byte(), jen.Id("ctype").Op(":=").Lit(ctype))
		b.usesIn = true
		ckey, cval := jen.Lit(""), jen.Code(jen.Nil())
		if inBody {
			ckey = jen.Lit(b.op.Idempotency.Key)
			cval = jen.Nil()
		}
		var carrierSetup []jen.Code
		if inBody {
			carrierSetup = []jen.Code{
				jen.Var().Id("ck").String(),
				jen.Var().Id("cv").Any(),
				jen.If(value(carrier)).Block(jen.List(jen.Id("ck"), jen.Id("cv")).Op("=").List(ckey, boxed(carrier))),
			}
			ckey, cval = jen.Id("ck"), jen.Id("cv")
		}
		stmt := []jen.Code{}
		stmt = append(stmt, carrierSetup...)
		stmt = append(stmt,
			jen.Var().Id("err").Error(),
			jen.List(jen.Id("body"), jen.Id("ctype"), jen.Id("err")).Op("=").Qual(pkgHandler, "WholeBody").Call(
				jen.Id("opID"), jen.Lit(key), bodyEncodingConst(enc), jen.Lit(ctype), boxed(fl), ckey, cval),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
		)
		ifs := jen.If(value(fl)).Block(stmt...)
		if bd.Required {
			ifs = ifs.Else().Block(b.missing(key))
		}
		b.add(ifs)
		return true
	}

	// Fields projection: the present fields, in declaration order.
	b.add(jen.Var().Id("body").Index().Byte(), jen.Id("ctype").Op(":=").Lit(ctype))
	b.usesIn = true
	type bodyField struct {
		name string
		fl   *field
	}
	var fields []bodyField
	for _, bf := range bd.Fields {
		key := bf.InputKey()
		if air.IsControlInput(key) {
			continue
		}
		if fl := b.in.byProp[key]; fl != nil && !fl.never {
			fields = append(fields, bodyField{bf.Name, fl})
		}
	}
	carrierNamed := false
	for _, f := range fields {
		if f.name == b.op.Idempotency.Key {
			carrierNamed = true
		}
	}
	var required []jen.Code
	for _, bf := range bd.Fields {
		if !bf.Required {
			continue
		}
		key := bf.InputKey()
		fl := b.in.byProp[key]
		if fl == nil || fl.never {
			required = append(required, b.missing(key))
			break
		}
		required = append(required, jen.If(noValue(fl)).Block(b.missing(key)))
	}
	var count []jen.Code
	count = append(count, jen.Id("nf").Op(":=").Lit(0))
	var stmts []jen.Code
	if enc == air.BodyForm {
		stmts = append(stmts, jen.Id("form").Op(":=").Lit(""))
		for _, bf := range fields {
			fl := bf.fl
			var add jen.Code
			if fl.kind == kAny {
				add = jen.Id("form").Op("=").Qual(pkgUpstream, "AppendFormValue").Call(jen.Id("form"), jen.Lit(bf.name), jen.Id("in."+fl.goName))
			} else {
				add = jen.Id("form").Op("=").Qual(pkgUpstream, "AppendQuery").Call(jen.Id("form"), jen.Lit(bf.name), scalarString(fl))
				if fl.nullable {
					add = jen.If(notNull(fl)).Block(add)
				}
			}
			stmts = append(stmts, jen.If(has(fl)).Block(jen.Id("nf").Op("++"), add))
		}
		if inBody && !carrierNamed {
			stmts = append(stmts, jen.If(value(carrier)).Block(jen.Id("nf").Op("++"),
				jen.Id("form").Op("=").Qual(pkgUpstream, "AppendFormValue").Call(jen.Id("form"), jen.Lit(b.op.Idempotency.Key), boxed(carrier))))
		}
		tail := append([]jen.Code{}, required...)
		tail = append(tail, jen.Id("body").Op("=").Index().Byte().Parens(jen.Id("form")))
		cond := jen.Id("nf").Op(">").Lit(0)
		if bd.Required {
			cond = jen.True()
		}
		stmts = append(stmts, jen.If(cond).Block(tail...))
		b.add(jen.Block(append(count, stmts...)...))
		return true
	}
	// JSON (a raw-text type with fields is sent as JSON).
	if enc == air.BodyRaw {
		b.add(jen.Id("ctype").Op("=").Lit("application/json"))
	}
	stmts = append(stmts, jen.Id("w").Op(":=").Make(jen.Index().Byte(), jen.Lit(1), jen.Lit(128)), jen.Id("w").Index(jen.Lit(0)).Op("=").LitRune('{'))
	// w holds '{' and the fields written so far: a field follows another
	// one exactly when len(w) > 1 (handler.AppendJSONKey writes the comma).
	keyOf := func(name string) jen.Code {
		return jen.Id("w").Op("=").Qual(pkgHandler, "AppendJSONKey").Call(jen.Id("w"), jen.Lit(jsonString(name)+":"))
	}
	needErr := false
	for _, bf := range fields {
		fl := bf.fl
		key := keyOf(bf.name)
		var val jen.Code
		switch fl.kind {
		case kString:
			val = jen.Id("w").Op("=").Qual(pkgHandler, "AppendJSONString").Call(jen.Id("w"), jen.Id("in."+fl.goName))
		case kNumber:
			val = jen.Id("w").Op("=").Qual(pkgHandler, "AppendJSONNumber").Call(jen.Id("w"), jen.Id("in."+fl.goName))
		case kBool:
			val = jen.Id("w").Op("=").Qual("strconv", "AppendBool").Call(jen.Id("w"), jen.Id("in."+fl.goName))
		default:
			needErr = true
			val = jen.If(jen.List(jen.Id("w"), jen.Id("err")).Op("=").Qual(pkgUpstream, "AppendJSON").Call(jen.Id("w"), jen.Id("in."+fl.goName)), jen.Id("err").Op("!=").Nil()).Block(
				b.fail(jen.Qual(pkgHandler, "BodyValueError").Call(jen.Id("opID"), jen.Lit(bf.name))))
		}
		if fl.nullable && fl.kind != kAny {
			val = jen.If(isNull(fl)).Block(jen.Id("w").Op("=").Append(jen.Id("w"), jen.Lit("null").Op("..."))).Else().Block(val)
		}
		stmts = append(stmts, jen.If(has(fl)).Block(key, val))
	}
	if inBody && !carrierNamed {
		needErr = true
		stmts = append(stmts, jen.If(value(carrier)).Block(keyOf(b.op.Idempotency.Key),
			jen.If(jen.List(jen.Id("w"), jen.Id("err")).Op("=").Qual(pkgUpstream, "AppendJSON").Call(jen.Id("w"), boxed(carrier)), jen.Id("err").Op("!=").Nil()).Block(
				b.fail(jen.Qual(pkgHandler, "BodyValueError").Call(jen.Id("opID"), jen.Lit(b.op.Idempotency.Key))))))
	}
	var decls []jen.Code
	if needErr {
		decls = append(decls, jen.Var().Id("err").Error())
	}
	tail := append([]jen.Code{}, required...)
	tail = append(tail, jen.Id("body").Op("=").Append(jen.Id("w"), jen.LitRune('}')))
	if bd.Required {
		stmts = append(stmts, tail...)
	} else {
		stmts = append(stmts, jen.If(jen.Len(jen.Id("w")).Op(">").Lit(1)).Block(tail...))
	}
	b.add(jen.Block(append(decls, stmts...)...))
	return true
}

// carrier prints the undeclared idempotency carrier for a header or query.
func (b *builder) carrier(headers *[]headerSet) {
	fl := b.carrierField()
	if fl == nil || b.done {
		return
	}
	idem := b.op.Idempotency
	b.usesIn = true
	switch idem.Mechanism {
	case mechanismHeader:
		h := headerSet{name: idem.Key, v: fmt.Sprintf("h%d", len(*headers)), ok: fmt.Sprintf("h%dSet", len(*headers))}
		*headers = append(*headers, h)
		val := scalarString(fl)
		if fl.kind == kAny {
			val = jen.Qual(pkgUpstream, "HeaderValue").Call(jen.Id("in." + fl.goName))
		}
		b.add(jen.Var().Id(h.v).String(), jen.Id(h.ok).Op(":=").False(),
			jen.If(value(fl)).Block(
				jen.List(jen.Id(h.v), jen.Id(h.ok)).Op("=").List(val, jen.True()),
				jen.If(jen.Qual(pkgHandler, "BadHeader").Call(jen.Id(h.v))).Block(
					b.buildError("The idempotency key must not contain line breaks.", false))))
	case mechanismQuery:
		val := scalarString(fl)
		b.add(jen.If(value(fl)).Block(jen.Id("q").Op("=").Qual(pkgUpstream, "AppendQuery").Call(jen.Id("q"), jen.Lit(idem.Key), val)))
	}
}

// finish prints the request and its headers.
func (b *builder) finish(op *air.Operation, hasBody bool, headers []headerSet, cookies bool) {
	if b.done {
		return
	}
	method := op.SourceRef.HTTPMethod()
	body := jen.Code(jen.Nil())
	if hasBody {
		body = jen.Id("body")
	}
	b.add(jen.List(jen.Id("req"), jen.Id("err")).Op(":=").Qual(pkgHandler, "NewRequest").Call(jen.Id("ctx"), b.opID(), jen.Lit(method), jen.Op("&").Id("u"), jen.Id("q"), body),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))))
	for _, h := range headers {
		b.add(jen.If(jen.Id(h.ok)).Block(jen.Id("req").Dot("Header").Dot("Set").Call(jen.Lit(h.name), jen.Id(h.v))))
	}
	if cookies {
		b.add(jen.If(jen.Len(jen.Id("cookies")).Op(">").Lit(0)).Block(
			jen.Id("req").Dot("Header").Dot("Set").Call(jen.Lit("Cookie"), jen.Qual("strings", "Join").Call(jen.Id("cookies"), jen.Lit("; ")))))
	}
	if hasBody {
		b.add(jen.If(jen.Id("body").Op("!=").Nil()).Block(jen.Id("req").Dot("Header").Dot("Set").Call(jen.Lit("Content-Type"), jen.Id("ctype"))))
	}
	b.add(jen.Return(jen.Qual(pkgHandler, "FinishRequest").Call(jen.Id("req"), jen.Lit(op.Output.Accept()))))
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
