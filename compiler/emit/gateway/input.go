package gateway

import (
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Import paths of the runtime packages generated code uses.
const (
	pkgHandler  = "github.com/anvil-dev/anvil/runtime/handler"
	pkgServe    = "github.com/anvil-dev/anvil/runtime/serve"
	pkgUpstream = "github.com/anvil-dev/anvil/runtime/upstream"
	pkgAir      = "github.com/anvil-dev/anvil/runtime/air"
	pkgEffect   = "github.com/anvil-dev/anvil/runtime/effect"
	pkgAudit    = "github.com/anvil-dev/anvil/runtime/audit"
	pkgJSON     = "encoding/json"
	pkgHTTP     = "net/http"
)

// Presence is kept in named fields of the input struct: has<Field> (the
// argument is present) and, for a nullable field, null<Field> (present as
// null). Both are unexported, so they never collide with a property's
// exported Go name.

// hasName and nullName are a field's presence fields.
func hasName(f *field) string  { return "has" + f.goName }
func nullName(f *field) string { return "null" + f.goName }

// has is "the field is present".
func has(f *field) *jen.Statement { return jen.Id("in." + hasName(f)) }

// notHas is "the field is absent".
func notHas(f *field) *jen.Statement { return jen.Op("!").Id("in." + hasName(f)) }

// isNull is "the field is present as null".
func isNull(f *field) *jen.Statement { return jen.Id("in." + nullName(f)) }

// notNull is "the field is not null".
func notNull(f *field) *jen.Statement { return jen.Op("!").Id("in." + nullName(f)) }

// value is "the field is present and not null".
func value(f *field) *jen.Statement {
	switch {
	case f.kind == kAny:
		return has(f).Op("&&").Id("in." + f.goName).Op("!=").Nil()
	case f.nullable:
		return has(f).Op("&&").Add(notNull(f))
	}
	return has(f)
}

// noValue is "the field is absent or null".
func noValue(f *field) *jen.Statement {
	switch {
	case f.kind == kAny:
		return notHas(f).Op("||").Id("in." + f.goName).Op("==").Nil()
	case f.nullable:
		return notHas(f).Op("||").Add(isNull(f))
	}
	return notHas(f)
}

// markSet records the field as present.
func markSet(f *field) jen.Code { return jen.Id("in." + hasName(f)).Op("=").True() }

// markNull records the field as null.
func markNull(f *field) jen.Code { return jen.Id("in." + nullName(f)).Op("=").True() }

// clearNull records the field as not null (for a nullable field).
func clearNull(f *field) jen.Code {
	if !f.nullable {
		return jen.Null()
	}
	return jen.Id("in." + nullName(f)).Op("=").False()
}

// goType is a field's Go type.
func goType(f *field) jen.Code {
	switch f.kind {
	case kString:
		return jen.String()
	case kNumber:
		return jen.Qual(pkgJSON, "Number")
	case kBool:
		return jen.Bool()
	}
	return jen.Any()
}

// opNames are the Go names of one operation's generated declarations.
type opNames struct {
	input    string // the input struct
	decode   string
	fromArgs string
	build    string
	effect   string
	draft    string
	redact   string
}

func newOpNames(base string) opNames {
	return opNames{
		input:    base + "Input",
		decode:   "decode" + exportedName(base),
		fromArgs: "fromArgs" + exportedName(base),
		build:    "build" + exportedName(base),
		effect:   "effect" + exportedName(base),
		draft:    "draft" + exportedName(base),
		redact:   base + "Redact",
	}
}

// emitInput prints the input struct of op with its methods, decoder and
// converter.
func (g *generator) emitInput(f *jen.File, t *Tool, n opNames, in *input) {
	op := t.Op
	f.Commentf("%s holds the arguments of %s (%s).", n.input, t.Name, op.ID)
	fields := []jen.Code{
		jen.Id("bad").Bool().Comment("a control input of the wrong type was set"),
		jen.Id("extra").Map(jen.String()).Any().Comment("arguments without a typed field"),
	}
	for _, fl := range in.fields {
		fields = append(fields, jen.Line(), jen.Id(fl.goName).Add(goType(fl)).Comment(strconv.Quote(fl.prop)))
		fields = append(fields, jen.Id(hasName(fl)).Bool())
		if fl.nullable {
			fields = append(fields, jen.Id(nullName(fl)).Bool())
		}
	}
	f.Type().Id(n.input).Struct(fields...)
	f.Line()

	if len(in.fields) > 0 {
		var names []jen.Code
		for _, fl := range in.fields {
			names = append(names, jen.Lit(fl.prop))
		}
		f.Var().Id(n.redact).Op("=").Qual(pkgHandler, "SensitiveKeys").Call(names...)
	}
	for _, fl := range in.fields {
		if fl.pattern != "" {
			f.Var().Id(patternName(n, fl)).Op("=").Qual("regexp", "MustCompile").Call(jen.Lit(fl.pattern))
		}
	}
	f.Line()

	g.emitValidate(f, n, in)
	g.emitArgs(f, n, in)
	g.emitHash(f, n, in)
	g.emitControls(f, op, n, in)
	g.emitDecode(f, n, in)
	g.emitFromArgs(f, n, in)
}

func patternName(n opNames, fl *field) string { return n.input + "Pattern" + fl.goName }

func recv(n opNames) *jen.Statement { return jen.Params(jen.Id("in").Op("*").Id(n.input)) }

// emitValidate prints Validate: the scalar checks of the schema.
func (g *generator) emitValidate(f *jen.File, n opNames, in *input) {
	var body []jen.Code
	body = append(body, jen.If(jen.Id("in.bad")).Block(invalid("", "type")))
	if in.closed {
		body = append(body, jen.If(jen.Len(jen.Id("in.extra")).Op(">").Lit(0)).Block(invalid("", "additionalProperties")))
	}
	for _, fl := range in.fields {
		if fl.required {
			body = append(body, jen.If(notHas(fl)).Block(invalid(fl.prop, "required")))
		}
	}
	for _, fl := range in.fields {
		if fl.never {
			body = append(body, jen.If(has(fl)).Block(invalid(fl.prop, "false")))
			continue
		}
		if fl.kind == kAny {
			continue
		}
		if fl.nullable && fl.hasEnum && !fl.nullInEnum {
			body = append(body, jen.If(has(fl).Op("&&").Add(isNull(fl))).Block(invalid(fl.prop, "enum")))
		}
		checks := scalarChecks(n, fl)
		if len(checks) > 0 {
			body = append(body, jen.If(value(fl)).Block(checks...))
		}
	}
	body = append(body, jen.Return(jen.Nil()))
	f.Comment("Validate checks the arguments against the input schema: the first argument and")
	f.Comment("rule they fail, or nil.")
	f.Func().Add(recv(n)).Id("Validate").Params().Error().Block(body...)
}

// scalarChecks are the checks of a present, non-null scalar field.
func scalarChecks(n opNames, fl *field) []jen.Code {
	x := jen.Id("in." + fl.goName)
	ret := func(rule string) jen.Code { return invalid(fl.prop, rule) }
	var out []jen.Code
	switch fl.kind {
	case kString:
		if fl.hasEnum {
			if len(fl.strEnum) == 0 {
				return []jen.Code{ret("enum")}
			}
			var cases []jen.Code
			for _, s := range fl.strEnum {
				cases = append(cases, jen.Lit(s))
			}
			out = append(out, jen.Switch(x.Clone()).Block(jen.Case(cases...), jen.Default().Block(ret("enum"))))
		}
		if fl.minLen != nil || fl.maxLen != nil {
			cond := []string{}
			if fl.minLen != nil {
				cond = append(cond, "l < "+strconv.Itoa(*fl.minLen))
			}
			if fl.maxLen != nil {
				cond = append(cond, "l > "+strconv.Itoa(*fl.maxLen))
			}
			c := cond[0]
			if len(cond) == 2 {
				c = cond[0] + " || " + cond[1]
			}
			rule := "minLength"
			switch {
			case fl.minLen == nil:
				rule = "maxLength"
			case fl.maxLen != nil:
				rule = "minLength/maxLength"
			}
			out = append(out, jen.If(jen.Id("l").Op(":=").Qual(pkgHandler, "RuneCount").Call(x.Clone()), jen.Id(c)).Block(ret(rule)))
		}
		if fl.pattern != "" {
			out = append(out, jen.If(jen.Op("!").Id(patternName(n, fl)).Dot("MatchString").Call(x.Clone())).Block(ret("pattern")))
		}
	case kNumber:
		if fl.integer {
			out = append(out, jen.If(jen.Op("!").Qual(pkgHandler, "IsInteger").Call(x.Clone())).Block(ret("type")))
		}
		if fl.hasEnum {
			if len(fl.numEnum) == 0 {
				return append(out, ret("enum"))
			}
			args := []jen.Code{x.Clone()}
			for _, v := range fl.numEnum {
				args = append(args, jen.Lit(v))
			}
			out = append(out, jen.If(jen.Op("!").Qual(pkgHandler, "NumberIn").Call(args...)).Block(ret("enum")))
		}
		bound := func(b, op, rule string) {
			if b == "" {
				return
			}
			out = append(out, jen.If(
				jen.List(jen.Id("c"), jen.Id("ok")).Op(":=").Qual(pkgHandler, "CompareNumber").Call(x.Clone(), jen.Lit(b)),
				jen.Id("!ok || c "+op+" 0")).Block(ret(rule)))
		}
		bound(fl.minimum, "<", "minimum")
		bound(fl.maximum, ">", "maximum")
		bound(fl.exclMin, "<=", "exclusiveMinimum")
		bound(fl.exclMax, ">=", "exclusiveMaximum")
	case kBool:
		if fl.hasEnum {
			t, fa := false, false
			for _, b := range fl.boolEnum {
				if b {
					t = true
				} else {
					fa = true
				}
			}
			switch {
			case t && fa:
			case t:
				out = append(out, jen.If(jen.Op("!").Add(x.Clone())).Block(ret("enum")))
			case fa:
				out = append(out, jen.If(x.Clone()).Block(ret("enum")))
			default:
				out = append(out, ret("enum"))
			}
		}
	}
	return out
}

// invalid is the refusal of argument prop (a top-level property; "" for the
// arguments as a whole) by the schema keyword rule.
func invalid(prop, rule string) jen.Code {
	return jen.Return(jen.Qual(pkgHandler, "Invalid").Call(jen.Lit(prop), jen.Lit(rule)))
}

// emitArgs prints Args: the arguments as decoded JSON.
func (g *generator) emitArgs(f *jen.File, n opNames, in *input) {
	body := []jen.Code{
		jen.Id("m").Op(":=").Make(jen.Map(jen.String()).Any(), jen.Len(jen.Id("in.extra")).Op("+").Lit(len(in.fields))),
	}
	for _, fl := range in.fields {
		set := jen.Id("m").Index(jen.Lit(fl.prop)).Op("=").Id("in." + fl.goName)
		if fl.nullable && fl.kind != kAny {
			body = append(body, jen.If(has(fl)).Block(
				jen.If(isNull(fl)).Block(jen.Id("m").Index(jen.Lit(fl.prop)).Op("=").Nil()).Else().Block(set)))
		} else {
			body = append(body, jen.If(has(fl)).Block(set))
		}
	}
	body = append(body,
		jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Id("in.extra")).Block(jen.Id("m").Index(jen.Id("k")).Op("=").Id("v")),
		jen.Return(jen.Id("m")))
	f.Comment("Args returns the arguments as decoded JSON.")
	f.Func().Add(recv(n)).Id("Args").Params().Map(jen.String()).Any().Block(body...)
}

// emitHash prints InputSHA256: the canonical JSON of the typed fields,
// with the shared hasher for values of any shape.
func (g *generator) emitHash(f *jen.File, n opNames, in *input) {
	var body []jen.Code
	cond := jen.Id("in.extra").Op("!=").Nil()
	for _, fl := range in.fields {
		if fl.kind == kAny {
			cond = cond.Op("||").Add(has(fl))
		}
	}
	body = append(body, jen.If(cond).Block(jen.Return(jen.Qual(pkgAudit, "InputSHA256").Call(jen.Id("in").Dot("Args").Call()))))
	body = append(body,
		jen.Var().Id("buf").Index(jen.Lit(256)).Byte(),
		jen.Id("c").Op(":=").Qual(pkgHandler, "NewCanonical").Call(jen.Id("buf").Index(jen.Op(":"))))
	for i, fl := range in.fields {
		if fl.kind == kAny {
			continue
		}
		key, redact := jen.Lit(fl.prop), jen.Id(n.redact).Index(jen.Lit(i))
		method := map[kind]string{kString: "String", kNumber: "Number", kBool: "Bool"}[fl.kind]
		var write jen.Code = jen.Id("c").Dot(method).Call(key, redact, jen.Id("in."+fl.goName))
		if fl.nullable {
			write = jen.If(isNull(fl)).Block(jen.Id("c").Dot("Null").Call(key, redact)).Else().Block(write)
		}
		body = append(body, jen.If(has(fl)).Block(write))
	}
	body = append(body, jen.Return(jen.Id("c").Dot("SHA256").Call()))
	f.Comment("InputSHA256 is the audit hash of the arguments.")
	f.Func().Add(recv(n)).Id("InputSHA256").Params().String().Block(body...)
}

// emitControls prints the accessors of the control inputs.
func (g *generator) emitControls(f *jen.File, op *air.Operation, n opNames, in *input) {
	// The idempotency carrier.
	k := op.Input.Safety.IdempotencyKey
	var get, set []jen.Code
	extraGet := jen.Return(jen.Qual(pkgHandler, "ExtraString").Call(jen.Id("in.extra"), jen.Lit(k)))
	extraSet := func(v jen.Code) []jen.Code {
		return []jen.Code{jen.Id("in.extra").Op("=").Qual(pkgHandler, "SetExtra").Call(jen.Id("in.extra"), jen.Lit(k), v)}
	}
	switch fl := in.byProp[k]; {
	case k == "":
		get = []jen.Code{jen.Return(jen.Lit(""), jen.False(), jen.False())}
	case fl == nil:
		get = []jen.Code{extraGet}
		set = extraSet(jen.Id("key"))
	case fl.kind == kString:
		get = []jen.Code{jen.If(value(fl)).Block(jen.Return(jen.Id("in."+fl.goName), jen.True(), jen.True())),
			extraGet}
		set = []jen.Code{jen.Id("in." + fl.goName).Op("=").Id("key"), markSet(fl), clearNull(fl)}
	default: // kAny
		get = []jen.Code{jen.If(value(fl)).Block(
			jen.List(jen.Id("s"), jen.Id("isString")).Op(":=").Id("in."+fl.goName).Assert(jen.String()),
			jen.Return(jen.Id("s"), jen.Id("isString"), jen.True())),
			extraGet}
		set = []jen.Code{jen.Id("in." + fl.goName).Op("=").Id("key"), markSet(fl)}
	}
	f.Comment("IdempotencyKey reads the idempotency carrier input.")
	f.Func().Add(recv(n)).Id("IdempotencyKey").Params().Params(jen.Id("s").String(), jen.Id("isString"), jen.Id("present").Bool()).Block(get...)
	f.Comment("SetIdempotencyKey sets the idempotency carrier input.")
	f.Func().Add(recv(n)).Id("SetIdempotencyKey").Params(jen.Id("key").String()).Block(set...)

	g.emitBoolControl(f, n, in, "Confirm", "SetConfirm", confirmKey(op), "the confirm input")
	g.emitBoolControl(f, n, in, "DryRun", "SetDryRun", air.DryRunKey, "anvil_dry_run")
}

// confirmKey is the input the confirmation gate reads.
func confirmKey(op *air.Operation) string {
	if op.Input.Safety.ConfirmKey != "" {
		return op.Input.Safety.ConfirmKey
	}
	return "confirm"
}

// emitBoolControl prints the getter and setter of a boolean control input.
// Confirm returns (value, present); DryRun returns the value only.
func (g *generator) emitBoolControl(f *jen.File, n opNames, in *input, getName, setName, key, what string) {
	confirm := getName == "Confirm"
	ret := func(v, present jen.Code) jen.Code {
		if confirm {
			return jen.Return(v, present)
		}
		if p, ok := present.(*jen.Statement); ok && p.GoString() == "true" {
			return jen.Return(v)
		}
		return jen.Return(jen.Add(present).Op("&&").Add(v))
	}
	fl := in.byProp[key]
	extra := []jen.Code{
		jen.List(jen.Id("b"), jen.Id("ok")).Op(":=").Qual(pkgHandler, "ExtraBool").Call(jen.Id("in.extra"), jen.Lit(key)),
		ret(jen.Id("b"), jen.Id("ok")),
	}
	if confirm {
		extra = []jen.Code{jen.Return(jen.Qual(pkgHandler, "ExtraBool").Call(jen.Id("in.extra"), jen.Lit(key)))}
	}
	val := jen.Lit(true)
	if confirm {
		val = jen.Id("v")
	}
	extraSet := []jen.Code{jen.Id("in.extra").Op("=").Qual(pkgHandler, "SetExtra").Call(jen.Id("in.extra"), jen.Lit(key), val)}
	var get, set []jen.Code
	switch {
	case fl == nil:
		get, set = extra, extraSet
	case fl.kind == kBool:
		v := jen.Id("in." + fl.goName)
		if fl.nullable {
			v = jen.Id("in." + fl.goName).Op("&&").Add(notNull(fl))
		}
		get = []jen.Code{
			jen.If(notHas(fl)).Block(extra...),
			ret(v, jen.True()),
		}
		set = []jen.Code{jen.Id("in." + fl.goName).Op("=").Add(val), markSet(fl), clearNull(fl)}
	case fl.kind == kAny:
		get = []jen.Code{
			jen.If(notHas(fl)).Block(extra...),
			jen.List(jen.Id("b"), jen.Id("_")).Op(":=").Id("in." + fl.goName).Assert(jen.Bool()),
			ret(jen.Id("b"), jen.True()),
		}
		set = []jen.Code{jen.Id("in." + fl.goName).Op("=").Add(val), markSet(fl)}
	default:
		// A control input of another type: it can only be mistyped.
		get = []jen.Code{
			jen.If(notHas(fl)).Block(extra...),
			ret(jen.False(), jen.True()),
		}
		set = append([]jen.Code{jen.Id("in.bad").Op("=").True()}, extraSet...)
	}
	if confirm {
		f.Commentf("%s reads %s: its value and whether it is present.", getName, what)
		f.Func().Add(recv(n)).Id(getName).Params().Params(jen.Bool(), jen.Bool()).Block(get...)
		f.Commentf("%s sets %s.", setName, what)
		f.Func().Add(recv(n)).Id(setName).Params(jen.Id("v").Bool()).Block(set...)
		return
	}
	f.Commentf("%s reports whether %s is true.", getName, what)
	f.Func().Add(recv(n)).Id(getName).Params().Bool().Block(get...)
	f.Commentf("%s sets %s to true.", setName, what)
	f.Func().Add(recv(n)).Id(setName).Params().Block(set...)
}

// emitDecode prints the decoder that reads the arguments from JSON.
func (g *generator) emitDecode(f *jen.File, n opNames, in *input) {
	fail := jen.Return(jen.Nil(), jen.False())
	var cases []jen.Code
	for _, fl := range in.fields {
		var read string
		switch fl.kind {
		case kString:
			read = "String"
		case kNumber:
			read = "Number"
		case kBool:
			read = "Bool"
		default:
			read = "Any"
		}
		readFails := jen.Op("!").Id("r").Dot(read).Call(jen.Op("&").Id("in." + fl.goName))
		var stmts []jen.Code
		if fl.nullable && fl.kind != kAny {
			// A repeated key is refused; null is recorded as such.
			stmts = []jen.Code{
				jen.If(has(fl)).Block(fail),
				markSet(fl),
				jen.If(jen.Id("r").Dot("Null").Call()).Block(markNull(fl), jen.Continue()),
				jen.If(readFails).Block(fail),
			}
		} else {
			// A repeated key is refused.
			stmts = []jen.Code{jen.If(has(fl).Op("||").Add(readFails)).Block(fail), markSet(fl)}
		}
		cases = append(cases, jen.Case(jen.Lit(fl.prop)).Block(stmts...))
	}
	cases = append(cases, jen.Default().Block(fail))
	f.Commentf("%s reads the arguments straight from their JSON; false sends them the generic way.", n.decode)
	f.Func().Id(n.decode).Params(jen.Id("raw").Index().Byte()).Params(jen.Qual(pkgHandler, "Input"), jen.Bool()).Block(
		jen.Id("in").Op(":=").Op("&").Id(n.input).Values(),
		jen.Var().Id("r").Qual(pkgHandler, "ArgReader"),
		jen.Id("r").Dot("Reset").Call(jen.Id("raw")),
		jen.For(jen.Id("r").Dot("Next").Call()).Block(
			jen.Switch(jen.String().Parens(jen.Id("r").Dot("Key").Call())).Block(cases...),
		),
		jen.If(jen.Op("!").Id("r").Dot("Done").Call().Op("||").Id("in").Dot("Validate").Call().Op("!=").Nil()).Block(fail),
		jen.Return(jen.Id("in"), jen.True()),
	)
}

// emitFromArgs prints the converter from decoded arguments.
func (g *generator) emitFromArgs(f *jen.File, n opNames, in *input) {
	fail := jen.Return(jen.Nil(), jen.False())
	var cases []jen.Code
	for _, fl := range in.fields {
		stmts := []jen.Code{markSet(fl)}
		if fl.kind == kAny {
			stmts = append(stmts, jen.Id("in."+fl.goName).Op("=").Id("v"))
			cases = append(cases, jen.Case(jen.Lit(fl.prop)).Block(stmts...))
			continue
		}
		if fl.nullable {
			stmts = append(stmts, jen.If(jen.Id("v").Op("==").Nil()).Block(markNull(fl), jen.Continue()))
		}
		// fl.kind is not kAny here: handler.As checks the field's Go type.
		stmts = append(stmts, jen.If(jen.Op("!").Qual(pkgHandler, "As").Call(jen.Id("v"), jen.Op("&").Id("in."+fl.goName))).Block(fail))
		cases = append(cases, jen.Case(jen.Lit(fl.prop)).Block(stmts...))
	}
	if in.closed {
		cases = append(cases, jen.Default().Block(fail))
	} else {
		cases = append(cases, jen.Default().Block(
			jen.Id("in.extra").Op("=").Qual(pkgHandler, "SetExtra").Call(jen.Id("in.extra"), jen.Id("k"), jen.Id("v"))))
	}
	kv := jen.List(jen.Id("k"), jen.Id("v"))
	if len(in.fields) == 0 && in.closed {
		kv = jen.Id("k")
	}
	f.Commentf("%s converts decoded arguments (numbers as json.Number) and validates them.", n.fromArgs)
	f.Func().Id(n.fromArgs).Params(jen.Id("args").Map(jen.String()).Any()).Params(jen.Qual(pkgHandler, "Input"), jen.Bool()).Block(
		jen.Id("in").Op(":=").Op("&").Id(n.input).Values(),
		jen.For(kv.Op(":=").Range().Id("args")).Block(jen.Switch(jen.Id("k")).Block(cases...)),
		jen.If(jen.Id("in").Dot("Validate").Call().Op("!=").Nil()).Block(fail),
		jen.Return(jen.Id("in"), jen.True()),
	)
}
