package fleet

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// ErrGeneratedWorkspace is wrapped by FromWorkspace for a generated
// workspace that cannot be served.
var ErrGeneratedWorkspace = errors.New("invalid generated workspace")

// grantTable is the operation table of a generated workspace: every token's
// grant is compiled over it once, so a call's decision is a lookup.
type grantTable struct {
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
func (t *grantTable) decide(l grant.List, i int) grant.Decision {
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

// CompiledGrants is the number of tokens' grant lists held compiled over
// the operation table (-1 for a fleet that decides each call alone).
func (f *Fleet) CompiledGrants() int {
	if f.grants == nil {
		return -1
	}
	return f.grants.cached()
}

func (t *grantTable) cached() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.grants)
}

// FromWorkspace builds the fleet of a generated workspace from its AIR, as
// Load does from a directory, and gives every tool its generated handler and
// the fleet grants compiled over its operation table. It refuses (wrapping
// ErrGeneratedWorkspace) a workspace without connectors, a bad or repeated
// connector id, AIR that does not parse, and any served operation without
// exactly one complete generated handler.
func FromWorkspace(ws *handler.Workspace) (*Fleet, error) {
	if ws == nil || len(ws.Connectors) == 0 {
		return nil, fmt.Errorf("%w: %w", ErrGeneratedWorkspace, ErrNoBundles)
	}
	var conns []*Connector
	seen := map[string]bool{}
	for _, cc := range ws.Connectors {
		if cc == nil || !air.ValidConnectorID.MatchString(cc.ID) {
			return nil, fmt.Errorf("%w: a connector id is not 1-64 characters of [A-Za-z0-9_-]", ErrGeneratedWorkspace)
		}
		if seen[cc.ID] {
			return nil, fmt.Errorf("%w: connector %q appears twice", ErrGeneratedWorkspace, cc.ID)
		}
		seen[cc.ID] = true
		doc, err := air.Parse([]byte(cc.AIR))
		if err != nil {
			return nil, fmt.Errorf("%w: connector %s: %w", ErrGeneratedWorkspace, cc.ID, err)
		}
		conns = append(conns, &Connector{ID: cc.ID, Dir: cc.ID, Doc: doc, BundleHash: cc.BundleHash})
	}
	f, err := New(conns)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGeneratedWorkspace, err)
	}
	generated := map[*Tool]bool{}
	for i, cc := range ws.Connectors {
		c := f.Connectors[i]
		for _, op := range cc.Ops {
			if op == nil || op.Decode == nil || op.Build == nil {
				return nil, fmt.Errorf("%w: connector %s has an operation without handlers", ErrGeneratedWorkspace, cc.ID)
			}
			t := c.tools[op.ID]
			if t == nil {
				return nil, fmt.Errorf("%w: connector %s does not serve %s", ErrGeneratedWorkspace, cc.ID, op.ID)
			}
			if generated[t] {
				return nil, fmt.Errorf("%w: connector %s has two handlers for %s", ErrGeneratedWorkspace, cc.ID, op.ID)
			}
			generated[t] = true
			t.Handler = handler.Generated(op, t.Op, t.schema)
		}
	}
	table := &grantTable{grants: map[grantKey]*grantEntry{}}
	for _, t := range f.Tools {
		if !generated[t] {
			return nil, fmt.Errorf("%w: %s has no generated handler", ErrGeneratedWorkspace, t.Name)
		}
		t.index = len(table.ops)
		table.ops = append(table.ops, t.GrantOp)
	}
	f.grants = table
	return f, nil
}

// UpstreamURLEnv is the variable that overrides a connector's upstream base
// URL for both front doors: ANVIL_UPSTREAM_<C>_URL, where <C> is the
// connector id folded as for ANVIL_CONNECT_<C>_* (upper case, runs of
// characters outside [A-Z0-9] become one underscore).
func UpstreamURLEnv(connector string) string {
	return "ANVIL_UPSTREAM_" + strings.TrimPrefix(connect.EnvPrefix(connector), "ANVIL_CONNECT_") + "URL"
}

// ApplyUpstreamOverrides replaces the server URL of every connector that
// has ANVIL_UPSTREAM_<C>_URL set. The value must be an absolute http(s) URL
// without userinfo or fragment; anything else refuses to start. The egress
// allowlist still applies to the overridden host.
func ApplyUpstreamOverrides(f *Fleet, getenv func(string) string) error {
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
