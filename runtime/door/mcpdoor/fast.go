package mcpdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// The tools/call fast path.
//
// The official SDK's Streamable HTTP server serves every /mcp request, but a
// plain tools/call on an established session costs it several JSON decodes
// and a hand-off through the session's connection goroutines; measured, that
// is more than the rest of the call together. So the gateway answers the
// common case itself, exactly as the SDK would (TestMCPFastPathMatchesSDK
// compares the bytes): a single JSON-RPC request {"jsonrpc":"2.0","id",
// "method":"tools/call","params":{"name","arguments"?,"_meta"?}} with an
// integer or string id, for a served tool, on a session this gateway
// registered for the same token, with the Accept and protocol-version
// headers the SDK takes, none of the headers that ask for more
// (Last-Event-ID, Mcp-Method, Mcp-Name, Mcp-Param-*) and a Host the SDK's
// DNS-rebinding protection lets through. Anything else, from
// initialize and tools/list to a batch or an unknown tool, goes to the SDK.
//
// Sessions stay the SDK's: it creates them on initialize, serves every other
// method on them and closes them on DELETE. Idle expiry is the gateway's
// (its table sees fast-path traffic the SDK does not), and it closes the
// SDK's session when it expires one.

// rpcMessage is a JSON-RPC message as the gateway reads it before deciding
// who answers it.
type rpcMessage struct {
	batch     bool
	method    string
	hasMethod bool
	id        json.RawMessage // nil when absent
	params    json.RawMessage // nil when absent
	version   json.RawMessage // the "jsonrpc" member
	otherKeys bool            // members beyond jsonrpc, id, method and params
}

// parseMessage reads body as a JSON-RPC message: a JSON object whose
// "method", when present, is a string (the key matched exactly), or a
// non-empty JSON array (a batch, not looked into). ok is false for anything
// else.
func parseMessage(body []byte) (msg rpcMessage, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return msg, false
	}
	if body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
			return msg, false
		}
		msg.batch = true
		return msg, true
	}
	if body[0] != '{' {
		return msg, false
	}
	obj, ok := jsonscan.ObjectMembers(body)
	if !ok {
		return msg, false
	}
	for _, m := range obj {
		k, v := m.Key, m.Value
		switch k {
		case "method":
			if msg.method, ok = jsonscan.String(v); !ok {
				return rpcMessage{}, false
			}
			msg.hasMethod = true
		case "id":
			msg.id = v
		case "params":
			msg.params = v
		case "jsonrpc":
			msg.version = v
		default:
			msg.otherKeys = true
		}
	}
	return msg, true
}

// calledTool is the tool a single tools/call message names, or "".
func calledTool(msg *rpcMessage) string {
	if msg.batch || msg.method != "tools/call" {
		return ""
	}
	params, ok := jsonscan.ObjectMembers(bytes.TrimSpace(msg.params))
	if !ok {
		return ""
	}
	for _, m := range params {
		if m.Key == "name" {
			name, _ := jsonscan.String(m.Value)
			return name
		}
	}
	return ""
}

// inspectMessage reports whether body is a JSON-RPC initialize request, and
// whether it is a JSON-RPC message (or batch) at all (see parseMessage).
func inspectMessage(body []byte) (initialize, ok bool) {
	msg, ok := parseMessage(body)
	return ok && !msg.batch && msg.method == "initialize", ok
}

// Header values of the fast path's answer, as the SDK writes them (shared:
// nothing edits a value slice in place).
var (
	headerJSON    = []string{"application/json"}
	headerNoCache = []string{"no-cache, no-transform"}
)

// fastCall is a tools/call the gateway answers itself.
type fastCall struct {
	id        []byte // the id as the SDK writes it back
	name      string
	arguments json.RawMessage
	meta      map[string]any
	rev2026   bool // a 2026-07-28 request (no session)
}

// fastCallOf returns the fast-path call of a request, or false when the SDK
// must answer it.
//
// askable says the session's client may be asked for confirmation (or it is
// another replica's session, whose capabilities this one does not know):
// calls that need confirmation then go to the SDK path, which can ask.
func (m *Door) fastCallOf(ctx context.Context, msg *rpcMessage, h http.Header, host string, askable bool) (*fastCall, bool) {
	return m.fastCall(ctx, msg, h, host, askable, false)
}

// fastCall2026 is fastCallOf for a 2026-07-28 request (no session): the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and the _meta
// triple exactly as the SDK accepts them (revision2026Meta), the client
// asked for confirmation when it declares elicitation.
func (m *Door) fastCall2026(ctx context.Context, msg *rpcMessage, h http.Header, host string) (*fastCall, bool) {
	if h.Get("Mcp-Protocol-Version") != revisionStateless || h.Get("Mcp-Method") != "tools/call" {
		return nil, false
	}
	return m.fastCall(ctx, msg, h, host, false, true)
}

func (m *Door) fastCall(ctx context.Context, msg *rpcMessage, h http.Header, host string, askable, rev2026 bool) (*fastCall, bool) {
	if msg.batch || msg.method != "tools/call" || msg.otherKeys || string(msg.version) != `"2.0"` || msg.params == nil {
		return nil, false
	}
	id, ok := sdkID(msg.id)
	if !ok || !fastHeaders(h, rev2026) {
		return nil, false
	}
	if local, _ := ctx.Value(http.LocalAddrContextKey).(net.Addr); local != nil && httpkit.LocalLoopback(local) && !httpkit.IsLoopbackAddr(host) {
		return nil, false // the SDK's DNS-rebinding protection answers it (403)
	}
	if p := bytes.TrimSpace(msg.params); len(p) == 0 || p[0] != '{' {
		return nil, false
	}
	// params is a value of a message that parsed, so it is valid JSON.
	params, ok := jsonscan.ValidMembers(bytes.TrimSpace(msg.params))
	if !ok {
		if params, ok = jsonscan.ObjectMembers(bytes.TrimSpace(msg.params)); !ok {
			return nil, false
		}
	}
	c := &fastCall{id: id}
	for _, m := range params {
		k, v := m.Key, m.Value
		switch k {
		case "name":
			if len(v) == 0 || v[0] != '"' {
				return nil, false
			}
			if c.name, ok = jsonscan.String(v); !ok {
				return nil, false
			}
		case "arguments":
			if t := bytes.TrimSpace(v); len(t) == 0 || (t[0] != '{' && !bytes.Equal(t, []byte("null"))) {
				return nil, false
			}
			c.arguments = v
		case "_meta":
			if t := bytes.TrimSpace(v); len(t) == 0 || (t[0] != '{' && !bytes.Equal(t, []byte("null"))) {
				return nil, false
			}
			if json.Unmarshal(v, &c.meta) != nil {
				return nil, false
			}
			if _, ok := c.meta[metaProtocolVersion]; ok != rev2026 {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if rev2026 {
		elicits, ok := revision2026Meta(c.meta)
		if !ok || h.Get("Mcp-Name") != c.name {
			return nil, false
		}
		askable, c.rev2026 = elicits, true
	}
	t := m.view.Load().fleet.Tool(c.name)
	if t == nil {
		return nil, false // the SDK answers an unknown tool
	}
	if askable && t.Op.Confirmation.Required && m.exec.Confirm != nil {
		return nil, false // the SDK path can ask the person (confirmation.go)
	}
	return c, true
}

// sdkID returns a request id as the SDK writes it in its answer: an integer
// of at most 15 digits (exact through the SDK's float64 decoding, and
// written back as is) or a string (re-encoded without HTML escaping). Other
// ids are left to the SDK.
func sdkID(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		b, err := wirejson.Marshal(s)
		return b, err == nil
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(raw) > 1) {
		return nil, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	return raw, true
}

// fastHeaders reports whether the request headers are ones the SDK would
// take for a plain tools/call: Accept naming both JSON and event streams (as
// the SDK reads it), a protocol version the gateway negotiates (or none), no
// Last-Event-ID and none of the standard MCP request headers.
//
// A 2026-07-28 request (rev2026) has its version checked by fastCall2026 and
// carries Mcp-Method and Mcp-Name, which the fast path checks itself.
func fastHeaders(h http.Header, rev2026 bool) bool {
	if v := h.Get("Mcp-Protocol-Version"); v != "" && !rev2026 {
		known := false
		for _, p := range sessionVersions {
			if v == p {
				known = true
			}
		}
		if !known {
			return false
		}
	}
	for k := range h {
		switch {
		case k == "Last-Event-Id", strings.HasPrefix(k, "Mcp-Param-"):
			return false
		case (k == "Mcp-Method" || k == "Mcp-Name") && (!rev2026 || len(h[k]) != 1):
			return false
		}
	}
	jsonOK, streamOK := acceptsJSONAndStream(h.Values("Accept"))
	return jsonOK && streamOK
}

// acceptsJSONAndStream reads Accept as the SDK's Streamable HTTP handler
// does (the base media types, case-insensitively, with wildcards).
func acceptsJSONAndStream(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for rest := value; rest != ""; {
			var raw string
			raw, rest, _ = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch base = strings.TrimSpace(base); {
			case strings.EqualFold(base, "application/json"), strings.EqualFold(base, "application/*"):
				jsonOK = true
			case strings.EqualFold(base, "text/event-stream"), strings.EqualFold(base, "text/*"):
				streamOK = true
			case base == "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// serveFastCall runs the call and writes the JSON-RPC answer the SDK would.
func (m *Door) serveFastCall(ctx context.Context, w http.ResponseWriter, c *fastCall, p *identity.Principal) {
	m.fastCalls.Add(1)
	out := m.exec.Call(ctx, executor.Call{Tool: c.name, Args: c.arguments, Meta: c.meta, Principal: p})
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(c.id)
	status := http.StatusOK
	if out.InvalidParams {
		if c.rev2026 {
			status = http.StatusBadRequest // 2026-07-28 answers invalid params 400
		}
		buf.WriteString(`,"error":`)
		e, _ := wirejson.Marshal(struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}{-32602, out.Err.Message, argumentNames(out.Err).Marshal()})
		buf.Write(e)
	} else {
		buf.WriteString(`,"result":`)
		b, ok := appendPlainToolResult(buf.AvailableBuffer(), out, c.rev2026)
		if !ok {
			res := toolResult(out)
			if res.Content == nil {
				res.Content = []mcp.Content{}
			}
			if c.rev2026 {
				// As the SDK finishes a 2026-07-28 result: its serverInfo
				// in _meta, and resultType.
				if res.Meta == nil {
					res.Meta = mcp.Meta{}
				}
				res.Meta[metaServerInfo] = implementation
				res = completed(res)
			}
			var err error
			if b, err = wirejson.Marshal(res); err != nil {
				jsonrpcError(w, http.StatusInternalServerError, c.id, -32603, "The tool result could not be encoded.")
				return
			}
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	h := w.Header()
	h["Cache-Control"] = headerNoCache
	h["Content-Type"] = headerJSON
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// appendPlainToolResult appends the result of a call that answered with data
// (no error, no dry run) byte for byte as wirejson.Marshal(toolResult(out)) writes
// it, without the reflection and the two re-compactions of the SDK's
// MarshalJSON methods: {"_meta":{"effect":…},"content":[{"type":"text",
// "text":…}],"structuredContent":…}. Every piece goes through json.Marshal
// as the SDK's encoding does (HTML escaping included). It reports false,
// leaving the encoding to marshalData, for any other outcome or when a piece
// does not encode.
//
// rev2026 writes it as the SDK finishes a 2026-07-28 result: the server's
// implementation in _meta (after effect, json.Marshal's key order) and
// "resultType":"complete" last.
func appendPlainToolResult(b []byte, out *executor.Outcome, rev2026 bool) ([]byte, bool) {
	if out.Err != nil || out.Plan != nil || out.Raw == nil || out.Question != nil {
		return b, false
	}
	b = append(b, '{')
	if out.Effect != nil || rev2026 {
		b = append(b, `"_meta":{`...)
		if out.Effect != nil {
			// json.Marshal of the report is its compact AppendJSON with '<',
			// '>', '&', U+2028 and U+2029 escaped; the escaping alone does
			// the same.
			b = append(b, `"effect":`...)
			buf := bytes.NewBuffer(b)
			json.HTMLEscape(buf, out.Effect.AppendJSON(nil))
			b = buf.Bytes()
			if rev2026 {
				b = append(b, ',')
			}
		}
		if rev2026 {
			b = append(b, serverInfoMember...)
		}
		b = append(b, "},"...)
	}
	if out.Tool != nil && out.Tool.OutputSchema() != nil {
		return appendConformingResult(b, out, rev2026)
	}
	var structured []byte
	if !out.RawCompact {
		var err error
		if structured, err = json.Marshal(out.Raw); err != nil {
			return b, false
		}
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = canon.AppendStringHTML(b, string(out.Raw)) // json.Marshal of the string
	b = append(b, `}],"structuredContent":`...)
	if !out.AnswersObject() {
		b = append(b, `{"result":`...)
	}
	if out.RawCompact {
		// json.Marshal of compact JSON only escapes it for HTML.
		buf := bytes.NewBuffer(b)
		json.HTMLEscape(buf, out.Raw)
		b = buf.Bytes()
	} else {
		b = append(b, structured...)
	}
	if !out.AnswersObject() {
		b = append(b, '}')
	}
	if rev2026 {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, '}'), true
}

// appendConformingResult finishes appendPlainToolResult (b holds the
// result up to its _meta) for a tool with an outputSchema: the structured
// content is fleet.Tool.StructuredContent's compact JSON, HTML-escaped as
// json.Marshal writes a json.RawMessage.
func appendConformingResult(b []byte, out *executor.Outcome, rev2026 bool) ([]byte, bool) {
	raw := out.Raw
	if !out.RawCompact {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return b, false
		}
		raw = buf.Bytes()
	}
	content := raw
	if !out.AnswersObject() {
		content = append(append([]byte(`{"result":`), raw...), '}')
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = canon.AppendStringHTML(b, string(out.Raw))
	b = append(b, `}],"structuredContent":`...)
	buf := bytes.NewBuffer(b)
	json.HTMLEscape(buf, out.Tool.StructuredContent(content))
	b = buf.Bytes()
	if rev2026 {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, '}'), true
}
