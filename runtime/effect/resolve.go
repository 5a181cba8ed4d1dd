package effect

import (
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/air"
)

// parsed is a cached air.ParsePath result.
type parsed struct {
	path air.Path
	err  error
}

// pathCache holds parsed argument paths by their source text. Paths come
// from AIR documents only, so the cache is bounded by the served bundles.
var pathCache sync.Map // string -> *parsed

func parsePath(s string) (*parsed, bool) {
	if v, ok := pathCache.Load(s); ok {
		p := v.(*parsed)
		return p, p.err == nil
	}
	p, err := air.ParsePath(s)
	v, _ := pathCache.LoadOrStore(s, &parsed{path: p, err: err})
	pp := v.(*parsed)
	return pp, pp.err == nil
}

// roots are the values argument paths read.
type roots struct {
	request  map[string]any
	response any
	key      string // the idempotency key that went upstream; "" when none
	// requestOnly restricts paths to the request root (draft arguments).
	requestOnly bool
}

// value resolves one path. ok is false when the path names nothing (or a
// null); p is nil when the path does not parse.
func (r *roots) value(src string) (v any, ok, optional bool, p *parsed) {
	p, valid := parsePath(src)
	if !valid {
		return nil, false, strings.HasSuffix(src, "?"), nil
	}
	switch p.path.Root {
	case air.RootRequest:
		if r.request == nil {
			return nil, false, p.path.Optional, p
		}
		v, ok = p.path.Lookup(r.request)
	case air.RootResponse:
		if r.requestOnly {
			return nil, false, p.path.Optional, p
		}
		v, ok = p.path.Lookup(r.response)
	case air.RootIdempotencyKey:
		if r.requestOnly || r.key == "" {
			return nil, false, p.path.Optional, p
		}
		v, ok = r.key, true
	}
	return v, ok, p.path.Optional, p
}

// missingReason describes a path that named nothing, for undo_unavailable
// and staged.unavailable.
func missingReason(src string, p *parsed) string {
	if p == nil {
		return "the path " + strings.TrimSuffix(src, "?") + " is not a valid argument path"
	}
	return strings.TrimSuffix(src, "?") + " names nothing in this call"
}

// resolve applies a mapping. It is all or nothing: when a path without "?"
// names nothing, it returns the name of that argument and the reason, and
// no arguments. A "?" path that names nothing is left out; a literal is
// returned as its canonical JSON (json.RawMessage).
func (r *roots) resolve(m air.Mapping) (args Args, missingArg, reason string) {
	args = make(Args, 0, len(m))
	for _, e := range m {
		if e.ArgSource.IsConst() {
			args = append(args, Arg{Name: e.Name, Value: e.ArgSource.Const})
			continue
		}
		v, ok, optional, p := r.value(e.ArgSource.Path)
		if !ok {
			if optional && p != nil {
				continue
			}
			return nil, e.Name, missingReason(e.ArgSource.Path, p)
		}
		args = append(args, Arg{Name: e.Name, Value: v})
	}
	return args, "", ""
}

// followUp resolves a follow-up target and its mapping. On failure it
// returns nil and a reason (without the "undo unavailable: " prefix).
func (r *roots) followUp(operation string, m air.Mapping, tools Tools) (*FollowUp, string) {
	tool, served := lookupTool(tools, operation)
	if !served {
		return nil, operation + " is not served by this gateway"
	}
	args, _, reason := r.resolve(m)
	if reason != "" {
		return nil, reason
	}
	return &FollowUp{Operation: operation, Tool: tool, Arguments: args}, ""
}

func lookupTool(tools Tools, operation string) (string, bool) {
	if tools == nil {
		return "", false
	}
	tool, served := tools.Tool(operation)
	if tool == "" {
		return "", false
	}
	return tool, served
}
