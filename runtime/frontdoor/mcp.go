package frontdoor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// MCP limits.
const (
	MaxMCPBody  = 1 << 20
	MaxSessions = 100
	// MaxSessionsPerSubject caps the sessions (open and being initialized)
	// of one principal (tenant and subject), so that one caller cannot take
	// every place of MaxSessions.
	MaxSessionsPerSubject = 20
	SessionIdleTime       = 15 * time.Minute
	sessionSweep          = 60 * time.Second
)

// protocolVersions are the MCP versions the gateway negotiates: every
// session-based version the SDK supports (the sessionless 2026-07-28 draft is
// left out because sessions are bound to the caller's token).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

type principalKey struct{}

// sdkBearer is the placeholder bearer the SDK's middleware sees.
const sdkBearer = "anvil-verified-caller"

func withPrincipal(ctx context.Context, p *executor.Principal, fingerprint string) context.Context {
	return context.WithValue(ctx, principalKey{}, &sessionCaller{principal: p, fingerprint: fingerprint})
}

type sessionCaller struct {
	principal   *executor.Principal
	fingerprint string
}

// mcpServer serves the fleet's tools through the official MCP SDK, with a
// session table in front of it that binds each session to the token that
// created it and enforces the session limits.
type mcpServer struct {
	exec    *executor.Executor
	server  *mcp.Server
	handler http.Handler

	// registered names the tools the SDK server serves (the fast path
	// answers only those) and listed their tools/list entries; a reload
	// replaces both at once.
	view atomic.Pointer[toolView]
	// surface is ANVIL_TOOL_SURFACE (SurfaceFull, SurfaceDiscover or
	// SurfaceAuto) and pageSize ANVIL_TOOLS_PAGE_SIZE (0: no paging).
	surface  string
	pageSize int
	// autoThreshold is AutoDiscoverThreshold (tests lower it).
	autoThreshold int
	// metaTools are the discover surface's tools/list entries, meta their
	// names.
	metaTools []*mcp.Tool
	meta      map[string]bool
	// slow turns the tools/call fast path off (tests compare the two).
	slow atomic.Bool
	// fastCalls counts the calls the fast path answered.
	fastCalls atomic.Int64

	mu        sync.Mutex
	sessions  map[string]*sessionEntry
	pending   int            // initialize requests admitted but not yet registered
	pendingBy map[string]int // the same, per subject key
	now       func() time.Time
	// maxSessions and maxPerSubject are MaxSessions and
	// MaxSessionsPerSubject (tests lower them).
	maxSessions, maxPerSubject int
	// shared records sessions for other replicas (mcpshared.go); nil
	// without a shared store.
	shared *sharedSessions
}

type sessionEntry struct {
	fingerprint string
	subject     string // subjectKey of the principal
	lastSeen    time.Time
}

// subjectKey names the principal a session counts against: tenant and
// subject (in auth mode none, the one local person).
func subjectKey(p *executor.Principal) string {
	if p == nil {
		return ""
	}
	return p.Tenant + "\x00" + p.Sub
}

func newMCPServer(exec *executor.Executor, surface string, pageSize int) *mcpServer {
	if surface == "" {
		surface = SurfaceAuto
	}
	m := &mcpServer{exec: exec, sessions: map[string]*sessionEntry{}, pendingBy: map[string]int{},
		now: time.Now, maxSessions: MaxSessions, maxPerSubject: MaxSessionsPerSubject,
		surface: surface, pageSize: pageSize, autoThreshold: AutoDiscoverThreshold, metaTools: metaToolList(), meta: map[string]bool{}}
	for _, t := range m.metaTools {
		m.meta[t.Name] = true
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "anvil-fleet", Title: "Anvil fleet gateway", Version: air.AnvilVersion},
		&mcp.ServerOptions{SupportedProtocolVersions: protocolVersions, GetSessionID: newSessionID})
	m.view.Store(newToolView(exec.CurrentFleet()))
	m.addTools(srv, func(h mcp.ToolHandler) mcp.ToolHandler { return h }, nil)
	m.server = srv
	// No SessionTimeout: the gateway's table expires idle sessions (it also
	// sees the tools/call fast path's traffic) and closes them in the SDK.
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: MaxMCPBody,
		JSONResponse:        true,
	})
	// The SDK binds sessions to TokenInfo.UserID; the caller was verified
	// before, so this only carries the verified identity into the SDK.
	m.handler = auth.RequireBearerToken(m.tokenInfo, nil)(sdk)
	return m
}

// tokenInfo hands the caller verified before (in the request's context) to
// the SDK.
func (m *mcpServer) tokenInfo(ctx context.Context, _ string, req *http.Request) (*auth.TokenInfo, error) {
	c, _ := req.Context().Value(principalKey{}).(*sessionCaller)
	if c == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: c.fingerprint, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"caller": c}}, nil
}

// newSessionID returns a random (version 4) UUID.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand crashes the process instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// callerOf returns the caller of an MCP request.
func callerOf(extra *mcp.RequestExtra) *sessionCaller {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	c, _ := extra.TokenInfo.Extra["caller"].(*sessionCaller)
	return c
}

// callTool runs tools/call through the executor.
func (m *mcpServer) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callerOf(req.Extra)
	if c == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "no authenticated caller"}
	}
	var meta map[string]any
	if req.Params.Meta != nil {
		meta = map[string]any(req.Params.Meta)
	}
	if tr := m.exec.Tracer; tr != nil && req.Extra != nil {
		ctx = tr.Extract(ctx, req.Extra.Header) // the SDK's ctx is not the request's
	}
	out := m.exec.Call(ctx, executor.Call{Tool: req.Params.Name, Args: req.Params.Arguments, Meta: meta, Principal: c.principal})
	if out.Err != nil && out.Tool == nil && out.Err.Code == envelope.NotFound && m.exec.CurrentFleet().Tool(req.Params.Name) == nil {
		// Only anvil_call reaches here with an unknown name (the SDK
		// answers a direct call of one).
		out.Err = unknownToolError(m.exec.CurrentFleet(), c.principal, req.Params.Name, out.Err, "anvil_search finds the served tools.")
	}
	if out.InvalidParams {
		// data carries the error envelope /call answers, so a client reads
		// the same code (validation_error) on both surfaces.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: out.Err.Message, Data: out.Err.Marshal()}
	}
	return toolResult(out), nil
}

// toolResult shapes an outcome as an MCP tool result.
func toolResult(out *executor.Outcome) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	if out.Effect != nil {
		res.Meta = mcp.Meta{"effect": out.Effect}
	}
	switch {
	case out.Err != nil:
		res.IsError = true
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(out.Err.Marshal())}}
	case out.Plan != nil:
		b, _ := wirejson.Marshal(out.Plan)
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
		res.StructuredContent = map[string]any{"anvil_dry_run": out.Plan}
	default:
		raw := out.Raw
		if raw == nil {
			raw = json.RawMessage("null")
		}
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(raw)}}
		if out.AnswersObject() {
			res.StructuredContent = raw
		} else {
			res.StructuredContent = map[string]any{"result": raw}
		}
	}
	return res
}

// jsonrpcError writes {"jsonrpc":"2.0","error":{code,message},"id":null}.
func jsonrpcError(w http.ResponseWriter, status, code int, message string) {
	b := wirejson.Object("jsonrpc", "2.0", "error", wirejson.Object("code", code, "message", message), "id", nil)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// serve handles /mcp for an authenticated caller.
func (m *mcpServer) serve(w http.ResponseWriter, r *http.Request, p *executor.Principal, fingerprint string) {
	sid := r.Header.Get("Mcp-Session-Id")
	initialize := false
	var sdkBody []byte // a POST's body, handed to the SDK when it answers
	var msg rpcMessage
	switch r.Method {
	case http.MethodPost:
		if mt := mediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			refuseRequest(w, r, func(w http.ResponseWriter) {
				jsonrpcError(w, http.StatusUnsupportedMediaType, -32600, "Content-Type must be application/json.")
			})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMCPBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				jsonrpcError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("Request body exceeds %d bytes.", MaxMCPBody))
				return
			}
			jsonrpcError(w, http.StatusBadRequest, -32600, "Could not read the request body.")
			return
		}
		var ok bool
		if msg, ok = parseMessage(body); !ok {
			jsonrpcError(w, http.StatusBadRequest, -32600, "Parse error: the body is not a JSON-RPC message.")
			return
		}
		initialize = !msg.batch && msg.method == "initialize" && sid == ""
		sdkBody = body
	case http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuseRequest(w, r, func(w http.ResponseWriter) {
			jsonrpcError(w, http.StatusMethodNotAllowed, -32000, "Method not allowed.")
		})
		return
	}
	foreign := false
	if !initialize {
		status, code, text := m.checkSession(sid, fingerprint)
		if status == http.StatusBadRequest && sid != "" && m.shared != nil {
			status, code, text = m.shared.checkForeign(sid, fingerprint)
			foreign = status == 0
		}
		if status != 0 {
			jsonrpcError(w, status, code, text)
			return
		}
		if r.Method == http.MethodPost && !m.slow.Load() {
			if c, ok := m.fastCallOf(r.Context(), &msg, r.Header, r.Host); ok {
				m.serveFastCall(r.Context(), w, c, p)
				return
			}
		}
	} else if status, text := m.reserve(subjectKey(p)); status != 0 {
		jsonrpcError(w, status, -32000, text)
		return
	}
	if sdkBody != nil {
		r.Body = io.NopCloser(bytes.NewReader(sdkBody))
		r.ContentLength = int64(len(sdkBody))
	}
	r = r.WithContext(withPrincipal(r.Context(), p, fingerprint))
	// The SDK's bearer middleware only carries the verified caller (from the
	// context) into the SDK, but it wants an Authorization header: give it a
	// placeholder, so the local caller of auth mode none gets through and no
	// real token is handed to the SDK.
	r.Header = r.Header.Clone()
	r.Header.Set("Authorization", "Bearer "+sdkBearer)
	if initialize {
		rec := &sessionRecorder{ResponseWriter: w}
		m.handler.ServeHTTP(rec, r)
		sid := rec.Header().Get("Mcp-Session-Id")
		if !rec.succeeded() {
			// The SDK opened a session for a failed initialize too: close
			// it, so that failed attempts hold no place.
			if sid != "" {
				go m.closeSDKSessions([]string{sid})
			}
			sid = ""
		}
		m.register(sid, fingerprint, subjectKey(p))
		if sid != "" && m.shared != nil {
			m.shared.recordSession(sid, fingerprint)
		}
		return
	}
	if foreign {
		m.shared.serveForeign(w, r, sid)
		return
	}
	m.handler.ServeHTTP(w, r)
	if r.Method == http.MethodDelete {
		m.forget(sid)
		if m.shared != nil {
			m.shared.forgetShared(sid)
		}
	}
}

// checkSession validates a session id against the table.
func (m *mcpServer) checkSession(sid, fingerprint string) (status, code int, msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.sessions[sid]
	if sid == "" || e == nil {
		return http.StatusBadRequest, -32000, "No valid session; send initialize first."
	}
	if e.fingerprint != fingerprint {
		return http.StatusForbidden, -32001, "This MCP session belongs to a different authenticated caller."
	}
	e.lastSeen = m.now()
	return 0, 0, ""
}

// reserve reports whether a new session of subject may start (sweeping
// idle ones first), and if so holds a place for it until register; else it
// returns the refusal's HTTP status and message: 429 when the subject holds
// maxPerSubject places, 503 when all maxSessions are taken.
func (m *mcpServer) reserve(subject string) (int, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	mine := m.pendingBy[subject]
	for _, e := range m.sessions {
		if e.subject == subject {
			mine++
		}
	}
	if mine >= m.maxPerSubject {
		return http.StatusTooManyRequests, fmt.Sprintf("Too many MCP sessions for this caller (at most %d); close one (DELETE /mcp) or try again later.", m.maxPerSubject)
	}
	if len(m.sessions)+m.pending >= m.maxSessions {
		return http.StatusServiceUnavailable, "Too many MCP sessions; try again later."
	}
	m.pending++
	m.pendingBy[subject]++
	return 0, ""
}

// register releases the place reserve held for subject and records the
// session a successful initialize answer named, if any (sid "" otherwise).
func (m *mcpServer) register(sid, fingerprint, subject string) {
	m.mu.Lock()
	m.pending--
	if m.pendingBy[subject]--; m.pendingBy[subject] <= 0 {
		delete(m.pendingBy, subject)
	}
	if sid != "" {
		m.sessions[sid] = &sessionEntry{fingerprint: fingerprint, subject: subject, lastSeen: m.now()}
	}
	m.mu.Unlock()
}

func (m *mcpServer) forget(sid string) {
	m.mu.Lock()
	delete(m.sessions, sid)
	m.mu.Unlock()
}

// sweepLocked drops the sessions idle for SessionIdleTime and closes them in
// the SDK (in the background: closing takes the SDK's own locks).
func (m *mcpServer) sweepLocked() {
	cut := m.now().Add(-SessionIdleTime)
	var expired []string
	for id, e := range m.sessions {
		if e.lastSeen.Before(cut) {
			delete(m.sessions, id)
			expired = append(expired, id)
		}
	}
	if len(expired) > 0 {
		go m.closeSDKSessions(expired)
	}
}

// closeSDKSessions closes the SDK's sessions with the given ids.
func (m *mcpServer) closeSDKSessions(ids []string) {
	drop := make(map[string]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	for ss := range m.server.Sessions() {
		if drop[ss.ID()] {
			_ = ss.Close()
		}
	}
}

// closeAll closes every MCP session (ending any open event stream) and
// empties the table; Serve calls it when shutting down.
func (m *mcpServer) closeAll() {
	for ss := range m.server.Sessions() {
		_ = ss.Close()
	}
	m.mu.Lock()
	clear(m.sessions)
	m.mu.Unlock()
}

// sweep removes idle sessions; run every sessionSweep.
func (m *mcpServer) sweep() {
	m.mu.Lock()
	m.sweepLocked()
	m.mu.Unlock()
}

// sessionRecorder lets the session id of an initialize answer be read after
// the SDK wrote it, while still streaming, and keeps the start of the answer
// to tell a successful initialize from a failed one.
type sessionRecorder struct {
	http.ResponseWriter
	status int
	head   []byte // the first maxRecordedAnswer bytes of the answer
}

// maxRecordedAnswer bounds what sessionRecorder keeps; an initialize answer
// (the server's name, version and capabilities) is far smaller.
const maxRecordedAnswer = 64 << 10

func (s *sessionRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *sessionRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if room := maxRecordedAnswer - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	return s.ResponseWriter.Write(p)
}

// succeeded reports whether the answer is 200 with a JSON-RPC result (the
// gateway asks the SDK for JSON answers, not event streams).
func (s *sessionRecorder) succeeded() bool {
	if s.status != http.StatusOK {
		return false
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal(s.head, &msg) == nil && len(msg.Result) > 0 && string(msg.Result) != "null" && msg.Error == nil
}

func (s *sessionRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ServeStdio serves the fleet's tools over MCP on stdin/stdout for the local,
// unrestricted caller (inbound auth mode none) until ctx is done or stdin closes.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	caller := &sessionCaller{principal: &executor.Principal{Sub: "local", Unrestricted: true}, fingerprint: "local"}
	srv := mcp.NewServer(&mcp.Implementation{Name: "anvil-fleet", Title: "Anvil fleet gateway", Version: air.AnvilVersion},
		&mcp.ServerOptions{SupportedProtocolVersions: protocolVersions})
	g.mcp.addTools(srv, func(h mcp.ToolHandler) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Extra == nil {
				req.Extra = &mcp.RequestExtra{}
			}
			req.Extra.TokenInfo = &auth.TokenInfo{Extra: map[string]any{"caller": caller}}
			g.watch.Poll() // vault changes made before the call are seen by it (authenticate does this over HTTP)
			return h(ctx, req)
		}
	}, caller)
	return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
