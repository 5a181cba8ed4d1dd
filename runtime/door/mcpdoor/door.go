// Package mcpdoor is the MCP door: /mcp over Streamable HTTP (the official
// MCP SDK, with the tools/call fast path in front of it, fast.go), MCP over
// stdio, the session table that binds each session to the credential that
// opened it (and, with a shared store, to every replica, shared.go), and
// the tool surfaces with the discovery tools anvil_search, anvil_describe
// and anvil_call (surface.go). Every tool call goes through the executor;
// the front hall has verified the caller before the door is reached.
package mcpdoor

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
	"github.com/anvil-dev/anvil/runtime/catalog"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/store"
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
	// SweepEvery is how often the gateway calls Sweep.
	SweepEvery = 60 * time.Second
)

// protocolVersions are the MCP versions the gateway negotiates: every
// session-based version the SDK supports (the sessionless 2026-07-28 draft is
// left out because sessions are bound to the caller's token).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// implementation is what the gateway says it is, over HTTP and stdio.
var implementation = &mcp.Implementation{Name: "anvil-fleet", Title: "Anvil fleet gateway", Version: air.AnvilVersion}

type principalKey struct{}

// sdkBearer is the placeholder bearer the SDK's middleware sees.
const sdkBearer = "anvil-verified-caller"

func withCaller(ctx context.Context, c *identity.Caller) context.Context {
	return context.WithValue(ctx, principalKey{}, c)
}

// Door serves the fleet's tools through the official MCP SDK, with a
// session table in front of it that binds each session to the token that
// created it and enforces the session limits.
type Door struct {
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
	// autoThreshold is Options.AutoThreshold.
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
	// maxSessions and maxPerSubject are Options.MaxSessions and
	// Options.MaxSessionsPerSubject.
	maxSessions, maxPerSubject int
	// shared records sessions for other replicas (shared.go); nil
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
func subjectKey(p *identity.Principal) string {
	if p == nil {
		return ""
	}
	return p.Tenant + "\x00" + p.Sub
}

// Options tune an MCP door; the zero value serves the auto surface unpaged
// with the default session limits.
type Options struct {
	// Surface is ANVIL_TOOL_SURFACE (SurfaceFull, SurfaceDiscover or
	// SurfaceAuto; "" is auto) and PageSize ANVIL_TOOLS_PAGE_SIZE (0: no
	// paging); see surface.go.
	Surface  string
	PageSize int
	// AutoThreshold overrides AutoDiscoverThreshold (tests).
	AutoThreshold int
	// MaxSessions and MaxSessionsPerSubject override the package's limits
	// (tests).
	MaxSessions, MaxSessionsPerSubject int
	// Now is the sessions' clock (time.Now by default).
	Now func() time.Time
	// Shared, when set, records the door's sessions in a state store shared
	// by replicas and accepts theirs (shared.go).
	Shared store.Store
	// Logf receives operational log lines.
	Logf func(format string, args ...any)
}

// New returns the MCP door serving exec's fleet.
func New(exec *executor.Executor, o *Options) *Door {
	if o == nil {
		o = &Options{}
	}
	m := &Door{exec: exec, sessions: map[string]*sessionEntry{}, pendingBy: map[string]int{},
		now: o.Now, maxSessions: o.MaxSessions, maxPerSubject: o.MaxSessionsPerSubject,
		surface: o.Surface, pageSize: o.PageSize, autoThreshold: o.AutoThreshold, metaTools: metaToolList(), meta: map[string]bool{}}
	if m.surface == "" {
		m.surface = SurfaceAuto
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.maxSessions <= 0 {
		m.maxSessions = MaxSessions
	}
	if m.maxPerSubject <= 0 {
		m.maxPerSubject = MaxSessionsPerSubject
	}
	if m.autoThreshold <= 0 {
		m.autoThreshold = AutoDiscoverThreshold
	}
	for _, t := range m.metaTools {
		m.meta[t.Name] = true
	}
	srv := mcp.NewServer(implementation,
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
	if o.Shared != nil {
		logf := o.Logf
		if logf == nil {
			logf = func(string, ...any) {}
		}
		m.shareSessions(o.Shared, logf)
	}
	return m
}

// tokenInfo hands the caller verified before (in the request's context) to
// the SDK.
func (m *Door) tokenInfo(ctx context.Context, _ string, req *http.Request) (*auth.TokenInfo, error) {
	c, _ := req.Context().Value(principalKey{}).(*identity.Caller)
	if c == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: c.Fingerprint, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"caller": c}}, nil
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
func callerOf(extra *mcp.RequestExtra) *identity.Caller {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	c, _ := extra.TokenInfo.Extra["caller"].(*identity.Caller)
	return c
}

// callTool runs tools/call through the executor.
func (m *Door) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	out := m.exec.Call(ctx, executor.Call{Tool: req.Params.Name, Args: req.Params.Arguments, Meta: meta, Principal: c.Principal})
	if out.Err != nil && out.Tool == nil && out.Err.Code == envelope.NotFound && m.exec.CurrentFleet().Tool(req.Params.Name) == nil {
		// Only anvil_call reaches here with an unknown name (the SDK
		// answers a direct call of one).
		out.Err = catalog.UnknownTool(m.exec.CurrentFleet(), c.Principal, req.Params.Name, out.Err, "anvil_search finds the served tools.")
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

// Serve handles /mcp for an authenticated caller (a turn credential, or
// the local person).
func (m *Door) Serve(w http.ResponseWriter, r *http.Request, caller *identity.Caller) {
	p, fingerprint := caller.Principal, caller.Fingerprint
	sid := r.Header.Get("Mcp-Session-Id")
	initialize := false
	var sdkBody []byte // a POST's body, handed to the SDK when it answers
	var msg rpcMessage
	switch r.Method {
	case http.MethodPost:
		if mt := httpkit.MediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
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
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
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
		if r.Method == http.MethodPost && p != nil && p.StepUp != nil {
			// A tools/call a wider scope would allow is answered 403
			// insufficient_scope, over HTTP, whichever path would serve it.
			if up := m.exec.StepUp(p, calledTool(&msg)); up != nil {
				up.Write(w)
				return
			}
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
	r = r.WithContext(withCaller(r.Context(), caller))
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
func (m *Door) checkSession(sid, fingerprint string) (status, code int, msg string) {
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
func (m *Door) reserve(subject string) (int, string) {
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
func (m *Door) register(sid, fingerprint, subject string) {
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

func (m *Door) forget(sid string) {
	m.mu.Lock()
	delete(m.sessions, sid)
	m.mu.Unlock()
}

// sweepLocked drops the sessions idle for SessionIdleTime and closes them in
// the SDK (in the background: closing takes the SDK's own locks).
func (m *Door) sweepLocked() {
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
func (m *Door) closeSDKSessions(ids []string) {
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

// CloseAll closes every MCP session (ending any open event stream) and
// empties the table; the gateway calls it when shutting down.
func (m *Door) CloseAll() {
	for ss := range m.server.Sessions() {
		_ = ss.Close()
	}
	m.mu.Lock()
	clear(m.sessions)
	m.mu.Unlock()
}

// Sweep removes idle sessions; run every SweepEvery.
func (m *Door) Sweep() {
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
// unrestricted caller (inbound auth mode none) until ctx is done or stdin
// closes. poll, when set, runs before each call (the gateway's file watch:
// vault changes made before the call are seen by it, as the front hall
// polls before each HTTP request).
func (m *Door) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, poll func()) error {
	caller := identity.Local()
	srv := mcp.NewServer(implementation,
		&mcp.ServerOptions{SupportedProtocolVersions: protocolVersions})
	m.addTools(srv, func(h mcp.ToolHandler) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Extra == nil {
				req.Extra = &mcp.RequestExtra{}
			}
			req.Extra.TokenInfo = &auth.TokenInfo{Extra: map[string]any{"caller": caller}}
			if poll != nil {
				poll()
			}
			return h(ctx, req)
		}
	}, caller)
	return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Reload serves f's tools from now on (the tools/list, the SDK path's
// calls and the fast path all read the view) and announces the change to
// open sessions: registering the discovery tools again is what makes the
// SDK send notifications/tools/list_changed.
func (m *Door) Reload(f *fleet.Fleet) {
	m.view.Store(newToolView(f))
	for _, t := range m.metaTools {
		m.server.AddTool(t, m.metaHandler(t.Name))
	}
}

// SessionCount is the number of open MCP sessions (read at each metrics
// scrape).
func (m *Door) SessionCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// SetFastPath turns the tools/call fast path on (the default) or off: off,
// every request is answered by the SDK, the reference the fast path's bytes
// are compared with.
func (m *Door) SetFastPath(on bool) { m.slow.Store(!on) }

// FastCalls is the number of calls the fast path answered.
func (m *Door) FastCalls() int64 { return m.fastCalls.Load() }
