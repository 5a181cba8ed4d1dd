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
	paths  map[string]string // the path variables printed, by path
	usedIn bool              // the typed input was read
	mapped bool              // a Mapping variable m is declared
}

// pathVar prints a package-level air.Path, once per operation and path,
// and returns its name.
func (e *effectGen) pathVar(p air.Path) string {
	p.Optional = false
	if name, ok := e.paths[p.String()]; ok {
		return name
	}
	name := fmt.Sprintf("%sPath%d", e.n.input, len(e.paths))
	e.paths[p.String()] = name
	var segs []jen.Code
	for _, s := range p.Segments {
		if s.IsIndex {
			segs = append(segs, jen.Values(jen.Id("Index").Op(":").Lit(s.Index), jen.Id("IsIndex").Op(":").True()))
		} else {
			segs = append(segs, jen.Values(jen.Id("Name").Op(":").Lit(s.Name)))
		}
	}
	root := jen.Code(jen.Lit(p.Root))
	switch p.Root {
	case air.RootRequest:
		root = jen.Qual(pkgAir, "RootRequest")
	case air.RootResponse:
		root = jen.Qual(pkgAir, "RootResponse")
	}
	e.f.Var().Id(name).Op("=").Qual(pkgAir, "Path").Values(
		jen.Id("Root").Op(":").Add(root),
		jen.Id("Segments").Op(":").Index().Qual(pkgAir, "Segment").Values(segs...))
	return name
}

// roots says what a mapping's paths may read.
type roots struct {
	noResponse bool // the draft mapping's arguments: request.* only
	noKey      bool // idempotency_key names nothing (staged objects)
}

// possible reports whether path p can name something under r.
func possible(p air.Path, r roots) bool {
	switch p.Root {
	case air.RootRequest:
		return true
	case air.RootResponse:
		return !r.noResponse
	case air.RootIdempotencyKey:
		return !r.noResponse && !r.noKey
	}
	return false
}

// source is how argument arg's path reads its value: the Mapping call
// completing m.Arg(name, path), or nil when the path can never name
// anything.
func (e *effectGen) source(p air.Path, r roots) jen.Code {
	if !possible(p, r) {
		return nil
	}
	switch p.Root {
	case air.RootRequest:
		e.usedIn = true
		fl := e.in.byProp[p.Segments[0].Name]
		switch {
		case p.Segments[0].IsIndex || fl == nil:
			// Only an argument no typed field holds can be there.
			return jen.Dot("Request").Call(jen.Nil(), jen.False())
		case len(p.Segments) == 1:
			return jen.Dot("Request").Call(ref(fl).Dot("Any").Call())
		case fl.kind == kAny:
			rest := e.pathVar(air.Path{Root: p.Root, Segments: p.Segments[1:]})
			return jen.Dot("Request").Call(jen.Id(rest).Dot("Lookup").Call(ref(fl).Dot("Value")))
		}
		return jen.Dot("Request").Call(jen.Nil(), jen.False())
	case air.RootResponse:
		return jen.Dot("Value").Call(jen.Id(e.pathVar(p)).Dot("Lookup").Call(jen.Id("c").Dot("Response")))
	case air.RootIdempotencyKey:
		key := jen.Id("c").Dot("IdempotencyKey")
		return jen.Dot("Value").Call(key, key.Clone().Op("!=").Lit(""))
	}
	return nil
}

// mapping prints the resolution of m's arguments into the Mapping m.
func (e *effectGen) mapping(m air.Mapping, r roots) []jen.Code {
	e.usedIn = true // the Mapping reads the input's loose arguments
	start := jen.Id("m").Op("=")
	if !e.mapped {
		e.mapped = true
		start = jen.Id("m").Op(":=")
	}
	out := []jen.Code{start.Qual(pkgHandler, "NewMapping").Call(jen.Op("&").Id("in").Dot("Controls"), jen.Lit(len(m)))}
	for _, arg := range m {
		src := arg.ArgSource
		if src.IsConst() {
			out = append(out, jen.Id("m").Dot("Const").Call(jen.Lit(arg.Name), rawLit(string(src.Const))))
			continue
		}
		p, err := air.ParsePath(src.Path)
		if err != nil {
			return append(out, jen.Id("m").Dot("Fail").Call(jen.Qual(pkgHandler, "NotAPath").Call(jen.Lit(src.Path))))
		}
		read := e.source(p, r)
		if read == nil {
			if p.Optional {
				continue
			}
			return append(out, jen.Id("m").Dot("Fail").Call(jen.Qual(pkgHandler, "NamesNothing").Call(jen.Lit(src.Path))))
		}
		out = append(out, jen.Id("m").Dot("Arg").Call(jen.Lit(arg.Name), jen.Lit(src.Path)).Add(read))
	}
	return out
}

// rawLit is a JSON literal as a Go string: raw (`"closed"`) when it can be.
func rawLit(s string) jen.Code {
	if !strings.ContainsAny(s, "`\r") {
		return jen.Op("`" + s + "`")
	}
	return jen.Lit(s)
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

// mapsArguments reports whether op's effect report maps arguments (and so
// has a generated effect function): effect.Build writes any other report
// from the AIR alone.
func mapsArguments(op *air.Operation) bool {
	if air.EffectClassOf(op) == air.ClassRead {
		return false
	}
	e := &op.Effect
	return e.Lookup != nil || e.Inverse != nil || e.Compensate != nil || e.Draft != nil
}

// emitEffect prints the effect function (effect.Build for this operation)
// and, for an operation with a draft form, its staged object and draft
// mapping.
func (g *generator) emitEffect(f *jen.File, c *Connector, t *Tool, n opNames, in *input) {
	op := t.Op
	e := &effectGen{g: g, f: f, c: c, t: t, n: n, in: in, paths: map[string]string{}}
	if op.Effect.Draft != nil {
		defer g.emitDraft(e)
	}
	if !mapsArguments(op) {
		return
	}
	class := air.EffectClassOf(op)
	eff := &op.Effect
	body := []jen.Code{jen.Id("r").Op(":=").Qual(pkgHandler, "NewReport").Call(jen.Id("c"), classConst(class), jen.Lit(op.ID))}
	r := jen.Id("r")
	if l := eff.Lookup; l != nil {
		if tool, served := e.toolOf(l.Operation); served {
			body = append(body, e.mapping(l.Arguments, roots{})...)
			body = append(body, jen.Id("m").Dot("Lookup").Call(r, jen.Lit(l.Operation), jen.Lit(tool), jen.Lit(string(l.By))))
		}
	}
	switch {
	case eff.Draft != nil:
		body = append(body, jen.If(jen.Id("c").Dot("Failed")).Block(jen.Return(r)),
			jen.If(jen.Id("c").Dot("Staged")).Block(jen.Id("r").Dot("Staged").Op("=").Id(g.emitStaged(e, eff.Draft)).Call(jen.Id("c")), jen.Return(r)))
	default:
		body = append(body, jen.If(jen.Id("c").Dot("Failed").Op("||").Id("c").Dot("Staged")).Block(jen.Return(r)))
	}
	undo := func(kind string, fu *air.FollowUp, none string) {
		if fu == nil {
			body = append(body, jen.Id("r").Dot("UndoUnavailable").Op("=").Qual(pkgHandler, "UndoUnavailable").Call(jen.Lit(none)))
			return
		}
		tool, served := e.toolOf(fu.Operation)
		if !served {
			body = append(body, jen.Id("r").Dot("UndoUnavailable").Op("=").Qual(pkgHandler, "UndoUnavailable").Call(
				jen.Qual(pkgHandler, "NotServed").Call(jen.Lit(fu.Operation))))
			return
		}
		body = append(body, e.mapping(fu.Arguments, roots{})...)
		body = append(body, jen.Id("m").Dot("Undo").Call(r, jen.Qual(pkgEffect, kind), jen.Lit(fu.Operation), jen.Lit(tool), e.deadline(fu.Deadline)))
	}
	switch class {
	case air.ClassReversible:
		undo("KindInverse", eff.Inverse, "the operation declares no inverse")
		if cp := eff.Compensate; cp != nil {
			if tool, served := e.toolOf(cp.Operation); served {
				body = append(body, e.mapping(cp.Arguments, roots{})...)
				body = append(body, jen.Id("m").Dot("Compensate").Call(r, jen.Lit(cp.Operation), jen.Lit(tool), e.deadline(cp.Deadline)))
			}
		}
	case air.ClassCompensable:
		undo("KindCompensate", eff.Compensate, "the operation declares no compensation")
	}
	body = append(body, jen.Return(r))
	if e.usedIn {
		body = append([]jen.Code{jen.Id("in").Op(":=").Qual(pkgHandler, "InputOf").Types(jen.Id(n.input)).Call(jen.Id("c"))}, body...)
	}
	f.Commentf("%s reports what a call of %s did and how to undo it.", n.effect, op.ID)
	f.Func().Id(n.effect).Params(jen.Id("c").Op("*").Qual(pkgHandler, "EffectCall")).Op("*").Qual(pkgEffect, "Report").Block(body...)
}

// emitStaged prints the staged object of a staged call (effect.BuildStaged).
func (g *generator) emitStaged(e *effectGen, d *air.Draft) string {
	name := e.n.effect + "Staged"
	outer := *e
	*e = effectGen{g: e.g, f: e.f, c: e.c, t: e.t, n: e.n, in: e.in, paths: e.paths}
	defer func() { *e = outer }()
	body := []jen.Code{
		jen.Id("s").Op(":=").Op("&").Qual(pkgEffect, "Staged").Values(jen.Id("DraftOperation").Op(":").Lit(d.Operation)),
	}
	r := roots{noKey: true}
	if d.Handle != "" {
		if p, err := air.ParsePath(d.Handle); err == nil {
			if possible(p, r) {
				body = append(body, e.mapping(air.Mapping{{Name: "handle", ArgSource: air.ArgSource{Path: d.Handle}}}, r)...)
				body = append(body, jen.Id("s").Dot("Handle").Op("=").Id("m").Dot("Found").Call())
			}
		}
	}
	call := func(c *air.Call, why string) {
		tool, served := e.toolOf(c.Operation)
		if !served {
			body = append(body, jen.Id(why).Op(":=").Qual(pkgHandler, "NotServed").Call(jen.Lit(c.Operation)))
			return
		}
		body = append(body, e.mapping(c.Arguments, r)...)
		field := map[string]string{"promote": "Promote", "discard": "Discard"}[why]
		body = append(body, jen.Var().Id(why).String(),
			jen.List(jen.Id("s").Dot(field), jen.Id(why)).Op("=").Id("m").Dot("FollowUp").Call(jen.Lit(c.Operation), jen.Lit(tool)))
	}
	call(&d.Promote, "promote")
	discard := jen.Lit("")
	if d.Discard != nil {
		call(d.Discard, "discard")
		discard = jen.Id("discard")
	}
	body = append(body,
		jen.Id("s").Dot("Unavailable").Op("=").Qual(pkgHandler, "StagedUnavailable").Call(jen.Id("promote"), discard),
		jen.Return(jen.Id("s")))
	if e.usedIn {
		body = append([]jen.Code{jen.Id("in").Op(":=").Qual(pkgHandler, "InputOf").Types(jen.Id(e.n.input)).Call(jen.Id("c"))}, body...)
	}
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
	usedIn := false
	body := []jen.Code{
		jen.Id("d").Op(":=").Qual(pkgHandler, "New").Call(jen.Op("&").Id(target.names.input).Values()),
		jen.Var().Id("m").Qual(pkgHandler, "DraftMapping"),
	}
	for i, arg := range d.Arguments {
		src := arg.ArgSource
		tf := din.byProp[arg.Name]
		if src.IsConst() {
			body = append(body, assignConst(tf, arg.Name, src.Const))
			continue
		}
		p, err := air.ParsePath(src.Path)
		if err != nil {
			body = append(body, jen.Id("m").Dot("Fail").Call(jen.Lit(arg.Name), jen.Qual(pkgHandler, "NotAPath").Call(jen.Lit(src.Path))))
			break
		}
		var sf *field
		if p.Root == air.RootRequest && !p.Segments[0].IsIndex {
			sf = in.byProp[p.Segments[0].Name]
		}
		if sf == nil || (len(p.Segments) > 1 && sf.kind != kAny) {
			// Nothing can be found there (draft arguments read request.* only).
			if p.Optional {
				continue
			}
			body = append(body, jen.Id("m").Dot("Fail").Call(jen.Lit(arg.Name), jen.Qual(pkgHandler, "NamesNothing").Call(jen.Lit(src.Path))))
			break
		}
		usedIn = true
		need := func(found jen.Code) *jen.Statement {
			return jen.Id("m").Dot("Need").Call(jen.Lit(arg.Name), jen.Lit(src.Path), found)
		}
		if len(p.Segments) == 1 {
			body = append(body, jen.If(need(present(sf))).Block(assignField(tf, arg.Name, sf)))
			continue
		}
		rest := e.pathVar(air.Path{Root: p.Root, Segments: p.Segments[1:]})
		v, ok := fmt.Sprintf("v%d", i), fmt.Sprintf("ok%d", i)
		body = append(body, jen.List(jen.Id(v), jen.Id(ok)).Op(":=").Id(rest).Dot("Lookup").Call(ref(sf).Dot("Value")),
			jen.If(need(jen.Id(ok))).Block(assignDynamic(tf, arg.Name, jen.Id(v))))
	}
	body = append(body, jen.Return(jen.Id("m").Dot("Done").Call(jen.Id("d"))))
	param := jen.Id("_").Qual(pkgHandler, "Input")
	if usedIn {
		param = jen.Id("in0").Qual(pkgHandler, "Input")
		body = append([]jen.Code{jen.Id("in").Op(":=").Id("in0").Assert(jen.Op("*").Id(n.input))}, body...)
	}
	f.Func().Id(n.draft).Params(param).Add(results).Block(body...)
}

// dctl is the draft's Controls, for the handler helpers that set its
// arguments.
func dctl() jen.Code { return jen.Op("&").Id("d").Dot("Controls") }

// dref is the draft's field tf.
func dref(tf *field) *jen.Statement { return jen.Id("d." + tf.goName) }

// assignField copies a present typed field of the staged input into the
// draft's argument name (typed field tf, or none).
func assignField(tf *field, name string, sf *field) jen.Code {
	src := ref(sf).Dot("Value")
	switch {
	case tf == nil:
		return jen.Id("d").Dot("SetExtra").Call(jen.Lit(name), src)
	case tf.kind == kAny:
		return jen.Qual(pkgHandler, "AssignAny").Call(jen.Op("&").Add(dref(tf)), src)
	case sf.kind == tf.kind:
		return jen.Qual(pkgHandler, "Set").Call(dctl(), jen.Lit(name), jen.Op("&").Add(dref(tf)), src)
	case sf.kind == kAny:
		return assignDynamic(tf, name, src)
	}
	return jen.Id("d").Dot("SetWrong").Call(jen.Lit(name), src)
}

// assignDynamic sets the draft's argument name from a value of any type.
func assignDynamic(tf *field, name string, v jen.Code) jen.Code {
	switch {
	case tf == nil:
		return jen.Id("d").Dot("SetExtra").Call(jen.Lit(name), v)
	case tf.kind == kAny:
		return jen.Qual(pkgHandler, "AssignAny").Call(jen.Op("&").Add(dref(tf)), v)
	}
	return jen.Qual(pkgHandler, "Assign").Call(dctl(), jen.Lit(name), jen.Op("&").Add(dref(tf)), v)
}

// assignConst sets a literal on the draft's argument name.
func assignConst(tf *field, name string, raw json.RawMessage) jen.Code {
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
	switch {
	case tf == nil:
		return jen.Id("d").Dot("SetExtra").Call(jen.Lit(name), lit)
	case tf.kind == kAny:
		return jen.Qual(pkgHandler, "AssignAny").Call(jen.Op("&").Add(dref(tf)), lit)
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
			return dref(tf).Op("=").Add(optType(tf)).Values(jen.Id("Set").Op(":").True(), jen.Id("Null").Op(":").True())
		}
	}
	if match {
		return jen.Qual(pkgHandler, "Set").Call(dctl(), jen.Lit(name), jen.Op("&").Add(dref(tf)), lit)
	}
	return jen.Id("d").Dot("SetWrong").Call(jen.Lit(name), lit)
}

// classConst names an effect class by its air constant (a literal for a
// class AIR does not define).
func classConst(class air.EffectClass) jen.Code {
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
	return jen.Lit(string(class))
}
