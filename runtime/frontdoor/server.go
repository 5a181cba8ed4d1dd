package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/runtime/buildinfo"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"github.com/anvil-dev/anvil/runtime/vault"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// Config is the gateway's configuration: flags plus environment.
type Config struct {
	Host string
	Port int

	Auth            auth.Config
	VaultKeyFile    string
	VaultDir        string
	AuditFile       string
	PublicURL       string
	AllowedHosts    string
	Env             string
	UpstreamTimeout time.Duration
	// HTTP are the listener's limits (ANVIL_HTTP_*); zero fields take the
	// defaults.
	HTTP HTTPLimits
	// ToolSurface is ANVIL_TOOL_SURFACE (full, discover or auto; "" is
	// auto) and ToolsPageSize ANVIL_TOOLS_PAGE_SIZE (0: tools/list unpaged);
	// see surface.go.
	ToolSurface   string
	ToolsPageSize int
	// Getenv reads further variables (ANVIL_CONNECT_<C>_*); os.Getenv by default.
	Getenv func(string) string
}

// ConfigFromEnv reads the gateway environment (ANVIL_INBOUND_*, ANVIL_VAULT_*,
// ANVIL_AUDIT_FILE, ANVIL_GATEWAY_PUBLIC_URL, ANVIL_ALLOWED_HOSTS, ANVIL_ENV,
// ANVIL_UPSTREAM_TIMEOUT_MS, ANVIL_HTTP_*).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	ac, err := auth.ConfigFromEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Auth:         ac,
		VaultKeyFile: getenv("ANVIL_VAULT_KEY_FILE"),
		VaultDir:     getenv("ANVIL_VAULT_DIR"),
		AuditFile:    getenv("ANVIL_AUDIT_FILE"),
		PublicURL:    getenv("ANVIL_GATEWAY_PUBLIC_URL"),
		AllowedHosts: getenv("ANVIL_ALLOWED_HOSTS"),
		Env:          getenv("ANVIL_ENV"),
		Getenv:       getenv,
	}
	if v := getenv("ANVIL_UPSTREAM_TIMEOUT_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return Config{}, fmt.Errorf("ANVIL_UPSTREAM_TIMEOUT_MS must be a positive number of milliseconds")
		}
		cfg.UpstreamTimeout = time.Duration(ms) * time.Millisecond
	}
	if cfg.HTTP, err = httpLimitsFromEnv(getenv); err != nil {
		return Config{}, err
	}
	if cfg.ToolSurface, cfg.ToolsPageSize, err = surfaceFromEnv(getenv); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Gateway is a configured fleet gateway.
type Gateway struct {
	cfg Config
	// served is the fleet being served; Reload swaps it (the executor reads
	// it once per call).
	served atomic.Pointer[fleet.Fleet]
	build  Build
	// reloadMu orders reloads; reloadState is the last one's outcome.
	reloadMu    sync.Mutex
	reloadState reloadState
	verifier    *auth.Verifier
	vault       *vault.Store
	exec        *executor.Executor
	mcp         *mcpServer
	connect     *connectRoutes
	logf        func(format string, args ...any)
	// watch reports changes to the files read on every call (the JWKS file,
	// vault records, the audit log's path); authenticate polls it.
	watch *fswatch.Watcher
	// metricsRoute serves /metrics on this listener (Observe.Route).
	metricsRoute http.Handler
	// state is the state store; nil without a vault key (state.go).
	state store.Store

	// records is the vault the connect routes use: vault, or the shared
	// store (state.go); nil without a vault key.
	records vaultRecords
	// sharedFlows keeps pending OAuth flows in the shared store; nil: in
	// this process.
	sharedFlows connect.SharedFlows
	// stopShip stops shipping the audit file to the shared trail (state.go).
	stopShip func()
}

// Options tune a gateway.
type Options struct {
	// Logf receives operational log lines (stderr in the CLI).
	Logf func(format string, args ...any)
	// Transport is the upstream transport (tests).
	Transport http.RoundTripper
	// HTTPClient fetches https JWKS (tests).
	HTTPClient *http.Client
	// Build is what /readyz reports the gateway was built from; the
	// module version and VCS revision of this binary when Module is empty.
	Build Build
	// Observe is the metrics and tracing of the gateway (observe.go); the
	// zero value turns both off.
	Observe Observe
}

// Check reports the configurations a gateway refuses before anything is
// loaded: inbound auth none on a host that is not loopback, and branchyard
// mode without a vault key.
func (cfg Config) Check() error {
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	branchyard := cfg.Auth.Mode == "branchyard"
	if !branchyard && !isLoopbackHost(host) {
		return fmt.Errorf("refusing to bind %s with inbound auth mode none: set ANVIL_INBOUND_AUTH_MODE=branchyard or bind a loopback host", host)
	}
	if branchyard && cfg.VaultKeyFile == "" {
		return errors.New("branchyard mode needs ANVIL_VAULT_KEY_FILE (a 32-byte key in a file only its owner can read)")
	}
	return nil
}

// New checks the configuration and prepares to serve f (fleet.Load or
// fleet.FromWorkspace), refusing to start on any problem. It applies the
// ANVIL_UPSTREAM_<C>_URL overrides to f.
func New(cfg Config, f *fleet.Fleet, opts *Options) (*Gateway, error) {
	if opts == nil {
		opts = &Options{}
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	g := &Gateway{cfg: cfg, logf: opts.Logf, watch: fswatch.New()}
	if g.logf == nil {
		g.logf = func(string, ...any) {}
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
		g.cfg.Host = cfg.Host
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	branchyard := cfg.Auth.Mode == "branchyard"
	if f == nil {
		return nil, errors.New("no fleet to serve")
	}
	if err := fleet.ApplyUpstreamOverrides(f, cfg.Getenv); err != nil {
		return nil, err
	}
	g.served.Store(f)
	g.build = opts.Build
	if g.build.Module == "" {
		g.build.Module, g.build.Revision = buildinfo.Version()
	}
	if branchyard {
		v, err := auth.NewVerifier(cfg.Auth, &auth.VerifierOptions{HTTPClient: opts.HTTPClient, Watcher: g.watch})
		if err != nil {
			return nil, err
		}
		g.verifier = v
	}
	var key []byte
	dir := cfg.VaultDir
	if dir == "" {
		dir = vault.DefaultDir()
	}
	if cfg.VaultKeyFile != "" {
		var err error
		key, err = vault.LoadKey(cfg.VaultKeyFile)
		if err != nil {
			return nil, err
		}
		st, err := vault.Open(dir, key)
		if err != nil {
			return nil, err
		}
		g.vault = st
		g.records = st
	}
	var logger *audit.Logger
	if cfg.AuditFile != "" {
		var err error
		// The audit chain is keyed by the vault key when there is one
		// (docs/state.md, "The audit chain").
		var o audit.Options
		if key != nil {
			if o.ChainKey, err = audit.ChainKey(key); err != nil {
				return nil, err
			}
		}
		logger, err = audit.OpenWith(cfg.AuditFile, o)
		if err != nil {
			return nil, err
		}
		logger.Watch(g.watch)
	}
	timeout := cfg.UpstreamTimeout
	allow := upstream.ParseAllowlist(cfg.AllowedHosts, cfg.Env)
	g.exec = &executor.Executor{
		Served:      &g.served,
		Upstream:    upstream.NewClient(&upstream.ClientOptions{Allowlist: allow, Timeout: timeout, Transport: opts.Transport}),
		Allowlist:   allow,
		Audit:       logger,
		AuditFailed: func(err error) { g.logf("anvil: audit write failed: %v", err) },
	}
	g.connect = newConnectRoutes(g)
	g.exec.Credentials = g.connect
	g.mcp = newMCPServer(g.exec, cfg.ToolSurface, cfg.ToolsPageSize)
	g.observe(opts.Observe)
	if err := g.openState(key, dir); err != nil {
		return nil, err
	}
	return g, nil
}

// Fleet returns the served fleet.
func (g *Gateway) Fleet() *fleet.Fleet { return g.served.Load() }

// Handler returns the gateway's HTTP handler. Routes match the request path
// exactly, without cleaning or redirects (anvil-reference §e "Routes on one
// listener"): /healthz, /readyz, /.well-known/oauth-protected-resource,
// /mcp, /call/<tool>, /tools, /connect/callback and /connect/<route>; anything else is
// 404 {"error":{"code":"not_found","message":"No such route."}}.
func (g *Gateway) Handler() http.Handler {
	mcpRoute := g.withTurnToken(g.serveMCP)
	callRoute := g.withTurnToken(g.serveCall)
	toolsRoute := g.withTurnToken(g.serveTools)
	connectRoute := g.withConnectToken(g.connect.serve)
	localOnly := g.verifier == nil
	limits := g.cfg.HTTP.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if localOnly && !g.localRequest(w, r) {
			return
		}
		bodyDeadline(w, r, limits.BodyTimeout)
		if tr := g.exec.Tracer; tr != nil {
			r = r.WithContext(tr.Extract(r.Context(), r.Header))
		}
		switch p := r.URL.Path; {
		case p == "/mcp":
			mcpRoute(w, r)
		case strings.HasPrefix(p, "/call/"):
			callRoute(w, r)
		case p == "/tools":
			toolsRoute(w, r)
		case p == "/healthz":
			g.serveHealth(w, r)
		case p == "/readyz":
			g.serveReady(w, r)
		case p == "/metrics" && g.metricsRoute != nil:
			g.metricsRoute.ServeHTTP(w, r)
		case p == "/.well-known/oauth-protected-resource":
			g.serveResourceMetadata(w, r)
		case p == "/connect/callback":
			g.connect.serveCallback(w, r)
		case strings.HasPrefix(p, "/connect/"):
			connectRoute(w, r)
		default:
			refuseRequest(w, r, func(w http.ResponseWriter) {
				envelope.WriteSimple(w, http.StatusNotFound, "not_found", "No such route.")
			})
		}
	})
}

// localRequest guards every route in auth mode none, where any request is
// the unrestricted local person: a web page that rebinds its own name to
// 127.0.0.1 reaches the listener, but its requests carry that name as Host
// (and the page's origin as Origin). Only a Host that is a loopback address
// or localhost, and an Origin (when sent) whose host is one too, get through;
// anything else is 403 host_not_allowed or origin_not_allowed, before any
// route reads the body or the vault.
func (g *Gateway) localRequest(w http.ResponseWriter, r *http.Request) bool {
	if !isLoopbackAddr(strings.ToLower(r.Host)) {
		refuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusForbidden, "host_not_allowed",
				"Without inbound auth the gateway answers only requests addressed to a loopback host (localhost, 127.0.0.1, [::1]).")
		})
		return false
	}
	if origins, sent := r.Header["Origin"]; sent {
		for _, o := range origins {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !isLoopbackAddr(strings.ToLower(u.Host)) {
				refuseRequest(w, r, func(w http.ResponseWriter) {
					envelope.WriteSimple(w, http.StatusForbidden, "origin_not_allowed",
						"Without inbound auth the gateway answers only pages served from a loopback host.")
				})
				return false
			}
		}
	}
	return true
}

func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request, p *executor.Principal, fingerprint string) {
	g.mcp.serve(w, r, p, fingerprint)
}

func (g *Gateway) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	servers := []string{}
	if g.cfg.Auth.Issuer != "" {
		servers = append(servers, g.cfg.Auth.Issuer)
	}
	writeJSON(w, http.StatusOK, wirejson.Object("resource", g.resourceURL(), "authorization_servers", servers))
}

// resourceURL is the gateway's canonical /mcp URL.
func (g *Gateway) resourceURL() string {
	if g.cfg.Auth.Audience != "" {
		return g.cfg.Auth.Audience
	}
	return fmt.Sprintf("http://%s/mcp", net.JoinHostPort(g.cfg.Host, strconv.Itoa(g.cfg.Port)))
}

// authenticate verifies the caller's bearer token. In auth mode none every
// caller is the local, unrestricted principal.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request) (*auth.Claims, bool) {
	// Changes to the JWKS file and the vault made before this request are
	// seen by it.
	g.watch.Poll()
	if g.verifier == nil {
		return nil, true
	}
	c, err := g.verifier.Verify(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		g.exec.Metrics.TokenError(tokenErrorCode(err))
		refuseRequest(w, r, func(w http.ResponseWriter) { auth.WriteError(w, err, g.resourceURL()) })
		return nil, false
	}
	return c, true
}

func (g *Gateway) withTurnToken(next func(http.ResponseWriter, *http.Request, *executor.Principal, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := g.authenticate(w, r)
		if !ok {
			return
		}
		if c == nil {
			next(w, r, &executor.Principal{Sub: "local", Unrestricted: true}, "local")
			return
		}
		if c.IsConnect() {
			refuseRequest(w, r, func(w http.ResponseWriter) {
				envelope.WriteSimple(w, http.StatusForbidden, "turn_token_required",
					"This route takes a turn token; a connect token can neither list nor call tools.")
			})
			return
		}
		p := &executor.Principal{Sub: c.Subject, Tenant: c.Tenant, Branch: c.Branch, Turn: c.Turn, Grants: c.Grants}
		next(w, r, p, c.Fingerprint())
	}
}

func (g *Gateway) withConnectToken(next func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := g.authenticate(w, r)
		if !ok {
			return
		}
		if c == nil {
			next(w, r, "local")
			return
		}
		if !c.IsConnect() {
			refuseRequest(w, r, func(w http.ResponseWriter) {
				envelope.WriteSimple(w, http.StatusForbidden, "connect_token_required",
					"The connect routes take only the person's connect token (by_purpose: connect), never a turn token.")
			})
			return
		}
		next(w, r, c.Subject)
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// HTTPServer is the server a gateway's port is served by: cfg's header and
// idle timeouts around h. runtime/serve builds it before the workspace
// loads, with a handler that passes from the loading answers to the
// gateway's, and keeps it for the life of the process, so connections
// accepted while the workspace loads are the gateway's once it serves.
// There is no ReadTimeout: the body's deadline is set per request
// (bodyDeadline), since a whole-request read deadline would also cancel
// long calls and event streams once it passed.
func HTTPServer(cfg Config, h http.Handler) *http.Server {
	limits := cfg.HTTP.withDefaults()
	return &http.Server{Handler: h, ReadHeaderTimeout: limits.HeaderTimeout, IdleTimeout: limits.IdleTimeout}
}

// LimitListener holds ln to cfg's cap on open connections
// (ANVIL_HTTP_MAX_CONNS), logging through logf when the cap is reached.
func LimitListener(ln net.Listener, cfg Config, logf func(string, ...any)) net.Listener {
	return newLimitListener(ln, cfg.HTTP.withDefaults().MaxConns, logf)
}

// Serve serves on ln until ctx is done, then shuts down cleanly.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	srv := HTTPServer(g.cfg, g.Handler())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(LimitListener(ln, g.cfg, g.logf)) }()
	return g.Run(ctx, srv, errc)
}

// Run does the gateway's background work (the session and connect-flow
// sweeps, the ledger's purge) while srv serves the gateway, until srv's
// Serve returns (its result arrives on served) or ctx is done; then it
// shuts srv down cleanly and closes the gateway.
func (g *Gateway) Run(ctx context.Context, srv *http.Server, served <-chan error) error {
	defer g.Close()
	tick := time.NewTicker(sessionSweep)
	defer tick.Stop()
	done := make(chan struct{})
	go g.purgeLoop(done)
	go func() {
		for {
			select {
			case <-tick.C:
				g.mcp.sweep()
				g.connect.sweep()
			case <-done:
				return
			}
		}
	}()
	select {
	case err := <-served:
		close(done)
		return err
	case <-ctx.Done():
	}
	close(done)
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// Stop taking requests first, then end the MCP sessions so that open
	// event streams (GET /mcp) return and Shutdown need not wait for them.
	srv.SetKeepAlivesEnabled(false)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	g.mcp.closeAll()
	err := <-shut
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	return err
}

// URL is the /mcp URL the gateway serves on.
func (g *Gateway) URL() string {
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(g.cfg.Host, strconv.Itoa(g.cfg.Port)), Path: "/mcp"}
	return u.String()
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
