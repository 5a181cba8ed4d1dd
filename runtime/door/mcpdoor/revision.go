package mcpdoor

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/jsonscan"
)

// Two revisions on one endpoint.
//
// MCP 2026-07-28 has no initialize and no session: every request names its
// protocol version in the MCP-Protocol-Version header and in
// params._meta["io.modelcontextprotocol/protocolVersion"], with the client's
// capabilities beside it, and server/discover tells a client what the
// server speaks. The gateway answers such a request with the SDK's stateless
// handler (a temporary SDK session per request, nothing recorded), so any
// replica answers it with nothing shared but the keys that verify the
// caller. A request that carries a session id, an initialize, or an older
// version goes the 2025-11-25 way: sessions, bound to the caller's
// credential (door.go).

// revisionStateless is the first MCP revision without sessions.
const revisionStateless = "2026-07-28"

// metaProtocolVersion is the _meta key that carries a 2026-07-28 request's
// protocol version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// methodDiscover is 2026-07-28's discovery request, which a client sends
// before it knows what the server speaks.
const methodDiscover = "server/discover"

// statelessRequest reports whether a request without a session id is one of
// the sessionless revision: its MCP-Protocol-Version header names 2026-07-28
// or later (a version the gateway does not know is answered by the SDK
// with UnsupportedProtocolVersion and the versions it supports), it is
// server/discover, or its params' _meta names a protocol version. msg is
// nil for GET and DELETE.
func statelessRequest(h http.Header, msg *rpcMessage) bool {
	if v := h.Get("Mcp-Protocol-Version"); v != "" && v >= revisionStateless {
		return true
	}
	if msg == nil || msg.batch {
		return false
	}
	return msg.method == methodDiscover || metaNamesVersion(msg.params)
}

// metaNamesVersion reports whether params (a JSON object, or nil) holds a
// _meta object with a protocol version key.
func metaNamesVersion(params json.RawMessage) bool {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || params[0] != '{' {
		return false
	}
	members, ok := jsonscan.ObjectMembers(params)
	if !ok {
		return false
	}
	for _, m := range members {
		if m.Key != "_meta" {
			continue
		}
		meta := bytes.TrimSpace(m.Value)
		if len(meta) == 0 || meta[0] != '{' {
			return false
		}
		inner, ok := jsonscan.ObjectMembers(meta)
		if !ok {
			return false
		}
		for _, k := range inner {
			if k.Key == metaProtocolVersion {
				return true
			}
		}
	}
	return false
}

// echoID returns the id of a request as the gateway's own JSON-RPC errors
// echo it: a string or a number exactly as sent, else null (a batch, a
// notification, or an id of another type).
func echoID(msg *rpcMessage) json.RawMessage {
	if msg == nil || msg.batch {
		return nil
	}
	id := bytes.TrimSpace(msg.id)
	if len(id) == 0 {
		return nil
	}
	switch c := id[0]; {
	case c == '"':
		if _, ok := jsonscan.String(id); ok {
			return id
		}
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		if json.Unmarshal(id, &n) == nil {
			return id
		}
	}
	return nil
}

// newRevision reports whether req came on the sessionless revision (the
// SDK records the request's _meta as its temporary session's parameters).
func newRevision(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= revisionStateless
}

// Result templates: a CallToolResult's resultType is unexported, set by the
// SDK only for tools it registered, and the gateway serves its fleet's
// tools from a middleware (surface.go). A copy of a template decoded with
// the resultType carries it.
var (
	resultComplete      = resultTemplate("complete")
	resultInputRequired = resultTemplate("input_required")
)

func resultTemplate(kind string) mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"`+kind+`"}`), &r); err != nil {
		panic(err) // a constant document
	}
	return r
}

// completed is res with resultType "complete".
func completed(res *mcp.CallToolResult) *mcp.CallToolResult {
	out := resultComplete
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(res).Elem()
	for i := 0; i < dst.NumField(); i++ {
		if dst.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return &out
}

// withResultType returns res as a 2026-07-28 answer carries it: its
// resultType "input_required" when it asks the client for input, else
// "complete". Older revisions' answers have none.
func withResultType(req mcp.Request, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || !newRevision(req) {
		return res
	}
	if res.InputRequests == nil {
		return completed(res)
	}
	out := resultInputRequired
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(res).Elem()
	for i := 0; i < dst.NumField(); i++ {
		if dst.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return &out
}

// Keys of the _meta triple a 2026-07-28 request carries, and of the
// server's implementation the SDK adds to each result.
const (
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// serverInfoMember is the _meta member the SDK adds to a 2026-07-28 result,
// as json.Marshal writes it.
var serverInfoMember = func() []byte {
	b, err := json.Marshal(implementation)
	if err != nil {
		panic(err) // a constant value
	}
	return append([]byte(`"`+metaServerInfo+`":`), b...)
}()

// revision2026Meta reports whether a tools/call's _meta is one the fast
// path answers exactly as the SDK would: the protocol version 2026-07-28,
// the client's capabilities an object of objects, its info (optional) an
// object of name, title and version strings, and no other key of MCP's
// own. elicits says the client declared elicitation.
func revision2026Meta(meta map[string]any) (elicits, ok bool) {
	if v, _ := meta[metaProtocolVersion].(string); v != revisionStateless {
		return false, false
	}
	caps, isObject := meta[metaClientCapabilities].(map[string]any)
	if !isObject {
		return false, false
	}
	for k, v := range caps {
		if _, isObject := v.(map[string]any); !isObject {
			return false, false
		}
		if k == "elicitation" {
			elicits = true
		}
	}
	if info, present := meta[metaClientInfo]; present {
		fields, isObject := info.(map[string]any)
		if !isObject {
			return false, false
		}
		for k, v := range fields {
			if _, isString := v.(string); !isString || (k != "name" && k != "title" && k != "version") {
				return false, false
			}
		}
	}
	for k := range meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") && k != metaProtocolVersion && k != metaClientCapabilities && k != metaClientInfo {
			return false, false
		}
	}
	return elicits, true
}
