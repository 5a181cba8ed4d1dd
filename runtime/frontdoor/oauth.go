package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"github.com/anvil-dev/anvil/runtime/vault"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// oauthRoutes is the OAuth half of the connect routes (connectRoutes.oauth):
// the pending flows, the token-endpoint client and the refresh logic of
// runtime/connect, built on first use. Its zero value is ready.
type oauthRoutes struct {
	once sync.Once
	svc  *connect.Service
	// opts tunes the service (tests set the clock or the HTTP client before
	// the first request).
	opts connect.Options
}

// oauthService returns the connect service, building it on first use.
func (cr *connectRoutes) oauthService() *connect.Service {
	cr.oauth.once.Do(func() {
		var v connect.Vault
		if cr.g.records != nil {
			v = cr.g.records
		}
		opts := cr.oauth.opts
		if opts.Shared == nil {
			opts.Shared = cr.g.sharedFlows
		}
		if opts.Timeout == 0 {
			opts.Timeout = cr.g.cfg.UpstreamTimeout
		}
		if opts.AllowHost == nil {
			// The spec's OAuth endpoints pass the same egress allowlist as
			// its upstream calls.
			opts.AllowHost = cr.g.exec.Allowlist.Allows
		}
		cr.oauth.svc = connect.New(v, &opts)
	})
	return cr.oauth.svc
}

// oauthConfig is a connector's OAuth client: what AIR declares for the
// connection, overridden by ANVIL_CONNECT_<C>_*.
func (cr *connectRoutes) oauthConfig(c *fleet.Connector) connect.Config {
	return connect.ConfigFor(c.ID, c.ConnectAuth(), cr.g.cfg.Getenv)
}

// redirectURI is new URL("/connect/callback", ANVIL_GATEWAY_PUBLIC_URL ||
// audience): the origin of the public URL (or of the gateway's /mcp URL)
// with the path /connect/callback.
func (cr *connectRoutes) redirectURI() (string, bool) {
	base := cr.g.cfg.PublicURL
	if base == "" {
		base = cr.g.resourceURL()
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	cb := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/connect/callback"}
	return cb.String(), true
}

// startOAuth begins an authorization-code flow with PKCE for the person sub
// and answers {"kind":"oauth","connector","url","expires_at"}; expires_at is
// ISO 8601 UTC with milliseconds, as the vault's timestamps.
func (cr *connectRoutes) startOAuth(w http.ResponseWriter, r *http.Request, sub string, c *fleet.Connector, account string) {
	redirect, ok := cr.redirectURI()
	if !ok {
		envelope.WriteSimple(w, http.StatusServiceUnavailable, "connector_not_configured",
			fmt.Sprintf("Connector %s cannot be connected: the gateway's public URL (ANVIL_GATEWAY_PUBLIC_URL) is not an absolute http(s) URL.", c.ID))
		return
	}
	st, err := cr.oauthService().Start(connect.StartRequest{
		Sub: sub, Connector: c.ID, Account: account,
		Config: cr.oauthConfig(c), RedirectURI: redirect,
	})
	if err != nil {
		e := connect.AsError(err)
		envelope.WriteSimple(w, e.Status, e.Code, e.Message)
		return
	}
	writeJSON(w, http.StatusOK, wirejson.Object("kind", "oauth", "connector", c.ID, "url", st.URL,
		"expires_at", vault.FormatTime(st.ExpiresAt)))
}

// serveCallback answers /connect/callback: no bearer, GET only, bound to the
// person by state. The answer is plain text for the browser, never with a
// link or a secret.
func (cr *connectRoutes) serveCallback(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet {
		h.Set("Allow", "GET")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprintln(w, "Not connected: use GET.")
		return
	}
	conn, err := cr.oauthService().Callback(r.Context(), r.URL.Query())
	if err != nil {
		e := connect.AsError(err)
		w.WriteHeader(e.Status)
		fmt.Fprintf(w, "Not connected: %s\n", e.Message)
		return
	}
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "Connected %s (account %s). You can close this window.\n", conn.Connector, conn.Account)
}

// oauthCredential resolves a stored OAuth connection's access token,
// refreshing it when it expires within 60 s (one refresh per connection at a
// time). The provider refusing the refresh marks the connection
// needs_reconnect; a declared token endpoint outside the egress allowlist is
// policy_denied policy/egress_denied, as an upstream host outside it is; any
// other failure is connector/refresh_failed.
func (cr *connectRoutes) oauthCredential(ctx context.Context, sub string, c *fleet.Connector, account string, conn *vault.Connection,
	refuse func(code, msg string) *envelope.Error) (func(*http.Request), *envelope.Error) {
	token, err := cr.oauthService().AccessToken(ctx, cr.oauthConfig(c), conn)
	switch {
	case errors.Is(err, connect.ErrEgressDenied):
		host := connect.AsError(err).Host
		return nil, &envelope.Error{Code: envelope.PolicyDenied,
			Message: fmt.Sprintf("The token endpoint of connector %s is not in the allowed hosts list (ANVIL_ALLOWED_HOSTS): %s.", c.ID, host),
			Details: wirejson.Object("code", "policy/egress_denied", "host", host)}
	case errors.Is(err, connect.ErrNeedsReconnect):
		return nil, refuse("connector/needs_reconnect", fmt.Sprintf("Connector %s (account %s) needs to be connected again.", c.ID, account))
	case err != nil:
		return nil, refuse("connector/refresh_failed", fmt.Sprintf("The access of connector %s (account %s) could not be refreshed; try again later.", c.ID, account))
	}
	return func(req *http.Request) { upstream.ApplyBearer(req, token) }, nil
}

// sweep drops expired pending flows.
func (cr *connectRoutes) sweep() { cr.oauthService().Sweep() }
