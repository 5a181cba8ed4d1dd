package gateway

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/anvil-dev/anvil/runtime/air"
)

// effectGen prints one operation's effect and draft functions.
type effectGen struct {
	g      *generator
	f      *jen.File
	c      *Connector
	t      *Tool
	n      opNames
	in     *input
	paths  int  // path variables printed so far
	usedIn bool // the typed input was read
}

// pathVar prints a package-level air.Path and returns its name.
func (e *effectGen) pathVar(p air.Path) string {
	name := fmt.Sprintf("%sPath%d", e.n.input, e.paths)
	e.paths++
	var segs []jen.Code
	for _, s := range p.Segments {
		if s.IsIndex {
			segs = append(segs, jen.Values(jen.Dict{jen.Id("Index"): jen.Lit(s.Index), jen.Id("IsIndex"): jen.True()}))
		} else {
			segs = append(segs, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(s.Name)}))
		}
	}
	e.f.Var().Id(name).Op("=").Qual(pkgAir, "Path").Values(jen.Dict{
		jen.Id("Root"):     jen.Lit(p.Root),
		jen.Id("Segments"): jen.Index().Qual(pkgAir, "Segment").Values(segs...),
	})
	return name
}

// roots says what a mapping's paths may read.
type roots struct {
	requestOnly bool // draft arguments: request.* only
	noKey       bool // idempotency_key names nothing (staged objects)
}

// lookup prints `v, ok = <the value src names>` for a parsed path; it
// returns false when the path can never name anything.
func (e *effectGen) lookup(p air.Path, r roots) ([]jen.Code, bool) {
	vok := jen.List(jen.Id("v"), jen.Id("ok"))
	switch p.Root {
	case air.RootRequest:
		name := p.Segments[0].Name
		if p.Segments[0].IsIndex {
			e.usedIn = true
			return []jen.Code{jen.If(jen.Id("in").Op("==").Nil()).Block(jen.List(jen.Id("v"), jen.Id("ok")).Op("=").Id(e.pathVar(p)).Dot("Lookup").Call(jen.Id("c").Dot("Args")))}, true
		}
		full := e.pathVar(p)
		e.usedIn = true
		var typed []jen.Code
		if fl := e.in.byProp[name]; fl != nil {
			if len(p.Segments) == 1 {
				typed = []jen.Code{jen.If(value(fl)).Block(vok.Clone().Op("=").List(jen.Id("in."+fl.goName), jen.True()))}
			} else if fl.kind == kAny {
				rest := e.pathVar(air.Path{Root: p.Root, Segments: p.Segments[1:]})
				typed = []jen.Code{jen.If(value(fl)).Block(vok.Clone().Op("=").Id(rest).Dot("Lookup").Call(jen.Id("in." + fl.goName)))}
			}
		}
		return []jen.Code{jen.If(jen.Id("in").Op("!=").Nil()).Block(typed...).Else().Block(
			vok.Clone().Op("=").Id(full).Dot("Lookup").Call(jen.Id("c").Dot("Args")))}, true
	case air.RootResponse:
		if r.requestOnly {
			return nil, false
		}
		return []jen.Code{vok.Clone().Op("=").Id(e.pathVar(p)).Dot("Lookup").Call(jen.Id("c").Dot("Response"))}, true
	case air.RootIdempotencyKey:
		if r.requestOnly || r.noKey {
			return nil, false
		}
		return []jen.Code{jen.If(jen.Id("key").Op("!=").Lit("")).Block(vok.Clone().Op("=").List(jen.Id("key"), jen.True()))}, true
	}
	return nil, false
}

// usesRequest reports whether a mapping reads request.*.
func usesRequest(m air.Mapping) bool {
	for _, a := range m {
		if !a.ArgSource.IsConst() && strings.HasPrefix(a.ArgSource.Path, air.RootRequest) {
			return true
		}
	}
	return false
}

// mapping prints a function resolving m: func(c, key) (effect.Args, why).
func (e *effectGen) mapping(suffix string, m air.Mapping, r roots) string {
	name := e.n.effect + suffix
	e.usedIn = false
	var body []jen.Code
	usesKey, stopped, appended := false, false, false
	for _, arg := range m {
		src := arg.ArgSource
		if src.IsConst() {
			appended = true
			body = append(body, jen.Id("a").Op("=").Append(jen.Id("a"), jen.Qual(pkgEffect, "Arg").Values(jen.Dict{
				jen.Id("Name"):  jen.Lit(arg.Name),
				jen.Id("Value"): jen.Qual(pkgJSON, "RawMessage").Call(jen.Lit(string(src.Const))),
			})))
			continue
		}
		p, err := air.ParsePath(src.Path)
		if err != nil {
			body = append(body, jen.Return(jen.Nil(), jen.Qual(pkgHandler, "NotAPath").Call(jen.Lit(src.Path))))
			stopped = true
			break
		}
		look, possible := e.lookup(p, r)
		if p.Root == air.RootIdempotencyKey && possible {
			usesKey = true
		}
		missing := jen.Return(jen.Nil(), jen.Qual(pkgHandler, "NamesNothing").Call(jen.Lit(src.Path)))
		if !possible {
			if p.Optional {
				continue
			}
			body = append(body, missing)
			stopped = true
			break
		}
		found := jen.Id("a").Op("=").Append(jen.Id("a"), jen.Qual(pkgEffect, "Arg").Values(jen.Dict{
			jen.Id("Name"): jen.Lit(arg.Name), jen.Id("Value"): jen.Id("v")}))
		stmt := jen.If(jen.Id("ok")).Block(found)
		if !p.Optional {
			stmt = stmt.Else().Block(missing)
		}
		block := []jen.Code{jen.Var().Id("v").Any(), jen.Var().Id("ok").Bool()}
		block = append(block, look...)
		block = append(block, stmt)
		body = append(body, jen.Block(block...))
		appended = true
	}
	if !stopped {
		body = append(body, jen.Return(jen.Id("a"), jen.Lit("")))
	}
	if appended || !stopped {
		body = append([]jen.Code{jen.Id("a").Op(":=").Make(jen.Qual(pkgEffect, "Args"), jen.Lit(0), jen.Lit(len(m)))}, body...)
	}
	if e.usedIn {
		body = append([]jen.Code{jen.List(jen.Id("in"), jen.Id("_")).Op(":=").Id("c").Dot("Input").Assert(jen.Op("*").Id(e.n.input))}, body...)
	}
	keyParam := jen.Id("key").String()
	if !usesKey {
		keyParam = jen.Id("_").String()
	}
	e.f.Commentf("%s resolves a follow-up's arguments, in the mapping's order; why says what named nothing.", name)
	e.f.Func().Id(name).Params(jen.Id("c").Op("*").Qual(pkgHandler, "EffectCall"), keyParam).Params(jen.Qual(pkgEffect, "Args"), jen.String()).Block(body...)
	return name
}

// toolOf returns the wire name of an operation served by the connector.
func (e *effectGen) toolOf(opID string) (string, bool) {
	for _, t := range e.c.Tools {
		if t.Op.ID == opID {
			return t.Name, true
		}
	}
	return "", false
}

// followUp prints the resolution of a follow-up; onOK receives the
// effect.FollowUp expression, onWhy the reason expression (nil: ignore).
func (e *effectGen) followUp(suffix, operation string, m air.Mapping, key jen.Code, r roots,
	onOK func(fu jen.Code) []jen.Code, onWhy func(why jen.Code) []jen.Code) []jen.Code {
	tool, served := e.toolOf(operation)
	if !served {
		if onWhy == nil {
			return nil
		}
		return onWhy(jen.Qual(pkgHandler, "NotServed").Call(jen.Lit(operation)))
	}
	fn := e.mapping(suffix, m, r)
	fu := jen.Qual(pkgEffect, "FollowUp").Values(jen.Dict{
		jen.Id("Operation"): jen.Lit(operation), jen.Id("Tool"): jen.Lit(tool), jen.Id("Arguments"): jen.Id("a")})
	stmt := jen.If(jen.List(jen.Id("a"), jen.Id("why")).Op(":=").Id(fn).Call(jen.Id("c"), key), jen.Id("why").Op("==").Lit("")).Block(onOK(fu)...)
	if onWhy != nil {
		stmt = stmt.Else().Block(onWhy(jen.Id("why"))...)
	}
	return []jen.Code{stmt}
}

// deadline is the expression of a follow-up's deadline.
func (e *effectGen) deadline(d *air.Deadline) jen.Code {
	switch {
	case d == nil:
		return jen.Nil()
	case d.WithinMs != nil && d.At == "":
		return jen.Qual(pkgEffect, "DeadlineWithin").Call(jen.Id("c").Dot("Now"), jen.Lit(*d.WithinMs))
	case d.At != "" && d.WithinMs == nil:
		p, err := air.ParsePath(d.At)
		if err != nil || p.Root != air.RootResponse {
			return jen.Nil()
		}
		return jen.Qual(pkgHandler, "DeadlineAt").Call(jen.Id(e.pathVar(p)).Dot("Lookup").Call(jen.Id("c").Dot("Response")))
	}
	return jen.Nil()
}

// emitEffect prints the effect function (effect.Build for this operation)
// and, for an operation with a draft form, its staged object and draft
// mapping.
func (g *generator) emitEffect(f *jen.File, c *Connector, t *Tool, n opNames, in *input) {
	op := t.Op
	e := &effectGen{g: g, f: f, c: c, t: t, n: n, in: in}
	defer func() {
		if op.Effect.Draft != nil {
			g.emitDraft(e)
		}
	}()
	class := air.EffectClassOf(op)
	key := jen.Id("c").Dot("IdempotencyKey")
	var body []jen.Code
	body = append(body, jen.Id("r").Op(":=").Op("&").Qual(pkgEffect, "Report").Values(jen.Dict{
		jen.Id("Class"): classConst(class), jen.Id("Operation"): jen.Lit(op.ID), jen.Id("IdempotencyKey"): jen.Id("c").Dot("IdempotencyKey"),
	}))
	if class != air.ClassRead {
		eff := &op.Effect
		if l := eff.Lookup; l != nil {
			body = append(body, e.followUp("Lookup", l.Operation, l.Arguments, key, roots{}, func(fu jen.Code) []jen.Code {
				return []jen.Code{jen.Id("r").Dot("Lookup").Op("=").Op("&").Qual(pkgEffect, "Lookup").Values(jen.Dict{
					jen.Id("FollowUp"): fu, jen.Id("By"): jen.Lit(l.By)})}
			}, nil)...)
		}
		body = append(body, jen.If(jen.Id("c").Dot("Failed")).Block(jen.Return(jen.Id("r"))))
		staged := jen.Return(jen.Id("r"))
		if eff.Draft != nil {
			sn := g.emitStaged(e, eff.Draft)
			body = append(body, jen.If(jen.Id("c").Dot("Staged")).Block(jen.Id("r").Dot("Staged").Op("=").Id(sn).Call(jen.Id("c")), staged))
		} else {
			body = append(body, jen.If(jen.Id("c").Dot("Staged")).Block(staged))
		}
		undoUnavailable := func(why jen.Code) []jen.Code {
			return []jen.Code{jen.Id("r").Dot("UndoUnavailable").Op("=").Qual(pkgHandler, "UndoUnavailable").Call(why)}
		}
		switch class {
		case air.ClassReversible:
			if eff.Inverse == nil {
				body = append(body, undoUnavailable(jen.Lit("the operation declares no inverse"))...)
			} else {
				inv := eff.Inverse
				body = append(body, e.followUp("Inverse", inv.Operation, inv.Arguments, key, roots{}, func(fu jen.Code) []jen.Code {
					return []jen.Code{
						jen.Id("r").Dot("Undo").Op("=").Op("&").Qual(pkgEffect, "Undo").Values(jen.Dict{jen.Id("Kind"): jen.Qual(pkgEffect, "KindInverse"), jen.Id("FollowUp"): fu}),
						jen.Id("r").Dot("DeadlineMs").Op("=").Add(e.deadline(inv.Deadline)),
					}
				}, undoUnavailable)...)
			}
			if cp := eff.Compensate; cp != nil {
				body = append(body, e.followUp("Compensate", cp.Operation, cp.Arguments, key, roots{}, func(fu jen.Code) []jen.Code {
					return []jen.Code{jen.Id("r").Dot("Compensate").Op("=").Op("&").Qual(pkgEffect, "Compensation").Values(jen.Dict{
						jen.Id("FollowUp"): fu, jen.Id("DeadlineMs"): e.deadline(cp.Deadline)})}
				}, nil)...)
			}
		case air.ClassCompensable:
			if eff.Compensate == nil {
				body = append(body, undoUnavailable(jen.Lit("the operation declares no compensation"))...)
			} else {
				cp := eff.Compensate
				body = append(body, e.followUp("Compensate", cp.Operation, cp.Arguments, key, roots{}, func(fu jen.Code) []jen.Code {
					return []jen.Code{
						jen.Id("r").Dot("Undo").Op("=").Op("&").Qual(pkgEffect, "Undo").Values(jen.Dict{jen.Id("Kind"): jen.Qual(pkgEffect, "KindCompensate"), jen.Id("FollowUp"): fu}),
						jen.Id("r").Dot("DeadlineMs").Op("=").Add(e.deadline(cp.Deadline)),
					}
				}, undoUnavailable)...)
			}
		}
	}
	body = append(body, jen.Return(jen.Id("r")))
	f.Commentf("%s reports what a call of %s did and how to undo it.", n.effect, op.ID)
	f.Func().Id(n.effect).Params(jen.Id("c").Op("*").Qual(pkgHandler, "EffectCall")).Op("*").Qual(pkgEffect, "Report").Block(body...)
}

// emitStaged prints the staged object of a staged call (effect.BuildStaged).
func (g *generator) emitStaged(e *effectGen, d *air.Draft) string {
	name := e.n.effect + "Staged"
	body := []jen.Code{
		jen.Id("s").Op(":=").Op("&").Qual(pkgEffect, "Staged").Values(jen.Dict{jen.Id("DraftOperation"): jen.Lit(d.Operation)}),
	}
	r := roots{noKey: true}
	if d.Handle != "" {
		if p, err := air.ParsePath(d.Handle); err == nil {
			e.usedIn = false
			if look, ok := e.lookup(p, r); ok {
				if e.usedIn {
					body = append(body, jen.List(jen.Id("in"), jen.Id("_")).Op(":=").Id("c").Dot("Input").Assert(jen.Op("*").Id(e.n.input)))
				}
				block := []jen.Code{jen.Var().Id("v").Any(), jen.Var().Id("ok").Bool()}
				block = append(block, look...)
				block = append(block, jen.If(jen.Id("ok")).Block(jen.Id("s").Dot("Handle").Op("=").Id("v")))
				body = append(body, jen.Block(block...))
			}
		}
	}
	body = append(body, jen.Var().Id("promote").String())
	body = append(body, e.followUp("Promote", d.Promote.Operation, d.Promote.Arguments, jen.Lit(""), r,
		func(fu jen.Code) []jen.Code {
			return []jen.Code{jen.Id("s").Dot("Promote").Op("=").Op("&").Add(fu)}
		}, func(why jen.Code) []jen.Code {
			return []jen.Code{jen.Id("promote").Op("=").Add(why)}
		})...)
	discard := jen.Lit("")
	if d.Discard != nil {
		body = append(body, jen.Var().Id("discard").String())
		body = append(body, e.followUp("Discard", d.Discard.Operation, d.Discard.Arguments, jen.Lit(""), r,
			func(fu jen.Code) []jen.Code {
				return []jen.Code{jen.Id("s").Dot("Discard").Op("=").Op("&").Add(fu)}
			}, func(why jen.Code) []jen.Code {
				return []jen.Code{jen.Id("discard").Op("=").Add(why)}
			})...)
		discard = jen.Id("discard")
	}
	body = append(body,
		jen.Id("s").Dot("Unavailable").Op("=").Qual(pkgHandler, "StagedUnavailable").Call(jen.Id("promote"), discard),
		jen.Return(jen.Id("s")))
	e.f.Commentf("%s builds the staged object of a staged call.", name)
	e.f.Func().Id(name).Params(jen.Id("c").Op("*").Qual(pkgHandler, "EffectCall")).Op("*").Qual(pkgEffect, "Staged").Block(body...)
	return name
}

// emitDraft prints the draft mapping: the staged call's typed input to the
// draft's typed input, in the mapping's order (effect.ResolveDraft).
func (g *generator) emitDraft(e *effectGen) {
	f, c, t, n, in := e.f, e.c, e.t, e.n, e.in
	d := t.Op.Effect.Draft
	f.Commentf("%s maps a staged call's input to its draft's input.", n.draft)
	results := jen.Params(jen.Qual(pkgHandler, "Input"), jen.Op("*").Qual(pkgHandler, "DraftMissing"))
	var target *opInfo
	for _, o := range g.ops[c.ID] {
		if o.tool.Op.ID == d.Operation {
			target = o
		}
	}
	if target == nil {
		// The draft operation is not served: the runtime refuses before
		// calling this (effect/draft_unavailable).
		f.Func().Id(n.draft).Params(jen.Id("_").Qual(pkgHandler, "Input")).Add(results).Block(jen.Return(jen.Nil(), jen.Nil()))
		return
	}
	din := target.in
	missing := func(arg string, reason jen.Code) jen.Code {
		return jen.Return(jen.Nil(), jen.Op("&").Qual(pkgHandler, "DraftMissing").Values(jen.Dict{
			jen.Id("Argument"): jen.Lit(arg), jen.Id("Reason"): reason}))
	}
	usedIn := false
	body := []jen.Code{jen.Id("d").Op(":=").Op("&").Id(target.names.input).Values()}
	stopped := false
	for i, arg := range d.Arguments {
		src := arg.ArgSource
		tf := din.byProp[arg.Name]
		if src.IsConst() {
			body = append(body, assignConst(tf, arg.Name, src.Const)...)
			continue
		}
		p, err := air.ParsePath(src.Path)
		if err != nil {
			body = append(body, missing(arg.Name, jen.Qual(pkgHandler, "NotAPath").Call(jen.Lit(src.Path))))
			stopped = true
			break
		}
		nothing := missing(arg.Name, jen.Qual(pkgHandler, "NamesNothing").Call(jen.Lit(src.Path)))
		var sf *field
		if p.Root == air.RootRequest && !p.Segments[0].IsIndex {
			sf = in.byProp[p.Segments[0].Name]
		}
		if sf == nil || (len(p.Segments) > 1 && sf.kind != kAny) {
			// Nothing can be found there (draft arguments read request.* only).
			if p.Optional {
				continue
			}
			body = append(body, nothing)
			stopped = true
			break
		}
		usedIn = true
		var stmt *jen.Statement
		if len(p.Segments) == 1 {
			stmt = jen.If(value(sf)).Block(assignField(tf, arg.Name, sf)...)
		} else {
			rest := e.pathVar(air.Path{Root: p.Root, Segments: p.Segments[1:]})
			v := fmt.Sprintf("v%d", i)
			body = append(body, jen.Var().Id(v).Any(), jen.Var().Id(v+"ok").Bool(),
				jen.If(value(sf)).Block(jen.List(jen.Id(v), jen.Id(v+"ok")).Op("=").Id(rest).Dot("Lookup").Call(jen.Id("in."+sf.goName))))
			stmt = jen.If(jen.Id(v + "ok")).Block(assignDynamic(tf, arg.Name, jen.Id(v))...)
		}
		if !p.Optional {
			stmt = stmt.Else().Block(nothing)
		}
		body = append(body, stmt)
	}
	if !stopped {
		body = append(body, jen.Return(jen.Id("d"), jen.Nil()))
	}
	param := jen.Id("_").Qual(pkgHandler, "Input")
	if usedIn {
		param = jen.Id("in0").Qual(pkgHandler, "Input")
		body = append([]jen.Code{jen.Id("in").Op(":=").Id("in0").Assert(jen.Op("*").Id(n.input))}, body...)
	}
	f.Func().Id(n.draft).Params(param).Add(results).Block(body...)
}

// dset is "d's field is set" (on the draft's input d).
func dset(tf *field) []jen.Code {
	out := []jen.Code{jen.Id("d." + hasName(tf)).Op("=").True()}
	if tf.nullable {
		out = append(out, jen.Id("d."+nullName(tf)).Op("=").False())
	}
	return out
}

// dextra stores a value the draft's typed fields cannot take.
func dextra(name string, v jen.Code, bad bool) []jen.Code {
	out := []jen.Code{
		jen.If(jen.Id("d.extra").Op("==").Nil()).Block(jen.Id("d.extra").Op("=").Map(jen.String()).Any().Values()),
		jen.Id("d.extra").Index(jen.Lit(name)).Op("=").Add(v),
	}
	if bad {
		out = append(out, jen.Id("d.bad").Op("=").True())
	}
	return out
}

// assignField copies a present typed field of the staged input into the
// draft's field.
func assignField(tf *field, name string, sf *field) []jen.Code {
	src := jen.Id("in." + sf.goName)
	switch {
	case tf == nil:
		return dextra(name, src, false)
	case tf.kind == kAny:
		return append([]jen.Code{jen.Id("d." + tf.goName).Op("=").Add(src)}, dset(tf)[0])
	case sf.kind == tf.kind:
		return append([]jen.Code{jen.Id("d." + tf.goName).Op("=").Add(src)}, dset(tf)...)
	case sf.kind == kAny:
		return assignDynamic(tf, name, src)
	}
	return dextra(name, src, true)
}

// assignDynamic copies any value into the draft's field, checking its type.
func assignDynamic(tf *field, name string, v jen.Code) []jen.Code {
	if tf == nil {
		return dextra(name, v, false)
	}
	if tf.kind == kAny {
		return append([]jen.Code{jen.Id("d." + tf.goName).Op("=").Add(v)}, dset(tf)[0])
	}
	typ := goType(tf) // tf.kind is not kAny here
	ok := append([]jen.Code{jen.Id("d." + tf.goName).Op("=").Id("x")}, dset(tf)...)
	return []jen.Code{jen.If(jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Add(v).Assert(typ), jen.Id("ok")).Block(ok...).
		Else().Block(dextra(name, v, true)...)}
}

// assignConst sets a literal on the draft's field.
func assignConst(tf *field, name string, raw json.RawMessage) []jen.Code {
	v := decodeJSON(raw)
	var lit jen.Code
	switch x := v.(type) {
	case string:
		lit = jen.Lit(x)
	case bool:
		lit = jen.Lit(x)
	case json.Number:
		lit = jen.Qual(pkgJSON, "Number").Call(jen.Lit(string(x)))
	case nil:
		lit = jen.Nil()
	default:
		lit = jen.Qual(pkgHandler, "DecodeJSON").Call(jen.Lit(string(raw)))
	}
	if tf == nil {
		return dextra(name, lit, false)
	}
	if tf.kind == kAny {
		return append([]jen.Code{jen.Id("d." + tf.goName).Op("=").Add(lit)}, dset(tf)[0])
	}
	match := false
	switch v.(type) {
	case string:
		match = tf.kind == kString
	case bool:
		match = tf.kind == kBool
	case json.Number:
		match = tf.kind == kNumber
	case nil:
		if tf.nullable {
			return []jen.Code{jen.Id("d." + hasName(tf)).Op("=").True(), jen.Id("d." + nullName(tf)).Op("=").True()}
		}
	}
	if match {
		return append([]jen.Code{jen.Id("d." + tf.goName).Op("=").Add(lit)}, dset(tf)...)
	}
	return dextra(name, lit, true)
}

// classConst names an effect class by its air constant (a literal for a
// class AIR does not define).
func classConst(class string) jen.Code {
	switch class {
	case air.ClassRead:
		return jen.Qual(pkgAir, "ClassRead")
	case air.ClassReversible:
		return jen.Qual(pkgAir, "ClassReversible")
	case air.ClassCompensable:
		return jen.Qual(pkgAir, "ClassCompensable")
	case air.ClassIrreversible:
		return jen.Qual(pkgAir, "ClassIrreversible")
	}
	return jen.Lit(class)
}
