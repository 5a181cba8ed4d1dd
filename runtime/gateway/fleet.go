// Package gateway is the fleet gateway: it serves every bundle of a workspace
// as MCP tools on /mcp and as REST calls on /call/<tool>, verifies Branchyard
// tokens, enforces grants, resolves credentials from the vault, calls the
// upstream, reports each call's effect and writes one audit line per call.
package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/grant"
)

// ErrNoBundles is returned when a workspace holds no bundle.
var ErrNoBundles = errors.New("no bundles found")

// Connector is one served bundle.
type Connector struct {
	ID         string // folded bundle path, the tool prefix
	Dir        string
	Doc        *air.Document
	BundleHash string
	tools      map[string]*Tool // by AIR operation id

	baseOnce sync.Once
	base     *Base           // the server URL (after overrides), parsed
	baseErr  *envelope.Error // set instead when the service has no usable server URL
	host     string
}

// Tool is one served operation under its wire name.
type Tool struct {
	Name      string // <connector>__<toolName>
	Connector *Connector
	Op        *air.Operation
	GrantOp   grant.Op
	schema    *jsonschema.Schema
	handler   Handler // AIR-driven, or generated (compiledFleet)
	// readsResponse: the effect report reads the upstream's answer, which
	// is then decoded (air.Effect.ReadsResponse).
	readsResponse bool
	listing       json.RawMessage // the tools/list entry
	index         int             // in the fleet's grant table, when it has one
}

// Fleet is the set of connectors and tools a gateway serves.
type Fleet struct {
	Connectors []*Connector
	Tools      []*Tool // sorted by name
	byName     map[string]*Tool
	// grants, when set, decides grants by lookup over the fleet's compiled
	// operation table (a generated workspace); else each call decides.
	grants *grantTable
}

// LoadFleet discovers the bundles under root (air.Discover), folds their
// paths into connector ids and builds the tool table. It refuses an empty
// workspace and any collision of connector ids or tool names.
func LoadFleet(root string) (*Fleet, error) {
	dirs, err := air.Discover(root)
	if err != nil {
		return nil, fmt.Errorf("reading the workspace %s: %w", root, err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoBundles, root)
	}
	var conns []*Connector
	for _, dir := range dirs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		doc, err := air.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("loading bundle %s: %w", dir, err)
		}
		c := &Connector{ID: air.FoldConnectorID(rel), Dir: dir, Doc: doc}
		if g, err := air.LoadGeneration(dir); err == nil {
			c.BundleHash = g.BundleHash
		}
		conns = append(conns, c)
	}
	return NewFleet(conns)
}

// NewFleet builds a fleet from connectors whose ID and Doc are set.
func NewFleet(conns []*Connector) (*Fleet, error) {
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
	for _, t := range f.Tools {
		b, err := buildListing(t)
		if err != nil {
			return nil, err
		}
		t.listing = b
	}
	return f, nil
}

func newTool(c *Connector, op *air.Operation) (*Tool, error) {
	t := &Tool{
		Name:      c.ID + "__" + op.MCP.ToolName,
		Connector: c,
		Op:        op,
		GrantOp: grant.Op{Connector: c.ID, ID: op.ID, ServiceID: c.Doc.Service.ID,
			Mutation: op.Effect.Kind == air.KindMutation, NeedsConfirm: op.Confirmation.Required},
		readsResponse: op.Effect.ReadsResponse(),
	}
	if op.Input.Schema == nil {
		return nil, fmt.Errorf("bundle %s: operation %s has no input schema", c.Dir, op.ID)
	}
	sch, err := compileSchema(t.Name, op.Input.Schema)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: operation %s: input schema: %w", c.Dir, op.ID, err)
	}
	t.schema = sch
	t.handler = &airHandler{op: op, schema: sch, tools: c}
	return t, nil
}

// compileSchema compiles an input schema for validation (draft 2020-12).
func compileSchema(name string, s *air.Schema) (*jsonschema.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "anvil:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
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

// ToolFor returns the served tool of an AIR operation id, or nil.
func (c *Connector) ToolFor(operationID string) *Tool { return c.tools[operationID] }

// AuthFor is the auth an operation's upstream calls use.
func (c *Connector) AuthFor(op *air.Operation) *air.Auth {
	if op != nil && op.Auth != nil {
		return op.Auth
	}
	return &c.Doc.Service.Auth
}

// ConnectKind decides what /connect/start offers: the first approved
// operation that has auth decides, else the service auth.
func (c *Connector) ConnectAuth() *air.Auth {
	for i := range c.Doc.Operations {
		op := &c.Doc.Operations[i]
		if op.State == air.StateApproved && op.Auth != nil && op.Auth.Type != "" && op.Auth.Type != air.AuthNone {
			return op.Auth
		}
	}
	return &c.Doc.Service.Auth
}

// decide applies a grant list to tool.
func (f *Fleet) decide(l grant.List, t *Tool) grant.Decision {
	if f.grants != nil {
		return f.grants.decide(l, t.index)
	}
	return l.Decide(t.GrantOp)
}

// upstreamBase returns the connector's server URL (after overrides),
// parsed once, and its host; or the refusal of a service without a usable
// one.
func (c *Connector) upstreamBase() (*Base, string, *envelope.Error) {
	c.baseOnce.Do(func() {
		u, err := serverURL(c.Doc)
		if err != nil {
			c.baseErr = err
			return
		}
		c.base, c.host = ParseBase(u), hostOf(u)
	})
	return c.base, c.host, c.baseErr
}

// Listing is the tool's tools/list entry as the gateway serves it.
func (t *Tool) Listing() json.RawMessage { return t.listing }

// unprefixed returns the bundle-level tool name.
func (t *Tool) unprefixed() string { return strings.TrimPrefix(t.Name, t.Connector.ID+"__") }
