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
	pkgJSON     = "encoding/json"
	pkgHTTP     = "net/http"
)

// packageNames are the names of the packages generated code imports, so
// that their import lines need no alias.
var packageNames = map[string]string{
	pkgHandler: "handler", pkgServe: "serve", pkgUpstream: "upstream", pkgAir: "air", pkgEffect: "effect",
}

// Presence is ogen's: every argument is a handler.Opt[T] (Value, Set, Null),
// and the control inputs live in the handler.Controls every input struct
// embeds. ref is a field as an expression of the struct in ("in.Owner").

func ref(f *field) *jen.Statement { return jen.Id("in." + f.goName) }

// set is "the field is given"; present "given and not null".
func set(f *field) *jen.Statement     { return ref(f).Dot("Set") }
func present(f *field) *jen.Statement { return ref(f).Dot("Present").Call() }

// goType is the Go type of a field's value.
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

// optType is a field's type: handler.Opt of its value's.
func optType(f *field) *jen.Statement { return jen.Qual(pkgHandler, "Opt").Types(goType(f)) }

// opNames are the Go names of one operation's generated declarations.
type opNames struct {
	input  string // the input struct
	decode string
	build  string
	effect string
	draft  string
}

func newOpNames(base string) opNames {
	return opNames{
		input:  base + "Input",
		decode: "decode" + exportedName(base),
		build:  "build" + exportedName(base),
		effect: "effect" + exportedName(base),
		draft:  "draft" + exportedName(base),
	}
}

// emitInput prints the input struct of op with its Fields, Validate and
// decoder, and accessors for control inputs the schema declares otherwise
// than handler.Controls expects.
func (g *generator) emitInput(f *jen.File, t *Tool, n opNames, in *input) {
	op := t.Op
	f.Commentf("%s holds the arguments of %s (%s).", n.input, t.Name, op.ID)
	fields := []jen.Code{jen.Qual(pkgHandler, "Controls")}
	for _, fl := range in.fields {
		if !fl.slot {
			fields = append(fields, jen.Id(fl.goName).Add(optType(fl)).Comment(strconv.Quote(fl.prop)))
		}
	}
	f.Type().Id(n.input).Struct(fields...)
	for _, fl := range in.fields {
		if fl.pattern != "" {
			f.Var().Id(patternName(n, fl)).Op("=").Qual("regexp", "MustCompile").Call(jen.Lit(fl.pattern))
		}
	}
	f.Line()
	emitFields(f, n, in)
	emitValidate(f, n, in)
	emitDecode(f, n, in)
	emitControls(f, op, n, in)
}

func patternName(n opNames, fl *field) string { return n.input + "Pattern" + fl.goName }

func recv(n opNames) *jen.Statement { return jen.Params(jen.Id("in").Op("*").Id(n.input)) }

// kindMethod is the name of a kind's handler.Fields and ArgReader methods.
func kindMethod(k kind) string {
	switch k {
	case kString:
		return "String"
	case kNumber:
		return "Number"
	case kBool:
		return "Bool"
	}
	return "Any"
}

// emitFields prints Fields: every argument in canonical key order, which
// handler.Controls turns into Args and the audit hash.
func emitFields(f *jen.File, n opNames, in *input) {
	var body []jen.Code
	for _, fl := range in.fields {
		if fl.secret {
			body = append(body, jen.Qual(pkgHandler, "Redacted").Call(jen.Id("f"), jen.Lit(fl.prop), ref(fl)))
			continue
		}
		body = append(body, jen.Id("f").Dot(kindMethod(fl.kind)).Call(jen.Lit(fl.prop), ref(fl)))
	}
	f.Comment("Fields lists the arguments in canonical key order.")
	f.Func().Add(recv(n)).Id("Fields").Params(jen.Id("f").Op("*").Qual(pkgHandler, "Fields")).Block(body...)
}

// emitValidate prints Validate: one check per rule of the schema the
// generator specialises, the first refusal winning.
func emitValidate(f *jen.File, n opNames, in *input) {
	closed := jen.Qual(pkgHandler, "Open")
	if in.closed {
		closed = jen.Qual(pkgHandler, "Closed")
	}
	checks := []jen.Code{jen.Id("in").Dot("CheckLoose").Call(closed)}
	for _, fl := range in.fields {
		if fl.required {
			checks = append(checks, jen.Qual(pkgHandler, "Required").Call(jen.Lit(fl.prop), set(fl)))
		}
	}
	for _, fl := range in.fields {
		switch {
		case fl.never:
			checks = append(checks, rule(fl, "false", set(fl)))
		case fl.kind == kAny:
		default:
			if fl.nullable && fl.hasEnum && !fl.nullInEnum {
				checks = append(checks, rule(fl, "enum", ref(fl).Dot("Null")))
			}
			checks = append(checks, scalarChecks(n, fl)...)
		}
	}
	f.Comment("Validate checks the arguments against the input schema.")
	if len(checks) == 1 {
		f.Func().Add(recv(n)).Id("Validate").Params().Error().Block(jen.Return(checks[0]))
		return
	}
	lines := make([]jen.Code, len(checks))
	for i, c := range checks {
		lines[i] = jen.Line().Add(c)
	}
	f.Func().Add(recv(n)).Id("Validate").Params().Error().Block(
		jen.Return(jen.Qual(pkgHandler, "Checks").Call(append(lines, jen.Line())...)))
}

// rule is handler.Rule: argument fl fails rule when failed holds.
func rule(fl *field, name string, failed jen.Code) jen.Code {
	return jen.Qual(pkgHandler, "Rule").Call(jen.Lit(fl.prop), jen.Lit(name), failed)
}

// scalarChecks are the checks of a scalar field's value.
func scalarChecks(n opNames, fl *field) []jen.Code {
	key, v := jen.Lit(fl.prop), ref(fl)
	call := func(name string, args ...jen.Code) jen.Code {
		return jen.Qual(pkgHandler, name).Call(append([]jen.Code{key, v.Clone()}, args...)...)
	}
	var out []jen.Code
	switch fl.kind {
	case kString:
		if fl.hasEnum {
			if len(fl.strEnum) == 0 {
				return []jen.Code{rule(fl, "enum", present(fl))}
			}
			var values []jen.Code
			for _, s := range fl.strEnum {
				values = append(values, jen.Lit(s))
			}
			out = append(out, call("OneOf", values...))
		}
		if fl.minLen != nil || fl.maxLen != nil {
			bound := func(b *int) jen.Code {
				if b == nil {
					return jen.Lit(-1)
				}
				return jen.Lit(*b)
			}
			out = append(out, call("Length", bound(fl.minLen), bound(fl.maxLen)))
		}
		if fl.pattern != "" {
			out = append(out, call("Pattern", jen.Id(patternName(n, fl))))
		}
	case kNumber:
		if fl.integer {
			out = append(out, call("Integer"))
		}
		if fl.hasEnum {
			if len(fl.numEnum) == 0 {
				return append(out, rule(fl, "enum", present(fl)))
			}
			var values []jen.Code
			for _, s := range fl.numEnum {
				values = append(values, jen.Lit(s))
			}
			out = append(out, call("NumberOneOf", values...))
		}
		for _, b := range []struct{ name, bound string }{
			{"Minimum", fl.minimum}, {"Maximum", fl.maximum}, {"ExclusiveMinimum", fl.exclMin}, {"ExclusiveMaximum", fl.exclMax},
		} {
			if b.bound != "" {
				out = append(out, call(b.name, jen.Lit(b.bound)))
			}
		}
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
				out = append(out, call("BoolIs", jen.True()))
			case fa:
				out = append(out, call("BoolIs", jen.False()))
			default:
				out = append(out, rule(fl, "enum", present(fl)))
			}
		}
	}
	return out
}

// readMethod is the ArgReader method that reads a field.
func readMethod(fl *field) string {
	m := kindMethod(fl.kind)
	if fl.nullable && fl.kind != kAny {
		m += "OrNull"
	}
	return m
}

// emitDecode prints the operation's decoder: handler.ArgReader over the
// arguments, one case per property.
func emitDecode(f *jen.File, n opNames, in *input) {
	var loop jen.Code
	extra := jen.Id("r").Dot("Extra").Call()
	if len(in.fields) == 0 {
		loop = jen.For(jen.Id("r").Dot("Next").Call()).Block(extra)
	} else {
		var cases []jen.Code
		for _, fl := range in.fields {
			cases = append(cases, jen.Case(jen.Lit(fl.prop)).Block(
				jen.Id("r").Dot(readMethod(fl)).Call(jen.Op("&").Add(ref(fl)))))
		}
		cases = append(cases, jen.Default().Block(extra))
		loop = jen.For(jen.Id("r").Dot("Next").Call()).Block(
			jen.Switch(jen.String().Parens(jen.Id("r").Dot("Key").Call())).Block(cases...))
	}
	f.Commentf("%s reads the arguments: the input, and the first rule they fail.", n.decode)
	f.Func().Id(n.decode).Params(jen.Id("raw").Index().Byte()).Params(jen.Qual(pkgHandler, "Input"), jen.Error()).Block(
		jen.Id("in").Op(":=").Op("&").Id(n.input).Values(),
		jen.Id("r").Op(":=").Qual(pkgHandler, "NewReader").Call(jen.Id("raw"), jen.Id("in")),
		loop,
		jen.Return(jen.Id("r").Dot("Finish").Call()),
	)
}

// emitControls prints the accessors of the control inputs that
// handler.Controls cannot serve: one the schema declares with another type
// than it expects (or nullable), and one it does not declare although the
// operation names it. The AIR lowering writes has none.
func emitControls(f *jen.File, op *air.Operation, n opNames, in *input) {
	emitBoolControl(f, n, in, air.DryRunKey, false)
	if ck := confirmKey(op); in.byProp[ck] != nil || op.Input.Safety.ConfirmKey != "" {
		emitBoolControl(f, n, in, ck, true)
	}
	if k := op.Input.Safety.IdempotencyKey; k != "" {
		emitCarrier(f, n, in, k)
	}
}

// emitBoolControl prints DryRun/SetDryRun or Confirm/SetConfirm for a
// control input key that is not a Controls field.
func emitBoolControl(f *jen.File, n opNames, in *input, key string, confirm bool) {
	fl := in.byProp[key]
	if fl != nil && fl.slot {
		return
	}
	get, setter, what := "DryRun", "SetDryRun", "anvil_dry_run"
	val := jen.True()
	if confirm {
		get, setter, what, val = "Confirm", "SetConfirm", "the confirm input", jen.Id("v")
	}
	loose := jen.Id("in").Dot("LooseBool").Call(jen.Lit(key))
	var getBody, setBody []jen.Code
	switch {
	case fl == nil:
		if !confirm { // Controls.DryRun reads it where it is, in Extra
			setBody = []jen.Code{jen.Id("in").Dot("SetExtra").Call(jen.Lit(key), val)}
			break
		}
		getBody = []jen.Code{jen.Return(loose)}
		setBody = []jen.Code{jen.Id("in").Dot("SetExtra").Call(jen.Lit(key), val)}
	default:
		var v jen.Code
		switch fl.kind {
		case kBool: // nullable
			v = ref(fl).Dot("Value").Op("&&").Op("!").Add(ref(fl)).Dot("Null")
			setBody = []jen.Code{jen.Qual(pkgHandler, "Set").Call(jen.Op("&").Id("in").Dot("Controls"), jen.Lit(key), jen.Op("&").Add(ref(fl)), val)}
		case kAny:
			getBody = []jen.Code{jen.List(jen.Id("b"), jen.Id("_")).Op(":=").Add(ref(fl)).Dot("Value").Assert(jen.Bool())}
			v = jen.Id("b")
			setBody = []jen.Code{jen.Qual(pkgHandler, "Set").Call(jen.Op("&").Id("in").Dot("Controls"), jen.Lit(key), jen.Op("&").Add(ref(fl)), jen.Any().Parens(val))}
		default: // another type: it can only be wrong
			v = jen.False()
			setBody = []jen.Code{jen.Qual(pkgHandler, "Misfit").Call(jen.Op("&").Id("in").Dot("Controls"), jen.Lit(key), jen.Op("&").Add(ref(fl)), val)}
		}
		if confirm {
			getBody = append(getBody, jen.Return(v, jen.True()))
			getBody = []jen.Code{jen.If(set(fl)).Block(getBody...), jen.Return(loose)}
		} else {
			getBody = append(getBody, jen.Return(v))
			getBody = []jen.Code{jen.If(set(fl)).Block(getBody...),
				jen.List(jen.Id("b"), jen.Id("_")).Op(":=").Add(loose), jen.Return(jen.Id("b"))}
		}
	}
	if getBody != nil {
		if confirm {
			f.Commentf("%s reads %s: its value and whether it is present.", get, what)
			f.Func().Add(recv(n)).Id(get).Params().Params(jen.Bool(), jen.Bool()).Block(getBody...)
		} else {
			f.Commentf("%s reports whether %s is true.", get, what)
			f.Func().Add(recv(n)).Id(get).Params().Bool().Block(getBody...)
		}
	}
	if confirm {
		f.Commentf("%s sets %s.", setter, what)
		f.Func().Add(recv(n)).Id(setter).Params(jen.Id("v").Bool()).Block(setBody...)
		return
	}
	f.Commentf("%s sets %s to true.", setter, what)
	f.Func().Add(recv(n)).Id(setter).Params().Block(setBody...)
}

// emitCarrier prints IdempotencyKey/SetIdempotencyKey for a carrier input
// k that is not a Controls field.
func emitCarrier(f *jen.File, n opNames, in *input, k string) {
	fl := in.byProp[k]
	if fl != nil && fl.slot {
		return
	}
	loose := jen.Return(jen.Id("in").Dot("LooseString").Call(jen.Lit(k)))
	var getBody, setBody []jen.Code
	switch {
	case fl == nil:
		getBody = []jen.Code{loose}
		setBody = []jen.Code{jen.Id("in").Dot("SetExtra").Call(jen.Lit(k), jen.Id("key"))}
	case fl.kind == kString: // nullable
		getBody = []jen.Code{jen.If(present(fl)).Block(jen.Return(ref(fl).Dot("Value"), jen.True(), jen.True())), loose}
		setBody = []jen.Code{jen.Qual(pkgHandler, "Set").Call(jen.Op("&").Id("in").Dot("Controls"), jen.Lit(k), jen.Op("&").Add(ref(fl)), jen.Id("key"))}
	default: // kAny: analyseInput makes a carrier of another type one
		getBody = []jen.Code{jen.If(present(fl)).Block(
			jen.List(jen.Id("s"), jen.Id("isString")).Op(":=").Add(ref(fl)).Dot("Value").Assert(jen.String()),
			jen.Return(jen.Id("s"), jen.Id("isString"), jen.True())), loose}
		setBody = []jen.Code{jen.Qual(pkgHandler, "Set").Call(jen.Op("&").Id("in").Dot("Controls"), jen.Lit(k), jen.Op("&").Add(ref(fl)), jen.Any().Parens(jen.Id("key")))}
	}
	f.Comment("IdempotencyKey reads the idempotency carrier input.")
	f.Func().Add(recv(n)).Id("IdempotencyKey").Params().Params(jen.Id("s").String(), jen.Id("isString"), jen.Id("present").Bool()).Block(getBody...)
	f.Comment("SetIdempotencyKey sets the idempotency carrier input.")
	f.Func().Add(recv(n)).Id("SetIdempotencyKey").Params(jen.Id("key").String()).Block(setBody...)
}
