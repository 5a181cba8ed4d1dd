package serve

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// Build says what a gateway binary was built from: the module version and
// VCS revision (buildinfo.Version). The bundles it serves are reported with
// their connectors' BundleHash (compiled in for a generated gateway).
type Build struct {
	Module, Revision string
}

// Reload serves f from now on: calls that start after Reload returns run on
// f, calls in flight finish on the fleet they started with, and the MCP
// tools become f's, which the SDK announces to open sessions with
// notifications/tools/list_changed.
// The ANVIL_UPSTREAM_<C>_URL overrides are applied to f first; when they
// fail, the served fleet is kept.
func (g *Gateway) Reload(f *fleet.Fleet) error {
	if f == nil {
		return errors.New("no fleet to serve")
	}
	if err := fleet.ApplyUpstreamOverrides(f, g.cfg.Getenv); err != nil {
		return err
	}
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	mcpdoor.PrepareFleet(f)
	g.served.Store(f)
	g.mcp.Reload(f)
	return nil
}

// reloadState is what /readyz says about the last reload.
type reloadState struct {
	mu     sync.Mutex
	failed bool
	at     time.Time
}

// SetReloadFailed records whether the last attempt to reload the workspace
// failed (the served fleet is then the one loaded before); /readyz reports
// it without the reason, which goes to the log.
func (g *Gateway) SetReloadFailed(failed bool) {
	g.reloadState.mu.Lock()
	g.reloadState.failed = failed
	g.reloadState.mu.Unlock()
}

// serveHealth answers /healthz: always 200 while the process serves, and
// cheap (no file or network is read).
func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	httpkit.WriteJSON(w, http.StatusOK, wirejson.Object("status", "ok", "fleet", true, "bundles", len(g.Fleet().Connectors)))
}

// readyTimeout bounds the JWKS check of /readyz.
const readyTimeout = 2 * time.Second

// serveReady answers /readyz. With any inbound identity but the local one
// (branchyard, oidc) the gateway's port is public, so a request without a
// token the gateway accepts (a turn or a connect token, or an access token)
// gets the status only, {"ready":bool} with the same 200 or 503: which
// connectors, tools and bundle hashes are served is not told to anyone who
// can reach the port. With a token, in auth mode none (loopback only), and
// on the metrics listener (ReadyDetails), it answers the details.
func (g *Gateway) serveReady(w http.ResponseWriter, r *http.Request) {
	if _, local := g.ident.(identity.None); !local && !g.tokenAccepted(r) {
		ready, _ := g.readiness(r)
		status := http.StatusOK
		if !ready {
			status = http.StatusServiceUnavailable
		}
		httpkit.WriteJSON(w, status, wirejson.Object("ready", ready))
		return
	}
	g.serveReadyDetails(w, r)
}

// tokenAccepted reports whether r carries a credential the inbound
// identity accepts (any purpose: turn or connect). A refused one is not an
// error here: the caller gets the status only.
func (g *Gateway) tokenAccepted(r *http.Request) bool {
	if r.Header.Get("Authorization") == "" {
		return false
	}
	g.watch.Poll() // a JWKS file changed or removed before this request is seen
	c, refused := g.ident.Authenticate(r.Context(), r)
	return refused == nil && c != nil
}

// ReadyDetails answers /readyz with its details whatever the request
// carries: the command line serves it on the metrics listener
// (ANVIL_METRICS_ADDR), which only the operator's scraper reaches.
func (g *Gateway) ReadyDetails() http.Handler { return http.HandlerFunc(g.serveReadyDetails) }

// readiness is /readyz's verdict and what it rests on: the JWKS state
// ("none", "ok" or "unreadable") and the store's ("none", "ok" or
// "down"). Not ready when no tool is served, the state store does not
// answer, or, in branchyard mode, the JWKS cannot be read now (in oidc
// mode, the keys of one of the policy's issuers).
func (g *Gateway) readiness(r *http.Request) (ready bool, states [2]string) {
	ready = len(g.Fleet().Tools) > 0
	jwks := "none"
	if kc, ok := g.ident.(identity.KeyChecker); ok {
		g.watch.Poll() // a JWKS file changed or removed before this request is seen
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := kc.CheckKeys(ctx)
		cancel()
		if err != nil {
			jwks, ready = "unreadable", false
		} else {
			jwks = "ok"
		}
	}
	storeState := "none"
	if g.state != nil {
		if err := g.StateReady(r.Context()); err != nil {
			storeState, ready = "down", false
		} else {
			storeState = "ok"
		}
	}
	return ready, [2]string{jwks, storeState}
}

// serveReadyDetails answers /readyz with the served bundles (each with its
// tool count and generation.json bundleHash; an OAuth connector also with
// the scopes its login asks for and, when stored grants lack some, how
// many and which: reconnectRequired), the vault, the state store,
// the inbound keys, the last reload (failed while the last reload of the
// workspace, or in oidc mode of the policy file, failed) and the build.
func (g *Gateway) serveReadyDetails(w http.ResponseWriter, r *http.Request) {
	f := g.Fleet()
	type reconnect struct {
		Connections   int      `json:"connections"`
		MissingScopes []string `json:"missingScopes"`
	}
	type bundle struct {
		ID         string `json:"id"`
		ServiceID  string `json:"serviceId"`
		ToolCount  int    `json:"toolCount"`
		BundleHash string `json:"bundleHash"`
		Ready      bool   `json:"ready"`
		// Scopes is what an OAuth connector's login asks for, and
		// ReconnectRequired the stored grants that lack some of them
		// (which does not make the gateway unready).
		Scopes            []string   `json:"scopes,omitempty"`
		ReconnectRequired *reconnect `json:"reconnectRequired,omitempty"`
	}
	gaps, _ := g.grantGaps()
	bs := []bundle{}
	for _, c := range f.Connectors {
		b := bundle{ID: c.ID, ServiceID: c.Doc.Service.ID, ToolCount: c.ToolCount(), BundleHash: c.BundleHash, Ready: true}
		for _, gap := range gaps {
			if gap.Connector == c.ID {
				b.Scopes = gap.Scopes
				if gap.Connections > 0 {
					b.ReconnectRequired = &reconnect{Connections: gap.Connections, MissingScopes: gap.Missing}
				}
			}
		}
		bs = append(bs, b)
	}
	ready, states := g.readiness(r)
	jwks, storeState := states[0], states[1]
	vaultState := "none"
	if g.vault != nil {
		vaultState = "open"
	}
	g.reloadState.mu.Lock()
	reload := "ok"
	if g.reloadState.failed || (g.oidc != nil && g.oidc.failed.Load()) {
		reload = "failed"
	}
	g.reloadState.mu.Unlock()
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	httpkit.WriteJSON(w, status, wirejson.Object("ready", ready, "bundles", bs,
		"vault", vaultState, "store", storeState, "jwks", jwks, "reload", reload,
		"build", wirejson.Object("module", g.build.Module, "revision", g.build.Revision)))
}
