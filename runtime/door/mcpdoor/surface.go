package mcpdoor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/catalog"
	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/identity"
)

// Tool surfaces (ANVIL_TOOL_SURFACE): what MCP tools/list shows a session.
const (
	// SurfaceFull lists every tool the caller's grant shows (paged when
	// ANVIL_TOOLS_PAGE_SIZE is set).
	SurfaceFull = "full"
	// SurfaceDiscover lists exactly anvil_search, anvil_describe and
	// anvil_call.
	SurfaceDiscover = "discover"
	// SurfaceAuto is discover when the caller's grant shows more than
	// AutoDiscoverThreshold tools, else full (the default).
	SurfaceAuto = "auto"
)

// AutoDiscoverThreshold is the number of tools a session may call above
// which SurfaceAuto serves discover: up to discover.MaxLimit one search page
// could return every tool anyway (docs/discovery.md).
const AutoDiscoverThreshold = discover.MaxLimit

// MaxToolsPageSize bounds ANVIL_TOOLS_PAGE_SIZE.
const MaxToolsPageSize = 10000

// The discovery tools' names. Served tool names always hold "__"
// (<connector>__<tool>), so no connector's tool can take one of them.
const (
	toolSearch   = "anvil_search"
	toolDescribe = "anvil_describe"
	toolCall     = "anvil_call"
)

// maxDescribeNames bounds the names one anvil_describe takes.
const maxDescribeNames = discover.MaxLimit

// SurfaceFromEnv reads ANVIL_TOOL_SURFACE (full, discover or auto; auto
// when unset) and ANVIL_TOOLS_PAGE_SIZE (1 to MaxToolsPageSize; 0, no
// paging, when unset).
func SurfaceFromEnv(getenv func(string) string) (surface string, pageSize int, err error) {
	switch surface = strings.TrimSpace(getenv("ANVIL_TOOL_SURFACE")); surface {
	case "":
		surface = SurfaceAuto
	case SurfaceFull, SurfaceDiscover, SurfaceAuto:
	default:
		return "", 0, fmt.Errorf("ANVIL_TOOL_SURFACE must be full, discover or auto, not %q", surface)
	}
	if v := strings.TrimSpace(getenv("ANVIL_TOOLS_PAGE_SIZE")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxToolsPageSize {
			return "", 0, fmt.Errorf("ANVIL_TOOLS_PAGE_SIZE must be a number of tools from 1 to %d, not %q", MaxToolsPageSize, v)
		}
		pageSize = n
	}
	return surface, pageSize, nil
}

// discoverFor reports whether a session of p is served the discover
// surface.
func (m *Door) discoverFor(p *identity.Principal) bool {
	switch m.surface {
	case SurfaceDiscover:
		return true
	case SurfaceFull:
		return false
	}
	n := 0
	for _, t := range m.view.Load().fleet.Tools {
		if catalog.Visible(p, t) {
			if n++; n > m.autoThreshold {
				return true
			}
		}
	}
	return false
}

// toolView is the fleet the MCP server serves. The fleet's tools are not
// registered with the SDK server one by one (that would encode every tool's
// schema at start): answerTools lists them and routes their calls, and the
// fast path answers the same names.
type toolView struct {
	fleet *fleet.Fleet
}

func newToolView(f *fleet.Fleet) *toolView { return &toolView{fleet: f} }

// serves reports whether name is one of the fleet's tools.
func (v *toolView) serves(name string) bool { return v.fleet.Tool(name) != nil }

// cursorPrefix versions the tools/list cursor: base64url of prefix + the
// last name of the previous page.
const cursorPrefix = "anvil-tools-v1:"

func encodeCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + last))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(b, []byte(cursorPrefix)) {
		return "", false
	}
	return string(b[len(cursorPrefix):]), true
}

// listTools answers tools/list for p: the three discovery tools on the
// discover surface, else the tools p's grant shows, from the one after the
// cursor's name, pageSize at a time when paging (a cursor stays valid
// whatever the caller's grant, since it names a position, not an index).
//
// The listing depends on the caller's grant, so only the caller's client
// may cache it (cacheScope "private"), for ToolsTTL at most and never past
// the caller's credential's expiry; a reload announces the change to
// listening clients (notifications/tools/list_changed).
func (m *Door) listTools(p *identity.Principal, cursor string, expires time.Time) (*mcp.ListToolsResult, error) {
	private := mcp.Cacheable{CacheScope: "private", TTLMs: cacheTTL(m.now(), expires)}
	if p != nil && p.StepUp != nil {
		// A step-up replaces the caller's token with a wider one, and a
		// client's cache does not know: its listing must not be reused.
		private.TTLMs = 0
	}
	if m.discoverFor(p) {
		return &mcp.ListToolsResult{Cacheable: private, Tools: m.metaTools}, nil
	}
	v := m.view.Load()
	tools := v.fleet.Tools
	start := 0
	if cursor != "" {
		last, ok := decodeCursor(cursor)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		start = sort.Search(len(tools), func(i int) bool { return tools[i].Name > last })
	}
	res := &mcp.ListToolsResult{Cacheable: private, Tools: []*mcp.Tool{}}
	for i := start; i < len(tools); i++ {
		if !catalog.Visible(p, tools[i]) {
			continue
		}
		if m.pageSize > 0 && len(res.Tools) == m.pageSize {
			res.NextCursor = encodeCursor(res.Tools[len(res.Tools)-1].Name)
			break
		}
		res.Tools = append(res.Tools, tools[i].ListEntry())
	}
	return res, nil
}

// answerTools replaces the SDK's tools/list with listTools and serves a
// tools/call of a fleet tool with call (the SDK knows only the discovery
// tools), as the SDK serves a registered tool: the handler's result, its
// content never null. A tools/call of a name no tool has gets the
// JSON-RPC error the SDK would give (-32602), naming the served tools the
// caller most likely meant. fallback is the caller when the request
// carries none (stdio's local caller), else nil.
func (m *Door) answerTools(call mcp.ToolHandler, fallback *identity.Caller) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if undeclared[method] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
					Message: fmt.Sprintf("Method not found: %s (the gateway serves tools only; it declares no resources, prompts or completions capability).", method)}
			}
			if method != "tools/list" && method != "tools/call" {
				return next(ctx, method, req)
			}
			c := callerOf(req.GetExtra())
			if c == nil {
				c = fallback
			}
			var p *identity.Principal
			if c != nil {
				p = c.Principal
			}
			if method == "tools/call" {
				cp, ok := req.GetParams().(*mcp.CallToolParamsRaw)
				if !ok || cp == nil || m.meta[cp.Name] {
					return next(ctx, method, req)
				}
				if ctr, ok := req.(*mcp.CallToolRequest); ok && m.view.Load().serves(cp.Name) {
					res, err := call(ctx, ctr)
					if err == nil && res != nil && res.Content == nil && res.InputRequests == nil {
						cp := *res
						cp.Content = []mcp.Content{}
						res = &cp
					}
					return withResultType(req, res), err
				}
				if p == nil {
					return next(ctx, method, req)
				}
				e := catalog.UnknownTool(m.exec.CurrentFleet(), p, cp.Name, &envelope.Error{Code: envelope.NotFound}, "tools/list (or anvil_search) finds the served tools.")
				if e.Message == "" {
					return next(ctx, method, req) // nothing to suggest: the SDK's own answer
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Message}
			}
			cursor := ""
			if lp, ok := req.GetParams().(*mcp.ListToolsParams); ok && lp != nil {
				cursor = lp.Cursor
			}
			var expires time.Time
			if c != nil {
				expires = c.Expires
			}
			return m.listTools(p, cursor, expires)
		}
	}
}

// undeclared are the methods of capabilities the gateway does not declare
// (it serves tools only); the SDK would answer some of them anyway.
var undeclared = map[string]bool{
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true,
}

// ToolsTTL is how long a client may cache a tools/list answer (ttlMs):
// a reload announces changes, so this only bounds how stale a client that
// missed the announcement can be.
const ToolsTTL = 5 * time.Minute

// cacheTTL is ToolsTTL in milliseconds, cut to what is left of a
// credential that expires (zero when it has expired).
func cacheTTL(now, expires time.Time) int {
	ttl := ToolsTTL
	if !expires.IsZero() {
		ttl = min(ttl, expires.Sub(now))
	}
	if ttl <= 0 {
		return 0
	}
	return int(ttl / time.Millisecond)
}

// metaToolList are the discover surface's tools/list entries.
func metaToolList() []*mcp.Tool {
	closed := false
	ro := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, DestructiveHint: &closed, IdempotentHint: true, OpenWorldHint: &closed}
	}
	return []*mcp.Tool{
		{
			Name:  toolSearch,
			Title: "Search the served tools",
			Description: "Find the tools for a task: ranks the tools you may call for a plain-language query " +
				"(\"merge a pull request\") and returns at most limit of them, best first, each with its name, " +
				"operation id, title, summary, effect class and whether a call needs confirmation. " +
				"Then read a tool's input schema with anvil_describe and call it with anvil_call.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"What you want to do, in plain words."},` +
				`"connector":{"type":"string","description":"Only this connector's tools (the part of a tool name before __)."},` +
				`"limit":{"type":"integer","minimum":1,"maximum":50,"default":10,"description":"At most this many tools."}},` +
				`"required":["query"],"additionalProperties":false}`),
			Annotations: ro("Search the served tools"),
		},
		{
			Name:  toolDescribe,
			Title: "Describe tools",
			Description: "Returns the full tools/list entry (description, input schema, annotations, _meta) of each named tool, " +
				"and its needs: for each identifier argument, the tools whose answers produce it (call one first when you know a name, not the id).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"names":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":50,"description":"Tool names, as anvil_search returns them."}},` +
				`"required":["names"],"additionalProperties":false}`),
			Annotations: ro("Describe tools"),
		},
		{
			Name:  toolCall,
			Title: "Call a tool",
			Description: "Calls the named tool with its arguments, exactly as calling it directly: the same answer, " +
				"effect report, confirmation and grant checks. _meta (idempotency_key, stage) is passed through.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name."},` +
				`"arguments":{"type":"object","description":"The tool's arguments."}},` +
				`"required":["name"],"additionalProperties":false}`),
		},
	}
}

// metaHandler returns the handler of a discovery tool.
func (m *Door) metaHandler(name string) mcp.ToolHandler {
	switch name {
	case toolSearch:
		return m.callSearch
	case toolDescribe:
		return m.callDescribe
	default:
		return m.callAnvilCall
	}
}

// decodeStrict decodes a tool's arguments object into v, refusing unknown
// keys, trailing data and wrong types with a validation_error.
func decodeStrict(raw json.RawMessage, tool string, v any) *envelope.Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		msg := "arguments do not match the input schema"
		if err != nil {
			msg = strings.TrimPrefix(err.Error(), "json: ")
		}
		return &envelope.Error{Code: envelope.ValidationError, Message: fmt.Sprintf("%s: %s.", tool, msg)}
	}
	return nil
}

// refusal is a tool result carrying an error envelope.
func refusal(e *envelope.Error) *mcp.CallToolResult { return toolResult(&executor.Outcome{Err: e}) }

// jsonResult answers b as both the text and the structured content.
func jsonResult(b []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// searchArgs are anvil_search's arguments.
type searchArgs struct {
	Query     *string `json:"query"`
	Connector string  `json:"connector"`
	Limit     *int    `json:"limit"`
}

func (m *Door) callSearch(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callerOf(req.Extra)
	if c == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "no authenticated caller"}
	}
	var a searchArgs
	if e := decodeStrict(req.Params.Arguments, toolSearch, &a); e != nil {
		return refusal(e), nil
	}
	if a.Query == nil {
		return refusal(&envelope.Error{Code: envelope.ValidationError, Message: "anvil_search: query is required."}), nil
	}
	b, e := catalog.Search(m.exec.CurrentFleet(), c.Principal, *a.Query, a.Connector, a.Limit)
	if e != nil {
		return refusal(e), nil
	}
	return jsonResult(b), nil
}

func (m *Door) callDescribe(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callerOf(req.Extra)
	if c == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "no authenticated caller"}
	}
	var a struct {
		Names []string `json:"names"`
	}
	if e := decodeStrict(req.Params.Arguments, toolDescribe, &a); e != nil {
		return refusal(e), nil
	}
	if len(a.Names) == 0 || len(a.Names) > maxDescribeNames {
		return refusal(&envelope.Error{Code: envelope.ValidationError, Message: fmt.Sprintf("anvil_describe: names must hold 1 to %d tool names.", maxDescribeNames)}), nil
	}
	b, e := catalog.Describe(m.exec.CurrentFleet(), c.Principal, a.Names)
	if e != nil {
		return refusal(e), nil
	}
	return jsonResult(b), nil
}

func (m *Door) callAnvilCall(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if e := decodeStrict(req.Params.Arguments, toolCall, &a); e != nil {
		return refusal(e), nil
	}
	if a.Name == nil {
		return refusal(&envelope.Error{Code: envelope.ValidationError, Message: "anvil_call: name is required."}), nil
	}
	if t := bytes.TrimSpace(a.Arguments); len(t) > 0 && t[0] != '{' && !bytes.Equal(t, []byte("null")) {
		return refusal(&envelope.Error{Code: envelope.ValidationError, Message: "anvil_call: arguments must be a JSON object."}), nil
	}
	if _, meta := m.meta[*a.Name]; meta {
		return refusal(&envelope.Error{Code: envelope.ValidationError, Message: fmt.Sprintf("anvil_call calls served tools; call %s directly.", *a.Name)}), nil
	}
	// The very request a direct call of the tool is: same name, arguments
	// and _meta, through the same executor.
	direct := *req.Params
	direct.Name = *a.Name
	direct.Arguments = a.Arguments
	return m.callTool(ctx, &mcp.CallToolRequest{Session: req.Session, Params: &direct, Extra: req.Extra})
}

// addTools registers the discovery tools on srv and serves the fleet's
// tools through answerTools, each handler wrapped by wrap (stdio injects
// its caller; fallback is the caller when a request carries none).
func (m *Door) addTools(srv *mcp.Server, wrap func(mcp.ToolHandler) mcp.ToolHandler, fallback *identity.Caller) {
	for _, t := range m.metaTools {
		srv.AddTool(t, wrap(m.metaHandler(t.Name)))
	}
	srv.AddReceivingMiddleware(m.answerTools(wrap(m.callTool), fallback))
}
