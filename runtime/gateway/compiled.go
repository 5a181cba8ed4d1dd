package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/grant"
)

// RuntimeVersion1 names the version of the compiled-handler API
// (CompiledWorkspace, CompiledOp, Input, EffectCall and the helpers generated
// code calls). Every generated gateway refers to it (var _ =
// gateway.RuntimeVersion1), so a tree generated for another version of the
// API fails to compile against this runtime instead of misbehaving. A change
// that breaks generated code renames it (RuntimeVersion2).
const RuntimeVersion1 = 1

// ErrCompiledWorkspace is wrapped by NewCompiled for a workspace table that
// cannot be served (no connectors, a bad connector id, a tool-name
// collision, an operation without handlers).
var ErrCompiledWorkspace = errors.New("invalid compiled workspace")

// CompiledWorkspace is the table a generated gateway registers: every
// connector of the workspace it was generated from, fixed at generation time.
type CompiledWorkspace struct {
	Connectors []*CompiledConnector
}

// CompiledConnector is one bundle of a generated workspace.
type CompiledConnector struct {
	// ID is the connector id (the bundle's path in the workspace, folded).
	ID string
	// ServiceID is the AIR service id.
	ServiceID string
	// ServerURL is the upstream base URL (AIR service.servers[0].url), or ""
	// when the service declares none. ANVIL_UPSTREAM_<CONNECTOR>_URL
	// overrides it, as it does for the generic gateway.
	ServerURL string
	// Auth is the service's upstream auth.
	Auth air.Auth
	// ConnectAuth is what /connect/start offers when an approved operation
	// declares its own auth (the first such operation's); nil: Auth.
	ConnectAuth *air.Auth
	// Ops are the served operations, in AIR order.
	Ops []*CompiledOp
}

// CompiledOp is one served operation: the metadata the shared runtime reads
// (grant, gates, credentials, audit, error mapping) and the handlers
// generated from its AIR.
type CompiledOp struct {
	// ID is the AIR operation id.
	ID string
	// Tool is the bundle-level tool name; the gateway serves it as
	// <connector>__<Tool>.
	Tool string
	// Kind is air.KindRead or air.KindMutation.
	Kind string
	// EffectClass is air.EffectClassOf of the operation.
	EffectClass string
	// Confirmation is the operation's confirmation policy.
	Confirmation air.Confirmation
	// Safety names the tool's control inputs.
	Safety air.Safety
	// Idempotency is the operation's idempotency declaration.
	Idempotency air.Idempotency
	// RetryMode is AIR retries.mode (safe_to_retry of upstream errors).
	RetryMode string
	// Auth is the operation's own upstream auth; nil: the connector's.
	Auth *air.Auth
	// Listing is the tools/list entry, prebuilt: the exact JSON the generic
	// gateway renders for the tool (its inputSchema is also the schema whose
	// validator words error messages).
	Listing []byte
	// SchemaCheck asks for the shared JSON Schema validator on top of the
	// generated one, for inputs whose schemas the generator does not
	// specialise (nested objects, combinators).
	SchemaCheck bool

	// Decode reads the arguments object straight from its JSON. It returns
	// false whenever it cannot decide alone (anything unusual, or input that
	// is not valid): the runtime then decodes the arguments generically and
	// calls FromArgs.
	Decode func(raw []byte) (Input, bool)
	// FromArgs converts decoded arguments (numbers as json.Number) and
	// validates them; false when they do not match the input schema.
	FromArgs func(args map[string]any) (Input, bool)
	// Build builds the upstream request.
	Build func(ctx context.Context, base *Base, in Input) (*http.Request, error)
	// Effect builds the effect report of a finished call.
	Effect func(c *EffectCall) *effect.Report
	// IgnoresResponse says the effect report never reads the upstream's
	// answer (air.Effect.ReadsResponse is false), so the answer is not
	// decoded for it. The zero value decodes it.
	IgnoresResponse bool
	// DraftOp is the AIR id of the draft form's operation; "" when the
	// operation has none.
	DraftOp string
	// Draft maps a staged call's input to its draft's input, in the draft
	// mapping's order; nil when the operation has no draft form.
	Draft func(in Input) (draft Input, missing *DraftMissing)
}

// DraftMissing names a draft argument whose path named nothing.
type DraftMissing struct {
	// Argument is the draft input's name.
	Argument string
	// Reason is why it has no value ("request.name names nothing in this call").
	Reason string
}

// Input is a generated operation's typed arguments. Generated code
// implements it for each operation's input struct.
type Input interface {
	// Validate reports whether the arguments match the input schema (for an
	// operation with SchemaCheck, the parts the generator specialised).
	Validate() bool
	// Args returns the arguments as decoded JSON (cold paths: validator
	// messages, tests).
	Args() map[string]any
	// InputSHA256 is audit.InputSHA256 of Args().
	InputSHA256() string
	// IdempotencyKey reads the carrier input (air.Safety.IdempotencyKey):
	// present is false when it is absent or null; isString tells a string
	// value (s) from another one.
	IdempotencyKey() (s string, isString, present bool)
	// SetIdempotencyKey sets the carrier input.
	SetIdempotencyKey(key string)
	// Confirm reads the confirm input (air.Safety.ConfirmKey): its value when
	// it is a boolean, and whether it is present.
	Confirm() (v, present bool)
	// SetConfirm sets the confirm input.
	SetConfirm(v bool)
	// DryRun reports whether anvil_dry_run is true.
	DryRun() bool
	// SetDryRun sets anvil_dry_run to true.
	SetDryRun()
}

// EffectCall is what a generated effect function reads (effect.Call over
// typed arguments).
type EffectCall struct {
	// Input is the call's typed arguments; nil when they did not decode.
	Input Input
	// Args holds the decoded arguments when Input is nil (nil when they
	// were not a JSON object).
	Args map[string]any
	// Response is the decoded upstream answer (the draft's for a staged call).
	Response any
	// IdempotencyKey is the key that went upstream; "" when none did.
	IdempotencyKey string
	// Failed marks a call that returned an error.
	Failed bool
	// Staged marks a call that performed the draft form instead.
	Staged bool
	// Now is the time of the call.
	Now time.Time
}

// Base is a connector's upstream base URL, parsed once.
type Base struct {
	// Prefix is scheme://host plus the base path without a trailing slash.
	Prefix string
	// Query is the base URL's raw query ("" when none).
	Query string
	// Err is set when the base URL is not an absolute http(s) URL; every
	// request build then fails with it (internal_error).
	Err bool
}

// ParseBase parses an upstream base URL as upstream.BuildRequest does.
func ParseBase(raw string) *Base {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Base{Err: true}
	}
	return &Base{Prefix: u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/"), Query: u.RawQuery}
}

// compiledConnector is the runtime state of one compiled connector.
type compiledConnector struct {
	once sync.Once
	base string // the server URL, after overrides
	err  bool   // serverURL refused it (the error is rebuilt per call)
	host string
	pb   *Base
}

// compiledTool is the runtime state of one compiled tool.
type compiledTool struct {
	op    *CompiledOp
	index int // in table.ops
	table *compiledTable
	conn  *compiledConnector

	schemaOnce sync.Once
	schema     *jsonschema.Schema
	mcpOnce    sync.Once
	mcpTool    *mcp.Tool
	mcpErr     error
}

// compiledTable is the operation table of a compiled workspace: the table
// every token's grant is compiled over, once per token.
type compiledTable struct {
	ops []grant.Op

	mu     sync.Mutex
	grants map[grantKey]*grantEntry
}

// maxCompiledGrants bounds the compiled-grant cache.
const maxCompiledGrants = 4096

// grantKey identifies a grant list by its backing array: verified claims
// share their parsed grant list between copies (auth.Claims), so every call
// made with one token presents the same list.
type grantKey struct {
	first *grant.Entry
	n     int
}

// grantEntry keeps the list alive (so its address cannot be reused while
// the entry exists) next to its compiled decisions.
type grantEntry struct {
	list     grant.List
	compiled *grant.Compiled
}

// decide returns the grant decision for table[i] under l, compiling l over
// the table on first sight.
func (t *compiledTable) decide(l grant.List, i int) grant.Decision {
	if len(l) == 0 {
		return l.Decide(t.ops[i])
	}
	k := grantKey{first: &l[0], n: len(l)}
	t.mu.Lock()
	e := t.grants[k]
	t.mu.Unlock()
	if e == nil {
		e = &grantEntry{list: l, compiled: grant.Compile(l, t.ops)}
		t.mu.Lock()
		if len(t.grants) >= maxCompiledGrants {
			clear(t.grants)
		}
		t.grants[k] = e
		t.mu.Unlock()
	}
	return e.compiled.Decide(i)
}

// cachedGrants is the number of compiled grants held (tests).
func (t *compiledTable) cachedGrants() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.grants)
}

// NewCompiled builds a gateway that serves a generated workspace through its
// compiled handlers, with everything else (configuration, inbound auth,
// grants, vault, connect routes, audit, MCP and REST framing) shared with
// New. cfg.Workspace is not read.
func NewCompiled(cfg Config, ws *CompiledWorkspace, opts *Options) (*Gateway, error) {
	f, err := compiledFleet(ws)
	if err != nil {
		return nil, err
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.fleet = f
	return New(cfg, &o)
}

// compiledFleet turns the generated table into the fleet the shared runtime
// serves: connectors and tools carrying only the metadata the shared paths
// read, with the compiled handlers attached.
func compiledFleet(ws *CompiledWorkspace) (*Fleet, error) {
	if ws == nil || len(ws.Connectors) == 0 {
		return nil, fmt.Errorf("%w: %w", ErrCompiledWorkspace, ErrNoBundles)
	}
	f := &Fleet{byName: map[string]*Tool{}}
	table := &compiledTable{grants: map[grantKey]*grantEntry{}}
	seen := map[string]bool{}
	for _, cc := range ws.Connectors {
		if cc == nil || !air.ValidConnectorID.MatchString(cc.ID) {
			return nil, fmt.Errorf("%w: a connector id is not 1-64 characters of [A-Za-z0-9_-]", ErrCompiledWorkspace)
		}
		if seen[cc.ID] {
			return nil, fmt.Errorf("%w: connector %q appears twice", ErrCompiledWorkspace, cc.ID)
		}
		seen[cc.ID] = true
		doc := &air.Document{Schema: air.SchemaVersion, AnvilVersion: air.AnvilVersion,
			Service: air.Service{ID: cc.ServiceID, Auth: cc.Auth}}
		if cc.ServerURL != "" {
			doc.Service.Servers = []air.Server{{URL: cc.ServerURL}}
		}
		// ConnectAuth reads the first approved operation that declares auth;
		// a leading placeholder stands for it (it is never served).
		if cc.ConnectAuth != nil {
			a := *cc.ConnectAuth
			doc.Operations = append(doc.Operations, air.Operation{State: air.StateApproved, Auth: &a})
		}
		for _, op := range cc.Ops {
			if op == nil || op.Decode == nil || op.FromArgs == nil || op.Build == nil || op.Effect == nil {
				return nil, fmt.Errorf("%w: connector %s has an operation without handlers", ErrCompiledWorkspace, cc.ID)
			}
			doc.Operations = append(doc.Operations, slimOperation(op))
		}
		c := &Connector{ID: cc.ID, Doc: doc, tools: map[string]*Tool{}}
		state := &compiledConnector{}
		ops := doc.Operations
		if cc.ConnectAuth != nil {
			ops = ops[1:]
		}
		for i, op := range cc.Ops {
			aop := &ops[i]
			t := &Tool{
				Name:      c.ID + "__" + op.Tool,
				Connector: c,
				Op:        aop,
				GrantOp: grant.Op{Connector: c.ID, ID: op.ID, ServiceID: cc.ServiceID,
					Mutation: op.Kind == air.KindMutation, NeedsConfirm: op.Confirmation.Required},
				listing: json.RawMessage(op.Listing),
			}
			t.compiled = &compiledTool{op: op, index: len(table.ops), table: table, conn: state}
			table.ops = append(table.ops, t.GrantOp)
			if other, ok := f.byName[t.Name]; ok {
				return nil, fmt.Errorf("%w: tool-name collision: %s is served by both %s and %s", ErrCompiledWorkspace, t.Name, other.Op.ID, op.ID)
			}
			f.byName[t.Name] = t
			c.tools[op.ID] = t
			f.Tools = append(f.Tools, t)
		}
		f.Connectors = append(f.Connectors, c)
	}
	sort.Slice(f.Tools, func(i, j int) bool { return f.Tools[i].Name < f.Tools[j].Name })
	return f, nil
}

// slimOperation is the AIR view of a compiled operation that the shared
// paths read: ids, classes and policies, never schemas or mappings.
func slimOperation(op *CompiledOp) air.Operation {
	o := air.Operation{
		ID:           op.ID,
		State:        air.StateApproved,
		Effect:       air.Effect{Kind: op.Kind, Class: op.EffectClass},
		Confirmation: op.Confirmation,
		Idempotency:  op.Idempotency,
		Retries:      air.Retries{Mode: op.RetryMode},
		Input:        air.Input{Safety: op.Safety},
		MCP:          air.MCP{ToolName: op.Tool},
	}
	if op.Auth != nil {
		a := *op.Auth
		o.Auth = &a
	}
	return o
}

// Listing is the tool's tools/list entry as the gateway serves it.
func (t *Tool) Listing() json.RawMessage { return t.listing }

// compiledMCPTool decodes the prebuilt tools/list entry into the SDK's tool,
// keeping the input schema and every _meta value as the prebuilt bytes, so
// the SDK writes the entry back byte for byte.
func (ct *compiledTool) compiledMCPTool(name string) (*mcp.Tool, error) {
	ct.mcpOnce.Do(func() {
		var aux struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		schema := json.RawMessage{}
		t := &mcp.Tool{InputSchema: &schema}
		if err := json.Unmarshal(ct.op.Listing, t); err != nil {
			ct.mcpErr = fmt.Errorf("tool %s: prebuilt listing: %w", name, err)
			return
		}
		if err := json.Unmarshal(ct.op.Listing, &aux); err != nil {
			ct.mcpErr = fmt.Errorf("tool %s: prebuilt listing: %w", name, err)
			return
		}
		t.InputSchema = schema
		if aux.Meta != nil {
			t.Meta = make(mcp.Meta, len(aux.Meta))
			for k, v := range aux.Meta {
				t.Meta[k] = v
			}
		}
		ct.mcpTool = t
	})
	return ct.mcpTool, ct.mcpErr
}

// inputSchema is the tool's validator for error messages, compiled on first
// use from the prebuilt listing's inputSchema exactly as the generic gateway
// compiles it from AIR.
func (ct *compiledTool) inputSchema(name string) *jsonschema.Schema {
	ct.schemaOnce.Do(func() {
		var aux struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(ct.op.Listing, &aux) != nil {
			return
		}
		s := &air.Schema{}
		if json.Unmarshal(aux.InputSchema, s) != nil {
			return
		}
		sch, err := compileSchema(name, s)
		if err == nil {
			ct.schema = sch
		}
	})
	return ct.schema
}

// base returns the connector's server URL (after overrides), parsed.
func (ct *compiledTool) base(c *Connector) *compiledConnector {
	cc := ct.conn
	cc.once.Do(func() {
		u, err := serverURL(c.Doc)
		if err != nil {
			cc.err = true
			return
		}
		cc.base = u
		cc.host = hostOf(u)
		cc.pb = ParseBase(u)
	})
	return cc
}

// UpstreamURLEnv is the variable that overrides a connector's upstream base
// URL for both front doors: ANVIL_UPSTREAM_<C>_URL, where <C> is the
// connector id folded as for ANVIL_CONNECT_<C>_* (upper case, runs of
// characters outside [A-Z0-9] become one underscore).
func UpstreamURLEnv(connector string) string {
	return "ANVIL_UPSTREAM_" + strings.TrimPrefix(connect.EnvPrefix(connector), "ANVIL_CONNECT_") + "URL"
}

// applyUpstreamOverrides replaces the server URL of every connector that
// has ANVIL_UPSTREAM_<C>_URL set. The value must be an absolute http(s) URL
// without userinfo or fragment; anything else refuses to start. The egress
// allowlist still applies to the overridden host.
func applyUpstreamOverrides(f *Fleet, getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	for _, c := range f.Connectors {
		name := UpstreamURLEnv(c.ID)
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
			return fmt.Errorf("%s must be an absolute http(s) URL without credentials or fragment", name)
		}
		c.Doc.Service.Servers = append([]air.Server{{URL: v}}, c.Doc.Service.Servers...)
	}
	return nil
}
