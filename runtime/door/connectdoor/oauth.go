package connectdoor

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/vault"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// oauthConfig is a connector's OAuth client: what AIR declares for the
// connection, overridden by ANVIL_CONNECT_<C>_*.
func (cr *Door) oauthConfig(c *fleet.Connector) connect.Config {
	return connect.ConfigFor(c.ID, c.ConnectAuth(), cr.getenv)
}

// redirectURI is new URL("/connect/callback", ANVIL_GATEWAY_PUBLIC_URL ||
// audience): the origin of the public URL (or of the gateway's /mcp URL)
// with the path /connect/callback.
func (cr *Door) redirectURI() (string, bool) {
	u, err := url.Parse(cr.publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	cb := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/connect/callback"}
	return cb.String(), true
}

// startOAuth begins an authorization-code flow with PKCE for the person sub
// and answers {"kind":"oauth","connector","url","expires_at"}; expires_at is
// ISO 8601 UTC with milliseconds, as the vault's timestamps.
func (cr *Door) startOAuth(w http.ResponseWriter, r *http.Request, sub string, c *fleet.Connector, account string) {
	redirect, ok := cr.redirectURI()
	if !ok {
		envelope.WriteSimple(w, http.StatusServiceUnavailable, "connector_not_configured",
			fmt.Sprintf("Connector %s cannot be connected: the gateway's public URL (ANVIL_GATEWAY_PUBLIC_URL) is not an absolute http(s) URL.", c.ID))
		return
	}
	cfg := cr.oauthConfig(c)
	granted := ""
	if cfg.Incremental && cr.records != nil {
		// An incremental provider is asked only for what the person's
		// grant lacks; a record that cannot be read asks for everything.
		if prev, err := cr.records.Get(sub, c.ID, account); err == nil && prev.Kind == vault.KindOAuth && prev.Status == vault.StatusActive {
			granted = prev.Scope
		}
	}
	st, err := cr.oauth.Start(connect.StartRequest{
		Sub: sub, Connector: c.ID, Account: account,
		Config: cfg, RedirectURI: redirect, Granted: granted,
	})
	if err != nil {
		e := connect.AsError(err)
		envelope.WriteSimple(w, e.Status, e.Code, e.Message)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, wirejson.Object("kind", "oauth", "connector", c.ID, "url", st.URL,
		"expires_at", vault.FormatTime(st.ExpiresAt)))
}

// ServeCallback answers /connect/callback: no bearer, GET only, bound to the
// person by state. The answer is plain text for the browser, never with a
// link or a secret.
func (cr *Door) ServeCallback(w http.ResponseWriter, r *http.Request) {
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
	conn, err := cr.oauth.Callback(r.Context(), r.URL.Query())
	if err != nil {
		e := connect.AsError(err)
		w.WriteHeader(e.Status)
		fmt.Fprintf(w, "Not connected: %s\n", e.Message)
		return
	}
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "Connected %s (account %s). You can close this window.\n", conn.Connector, conn.Account)
}
