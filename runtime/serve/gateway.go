package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/buildinfo"
	"github.com/anvil-dev/anvil/runtime/confirm"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/credential"
	"github.com/anvil-dev/anvil/runtime/door/connectdoor"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
	"github.com/anvil-dev/anvil/runtime/door/restdoor"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/frontdoor"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/identity"
	branchyardid "github.com/anvil-dev/anvil/runtime/identity/branchyard"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"github.com/anvil-dev/anvil/runtime/vault"
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
	HTTP httpkit.Limits
	// ToolSurface is ANVIL_TOOL_SURFACE (full, discover or auto; "" is
	// auto) and ToolsPageSize ANVIL_TOOLS_PAGE_SIZE (0: tools/list unpaged);
	// see runtime/door/mcpdoor.
	ToolSurface   string
	ToolsPageSize int
	// RequestStateKeyFile is ANVIL_REQUEST_STATE_KEY_FILE: the key that
	// signs the state of a confirmation the gateway asks a person for
	// (32 bytes as hex, owner-only file). Replicas must share it; unset,
	// each process signs with a key of its own (runtime/confirm).
	RequestStateKeyFile string
	// MCPConfirm is ANVIL_MCP_CONFIRM: "self" (the default) lets an MCP
	// caller whose client could be asked still confirm a write itself with
	// confirm: true; "ask" asks the person behind such a client anyway.
	MCPConfirm string
	// Getenv reads further variables (ANVIL_CONNECT_<C>_*); os.Getenv by default.
	Getenv func(string) string
	// DevVaultKey says VaultKeyFile is the development key of auth mode
	// none (UseDevVaultKey), and DevVaultKeyCreated that it was made at
	// this start; the startup report says so.
	DevVaultKey, DevVaultKeyCreated bool
}

// UseDevVaultKey gives a gateway in auth mode none that has no
// ANVIL_VAULT_KEY_FILE a development vault key, so that `anvil connect`
// can store a connection without a restart: vault.key beside the vault
// directory (~/.anvil/gateway/vault.key, under home, for the default
// directory), created 0600 when missing and reused after, its path in the
// startup report. Branchyard mode keeps refusing to start without a key
// (Check), and a configured key is never replaced. With no vault directory
// and no home directory it leaves cfg as it is.
func (cfg *Config) UseDevVaultKey(home string) error {
	if cfg.Auth.Mode == "branchyard" || cfg.VaultKeyFile != "" {
		return nil
	}
	if cfg.VaultDir == "" {
		if home == "" {
			return nil
		}
		cfg.VaultDir = filepath.Join(home, ".anvil", "gateway", "vault")
	}
	path := vault.DevKeyFile(cfg.VaultDir)
	_, created, err := vault.EnsureKey(path)
	if err != nil {
		return fmt.Errorf("%w (auth mode none makes a development vault key when ANVIL_VAULT_KEY_FILE is unset; set it to a key file of your own)", err)
	}
	cfg.VaultKeyFile, cfg.DevVaultKey, cfg.DevVaultKeyCreated = path, true, created
	return nil
}

// ConfigFromEnv reads the gateway environment (ANVIL_INBOUND_*, ANVIL_VAULT_*,
// ANVIL_AUDIT_FILE, ANVIL_GATEWAY_PUBLIC_URL, ANVIL_ALLOWED_HOSTS, ANVIL_ENV,
// ANVIL_UPSTREAM_TIMEOUT_MS, ANVIL_HTTP_*, ANVIL_REQUEST_STATE_KEY_FILE,
// ANVIL_MCP_CONFIRM).
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

		RequestStateKeyFile: getenv("ANVIL_REQUEST_STATE_KEY_FILE"),
		MCPConfirm:          strings.TrimSpace(getenv("ANVIL_MCP_CONFIRM")),
	}
	switch cfg.MCPConfirm {
	case "", "self", "ask":
	default:
		return Config{}, fmt.Errorf("ANVIL_MCP_CONFIRM must be self or ask, not %q", cfg.MCPConfirm)
	}
	if v := getenv("ANVIL_UPSTREAM_TIMEOUT_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return Config{}, fmt.Errorf("ANVIL_UPSTREAM_TIMEOUT_MS must be a positive number of milliseconds")
		}
		cfg.UpstreamTimeout = time.Duration(ms) * time.Millisecond
	}
	if cfg.HTTP, err = httpkit.LimitsFromEnv(getenv); err != nil {
		return Config{}, err
	}
	if cfg.ToolSurface, cfg.ToolsPageSize, err = mcpdoor.SurfaceFromEnv(getenv); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Gateway is a configured fleet gateway: the rooms runtime/serve builds
// (vault, audit log, inbound identity, state store, credential resolver,
// executor) and the doors it hands the executor to, behind the front hall.
type Gateway struct {
	cfg Config
	// served is the fleet being served; Reload swaps it (the executor reads
	// it once per call).
	served atomic.Pointer[fleet.Fleet]
	build  Build
	// reloadMu orders reloads; reloadState is the last one's outcome.
	reloadMu    sync.Mutex
	reloadState reloadState
	ident       identity.Identity
	// resource is the gateway's canonical /mcp URL.
	resource string
	vault    *vault.Store
	exec     *executor.Executor
	mcp      *mcpdoor.Door
	rest     *restdoor.Door
	connect  *connectdoor.Door
	// oauth runs the OAuth flows of the connect door and the refreshes of
	// the credential resolver.
	oauth *connect.Service
	logf  func(format string, args ...any)
	// watch reports changes to the files read on every call (the JWKS file,
	// vault records, the audit log's path); the front hall polls it.
	watch *fswatch.Watcher
	// metricsRoute serves /metrics on this listener (Observe.Route).
	metricsRoute http.Handler
	// state is the state store; nil without a vault key (state.go).
	state store.Store

	// records are the connection records the connect door writes and the
	// credential resolver reads: vault, or the shared store (state.go); nil
	// without a vault key.
	records connect.Records
	// sharedFlows keeps pending OAuth flows in the shared store; nil: in
	// this process.
	sharedFlows connect.SharedFlows
	// scopes is the last check of the stored grants' scopes (scopes.go).
	scopes scopeCheck
	// oidc is inbound auth mode oidc's identity and token exchanges; nil
	// in the other modes.
	oidc *oidcMode
	// stopShip stops shipping the audit file to the shared trail (state.go).
	stopShip func()
}

// GatewayOptions tune a gateway.
type GatewayOptions struct {
	// Logf receives operational log lines (stderr in the CLI).
	Logf func(format string, args ...any)
	// Transport is the upstream transport (tests).
	Transport http.RoundTripper
	// HTTPClient fetches https JWKS, and in oidc mode issuer metadata and
	// keys, introspection and token exchange (tests).
	HTTPClient *http.Client
	// Build is what /readyz reports the gateway was built from; the
	// module version and VCS revision of this binary when Module is empty.
	Build Build
	// Observe is the metrics and tracing of the gateway (observe.go); the
	// zero value turns both off.
	Observe Observe
	// MCP tunes the MCP door beyond Config (session limits and clock, the
	// auto surface's threshold: tests); its surface, paging, shared store
	// and log come from the gateway.
	MCP mcpdoor.Options
	// Connect tunes the OAuth service (clock, token-endpoint client,
	// limits: tests); its shared flows, timeout and egress policy default
	// to the gateway's.
	Connect connect.Options
}

// Check reports the configurations a gateway refuses before anything is
// loaded: inbound auth none on a host that is not loopback, and branchyard
// or oidc mode without a vault key.
func (cfg Config) Check() error {
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	authenticated := cfg.Auth.Enabled()
	if !authenticated && !isLoopbackHost(host) {
		return fmt.Errorf("refusing to bind %s with inbound auth mode none: set ANVIL_INBOUND_AUTH_MODE=branchyard or oidc, or bind a loopback host", host)
	}
	if authenticated && cfg.VaultKeyFile == "" {
		return fmt.Errorf("%s mode needs ANVIL_VAULT_KEY_FILE (a 32-byte key in a file only its owner can read)", cfg.Auth.Mode)
	}
	return nil
}

// NewGateway checks the configuration and prepares to serve f (fleet.Load
// or fleet.FromWorkspace), refusing to start on any problem. It applies the
// ANVIL_UPSTREAM_<C>_URL overrides to f.
func NewGateway(cfg Config, f *fleet.Fleet, opts *GatewayOptions) (*Gateway, error) {
	if opts == nil {
		opts = &GatewayOptions{}
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
	if f == nil {
		return nil, errors.New("no fleet to serve")
	}
	if err := fleet.ApplyUpstreamOverrides(f, cfg.Getenv); err != nil {
		return nil, err
	}
	mcpdoor.PrepareFleet(f)
	g.served.Store(f)
	g.build = opts.Build
	if g.build.Module == "" {
		g.build.Module, g.build.Revision = buildinfo.Version()
	}
	g.resource = g.resourceURL()
	g.ident = identity.None{}
	switch cfg.Auth.Mode {
	case auth.ModeBranchyard:
		v, err := auth.NewVerifier(cfg.Auth, &auth.VerifierOptions{HTTPClient: opts.HTTPClient, Watcher: g.watch})
		if err != nil {
			return nil, err
		}
		g.ident = branchyardid.New(v, g.resource)
	case auth.ModeOIDC:
		m, err := newOIDC(cfg, g.resource, opts.HTTPClient)
		if err != nil {
			return nil, err
		}
		g.oidc, g.ident = m, m.id
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
		Metrics:     opts.Observe.Metrics,
		Tracer:      opts.Observe.Tracer,
	}
	if err := g.openState(key, dir); err != nil {
		return nil, err
	}
	if err := g.askConfirmation(cfg); err != nil {
		return nil, err
	}
	oauth := opts.Connect
	if oauth.Shared == nil {
		oauth.Shared = g.sharedFlows
	}
	if oauth.Timeout == 0 {
		oauth.Timeout = cfg.UpstreamTimeout
	}
	if oauth.AllowHost == nil {
		// The spec's OAuth endpoints pass the same egress allowlist as
		// its upstream calls.
		oauth.AllowHost = allow.Allows
	}
	g.oauth = connect.New(g.records, &oauth)
	creds := &credential.Options{OAuth: g.oauth, Getenv: cfg.Getenv}
	if g.oidc != nil {
		creds.Exchange = g.oidc.exchange
	}
	if g.vault != nil {
		creds.Watch = g.watch.Dir(g.vault.Dir(), true)
	}
	g.exec.Credentials = credential.New(g.records, creds)
	mo := opts.MCP
	mo.Surface, mo.PageSize, mo.Logf = cfg.ToolSurface, cfg.ToolsPageSize, g.logf
	if g.sharedFlows != nil {
		mo.Shared = g.state // replicas share sessions as they share flows
	}
	g.mcp = mcpdoor.New(g.exec, &mo)
	g.rest = restdoor.New(g.exec)
	public := cfg.PublicURL
	if public == "" {
		public = g.resource
	}
	var err error
	if g.connect, err = connectdoor.New(g.exec, g.records, g.oauth, &connectdoor.Options{PublicURL: public, Getenv: cfg.Getenv}); err != nil {
		return nil, err
	}
	if m := opts.Observe.Metrics; m != nil {
		m.Sessions(g.mcp.SessionCount)
		if opts.Observe.Route {
			g.metricsRoute = m.Handler()
		}
	}
	return g, nil
}

// ServeStdio serves the fleet's tools over MCP on stdin/stdout for the local,
// unrestricted caller (inbound auth mode none) until ctx is done or stdin closes.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return g.mcp.ServeStdio(ctx, in, out, g.watch.Poll)
}

// Fleet returns the served fleet.
func (g *Gateway) Fleet() *fleet.Fleet { return g.served.Load() }

// Handler returns the gateway's HTTP handler: the front hall
// (runtime/frontdoor) in front of the doors.
func (g *Gateway) Handler() http.Handler {
	servers := []string{}
	if g.cfg.Auth.Issuer != "" {
		servers = append(servers, g.cfg.Auth.Issuer)
	}
	var metadata func() frontdoor.ResourceMetadata
	if g.oidc != nil {
		metadata = g.oidc.metadata
	}
	h, err := frontdoor.New(frontdoor.Hall{
		Identity:     g.ident,
		LoopbackOnly: !g.cfg.Auth.Enabled(),
		Watch:        g.watch,
		Limits:       g.cfg.HTTP,
		Tracer:       g.exec.Tracer,
		Metrics:      g.exec.Metrics,
		MCP:          g.mcp, REST: g.rest, Connect: g.connect,
		Health:       http.HandlerFunc(g.serveHealth),
		Ready:        http.HandlerFunc(g.serveReady),
		MetricsRoute: g.metricsRoute,
		Resource:     g.resource, AuthorizationServers: servers, Metadata: metadata,
	})
	if err != nil {
		// NewGateway builds every room, so this is a bug: answer it, do
		// not serve without the hall's checks.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			envelope.WriteSimple(w, http.StatusInternalServerError, "internal_error", "The gateway is not assembled.")
		})
	}
	return h
}

// resourceURL is the gateway's canonical /mcp URL.
func (g *Gateway) resourceURL() string {
	if g.cfg.Auth.Audience != "" {
		return g.cfg.Auth.Audience
	}
	return fmt.Sprintf("http://%s/mcp", net.JoinHostPort(g.cfg.Host, strconv.Itoa(g.cfg.Port)))
}

// httpServer is the server a gateway's port is served by (httpkit.Server
// with cfg's limits). Main builds it before the workspace loads, with a
// handler that passes from the loading answers to the gateway's, and keeps
// it for the life of the process, so connections accepted while the
// workspace loads are the gateway's once it serves.
func httpServer(cfg Config, h http.Handler) *http.Server { return httpkit.Server(cfg.HTTP, h) }

// limitListener holds ln to cfg's cap on open connections
// (ANVIL_HTTP_MAX_CONNS), logging through logf when the cap is reached.
func limitListener(ln net.Listener, cfg Config, logf func(string, ...any)) net.Listener {
	return httpkit.LimitListener(ln, cfg.HTTP, logf)
}

// Serve serves on ln until ctx is done, then shuts down cleanly.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	srv := httpServer(g.cfg, g.Handler())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limitListener(ln, g.cfg, g.logf)) }()
	return g.Run(ctx, srv, errc)
}

// Run does the gateway's background work (the session and connect-flow
// sweeps, the ledger's purge) while srv serves the gateway, until srv's
// Serve returns (its result arrives on served) or ctx is done; then it
// shuts srv down cleanly and closes the gateway.
func (g *Gateway) Run(ctx context.Context, srv *http.Server, served <-chan error) error {
	defer g.Close()
	tick := time.NewTicker(mcpdoor.SweepEvery)
	defer tick.Stop()
	done := make(chan struct{})
	go g.purgeLoop(done)
	go func() {
		for {
			select {
			case <-tick.C:
				g.mcp.Sweep()
				g.oauth.Sweep()
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
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Stop taking requests first, then end the MCP sessions so that open
	// event streams (GET /mcp) return and Shutdown need not wait for them.
	srv.SetKeepAlivesEnabled(false)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	g.mcp.CloseAll()
	err := <-shut
	if errors.Is(err, context.DeadlineExceeded) {
		// Said out loud: a connection that outlived the grace is cut, and
		// the tests that prove nothing holds shutdown up look for this line.
		g.logf("anvil: shutdown: connections still open after %v were closed", shutdownGrace)
		err = srv.Close()
	}
	return err
}

// shutdownGrace bounds how long Serve waits for requests in flight once its
// context ends before it closes the connections still open.
const shutdownGrace = 3 * time.Second

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

// askConfirmation gives the executor the gate that asks a person before a
// call that needs confirmation (runtime/executor/confirmation.go): states
// signed with ANVIL_REQUEST_STATE_KEY_FILE's key (else a key of this
// process), answers spent in the state store when there is one (single use
// across the replicas sharing it), else in this process.
func (g *Gateway) askConfirmation(cfg Config) error {
	key := confirm.NewKey()
	if cfg.RequestStateKeyFile != "" {
		var err error
		if key, err = confirm.LoadKey(cfg.RequestStateKeyFile); err != nil {
			return err
		}
	} else if g.sharedFlows != nil {
		g.logf("anvil: ANVIL_REQUEST_STATE_KEY_FILE is unset: a confirmation asked on this replica can only be answered on it; give every replica the same key")
	}
	o := &confirm.Options{}
	if g.state != nil {
		o.Spend = confirm.StoreSpender{St: g.state}
	}
	signer, err := confirm.New(key, o)
	if err != nil {
		return err
	}
	g.exec.Confirm = &executor.Confirmation{Signer: signer, OwnConfirmSuffices: cfg.MCPConfirm != "ask"}
	return nil
}
