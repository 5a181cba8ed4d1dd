// Package fleet is the table of what a gateway serves: connectors (one per
// bundle of a workspace, its id the bundle's folded path), their tools under
// their wire names, each with its AIR operation, its Handler, its grant
// operation and its tools/list entry. Load reads a workspace directory
// (AIR-driven handlers); FromWorkspace reads a generated gateway's table
// (generated handlers, grants compiled over the operation table). Both build
// the table with the same code from AIR, so both serve the same tools.
package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// ErrNoBundles is returned when a workspace holds no bundle.
var ErrNoBundles = air.ErrNoBundles

// Connector is one served bundle.
type Connector struct {
	ID         string // folded bundle path, the tool prefix
	Dir        string
	Doc        *air.Document
	BundleHash string
	tools      map[string]*Tool // by AIR operation id

	baseOnce sync.Once
	base     *handler.Base   // the server URL (after overrides), parsed
	baseErr  *envelope.Error // set instead when the service has no usable server URL
	host     string

	connectOnce sync.Once
	connectAuth *air.Auth // ConnectAuth's answer
}

// Tool is one served operation under its wire name.
type Tool struct {
	Name      string // <connector>__<toolName>, fitted to 64 characters (air.WireToolName)
	Connector *Connector
	Op        *air.Operation
	GrantOp   grant.Op
	schema    *handler.Validator // compiled on the tool's first call
	// Handler serves the tool's calls: AIR-driven, or generated
	// (FromWorkspace).
	Handler handler.Handler
	// ReadsResponse says the effect report reads the upstream's answer,
	// which is then decoded for it (air.Effect.ReadsResponse).
	ReadsResponse bool
	index         int // in the fleet's grant table, when it has one

	// The tools/list entry is built on first use (entry): a gateway
	// serving tens of thousands of operations starts without encoding a
	// schema, and holds the entries only of the tools it has listed.
	entryOnce sync.Once
	listing   json.RawMessage // the entry's JSON
	mcpTool   *mcp.Tool       // the same entry
	listed    *mcp.Tool       // the same, its description trimmed for tools/list

	// listOutput puts the outputSchema in the entry (ListOutputSchemas).
	listOutput bool
	outputOnce sync.Once
	output     json.RawMessage // OutputSchema's answer
}

// Fleet is the set of connectors and tools a gateway serves.
type Fleet struct {
	Connectors []*Connector
	Tools      []*Tool // sorted by name
	byName     map[string]*Tool
	// grants, when set, decides grants by lookup over the fleet's compiled
	// operation table (a generated workspace); else each call decides.
	grants *grantTable
	// searchOnce builds search, the discovery index (SearchIndex).
	searchOnce sync.Once
	search     *discover.Index
}

// New builds a fleet from connectors whose ID and Doc are set.
func New(conns []*Connector) (*Fleet, error) {
	f := &Fleet{byName: map[string]*Tool{}}
	seen := map[string]string{}
	for _, c := range conns {
		if !air.ValidConnectorID.MatchString(c.ID) {
			return nil, fmt.Errorf("bundle %s folds to connector id %q, which is not 1-64 characters of [A-Za-z0-9_-]", c.Dir, c.ID)
		}
		if prev, ok := seen[c.ID]; ok {
			return nil, fmt.Errorf("tool-name collision: bundles %s and %s both serve as connector %q", prev, c.Dir, c.ID)
		}
		seen[c.ID] = c.Dir
		c.tools = map[string]*Tool{}
		for i := range c.Doc.Operations {
			op := &c.Doc.Operations[i]
			if !air.IsServed(op) {
				continue
			}
			t, err := newTool(c, op)
			if err != nil {
				return nil, err
			}
			if other, ok := f.byName[t.Name]; ok {
				return nil, fmt.Errorf("tool-name collision: %s is served by both %s (%s) and %s (%s)",
					t.Name, other.Op.ID, other.Connector.Dir, op.ID, c.Dir)
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

func newTool(c *Connector, op *air.Operation) (*Tool, error) {
	t := &Tool{
		Name:      air.WireToolName(c.ID, op),
		Connector: c,
		Op:        op,
		GrantOp: grant.Op{Connector: c.ID, ID: op.ID, ServiceID: c.Doc.Service.ID,
			Mutation: op.Effect.Kind == air.KindMutation, NeedsConfirm: op.Confirmation.Required},
		ReadsResponse: op.Effect.ReadsResponse(),
	}
	if op.Input.Schema == nil {
		return nil, fmt.Errorf("bundle %s: operation %s has no input schema", c.Dir, op.ID)
	}
	t.schema = handler.NewValidator(t.Name, op.Input.Schema)
	t.Handler = handler.ForAIR(op, t.schema, c)
	return t, nil
}

// Tool returns the tool with the wire name, or nil.
func (f *Fleet) Tool(name string) *Tool { return f.byName[name] }

// Connector returns the connector with the id, or nil.
func (f *Fleet) Connector(id string) *Connector {
	for _, c := range f.Connectors {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// IDs lists the connector ids, in order.
func (f *Fleet) IDs() []string {
	out := make([]string, len(f.Connectors))
	for i, c := range f.Connectors {
		out[i] = c.ID
	}
	return out
}

// Tool maps an AIR operation id of this connector to its wire tool name and
// whether it is served here (it implements effect.Tools).
func (c *Connector) Tool(operationID string) (string, bool) {
	if t, ok := c.tools[operationID]; ok {
		return t.Name, true
	}
	return "", false
}

// ToolCount is the number of tools the connector serves.
func (c *Connector) ToolCount() int { return len(c.tools) }

// ToolFor returns the served tool of an AIR operation id, or nil.
func (c *Connector) ToolFor(operationID string) *Tool { return c.tools[operationID] }

// AuthFor is the auth an operation's upstream calls use.
func (c *Connector) AuthFor(op *air.Operation) *air.Auth {
	if op != nil && op.Auth != nil {
		return op.Auth
	}
	return &c.Doc.Service.Auth
}

// ConnectAuth is how the connector is connected: the auth of the first
// approved operation that has auth decides the kind (/connect/start), else
// the service auth. Its Scopes are the union of the scopes every served
// operation that connects this way declares (same type and scheme),
// deduplicated in the order the operations and their requirements list
// them: a login asks for what every approved operation needs, not only
// the first one; the scopes the service auth declares come first when it
// is the same auth. The result is computed once and must not be modified.
func (c *Connector) ConnectAuth() *air.Auth {
	c.connectOnce.Do(func() { c.connectAuth = connectAuth(c) })
	return c.connectAuth
}

func connectAuth(c *Connector) *air.Auth {
	base := &c.Doc.Service.Auth
	for i := range c.Doc.Operations {
		op := &c.Doc.Operations[i]
		if op.State == air.StateApproved && op.Auth != nil && op.Auth.Type != "" && op.Auth.Type != air.AuthNone {
			base = op.Auth
			break
		}
	}
	a := *base
	a.Scopes = nil
	seen := map[string]bool{}
	add := func(scopes []string) {
		for _, s := range scopes {
			if !seen[s] {
				seen[s] = true
				a.Scopes = append(a.Scopes, s)
			}
		}
	}
	if sa := &c.Doc.Service.Auth; sa.Type == base.Type && sa.Scheme == base.Scheme {
		add(sa.Scopes) // what the service declares for this auth (offline_access, …)
	}
	for i := range c.Doc.Operations {
		op := &c.Doc.Operations[i]
		if !air.IsServed(op) {
			continue
		}
		if oa := c.AuthFor(op); oa.Type == base.Type && oa.Scheme == base.Scheme {
			add(oa.Scopes)
		}
	}
	return &a
}

// Decide applies a grant list to tool: a lookup in the grants compiled over
// the operation table when the fleet has one, else List.Decide.
func (f *Fleet) Decide(l grant.List, t *Tool) grant.Decision {
	if f.grants != nil {
		return f.grants.decide(l, t.index)
	}
	return l.Decide(t.GrantOp)
}

// UpstreamBase returns the connector's server URL (after overrides),
// parsed once, and its host; or the refusal of a service without a usable
// one (upstream_unavailable).
func (c *Connector) UpstreamBase() (*handler.Base, string, *envelope.Error) {
	c.baseOnce.Do(func() {
		u, err := serverURL(c.Doc)
		if err != nil {
			c.baseErr = err
			return
		}
		c.base, c.host = handler.ParseBase(u), hostOf(u)
	})
	return c.base, c.host, c.baseErr
}

// Listing is the tool's full tools/list entry (anvil_describe answers it
// with the caller's producer links added: catalog.Describe).
func (t *Tool) Listing() json.RawMessage {
	t.entry()
	return t.listing
}

// ListEntry is the tool's tools/list entry with its description trimmed
// to discover.ListingDescriptionMax (Listing has the full text).
func (t *Tool) ListEntry() *mcp.Tool {
	t.entry()
	return t.listed
}

// entry builds the tool's tools/list entry once. Its input schema is held
// once: the entry's InputSchema is a slice of the listing's bytes.
func (t *Tool) entry() {
	t.entryOnce.Do(func() {
		mt := mcpTool(t)
		// The entry always encodes: its schema is JSON (mcpTool) and the
		// rest are plain values.
		listing, _ := json.Marshal(mt)
		if raw, ok := mt.InputSchema.(json.RawMessage); ok {
			if i := bytes.Index(listing, raw); i >= 0 {
				mt.InputSchema = json.RawMessage(listing[i : i+len(raw) : i+len(raw)])
			}
		}
		t.listing, t.mcpTool, t.listed = listing, mt, mt
		if d := discover.TrimDescription(mt.Description, discover.ListingDescriptionMax); d != mt.Description {
			cp := *mt
			cp.Description = d
			t.listed = &cp
		}
	})
}

// unprefixed returns the bundle-level tool name (AIR's; the served name
// ends in it unless air.FitWireName had to shorten it).
func (t *Tool) unprefixed() string { return t.Op.MCP.ToolName }

// MCPTool is the tool's full tools/list entry.
func (t *Tool) MCPTool() *mcp.Tool {
	t.entry()
	return t.mcpTool
}

func serverURL(doc *air.Document) (string, *envelope.Error) {
	if len(doc.Service.Servers) == 0 || doc.Service.Servers[0].URL == "" {
		return "", &envelope.Error{Code: envelope.UpstreamUnavailable,
			Message: fmt.Sprintf("Service %s declares no server URL.", doc.Service.ID)}
	}
	u := doc.Service.Servers[0].URL
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return "", &envelope.Error{Code: envelope.UpstreamUnavailable,
			Message: fmt.Sprintf("Service %s's server URL is not an absolute http(s) URL.", doc.Service.ID)}
	}
	return u, nil
}

func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
