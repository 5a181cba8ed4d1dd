// Package mcpdoor is the MCP door: /mcp over Streamable HTTP (the official
// MCP SDK), revision 2026-07-28 without sessions beside 2025-11-25 with
// them (revision.go), the tools/call fast path in front of the sessions
// (fast.go), MCP over stdio, the session table that binds each session to
// the credential that opened it (and, with a shared store, to every
// replica, shared.go), the tool surfaces with the discovery tools
// anvil_search, anvil_describe and anvil_call (surface.go), and the framing
// of the confirmation the executor asks a person for (confirmation.go).
// Every tool call goes through the executor; the front hall has verified
// the caller before the door is reached.
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
	"strings"
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

// protocolVersions are the MCP versions the gateway serves: 2026-07-28
// without sessions (each request carries its version and the client's
// capabilities, revision.go), and every session-based version the SDK
// supports for older clients (sessionVersions).
var protocolVersions = append([]string{revisionStateless}, sessionVersions...)

// sessionVersions are the versions an initialize negotiates: the ones with
// sessions, newest first.
var sessionVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

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
	// stateless serves requests without a session: 2026-07-28's, and
	// other replicas' sessions.
	stateless http.Handler

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
	// elicits is set when the client declared elicitation at initialize:
	// its calls that need confirmation go to the SDK path, which can ask
	// (confirmation.go).
	elicits bool
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
		&mcp.ServerOptions{SupportedProtocolVersions: protocolVersions, GetSessionID: newSessionID, SetCacheable: discoverCacheable})
	m.view.Store(newToolView(exec.CurrentFleet()))
	m.addTools(srv, func(h mcp.ToolHandler) mcp.ToolHandler { return h }, nil)
	m.server = srv
	// No SessionTimeout: the gateway's table expires idle sessions (it also
	// sees the tools/call fast path's traffic) and closes them in the SDK.
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: MaxMCPBody,
		JSONResponse:        true,
	})
	// The sessionless revision (revision.go), and other replicas' sessions
	// (shared.go): a temporary SDK session per request. A request ends
	// when its client goes away (2026-07-28 has no stream to resume).
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes:          MaxMCPBody,
		JSONResponse:                 true,
		Stateless:                    true,
		PropagateRequestCancellation: true,
	})
	// The SDK binds sessions to TokenInfo.UserID; the caller was verified
	// before, so this only carries the verified identity into the SDK.
	m.handler = auth.RequireBearerToken(m.tokenInfo, nil)(sdk)
	m.stateless = auth.RequireBearerToken(m.tokenInfo, nil)(stateless)
	if o.Shared != nil {
		logf := o.Logf
		if logf == nil {
			logf = func(string, ...any) {}
		}
		m.shareSessions(o.Shared, logf)
	}
	return m
}

// discoverCacheable lets any client cache server/discover for ToolsTTL: it
// names the versions and capabilities, the same for every caller.
func discoverCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.DiscoverRequest); ok {
		c.TTLMs, c.CacheScope = int(ToolsTTL/time.Millisecond), "public"
	}
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
	call := executor.Call{Tool: req.Params.Name, Args: req.Params.Arguments, Meta: meta, Principal: c.Principal, Ask: askOf(req)}
	out := m.exec.Call(ctx, call)
	if out.Question != nil {
		out = m.putQuestion(ctx, req, call, out)
	}
	if out.Err != nil && out.Tool == nil && out.Err.Code == envelope.NotFound && m.exec.CurrentFleet().Tool(req.Params.Name) == nil {
		// Only anvil_call reaches here with an unknown name (the SDK
		// answers a direct call of one).
		out.Err = catalog.UnknownTool(m.exec.CurrentFleet(), c.Principal, req.Params.Name, out.Err, "anvil_search finds the served tools.")
	}
	if out.InvalidParams {
		// data carries the error envelope /call answers, so a client reads
		// the same code (validation_error) on both surfaces.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: out.Err.Message, Data: argumentNames(out.Err).Marshal()}
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
	case out.Question != nil:
		// 2026-07-28's question (confirmation.go): no content, and no
		// effect report (nothing ran).
		res.Meta = nil
		res.InputRequests = mcp.InputRequestMap{confirmKey: elicitation(out.Question)}
		res.RequestState = out.Question.State
	case out.Err != nil:
		res.IsError = true
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(argumentNames(out.Err).Marshal())}}
	case out.Plan != nil:
		b, _ := wirejson.Marshal(out.Plan)
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
		res.StructuredContent = conforming(out, map[string]any{"anvil_dry_run": out.Plan})
	default:
		raw := out.Raw
		if raw == nil {
			raw = json.RawMessage("null")
		}
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(raw)}}
		if out.AnswersObject() {
			res.StructuredContent = conforming(out, raw)
		} else {
			res.StructuredContent = conforming(out, map[string]any{"result": raw})
		}
	}
	return res
}

// conforming returns a result's structured content as the tool's
// outputSchema promises it (fleet.Tool.StructuredContent: members that do
// not conform left out; docs/mcp.md#structured-output), v itself for a
// tool without one.
func conforming(out *executor.Outcome, v any) any {
	if out.Tool == nil || out.Tool.OutputSchema() == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(out.Tool.StructuredContent(b))
}

// PrepareFleet readies f for the MCP door before it is served: its
// tools/list entries carry their outputSchema, since the door sends every
// result's structured content through fleet.Tool.StructuredContent.
func PrepareFleet(f *fleet.Fleet) { f.ListOutputSchemas() }

// argumentNames returns e as an MCP caller reads it: the flags a call
// lacks (required_flags, in the CLI's spelling, "--confirm",
// "--idempotency-key") named as the tool's arguments are ("confirm",
// "idempotency_key"). e itself is left as it is (the audit line and the
// other surfaces read it).
func argumentNames(e *envelope.Error) *envelope.Error {
	if len(e.RequiredFlags) == 0 {
		return e
	}
	c := *e
	c.RequiredFlags = make([]string, len(e.RequiredFlags))
	for i, f := range e.RequiredFlags {
		c.RequiredFlags[i] = strings.ReplaceAll(strings.TrimLeft(f, "-"), "-", "_")
	}
	return &c
}

// jsonrpcError writes {"jsonrpc":"2.0","error":{code,message},"id":id}: the
// request's id when it was read (echoID), else null.
func jsonrpcError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	var idv any = id
	if id == nil {
		idv = nil
	}
	b := wirejson.Object("jsonrpc", "2.0", "error", wirejson.Object("code", code, "message", message), "id", idv)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// retryAfterSeconds is the Retry-After of a refusal at the global session
// cap: about when a sweep may have freed a place.
const retryAfterSeconds = "60"

// Serve handles /mcp for an authenticated caller (a turn credential, or
// the local person).
func (m *Door) Serve(w http.ResponseWriter, r *http.Request, caller *identity.Caller) {
	p, fingerprint := caller.Principal, caller.Fingerprint
	sid := r.Header.Get("Mcp-Session-Id")
	initialize := false
	var sdkBody []byte // a POST's body, handed to the SDK when it answers
	var msg rpcMessage
	var id json.RawMessage // the request's id, echoed by the door's own errors
	stateless := false
	switch r.Method {
	case http.MethodPost:
		if mt := httpkit.MediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
				jsonrpcError(w, http.StatusUnsupportedMediaType, nil, -32600, "Content-Type must be application/json.")
			})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMCPBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				jsonrpcError(w, http.StatusRequestEntityTooLarge, nil, -32600, fmt.Sprintf("Request body exceeds %d bytes.", MaxMCPBody))
				return
			}
			jsonrpcError(w, http.StatusBadRequest, nil, -32600, "Could not read the request body.")
			return
		}
		var ok bool
		if msg, ok = parseMessage(body); !ok {
			jsonrpcError(w, http.StatusBadRequest, nil, -32600, "Parse error: the body is not a JSON-RPC message.")
			return
		}
		id = echoID(&msg)
		initialize = !msg.batch && msg.method == "initialize" && sid == ""
		stateless = sid == "" && !initialize && statelessRequest(r.Header, &msg)
		sdkBody = body
	case http.MethodGet, http.MethodDelete:
		stateless = sid == "" && statelessRequest(r.Header, nil)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
			jsonrpcError(w, http.StatusMethodNotAllowed, nil, -32000, "Method not allowed.")
		})
		return
	}
	if stateless {
		if m.stepUp(w, r, &msg, p) {
			return
		}
		if r.Method == http.MethodPost && !m.slow.Load() {
			if c, ok := m.fastCall2026(r.Context(), &msg, r.Header, r.Host); ok {
				m.serveFastCall(r.Context(), w, c, p)
				return
			}
		}
		m.serveSDK(m.stateless, w, r, sdkBody, caller)
		return
	}
	foreign := false
	if !initialize {
		status, code, text, elicits := m.checkSession(sid, fingerprint)
		if status == http.StatusNotFound && m.shared != nil {
			status, code, text = m.shared.checkForeign(sid, fingerprint)
			foreign = status == 0
		}
		if status != 0 {
			jsonrpcError(w, status, id, code, text)
			return
		}
		if m.stepUp(w, r, &msg, p) {
			return
		}
		if r.Method == http.MethodPost && !m.slow.Load() {
			if c, ok := m.fastCallOf(r.Context(), &msg, r.Header, r.Host, elicits || foreign); ok {
				m.serveFastCall(r.Context(), w, c, p)
				return
			}
		}
	} else if status, text, evicted := m.reserve(subjectKey(p)); status != 0 {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", retryAfterSeconds)
		}
		jsonrpcError(w, status, id, -32000, text)
		return
	} else if evicted != "" && m.shared != nil {
		m.shared.forgetShared(evicted)
	}
	if initialize {
		rec := &sessionRecorder{ResponseWriter: w}
		m.serveSDK(m.handler, rec, r, sdkBody, caller)
		sid := rec.Header().Get("Mcp-Session-Id")
		if !rec.succeeded() {
			// The SDK opened a session for a failed initialize too: close
			// it, so that failed attempts hold no place.
			if sid != "" {
				go m.closeSDKSessions([]string{sid})
			}
			sid = ""
		}
		m.register(sid, fingerprint, subjectKey(p), declaresElicitation(msg.params))
		if sid != "" && m.shared != nil {
			m.shared.recordSession(sid, fingerprint)
		}
		return
	}
	if foreign {
		m.shared.serveForeign(w, m.sdkRequest(r, sdkBody, caller), sid)
		return
	}
	m.serveSDK(m.handler, w, r, sdkBody, caller)
	if r.Method == http.MethodDelete {
		m.forget(sid)
		if m.shared != nil {
			m.shared.forgetShared(sid)
		}
	}
}

// stepUp answers a tools/call that a wider scope would allow 403
// insufficient_scope, over HTTP, whichever path would serve it, on either
// revision; it reports whether it answered.
func (m *Door) stepUp(w http.ResponseWriter, r *http.Request, msg *rpcMessage, p *identity.Principal) bool {
	if r.Method != http.MethodPost || p == nil || p.StepUp == nil {
		return false
	}
	if up := m.exec.StepUp(p, calledTool(msg)); up != nil {
		up.Write(w)
		return true
	}
	return false
}

// sdkRequest returns r as an SDK handler takes it: its body (read before)
// restored and the verified caller in its context.
func (m *Door) sdkRequest(r *http.Request, body []byte, caller *identity.Caller) *http.Request {
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	r = r.WithContext(withCaller(r.Context(), caller))
	// The SDK's bearer middleware only carries the verified caller (from the
	// context) into the SDK, but it wants an Authorization header: give it a
	// placeholder, so the local caller of auth mode none gets through and no
	// real token is handed to the SDK.
	r.Header = r.Header.Clone()
	r.Header.Set("Authorization", "Bearer "+sdkBearer)
	return r
}

// serveSDK hands r to one of the SDK's handlers.
func (m *Door) serveSDK(h http.Handler, w http.ResponseWriter, r *http.Request, body []byte, caller *identity.Caller) {
	h.ServeHTTP(w, m.sdkRequest(r, body, caller))
}

// checkSession validates a session id against the table: 400 without one
// (2025-11-25: only initialize may come without), 404 for one the table
// does not hold (never opened, ended, or expired: the client's cue to
// initialize again), 403 for another caller's.
func (m *Door) checkSession(sid, fingerprint string) (status, code int, msg string, elicits bool) {
	if sid == "" {
		return http.StatusBadRequest, -32000, "No valid session; send initialize first.", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.sessions[sid]
	if e == nil {
		return http.StatusNotFound, -32001, "Session not found; send initialize to start a new one.", false
	}
	if e.fingerprint != fingerprint {
		return http.StatusForbidden, -32001, "This MCP session belongs to a different authenticated caller.", false
	}
	e.lastSeen = m.now()
	return 0, 0, "", e.elicits
}

// reserve reports whether a new session of subject may start (sweeping
// idle ones first), and if so holds a place for it until register; else it
// returns the refusal's HTTP status and message. When subject holds
// maxPerSubject places, its least recently used session is ended to make
// room (clients rarely send DELETE, so a long-lived host would otherwise be
// stuck), and evicted names it; only when every place is an initialize
// still in flight is the new one refused (429). When all maxSessions are
// taken it refuses with 503.
func (m *Door) reserve(subject string) (status int, text, evicted string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	mine := m.pendingBy[subject]
	var oldest string
	var oldestSeen time.Time
	for sid, e := range m.sessions {
		if e.subject != subject {
			continue
		}
		mine++
		if oldest == "" || e.lastSeen.Before(oldestSeen) || (e.lastSeen.Equal(oldestSeen) && sid < oldest) {
			oldest, oldestSeen = sid, e.lastSeen
		}
	}
	if mine >= m.maxPerSubject {
		if oldest == "" {
			return http.StatusTooManyRequests, fmt.Sprintf("Too many MCP sessions starting for this caller (at most %d); try again shortly.", m.maxPerSubject), ""
		}
		delete(m.sessions, oldest)
		go m.closeSDKSessions([]string{oldest})
		evicted = oldest
	} else if len(m.sessions)+m.pending >= m.maxSessions {
		return http.StatusServiceUnavailable, "Too many MCP sessions; try again later.", ""
	}
	m.pending++
	m.pendingBy[subject]++
	return 0, "", evicted
}

// register releases the place reserve held for subject and records the
// session a successful initialize answer named, if any (sid "" otherwise).
func (m *Door) register(sid, fingerprint, subject string, elicits bool) {
	m.mu.Lock()
	m.pending--
	if m.pendingBy[subject]--; m.pendingBy[subject] <= 0 {
		delete(m.pendingBy, subject)
	}
	if sid != "" {
		m.sessions[sid] = &sessionEntry{fingerprint: fingerprint, subject: subject, lastSeen: m.now(), elicits: elicits}
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
