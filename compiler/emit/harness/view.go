package harness

import (
	"encoding/json"
	"fmt"
	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/naming"
	"regexp"
	"sort"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// pkgView is what every harness template receives.
type pkgView struct {
	Connector      string
	SkillName      string
	ServiceID      string
	ServiceVersion string
	PyVersion      string
	Title          string
	Description    string // one line
	SkillDesc      string // SKILL.md frontmatter description
	PyPackage      string // anvil_github
	PyDist         string // anvil-github
	ClassName      string // GithubClient
	Ops            []*opView
	Reads          int
	Writes         int
	Resources      []string
	Groups         []groupView
	FirstRead      *opView
	SearchCommand  string // the CLI's search command word: "search" unless an operation's command starts with it
	SkillRows      []*opView
	SkillMore      int
	SkillSearch    bool     // SKILL.md points at search instead of listing operations (above skillSearchThreshold)
	SearchExample  string   // the search query SKILL.md shows: the first read's summary, lower-cased
	PyLazy         bool     // the Python client's methods live in _methods/<part>.py, loaded on first use
	PyParts        []pyPart // those modules, in operation order
	AnyConfirm     bool
	AnyCarrier     bool
	AnyUndo        bool
	AnyStaged      bool // some operation has a draft form (stage=True)
	AnyPaginated   bool
	Errors         []errorRow
	ExitCodes      []exitRow
	ErrorCodes     []string
	PySpec         string // Python literal of the operation table
	PyResults      string // results.pyi's TypedDicts and result aliases
	CLISpec        string // JSON of the CLI's SPEC
	TSSpec         string // JSON of the TypeScript SDK's SPEC
	TSNamed        []tsNamed
	Capabilities   []capView
	Workflows      []wfView
	DryRunArg      string
}

// pyPart is one _methods/<Name>.py module of a large API's Python client.
type pyPart struct {
	Name         string // m01, m02, ...
	ClassName    string
	First, Last  string // its first and last method
	Ops          []*opView
	AnyPaginated bool
}

// opView is one served operation as templates see it.
type opView struct {
	ID          string
	Canonical   string
	Tool        string // bundle tool name
	WireTool    string // <connector>__<tool>
	Words       string // "issues list"
	CLI         string // "github issues list" (connector + words)
	Usage       string // CLI usage line with flags
	Summary     string
	Description string
	Kind        string // read | mutation
	Class       string
	Label       string // effect label incl. ", needs confirm"
	ClassLabel  string
	Confirm     bool
	Reason      string
	ConfirmKey  string // the tool input that confirms ("" when not required)

	IdemMode       string
	IdemMechanism  string
	IdemCarrier    string // the header/query/body name upstream
	IdemDerivation string
	IdemInput      string // tool input carrying the key ("" when no carrier)
	KeyRequired    bool   // a caller key is required (mode required, no derivation)
	KeyDerived     bool   // the SDKs derive a key when none is given

	PyMethod  string
	PyConfirm string
	PyIdem    string
	PyDryRun  string
	PyStage   string
	PyHeaders string
	PyTimeout string
	PyResult  string // the result type in results.pyi
	PyCall    string // example call with required inputs
	TSCall    string // the same in TypeScript, with typed example values

	TSMethod        string
	TSInput         string
	TSInputDecl     string
	TSResult        string
	TSResultDecl    string // "" when TSResult is a plain expression
	TSInputOptional bool

	Inputs     []*inputView
	Required   []*inputView
	Undo       *undoView
	Lookup     *undoView
	Staged     *stagedView
	Schema     *air.Schema
	ExampleArg string // "--owner <owner> --repo <repo>"
	Paginated  *pageView
	// Needs are the operation's producer links (AIR needs) among the
	// packaged operations: the commands whose answers give an input.
	Needs []needView
}

// needView is one identifier input and the packaged operations producing it.
type needView struct {
	Argument string
	From     []needFrom
}

// needFrom is one producer of a needView: its command words, served tool
// name and the field of its answer that holds the value ("" when AIR
// does not say, as for a manifest's link).
type needFrom struct {
	Words, Tool, Field string
}

// inputView is one business input of an operation.
type inputView struct {
	Key         string // the tool input key
	SDKName     string // the SDKs' name when the key would shadow a control (air.Param.SDKName), else ""
	Name        string // wire name upstream
	In          string // path | query | header | cookie | body
	Py          string
	PyType      string
	TSType      string
	Flag        string // without leading dashes
	Type        string // JSON type used for CLI coercion
	Items       string // the JSON type of an array's items ("" when unknown or not an array)
	Placeholder string
	Required    bool
	Description string
	Example     json.RawMessage // example value (compact JSON)
	HasExample  bool            // the spec declares an example
}

type undoView struct {
	Kind      string // inverse | compensate | lookup
	Operation string // AIR id
	Tool      string // wire tool
	Words     string
	By        string
}

type stagedView struct {
	Draft, Promote, Discard string // AIR ids
}

type pageView struct {
	Style, Param, Next, Items, Method string
}

type errorRow struct {
	Code, Exit, Meaning string
}

type exitRow struct {
	Exit  int
	Codes []string
}

type tsNamed struct {
	Name, Decl string
}

type groupView struct {
	Name string
	Ops  []string
}

type capView struct {
	ID, Description string
	Ops             []string
}

type wfView struct {
	ID, Description string
	Steps           []string
}

// exitTable is the CLI's exit code for each error code.
var exitTable = []exitRow{
	{2, []string{envelope.ValidationError, envelope.SchemaMismatch}},
	{3, []string{envelope.ConfirmationRequired, envelope.IdempotencyRequired}},
	{4, []string{envelope.AuthRequired, envelope.PermissionDenied}},
	{5, []string{envelope.PolicyDenied, envelope.UnsafeRetryBlocked, envelope.IdempotencyLedgerUnavailable, envelope.UnsupportedOperation}},
	{6, []string{envelope.NotFound, envelope.Conflict}},
	{7, []string{envelope.RateLimited, envelope.UpstreamTimeout, envelope.UpstreamUnavailable, envelope.UnknownUpstreamError}},
}

func exitFor(code string) int {
	for _, r := range exitTable {
		for _, c := range r.Codes {
			if c == code {
				return r.Exit
			}
		}
	}
	return 1
}

// errorAdvice says what a harness should do for each code (reference/errors.md).
var errorAdvice = []struct{ code, advice string }{
	{envelope.ValidationError, "The arguments do not fit the operation's schema. Fix them (see `--schema`) and call again."},
	{envelope.AuthRequired, "The turn's token is missing or expired, or the person has not connected this account (`details.code` says which). Do not look for credentials; tell the person."},
	{envelope.PermissionDenied, "The gateway or upstream refused this caller. Do not retry; tell the person."},
	{envelope.NotFound, "The resource does not exist. Check the identifiers."},
	{envelope.Conflict, "The resource changed or already exists. Read it again before deciding."},
	{envelope.RateLimited, "Wait (`retry_after_ms` when given) and retry."},
	{envelope.UpstreamTimeout, "The upstream did not answer in time. Retry only when `safe_to_retry` is true."},
	{envelope.UpstreamUnavailable, "The gateway or upstream could not be reached. Retry later when `retryable` is true."},
	{envelope.UnsafeRetryBlocked, "Retrying could repeat a write. Check the effect first (a lookup) instead of retrying."},
	{envelope.ConfirmationRequired, "The write needs confirmation: pass `--confirm` / `confirm=True` / `{ confirm: true }` (the argument `confirm: true` over REST and MCP), on a dry run too, only when the task really asks for it. `details.code` `policy/grant_confirmation_required` means the branch's grant does not allow it at all."},
	{envelope.IdempotencyRequired, "Pass an idempotency key (`--idempotency-key`, `idempotency_key=`, `{ idempotencyKey }`)."},
	{envelope.SchemaMismatch, "The upstream answered something the schema does not describe. Report it."},
	{envelope.UnsupportedOperation, "The gateway does not offer this call (or this form of it). Do not retry."},
	{envelope.PolicyDenied, "The branch's grant does not allow this operation (`details.code` `policy/grant_denied`, `details.rule`). Do not retry and do not work around it; tell the person."},
	{envelope.UnknownUpstreamError, "Something unexpected failed. Report the `trace_id`."},
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)
var pep440 = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)

// buildView makes the template view of a package.
func buildView(doc *air.Document, connector string) (*pkgView, error) {
	c := schemas{doc: doc}
	svc := doc.Service.ID
	pkg := naming.Snake(svc)
	if pkg == "" {
		pkg = "service"
	}
	title := oneLine(doc.Service.DisplayName)
	if title == "" {
		title = svc
	}
	v := &pkgView{
		Connector:      connector,
		SkillName:      skillName(connector),
		ServiceID:      svc,
		ServiceVersion: doc.Service.Version,
		PyVersion:      "0.0.0",
		Title:          title,
		Description:    oneLine(doc.Service.Description),
		PyPackage:      "anvil_" + pkg,
		PyDist:         "anvil-" + strings.ReplaceAll(pkg, "_", "-"),
		ClassName:      naming.Pascal(pkg) + "Client",
		ErrorCodes:     envelope.Codes,
		ExitCodes:      exitTable,
		DryRunArg:      air.DryRunKey,
	}
	if pep440.MatchString(doc.Service.Version) {
		v.PyVersion = doc.Service.Version
	}
	for _, a := range errorAdvice {
		v.Errors = append(v.Errors, errorRow{Code: a.code, Exit: fmt.Sprint(exitFor(a.code)), Meaning: a.advice})
	}

	var served []*air.Operation
	for i := range doc.Operations {
		if air.IsServed(&doc.Operations[i]) {
			served = append(served, &doc.Operations[i])
		}
	}
	if len(served) == 0 {
		return nil, fmt.Errorf("%w: service %q has none", ErrNothingApproved, svc)
	}

	// Names shared by every language.
	tsTaken := map[string]bool{v.ClassName: true, "AnvilError": true, "CallOptions": true, "ClientOptions": true,
		"ErrorCode": true, "EffectReport": true, "DryRunPlan": true, "GatewayTransport": true, "TokenProvider": true, "SearchResult": true, "ToolResult": true,
		"ERROR_CODES": true, "SPEC": true, "OperationSpec": true, "JsonValue": true, "Record": true, "Promise": true}
	pyTaken := map[string]bool{"last_effect": true, "call": true, "search": true}
	tsMethods := map[string]bool{"constructor": true, "lastEffect": true, "transport": true, "call": true, "search": true}
	ts := newTSTypes(c, tsTaken)

	byID := map[string]*air.Operation{}
	for _, op := range served {
		byID[op.ID] = op
	}
	wire := func(op *air.Operation) string { return air.FitWireName(connector, emit.ToolName(op)) }

	resources := []string{}
	for _, op := range served {
		o := &opView{
			ID:          op.ID,
			Canonical:   op.CanonicalName,
			Tool:        emit.ToolName(op),
			WireTool:    wire(op),
			Description: oneLine(op.Description),
			Kind:        op.Effect.Kind,
			Class:       air.EffectClassOf(op),
			Confirm:     op.Confirmation.Required,
			Reason:      oneLine(op.Confirmation.Reason),
			Schema:      op.Input.Schema,
		}
		if o.Kind != air.KindRead {
			o.Kind = air.KindMutation
			v.Writes++
		} else {
			v.Reads++
		}
		words := cliWords(op)
		o.Words = strings.Join(words, " ")
		o.CLI = connector + " " + o.Words
		resources = appendUnique(resources, words[0])
		o.Summary = oneLine(op.DisplayName)
		if o.Summary == "" {
			o.Summary = firstSentence(op.Description)
		}
		if o.Summary == "" {
			o.Summary = op.CanonicalName
		}
		o.ClassLabel = emit.EffectLabel(o.Class)
		o.Label = o.ClassLabel
		if o.Confirm {
			o.Label += ", needs confirm"
			v.AnyConfirm = true
		}

		// Business inputs and safety controls.
		inputs, carrierKey := businessInputs(c, op)
		taken := map[string]bool{}
		for _, in := range inputs {
			taken[in.Key] = true
		}
		safety := op.Input.Safety
		if o.Confirm {
			o.ConfirmKey = safety.ConfirmKey
			if o.ConfirmKey == "" {
				o.ConfirmKey = "confirm"
				if taken["confirm"] {
					o.ConfirmKey = "anvil_confirm"
				}
			}
		}
		idem := op.Idempotency
		o.IdemMode = orDefault(idem.Mode, air.IdemNone)
		o.IdemMechanism = orDefault(idem.Mechanism, "none")
		o.IdemDerivation = orDefault(idem.KeyDerivation, "none")
		if idem.HasCarrier() {
			o.IdemCarrier = idem.Key
			o.IdemInput = safety.IdempotencyKey
			if o.IdemInput == "" {
				o.IdemInput = carrierKey
			}
			if o.IdemInput == "" {
				o.IdemInput = "idempotency_key"
				if taken[o.IdemInput] {
					o.IdemInput = "anvil_idempotency_key"
				}
			}
			v.AnyCarrier = true
		}
		o.KeyRequired = o.IdemMode == air.IdemRequired && o.IdemDerivation != "request_fingerprint"
		o.KeyDerived = !o.KeyRequired && (o.IdemMode == air.IdemKeySupported || o.IdemDerivation == "request_fingerprint")

		// Python names and CLI flags. The controls keep their names: an
		// input that would shadow one has its SDK name from lowering
		// (air.Param.SDKName); seeding the controls here also keeps a
		// document lowered before that rule from shadowing them.
		pyNames := map[string]bool{}
		flags := map[string]bool{"help": true, "schema": true}
		for _, c := range naming.SDKControls {
			pyNames[c] = true
			flags[naming.Kebab(c)] = true
		}
		for _, in := range inputs {
			in.Py = naming.Unique(in.Py, pyNames, "_")
			in.Flag = naming.Unique(in.Flag, flags, "-")
		}
		o.PyConfirm, o.PyIdem, o.PyDryRun, o.PyStage = "confirm", "idempotency_key", "dry_run", "stage"
		o.PyHeaders, o.PyTimeout = "headers", "timeout"
		o.PyMethod = naming.Unique(naming.PyIdent(op.CanonicalName), pyTaken, "_")
		o.TSMethod = naming.Camel(op.CanonicalName)
		if o.TSMethod == "" || !naming.IsJSIdent(o.TSMethod) {
			o.TSMethod = "op" + naming.Pascal(op.CanonicalName)
		}
		o.TSMethod = naming.Unique(o.TSMethod, tsMethods, "_")
		o.Inputs = inputs
		var pyArgs, exArgs, tsArgs []string
		for _, in := range inputs {
			if in.Required {
				o.Required = append(o.Required, in)
				pyArgs = append(pyArgs, in.Py+"=...")
				exArgs = append(exArgs, "--"+in.Flag+" <"+in.Key+">")
				tsArgs = append(tsArgs, tsKey(in.Key)+": "+asciiJSON(string(in.Example)))
			}
		}
		o.PyCall = o.PyMethod + "(" + strings.Join(pyArgs, ", ") + ")"
		o.ExampleArg = strings.Join(exArgs, " ")
		o.Usage = usage(o)

		// TypeScript types.
		base := naming.Pascal(op.CanonicalName)
		if base == "" || !naming.IsJSIdent(base) {
			base = "Op" + base
		}
		o.TSInput = naming.Unique(base+"Input", tsTaken, "")
		o.TSInputOptional = len(o.Required) == 0
		o.TSCall = o.TSMethod + "()"
		if len(tsArgs) > 0 {
			o.TSCall = o.TSMethod + "({ " + strings.Join(tsArgs, ", ") + " })"
		}
		o.TSInputDecl = tsInputDecl(ts, op.Input.Schema, o)
		out := "unknown"
		if op.Output.Schema != nil {
			out = ts.expr(op.Output.Schema, op.Output.Schema, "", 0)
		}
		if simpleTSType.MatchString(out) {
			o.TSResult = out
		} else {
			o.TSResult = naming.Unique(base+"Result", tsTaken, "")
			o.TSResultDecl = out
		}
		if op.Pagination != nil {
			o.Paginated = pageOf(op.Pagination, o)
			v.AnyPaginated = true
		}
		v.Ops = append(v.Ops, o)
	}
	v.Resources = resources
	v.SearchCommand = searchCommand(resources)
	for _, r := range resources {
		g := groupView{Name: r}
		for _, o := range v.Ops {
			if strings.Fields(o.Words)[0] == r {
				g.Ops = append(g.Ops, o.Words)
			}
		}
		v.Groups = append(v.Groups, g)
	}

	// Follow-ups need every operation's view.
	viewByID := map[string]*opView{}
	for _, o := range v.Ops {
		viewByID[o.ID] = o
	}
	for i, op := range served {
		o := v.Ops[i]
		follow := func(kind, id string) *undoView {
			t := viewByID[id]
			if t == nil {
				return nil
			}
			return &undoView{Kind: kind, Operation: id, Tool: t.WireTool, Words: t.Words}
		}
		switch {
		case o.Class == air.ClassReversible && op.Effect.Inverse != nil:
			o.Undo = follow("inverse", op.Effect.Inverse.Operation)
		case (o.Class == air.ClassReversible || o.Class == air.ClassCompensable) && op.Effect.Compensate != nil:
			o.Undo = follow("compensate", op.Effect.Compensate.Operation)
		}
		if o.Undo != nil {
			v.AnyUndo = true
		}
		for _, n := range op.Needs {
			nv := needView{Argument: n.Argument}
			for _, p := range n.From {
				if t := viewByID[p.Operation]; t != nil {
					nv.From = append(nv.From, needFrom{Words: t.Words, Tool: t.WireTool, Field: p.Field})
				}
			}
			if len(nv.From) > 0 {
				o.Needs = append(o.Needs, nv)
			}
		}
		if l := op.Effect.Lookup; l != nil {
			if u := follow("lookup", l.Operation); u != nil {
				u.By = l.By
				o.Lookup = u
			}
		}
		if d := op.Effect.Draft; d != nil {
			st := &stagedView{Draft: d.Operation, Promote: d.Promote.Operation}
			if d.Discard != nil {
				st.Discard = d.Discard.Operation
			}
			o.Staged = st
			v.AnyStaged = true
		}
	}

	for _, o := range v.Ops {
		if o.Kind == air.KindRead {
			v.FirstRead = o
			break
		}
	}
	v.SkillRows = v.Ops
	if len(v.Ops) > maxSkillRows {
		v.SkillRows = v.Ops[:maxSkillRows-1]
		v.SkillMore = len(v.Ops) - len(v.SkillRows)
	}
	v.SkillDesc = fmt.Sprintf("Use when a task needs %s — %d read and %d write operation(s) over %s. Calls go through the Anvil gateway under this branch's grant; never look for or use upstream credentials.",
		title, v.Reads, v.Writes, resourceList(resources))
	if len(v.Ops) > skillSearchThreshold {
		v.PyLazy = true
		v.PyParts = pyParts(v)
		v.SkillSearch = true
		v.SearchExample = searchExample(v)
		v.SkillDesc = fmt.Sprintf("Use when a task needs %s — %d read and %d write operation(s) over %s. Find the one a task needs with `bin/%s %s`. Calls go through the Anvil gateway under this branch's grant; never look for or use upstream credentials.",
			title, v.Reads, v.Writes, resourceList(emit.ShortList(resources)), connector, v.SearchCommand)
	}

	v.PyResults = pyResults(c, v.Ops, served)
	for _, name := range drainNamed(ts) {
		v.TSNamed = append(v.TSNamed, name)
	}
	for _, cp := range doc.Capabilities {
		cv := capView{ID: cp.ID, Description: oneLine(cp.Description)}
		for _, id := range cp.Operations {
			if o := viewByID[id]; o != nil {
				cv.Ops = append(cv.Ops, o.Words)
			}
		}
		if len(cv.Ops) > 0 {
			v.Capabilities = append(v.Capabilities, cv)
		}
	}
	for _, wf := range doc.Workflows {
		w := wfView{ID: wf.ID, Description: oneLine(wf.Description)}
		ok := true
		for _, id := range wf.Steps {
			o := viewByID[id]
			if o == nil {
				ok = false
				break
			}
			w.Steps = append(w.Steps, o.Words)
		}
		if ok && len(w.Steps) > 0 {
			v.Workflows = append(v.Workflows, w)
		}
	}

	var err error
	if v.PySpec, err = pySpec(v); err != nil {
		return nil, err
	}
	if v.CLISpec, err = cliSpec(v); err != nil {
		return nil, err
	}
	if v.TSSpec, err = tsSpec(v); err != nil {
		return nil, err
	}
	return v, nil
}

// searchCommand is the CLI command word that searches the connector's
// operations through the gateway: "search", or "anvil-search" when one of
// the connector's own commands starts with "search" (an operation's command
// always wins, so the search must not take its word).
func searchCommand(resources []string) string {
	for _, r := range resources {
		if r == "search" {
			return "anvil-search"
		}
	}
	return "search"
}

// skillSearchThreshold is the number of served operations above which
// SKILL.md lists none of them and tells the agent to search instead. It is
// the gateway's own threshold for serving search instead of a full tool list
// (mcpdoor.AutoDiscoverThreshold = discover.MaxLimit, 50: up to that many,
// one search page could hold every tool), restated here because the
// compiler may not import the gateway's packages; a test keeps them equal.
const skillSearchThreshold = 50

// pyMethodsPerPart bounds the operations of one _methods module, so that
// the first call of a method compiles a small module, not the whole API.
const pyMethodsPerPart = 40

// pyParts splits a large API's Python methods into _methods modules of at
// most pyMethodsPerPart operations each, in operation order.
func pyParts(v *pkgView) []pyPart {
	n := (len(v.Ops) + pyMethodsPerPart - 1) / pyMethodsPerPart
	width := len(fmt.Sprint(n))
	var parts []pyPart
	for i := 0; i < len(v.Ops); i += pyMethodsPerPart {
		ops := v.Ops[i:min(i+pyMethodsPerPart, len(v.Ops))]
		p := pyPart{Name: fmt.Sprintf("m%0*d", width, len(parts)+1), ClassName: v.ClassName,
			First: ops[0].PyMethod, Last: ops[len(ops)-1].PyMethod, Ops: ops}
		for _, o := range ops {
			if o.Paginated != nil {
				p.AnyPaginated = true
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// searchExample is the query SKILL.md shows for search: the first read's
// summary (else the first operation's), lower-cased, without characters
// that would need quoting in a shell's double quotes.
func searchExample(v *pkgView) string {
	o := v.Ops[0]
	if v.FirstRead != nil {
		o = v.FirstRead
	}
	q := strings.Map(func(r rune) rune {
		if strings.ContainsRune("\"$`\\!", r) {
			return -1
		}
		return r
	}, strings.ToLower(o.Summary))
	words := strings.Fields(q)
	if len(words) > 8 {
		words = words[:8]
	}
	if q = strings.Join(words, " "); q == "" {
		q = strings.Join(strings.Fields(o.Words), " ")
	}
	return q
}

// maxSkillRows bounds the SKILL.md operations table so the file stays under 80 lines.
const maxSkillRows = 30

var simpleTSType = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\[\])?$`)

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// cliWords are the operation's command words without the service id.
func cliWords(op *air.Operation) []string {
	f := strings.Fields(op.CLI.Command)
	if len(f) > 1 {
		return f[1:]
	}
	if w := strings.Fields(strings.ReplaceAll(op.CanonicalName, "_", " ")); len(w) > 0 {
		return []string{naming.Kebab(op.CanonicalName)}
	}
	return []string{"call"}
}

func resourceList(rs []string) string {
	switch len(rs) {
	case 0:
		return "its API"
	case 1:
		return rs[0]
	}
	return strings.Join(rs[:len(rs)-1], ", ") + " and " + rs[len(rs)-1]
}

// businessInputs lists an operation's own inputs (not its safety controls):
// parameters, then body fields. carrierKey is the input key of the parameter
// or field that carries the idempotency key, when there is one.
func businessInputs(c schemas, op *air.Operation) (inputs []*inputView, carrierKey string) {
	root := op.Input.Schema
	idem := op.Idempotency
	isCarrier := func(in, name string) bool {
		return idem.HasCarrier() && in == idem.Mechanism && strings.EqualFold(name, idem.Key)
	}
	add := func(key, sdkName, name, in string, required bool, s *air.Schema, desc string, example json.RawMessage) {
		if p := property(root, key); p != nil {
			s = p
		}
		if desc == "" {
			desc = description(c.resolve(root, s))
		}
		t := c.jsonType(root, s)
		sdk := orDefault(sdkName, key)
		iv := &inputView{Key: key, SDKName: sdkName, Name: name, In: in, Py: naming.PyIdent(sdk), Flag: naming.Kebab(sdk), Type: t,
			Required: required, Description: oneLine(desc)}
		if iv.Flag == "" {
			iv.Flag = "input-" + fmt.Sprint(len(inputs)+1)
		}
		if r := c.resolve(root, s); t == "array" && r != nil && r.Items != nil {
			iv.Items = c.jsonType(root, r.Items)
		}
		iv.PyType = pyType(t)
		iv.TSType = "unknown"
		iv.Placeholder = "<" + placeholder(t) + ">"
		iv.Example = c.example(root, s, key, example, 0)
		r := c.resolve(root, s)
		iv.HasExample = len(example) > 0 || (r != nil && len(r.Examples) > 0)
		inputs = append(inputs, iv)
	}
	for _, p := range op.Input.Params {
		key := orDefault(p.Key, p.Name)
		if isCarrier(p.In, p.Name) {
			carrierKey = key
			continue
		}
		add(key, p.SDKName, p.Name, p.In, p.Required, p.Schema, p.Description, p.Example)
	}
	if b := op.Input.Body; b != nil {
		if b.Projection == air.ProjectionWhole {
			key := "body"
			if len(b.Fields) == 1 && b.Fields[0].Key != "" {
				key = b.Fields[0].Key
			}
			add(key, "", "", "body", b.Required, b.Schema, "", nil)
		} else {
			bs := c.resolve(root, b.Schema)
			for _, f := range b.Fields {
				key := orDefault(f.Key, f.Name)
				if isCarrier("body", f.Name) {
					carrierKey = key
					continue
				}
				var fs *air.Schema
				if bs != nil && bs.Properties != nil {
					fs = bs.Properties[f.Name]
				}
				add(key, f.SDKName, f.Name, "body", f.Required, fs, "", nil)
			}
		}
	}
	sort.SliceStable(inputs, func(i, j int) bool { return inputs[i].Required && !inputs[j].Required })
	return inputs, carrierKey
}

func property(root *air.Schema, key string) *air.Schema {
	if root == nil || root.Properties == nil {
		return nil
	}
	return root.Properties[key]
}

func pyType(t string) string {
	switch t {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "List[Any]"
	case "object":
		return "Dict[str, Any]"
	}
	return "Any"
}

func placeholder(t string) string {
	switch t {
	case "string", "integer", "number", "boolean":
		return t
	}
	return "json"
}

// usage is the CLI usage line of an operation.
func usage(o *opView) string {
	parts := []string{o.CLI}
	for _, in := range o.Inputs {
		if in.Required {
			parts = append(parts, "--"+in.Flag+" "+in.Placeholder)
		}
	}
	for _, in := range o.Inputs {
		if !in.Required {
			parts = append(parts, "[--"+in.Flag+" "+in.Placeholder+"]")
		}
	}
	if o.Confirm {
		parts = append(parts, "--confirm")
	}
	return strings.Join(parts, " ")
}

// safetyFlag is the CLI flag of an option that is not a control (--input,
// --body, --json), renamed only when a business input already uses it. The
// controls (--confirm, --idempotency-key, --dry-run, --stage) are never
// renamed: an input that would shadow one has another flag
// (naming.SDKControls).
func safetyFlag(o *opView, name string) string {
	for _, in := range o.Inputs {
		if in.Flag == name {
			return "anvil-" + name
		}
	}
	return name
}

// tsInputDecl writes the input interface of an operation.
func tsInputDecl(ts *tsTypes, root *air.Schema, o *opView) string {
	if len(o.Inputs) == 0 {
		return "export type " + o.TSInput + " = Record<string, never>;"
	}
	var b strings.Builder
	b.WriteString("export interface " + o.TSInput + " {\n")
	for _, in := range o.Inputs {
		s := property(root, in.Key)
		t := "unknown"
		if s != nil {
			t = ts.expr(root, s, "  ", 1)
		} else if in.Type != "" {
			t = map[string]string{"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
				"array": "unknown[]", "object": "Record<string, unknown>", "null": "null"}[in.Type]
		}
		in.TSType = t
		if in.Description != "" {
			b.WriteString("  /** " + jsDoc(in.Description) + " */\n")
		}
		opt := "?"
		if in.Required {
			opt = ""
		}
		b.WriteString("  " + tsKey(in.Key) + opt + ": " + t + ";\n")
	}
	b.WriteString("}")
	return b.String()
}

// drainNamed writes the named schemas the generated types reference (and
// the ones those reference), sorted by type name.
func drainNamed(ts *tsTypes) []tsNamed {
	done := map[string]string{}
	for i := 0; i < len(ts.want); i++ {
		n := ts.want[i]
		d := ts.defs[n]
		done[n] = ts.expr(d.root, d.schema, "", 0)
	}
	var out []tsNamed
	for _, n := range sortedByValue(ts.names) {
		decl := done[n]
		tn := ts.names[n]
		if isObjectLiteral(decl) {
			out = append(out, tsNamed{Name: tn, Decl: "export interface " + tn + " " + decl})
		} else {
			out = append(out, tsNamed{Name: tn, Decl: "export type " + tn + " = " + decl + ";"})
		}
	}
	return out
}

// isObjectLiteral reports whether a type expression is one object type
// literal ({...} and nothing after it, such as "| null"), which can be
// declared as an interface. Quoted strings are skipped so braces inside
// string literal types do not count.
func isObjectLiteral(expr string) bool {
	if !strings.HasPrefix(expr, "{") {
		return false
	}
	depth := 0
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i == len(expr)-1
			}
		}
	}
	return false
}

// sortedByValue returns the keys of m ordered by their values.
func sortedByValue(m map[string]string) []string {
	keys := sortedKeys(m)
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && m[keys[j]] < m[keys[j-1]]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func pageOf(p *air.Pagination, o *opView) *pageView {
	pv := &pageView{Style: p.Style, Next: p.NextField, Items: p.ItemsField, Method: o.PyMethod + "_paginated"}
	switch p.Style {
	case "cursor":
		pv.Param = p.CursorParam
	case "page", "offset":
		pv.Param = p.CursorParam
		if pv.Param == "" {
			pv.Param = p.Style
		}
	default:
		return nil
	}
	for _, in := range o.Inputs {
		if in.Key == pv.Param {
			return pv
		}
	}
	return nil
}

// jsonText marshals v compactly.
func jsonText(v any) (string, error) {
	b, err := air.MarshalCompact(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// pretty marshals v indented with a trailing newline.
func pretty(v any) ([]byte, error) { return air.Marshal(v) }

// pyResults names each operation's result type (opView.PyResult) and
// writes results.pyi's declarations: the TypedDicts of the response schemas
// and one alias per operation (or the operation's own TypedDict when its
// response is an object declared in place).
func pyResults(c schemas, ops []*opView, served []*air.Operation) string {
	g := newPyTypes(c)
	var aliases strings.Builder
	for i, o := range ops {
		out := served[i].Output.Schema
		o.PyResult = g.className(served[i].CanonicalName + "_result")
		switch {
		case out == nil:
			aliases.WriteString(o.PyResult + " = Any\n")
		case out.Ref == "" && out.Bool == nil && len(out.Properties) > 0 && len(out.OneOf)+len(out.AnyOf)+len(out.AllOf) == 0:
			g.want = append(g.want, pyWant{name: o.PyResult, root: out, schema: out})
		default:
			aliases.WriteString(o.PyResult + " = " + g.expr(out, out, o.PyResult+"Item", 0) + "\n")
		}
	}
	return g.decls() + "\n# The result of each operation's method.\n" + aliases.String()
}
