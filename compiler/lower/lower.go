package lower

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Options configures Lower. A nil *Options is the zero value.
type Options struct {
	// ServiceID is the service id (--service) used when the manifest does
	// not name the service. Empty: derived from the spec title.
	ServiceID string
	// HumanApproval is the --human-approval policy: "none" (or empty),
	// "unsafe" (every mutation classifyConfirmation flags needs confirmation
	// and human approval) or "all" (every mutation does).
	HumanApproval string
	// Diagnostics are earlier findings (for example the manifest decoder's)
	// to carry into the document and the returned list.
	Diagnostics diag.List
	// SourceName, when set, is how AIR names a source file: the service's
	// source URI, each operation's sourceRef.file and the file part of each
	// recorded diagnostic's path go through it (compiler.Compile makes them
	// relative to the spec's directory, so a bundle holds no absolute path).
	// The returned diagnostics keep their positions as loaded. Nil: as loaded.
	SourceName func(file string) string

	// Pins are the names anvil.lock keeps for approved operations (see
	// Pin); nil: every name is derived afresh.
	Pins []Pin

	// schemaBudget overrides DefaultInputSchemaBudget (tests); zero: the default.
	schemaBudget int
}

// Lower turns a loaded spec and a decoded manifest (nil: none) into an AIR
// document and the diagnostics found on the way. The document's Diagnostics
// mirror the returned list, which holds opts.Diagnostics and Lower's own,
// sorted by position (the spec's loading diagnostics, spec.Diagnostics, are
// not repeated: pass them in opts.Diagnostics to record them in the document). Lower never fails on
// bad input: problems are diagnostics, and the document is always complete.
// A nil spec yields a nil document and one error.
func Lower(spec *openapi.Spec, man *manifest.Manifest, opts *Options) (*air.Document, diag.List) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if spec == nil {
		var l diag.List
		l = append(l, o.Diagnostics...)
		l.Errorf(diag.Pos{}, "lower/no_spec", "no service description to compile")
		return nil, l
	}
	if hasNil(spec.Operations) {
		c := *spec
		c.Operations = nil
		for _, op := range spec.Operations {
			if op != nil {
				c.Operations = append(c.Operations, op)
			}
		}
		spec = &c
	}
	l := &lowerer{spec: spec, man: man, opts: o}
	doc := l.run()
	return doc, l.finishDiagnostics(doc)
}

func hasNil(ops []*openapi.Operation) bool {
	for _, op := range ops {
		if op == nil {
			return true
		}
	}
	return false
}

// lowerer holds the state of one Lower call.
type lowerer struct {
	spec    *openapi.Spec
	man     *manifest.Manifest
	opts    Options
	service string
	ops     []*opState
	pending []pendingDiag
	// refs indexes operationIds, canonical names and AIR ids.
	refs map[string][]int
	// refNames is refs' keys, sorted, for suggestions (nearestName).
	refNames []string

	specAuth    air.Auth // the service auth the spec declares
	serviceAuth air.Auth // after the manifest's auth block

	budget *budgetCache // see boundInputSchema

	// structuredCache holds the structured output schema derived for each
	// (small) response schema, by its JSON (structuredSchema).
	structuredCache map[string]*air.Schema
	// structuredMemo and recursive serve loosenNamed (outschema.go).
	structuredMemo map[structuredKey]structuredMemo
	recursive      map[string]bool

	// flowReported holds the security schemes already reported as using an
	// OAuth2 flow the gateway cannot run (checkAuthFlow).
	flowReported map[string]bool
}

type pendingDiag struct {
	d  diag.Diagnostic
	op int // index into ops, or -1
}

// opState is one operation being lowered.
type opState struct {
	i        int
	spec     *openapi.Operation
	base     baseNames
	r        *routing
	derived  string // canonical name before the manifest's name override
	entry    *manifest.OperationEntry
	m        *manifest.Operation
	resource string // effect.resource
	op       *air.Operation
	in       inputResult

	// Phase-1 state that effect checks of other operations read.
	p1Confirm bool
	p1Schema  *air.Schema
	p1Safety  air.Safety
	p1Output  *air.Schema
}

func (l *lowerer) addDiag(pos diag.Pos, level diag.Level, code string, op int, format string, args ...any) {
	l.pending = append(l.pending, pendingDiag{
		d:  diag.Diagnostic{Pos: pos, Level: level, Code: code, Message: fmt.Sprintf(format, args...)},
		op: op,
	})
}

func (l *lowerer) opPos(st *opState) diag.Pos {
	if st.spec.Pos.File == "" {
		return diag.Pos{File: l.spec.File}
	}
	return st.spec.Pos
}

func (l *lowerer) run() *air.Document {
	switch l.opts.HumanApproval {
	case "", HumanApprovalNone, HumanApprovalUnsafe, HumanApprovalAll:
	default:
		l.addDiag(diag.Pos{}, diag.Error, "lower/invalid_option", -1,
			"--human-approval must be none, unsafe or all, not %q; using none", l.opts.HumanApproval)
		l.opts.HumanApproval = HumanApprovalNone
	}
	l.service = l.serviceID()
	doc := &air.Document{
		Schema:       air.SchemaVersion,
		AnvilVersion: air.AnvilVersion,
		Service:      l.serviceBlock(),
		Operations:   make([]air.Operation, len(l.spec.Operations)),
		Capabilities: []air.Capability{},
		Workflows:    []air.Workflow{},
		Schemas:      map[string]*air.Schema{},
		Diagnostics:  []air.Diagnostic{},
	}

	// Names: derive, apply anvil.lock's pins, resolve collisions, match
	// the manifest, apply the name overrides, resolve again, shorten.
	grammar := ""
	if l.man != nil {
		grammar = l.man.PathGrammar
	}
	routes := make([]*routing, 0, len(l.spec.Operations))
	for i, sop := range l.spec.Operations {
		b := deriveNames(l.service, sop.Path, sop.Method, sop.OperationID, grammar)
		r := &routing{ID: b.ID, Canonical: b.Canonical, CLI: b.CLI, Tool: l.service + "_" + b.Canonical,
			route: routeKey(sop.Method, sop.Path), tokens: pathTokens(sop.Path)}
		st := &opState{i: i, spec: sop, base: b, r: r, op: &doc.Operations[i]}
		l.ops = append(l.ops, st)
		routes = append(routes, r)
	}
	l.applyPins(routes)
	l.noteCollisions(resolveCollisions(l.service, routes))
	l.buildRefs(false)
	l.matchManifest()
	for _, st := range l.ops {
		st.derived = st.r.Canonical
		st.resource = Singularize(naming.Snake(st.base.Resource))
		if st.m != nil && st.m.Name != nil {
			l.applyNameOverride(st)
		} else if st.base.Weak != "" {
			l.addDiag(l.opPos(st), diag.Info, "weak_operation_name", st.i, "%s %s: %s", st.spec.Method, st.spec.Path, st.base.Weak)
		}
	}
	l.noteCollisions(resolveCollisions(l.service, routes))
	l.shorten(routes)
	l.buildRefs(true)

	// Operations.
	for _, st := range l.ops {
		l.lowerOp(st)
		l.nameSDKInputs(st)
	}
	l.checkWire(doc)
	for _, st := range l.ops {
		l.publishSchema(st)
		st.p1Confirm = st.op.Confirmation.Required
		st.p1Schema = st.op.Input.Schema
		st.p1Safety = st.op.Input.Safety
		st.p1Output = st.op.Output.Schema
	}
	for _, st := range l.ops {
		if st.m != nil && st.m.Effect != nil {
			if l.checkEffect(st) {
				l.publishSchema(st)
			}
		}
	}

	// Bound the published input schemas last: effect checks read the
	// whole schemas (through the spec's named schemas, not $defs).
	for _, st := range l.ops {
		l.boundInputSchema(st)
	}
	l.producerLinks()
	l.distinctTitles()

	l.capabilitiesAndWorkflows(doc)
	seen := map[string]bool{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		l.collectRefs(op.Input.Schema, seen)
		if op.Input.Body != nil {
			l.collectRefs(op.Input.Body.Schema, seen)
		}
		l.collectRefs(op.Output.Schema, seen)
	}
	for name := range seen {
		if s, ok := l.spec.Schemas[name]; ok {
			doc.Schemas[name] = s
		}
	}
	for i := range doc.Operations {
		in := &doc.Operations[i].Input
		for _, name := range in.StandIns {
			if doc.SchemaStandIns == nil {
				doc.SchemaStandIns = map[string]*air.Schema{}
			}
			doc.SchemaStandIns[name] = in.Schema.Defs[name]
		}
	}
	return doc
}

func (l *lowerer) noteCollisions(notes []collisionNote) {
	for _, n := range notes {
		l.addDiag(l.opPos(l.ops[n.op]), diag.Info, "naming_collision_resolved", n.op, "%s", n.message)
	}
}

// serviceID is the manifest's service.name, else Options.ServiceID, else
// derived from the spec title (serviceFromTitle). A given id that AIR cannot
// hold (outside ^[A-Za-z0-9_-]{1,64}$) is an error, lower/invalid_service_id,
// and is used sanitized.
func (l *lowerer) serviceID() string {
	given, where, pos := "", "", diag.Pos{}
	switch {
	case l.man != nil && l.man.Service != nil && l.man.Service.Name != "":
		given, where, pos = l.man.Service.Name, "service.name", l.man.Service.Pos
	case l.opts.ServiceID != "":
		given, where = l.opts.ServiceID, "--service"
	default:
		return serviceFromTitle(l.spec.Title)
	}
	if validServiceID.MatchString(given) {
		return given
	}
	id := sanitizeServiceID(given)
	l.addDiag(pos, diag.Error, "lower/invalid_service_id", -1,
		"%s %q is not a service id (1 to 64 characters of A-Z, a-z, 0-9, _ and -); using %q", where, given, id)
	return id
}

// shorten keeps every tool name within MaxToolName(service) characters
// (see shortenNames), resolving any collision that shortening causes, and
// notes each shortened name as info naming_shortened.
func (l *lowerer) shorten(routes []*routing) {
	for round := 0; round < 4; round++ {
		changed := shortenNames(l.service, routes)
		for _, i := range changed {
			l.addDiag(l.opPos(l.ops[i]), diag.Info, "naming_shortened", i,
				"the served name %s__<tool> would be longer than %d characters; canonical name shortened to %q (tool %s)", l.service, air.MaxWireName, routes[i].Canonical, routes[i].Tool)
		}
		if len(changed) == 0 {
			return
		}
		notes := resolveCollisions(l.service, routes)
		if len(notes) == 0 {
			return
		}
		l.noteCollisions(notes)
	}
}

func (l *lowerer) serviceBlock() air.Service {
	s := air.Service{
		ID:          l.service,
		Version:     l.spec.Version,
		DisplayName: l.spec.Title,
		Description: l.spec.Description,
		Source:      air.Source{Kind: air.SourceKind(l.spec.Kind), URI: l.sourceName(l.spec.File), SourceHash: l.spec.SourceHash},
		Servers:     append([]air.Server{}, l.spec.Servers...),
	}
	if l.man != nil && l.man.Service != nil {
		ms := l.man.Service
		if ms.DisplayName != "" {
			s.DisplayName = ms.DisplayName
		}
		if ms.Description != "" {
			// What the author writes for agents replaces the spec's text
			// (which may address browser users, or name demo credentials).
			s.Description = ms.Description
		}
		s.Owner, s.Environment = ms.Owner, ms.Environment
	}
	l.specAuth = l.authFromRequirements(l.spec.Security, diag.Pos{File: l.spec.File}, "the service", -1)
	l.serviceAuth = l.specAuth
	if l.man != nil && l.man.Auth != nil {
		l.serviceAuth = applyManifestAuth(l.man.Auth, l.specAuth)
	}
	l.checkAuthFlow(l.serviceAuth, diag.Pos{File: l.spec.File}, "the service", -1)
	s.Auth = l.serviceAuth
	return s
}

// buildRefs indexes every name an operation may be referred to by: its
// operationId, canonical name and AIR id; with final set, also the canonical
// name it had before the manifest's name override.
func (l *lowerer) buildRefs(final bool) {
	l.refs = make(map[string][]int, 3*len(l.ops))
	l.refNames = nil
	add := func(k string, i int) {
		if k == "" {
			return
		}
		for _, j := range l.refs[k] {
			if j == i {
				return
			}
		}
		l.refs[k] = append(l.refs[k], i)
	}
	for i, st := range l.ops {
		add(st.spec.OperationID, i)
		add(st.r.Canonical, i)
		add(st.r.ID, i)
		if final {
			add(st.derived, i)
		}
	}
}

// lookupRef resolves an operation reference: one operation, or the
// candidates when it names none or several.
func (l *lowerer) lookupRef(ref string) (*opState, []int) {
	hits := l.refs[ref]
	if len(hits) == 1 {
		return l.ops[hits[0]], hits
	}
	return nil, hits
}

func (l *lowerer) matchManifest() {
	if l.man == nil {
		return
	}
	for _, e := range l.man.Operations {
		if e == nil {
			continue
		}
		st, hits := l.lookupRef(e.Key)
		switch {
		case len(hits) == 0:
			msg := fmt.Sprintf("operations.%s names no operation of the service (use an operationId, canonical name or AIR id)", e.Key)
			if s := l.nearestName(e.Key); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			l.addDiag(e.KeyPos, diag.Error, "manifest/unknown_operation", -1, "%s", msg)
		case st == nil:
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = l.ops[h].r.ID
			}
			l.addDiag(e.KeyPos, diag.Error, "manifest/ambiguous_operation", -1,
				"operations.%s names more than one operation (%s); use an AIR id", e.Key, strings.Join(ids, ", "))
		case st.entry != nil:
			l.addDiag(e.KeyPos, diag.Error, "manifest/duplicate_operation", st.i,
				"operations.%s names %s, which operations.%s already configures; this entry is ignored", e.Key, st.r.ID, st.entry.Key)
		default:
			st.entry, st.m = e, e.Op
		}
	}
}

// nearestName suggests the operationId, canonical name or AIR id closest to
// key, with the manifest decoder's rule for likely typos.
func (l *lowerer) nearestName(key string) string {
	if l.refNames == nil { // the index is complete before any lookup
		l.refNames = slices.Sorted(maps.Keys(l.refs))
	}
	best, _ := manifest.Suggest(key, l.refNames)
	return best
}

// applyNameOverride re-homes the canonical name, CLI command and tool name
// (never the id) from the manifest's name: {resource, verb}.
func (l *lowerer) applyNameOverride(st *opState) {
	n := st.m.Name
	res := n.Resource
	if res == "" {
		res = st.resource
	}
	if res == "" {
		res = l.service
	}
	verb := n.Verb
	if verb == "" {
		verb = strings.SplitN(st.r.Canonical, "_", 2)[0]
	}
	st.resource = Singularize(res)
	if c := nameSnake(verb + "_" + Singularize(res)); c != "" {
		st.r.rename(l.service, kindTool, c)
	} else {
		st.r.rename(l.service, kindTool, st.r.Canonical)
	}
	st.r.rename(l.service, kindCLI, l.service+" "+res+" "+verb)
	// The author's names replace pinned ones; the id stays pinned.
	st.r.fixed[kindTool], st.r.fixed[kindCLI] = false, false
}

// lowerOp fills one AIR operation (everything but the effect contract).
func (l *lowerer) lowerOp(st *opState) {
	sop, m, op := st.spec, st.m, st.op
	if m == nil {
		m = &manifest.Operation{}
	}
	method := sop.Method
	eff := defaultEffect(method, st.base.Action, st.resource)
	if m.SideEffect != "" && m.SideEffect != eff.Kind {
		switch m.SideEffect {
		case air.KindRead:
			eff.Kind, eff.Risk, eff.Reversible = air.KindRead, air.RiskNone, true
		case air.KindMutation:
			eff.Kind, eff.Risk, eff.Reversible = air.KindMutation, air.RiskLow, true
			if eff.Action == "delete" {
				eff.Risk, eff.Reversible = air.RiskDestructive, false
			}
		}
	}
	if m.Risk != "" {
		eff.Risk = m.Risk
	}
	if m.Action != "" {
		eff.Action = m.Action
	}
	switch {
	case m.Reversible != nil:
		eff.Reversible = *m.Reversible
	case m.Effect != nil && m.Effect.Class != "":
		eff.Reversible = m.Effect.Class == air.ClassRead || m.Effect.Class == air.ClassReversible
	}
	idem := defaultIdempotency(eff.Kind, method, sop)
	if m.Idempotency != nil {
		idem = manifestIdempotency(m.Idempotency, idem, sop)
	}

	var skip *air.Carrier
	opAuth, unrunnable := l.operationAuth(st, m)
	if (opAuth.Type == air.AuthAPIKey || opAuth.Type == air.AuthCustomHeader) && opAuth.Carrier != nil && opAuth.Carrier.Name != "Authorization" {
		skip = opAuth.Carrier
	}

	in, res := l.buildInput(sop, &idem, skip)
	st.in = res
	retries := computeRetries(idem)
	if m.Retries != nil {
		retries = manifestRetries(m.Retries, retries)
	}
	conf := computeConfirmation(eff, idem)
	if m.Confirmation != nil {
		conf = manifestConfirmation(m.Confirmation, conf)
	}
	if eff.Kind == air.KindMutation {
		unsafe, _ := classifyConfirmation(eff, idem)
		switch {
		case l.opts.HumanApproval == HumanApprovalAll:
			conf = forceApproval(conf, eff, "Every mutation needs human approval (--human-approval all).")
		case l.opts.HumanApproval == HumanApprovalUnsafe && unsafe:
			conf = forceApproval(conf, eff, "Unsafe mutations need human approval (--human-approval unsafe).")
		}
	}
	out, errs := output(sop)
	out.StructuredSchema = l.structuredSchema(out)

	*op = air.Operation{
		ID:            st.r.ID,
		CanonicalName: st.r.Canonical,
		DisplayName:   cleanTitle(firstNonEmpty(m.DisplayName, cleanTitle(sop.Summary), routeTitle(sop), humanize(st.r.titleName()))),
		Description:   firstNonEmpty(m.Description, sop.Description, sop.Summary),
		Tags:          append([]string{}, sop.Tags...),
		SourceRef: air.SourceRef{Kind: "openapi", Path: sop.Path, Method: method, OperationID: sop.OperationID,
			File: l.sourceName(sop.Pos.File), Line: sop.Pos.Line, Column: sop.Pos.Col},
		Effect:       eff,
		Input:        in,
		Output:       out,
		Errors:       errs,
		Idempotency:  idem,
		Retries:      retries,
		Confirmation: conf,
		Deprecated:   sop.Deprecated,
		CLI:          air.CLI{Command: st.r.CLI, Aliases: []string{}},
		MCP:          air.MCP{ToolName: st.r.Tool},
		Skill:        air.Skill{IntentExamples: append([]string{}, m.IntentExamples...)},
		State:        air.StateReviewRequired,
		ReviewNotes:  append([]string{}, res.notes...),
	}
	if !authEqual(opAuth, l.serviceAuth) {
		a := opAuth
		op.Auth = &a
	}
	if m.State != "" {
		op.State = m.State
	}
	if unrunnable != "" {
		// Whatever the manifest's state says: the gateway cannot get a
		// credential for it (auth/unsupported_oauth_flow says what to add).
		op.State = air.StateBlocked
		op.ReviewNotes = append(op.ReviewNotes, "Blocked: its auth uses "+unrunnable+"; give it an auth: block in anvil.yaml naming a type the gateway runs.")
	}
	l.checkReview(st, m, opAuth)
	if p := m.Pagination; p != nil {
		op.Pagination = &air.Pagination{Style: p.Style, CursorParam: p.CursorParam, NextField: p.NextField, ItemsField: p.ItemsField,
			PageSizeParam: p.PageSizeParam, MaxPageSize: p.MaxPageSize, DefaultPageSize: p.DefaultPageSize}
	}
}

func forceApproval(c air.Confirmation, e air.Effect, reason string) air.Confirmation {
	if !c.Required && c.Reason == "" {
		c.Reason = reason
	}
	if c.Risk == "" {
		c.Risk = e.Risk
	}
	c.Required, c.HumanApproval = true, true
	return c
}

// humanize turns a snake_case name into "Words like this".
func humanize(s string) string {
	s = strings.ReplaceAll(s, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (l *lowerer) capabilitiesAndWorkflows(doc *air.Document) {
	if l.man == nil {
		return
	}
	resolve := func(refs []string, pos diag.Pos, code, owner string) []string {
		out := []string{}
		for _, r := range refs {
			st, hits := l.lookupRef(r)
			if st == nil {
				what := "names no operation"
				if len(hits) > 1 {
					what = "names more than one operation"
				}
				l.addDiag(pos, diag.Error, code, -1, "%s: %q %s", owner, r, what)
				continue
			}
			out = append(out, st.r.ID)
		}
		return out
	}
	for _, c := range l.man.Capabilities {
		if c == nil {
			continue
		}
		doc.Capabilities = append(doc.Capabilities, air.Capability{ID: c.ID, Description: c.Description,
			Operations: resolve(c.Operations, c.Pos, "capability_unknown_operation", "capability "+c.ID)})
	}
	for _, w := range l.man.Workflows {
		if w == nil {
			continue
		}
		doc.Workflows = append(doc.Workflows, air.Workflow{ID: w.ID, Description: w.Description,
			Steps: resolve(w.Steps, w.Pos, "workflow_unknown_operation", "workflow "+w.ID)})
	}
}

// sourceName is file as AIR records it (Options.SourceName).
func (l *lowerer) sourceName(file string) string {
	if file == "" || l.opts.SourceName == nil {
		return file
	}
	return l.opts.SourceName(file)
}

// finishDiagnostics fills operation ids, sorts, and mirrors the list into the document.
func (l *lowerer) finishDiagnostics(doc *air.Document) diag.List {
	var out diag.List
	out = append(out, l.opts.Diagnostics...)
	for _, p := range l.pending {
		d := p.d
		if p.op >= 0 {
			d.OperationID = l.ops[p.op].op.ID
		}
		out = append(out, d)
	}
	out.Sort()
	for _, d := range out {
		d.Pos.File = l.sourceName(d.Pos.File) // as the bundle names its files
		doc.Diagnostics = append(doc.Diagnostics, d)
	}
	return out
}
