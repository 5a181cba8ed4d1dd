// Package connectdoor is the connect door: /connect/start, /connect/api-key
// and /connect/status for the person a connect credential names, and the
// OAuth callback /connect/callback, which carries no credential and is
// bound to the person by the flow's state. It writes the connection records
// runtime/credential reads when a call needs its credential.
package connectdoor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/vault"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// MaxSecret bounds a submitted API key.
const MaxSecret = 8192

// MaxBody bounds a /connect request body.
const MaxBody = 64 << 10

var validAccount = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,128}$`)

// Door serves /connect/*.
type Door struct {
	exec    *executor.Executor // its fleet names the connectors
	records connect.Records    // nil: no vault, nothing can be stored
	oauth   *connect.Service
	// publicURL is the base of the OAuth redirect URI.
	publicURL string
	getenv    func(string) string
}

// Options are what the connect door needs beyond the fleet, the records
// and the OAuth service.
type Options struct {
	// PublicURL is the gateway's public URL (ANVIL_GATEWAY_PUBLIC_URL, or
	// its /mcp URL): its origin with /connect/callback is the OAuth
	// redirect URI.
	PublicURL string
	// Getenv reads ANVIL_CONNECT_<C>_* (a connector's OAuth client).
	Getenv func(string) string
}

// ErrNoOAuth is New's error without an OAuth service.
var ErrNoOAuth = errors.New("connectdoor: the connect door needs the gateway's OAuth service")

// New returns the connect door for exec's fleet, storing connections in
// records (nil: no vault) and running OAuth flows with oauth: the service
// the credential resolver refreshes tokens with, so a connection made here
// is the one a call refreshes.
func New(exec *executor.Executor, records connect.Records, oauth *connect.Service, o *Options) (*Door, error) {
	if oauth == nil {
		return nil, ErrNoOAuth
	}
	if o == nil {
		o = &Options{}
	}
	d := &Door{exec: exec, records: records, oauth: oauth, publicURL: o.PublicURL, getenv: o.Getenv}
	if d.getenv == nil {
		d.getenv = func(string) string { return "" }
	}
	return d, nil
}

// Serve handles the credential-authenticated connect routes for the person
// sub.
func (cr *Door) Serve(w http.ResponseWriter, r *http.Request, sub string) {
	switch {
	case r.URL.Path == "/connect/start" && r.Method == http.MethodPost:
		cr.start(w, r, sub)
	case r.URL.Path == "/connect/api-key" && r.Method == http.MethodPost:
		cr.apiKey(w, r, sub)
	case r.URL.Path == "/connect/status" && r.Method == http.MethodGet:
		cr.status(w, r, sub)
	default:
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusNotFound, "not_found", "No such route.")
		})
	}
}

type connectBody struct {
	Connector string `json:"connector"`
	Account   string `json:"account"`
	APIKey    string `json:"api_key"`
}

// readConnectBody reads a JSON object of at most 64 KiB naming a connector.
func (cr *Door) readConnectBody(w http.ResponseWriter, r *http.Request) (*connectBody, *fleet.Connector, bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	raw = bytes.TrimSpace(raw)
	var b connectBody
	if err != nil || len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &b) != nil {
		envelope.WriteSimple(w, http.StatusBadRequest, "invalid_request", "Expected a JSON object.")
		return nil, nil, false
	}
	if b.Connector == "" {
		envelope.WriteSimple(w, http.StatusBadRequest, "invalid_request", "Name a connector.")
		return nil, nil, false
	}
	if b.Account == "" {
		b.Account = "default"
	} else if !validAccount.MatchString(b.Account) {
		envelope.WriteSimple(w, http.StatusBadRequest, "invalid_request", "An account name is 1-128 characters of [A-Za-z0-9._@-].")
		return nil, nil, false
	}
	c := cr.exec.CurrentFleet().Connector(b.Connector)
	if c == nil {
		envelope.WriteSimple(w, http.StatusNotFound, "unknown_connector",
			fmt.Sprintf("No connector %q is served here (it serves: %s).", b.Connector, strings.Join(cr.exec.CurrentFleet().IDs(), ", ")))
		return nil, nil, false
	}
	return &b, c, true
}

func (cr *Door) start(w http.ResponseWriter, r *http.Request, sub string) {
	b, c, ok := cr.readConnectBody(w, r)
	if !ok {
		return
	}
	switch connect.KindOf(c.ConnectAuth()) {
	case connect.KindNone:
		envelope.WriteSimple(w, http.StatusConflict, "nothing_to_connect", fmt.Sprintf("Connector %s needs no credential.", c.ID))
	case connect.KindUnsupported:
		envelope.WriteSimple(w, http.StatusConflict, "unsupported_auth", fmt.Sprintf("Connector %s uses an auth type the gateway cannot connect.", c.ID))
	case connect.KindStatic:
		httpkit.WriteJSON(w, http.StatusOK, wirejson.Object("kind", "static", "connector", c.ID, "submit", "/connect/api-key"))
	case connect.KindOAuth:
		cr.startOAuth(w, r, sub, c, b.Account)
	}
}

func (cr *Door) apiKey(w http.ResponseWriter, r *http.Request, sub string) {
	b, c, ok := cr.readConnectBody(w, r)
	if !ok {
		return
	}
	switch connect.KindOf(c.ConnectAuth()) {
	case connect.KindStatic:
	case connect.KindNone:
		envelope.WriteSimple(w, http.StatusConflict, "nothing_to_connect", fmt.Sprintf("Connector %s needs no credential.", c.ID))
		return
	default:
		envelope.WriteSimple(w, http.StatusConflict, "wrong_connect_kind", fmt.Sprintf("Connector %s is not connected with a key; use /connect/start.", c.ID))
		return
	}
	if b.APIKey == "" || len(b.APIKey) > MaxSecret || strings.ContainsAny(b.APIKey, "\r\n") {
		envelope.WriteSimple(w, http.StatusBadRequest, "invalid_secret", "The key must be non-empty, at most 8192 characters, with no line breaks.")
		return
	}
	if cr.records == nil {
		envelope.WriteSimple(w, http.StatusServiceUnavailable, "vault_unavailable", "The gateway has no vault (set ANVIL_VAULT_KEY_FILE).")
		return
	}
	conn := &vault.Connection{Sub: sub, Connector: c.ID, Account: b.Account, Kind: "static", Status: "active", Secret: b.APIKey}
	if err := cr.records.Put(conn); err != nil {
		envelope.WriteSimple(w, http.StatusInternalServerError, "vault_write_failed", "The connection could not be stored.")
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, wirejson.Object("connected", true, "connector", c.ID, "account", b.Account))
}

func (cr *Door) status(w http.ResponseWriter, r *http.Request, sub string) {
	type item struct {
		Connector string `json:"connector"`
		Account   string `json:"account"`
		Kind      string `json:"kind"`
		Status    string `json:"status"`
		ExpiresAt *int64 `json:"expiresAt,omitempty"`
		Scope     string `json:"scope,omitempty"`
		UpdatedAt string `json:"updatedAt"`
	}
	items := []item{}
	if cr.records != nil {
		conns, err := cr.records.List(sub)
		if err != nil {
			envelope.WriteSimple(w, http.StatusInternalServerError, "vault_unreadable", "The vault could not be read.")
			return
		}
		for _, c := range conns {
			items = append(items, item{Connector: c.Connector, Account: c.Account, Kind: c.Kind, Status: c.Status,
				ExpiresAt: c.ExpiresAt, Scope: c.Scope, UpdatedAt: c.UpdatedAt})
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, wirejson.Object("sub", sub, "connections", items))
}
