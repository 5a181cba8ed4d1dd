package frontdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"github.com/anvil-dev/anvil/runtime/vault"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// MaxSecret bounds a submitted API key.
const MaxSecret = 8192

var validAccount = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,128}$`)

// connectRoutes serves /connect/* and resolves credentials from the vault.
type connectRoutes struct {
	g     *Gateway
	oauth oauthRoutes // pending OAuth flows and refreshes (oauth.go)
	creds credCache   // decrypted vault records, validated on each use
}

func newConnectRoutes(g *Gateway) *connectRoutes {
	cr := &connectRoutes{g: g}
	if g.vault != nil {
		cr.creds.watch = g.watch.Dir(g.vault.Dir(), true)
	}
	return cr
}

// connectKind classifies a connector's auth for /connect/start.
func connectKind(a *air.Auth) string {
	switch a.Type {
	case "", air.AuthNone:
		return "none"
	case air.AuthOAuth2AuthorizationCode, "oauth2":
		return "oauth"
	case air.AuthMTLS, air.AuthWorkloadIdentity:
		return "unsupported"
	}
	return "static"
}

// serve handles the bearer-authenticated connect routes for the person sub.
func (cr *connectRoutes) serve(w http.ResponseWriter, r *http.Request, sub string) {
	switch {
	case r.URL.Path == "/connect/start" && r.Method == http.MethodPost:
		cr.start(w, r, sub)
	case r.URL.Path == "/connect/api-key" && r.Method == http.MethodPost:
		cr.apiKey(w, r, sub)
	case r.URL.Path == "/connect/status" && r.Method == http.MethodGet:
		cr.status(w, r, sub)
	default:
		refuseRequest(w, r, func(w http.ResponseWriter) {
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
func (cr *connectRoutes) readConnectBody(w http.ResponseWriter, r *http.Request) (*connectBody, *fleet.Connector, bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRESTBody))
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
	c := cr.g.Fleet().Connector(b.Connector)
	if c == nil {
		envelope.WriteSimple(w, http.StatusNotFound, "unknown_connector",
			fmt.Sprintf("No connector %q is served here (it serves: %s).", b.Connector, strings.Join(cr.g.Fleet().IDs(), ", ")))
		return nil, nil, false
	}
	return &b, c, true
}

func (cr *connectRoutes) start(w http.ResponseWriter, r *http.Request, sub string) {
	b, c, ok := cr.readConnectBody(w, r)
	if !ok {
		return
	}
	switch connectKind(c.ConnectAuth()) {
	case "none":
		envelope.WriteSimple(w, http.StatusConflict, "nothing_to_connect", fmt.Sprintf("Connector %s needs no credential.", c.ID))
	case "unsupported":
		envelope.WriteSimple(w, http.StatusConflict, "unsupported_auth", fmt.Sprintf("Connector %s uses an auth type the gateway cannot connect.", c.ID))
	case "static":
		writeJSON(w, http.StatusOK, wirejson.Object("kind", "static", "connector", c.ID, "submit", "/connect/api-key"))
	case "oauth":
		cr.startOAuth(w, r, sub, c, b.Account)
	}
}

func (cr *connectRoutes) apiKey(w http.ResponseWriter, r *http.Request, sub string) {
	b, c, ok := cr.readConnectBody(w, r)
	if !ok {
		return
	}
	switch connectKind(c.ConnectAuth()) {
	case "static":
	case "none":
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
	if cr.g.records == nil {
		envelope.WriteSimple(w, http.StatusServiceUnavailable, "vault_unavailable", "The gateway has no vault (set ANVIL_VAULT_KEY_FILE).")
		return
	}
	conn := &vault.Connection{Sub: sub, Connector: c.ID, Account: b.Account, Kind: "static", Status: "active", Secret: b.APIKey}
	if err := cr.g.records.Put(conn); err != nil {
		envelope.WriteSimple(w, http.StatusInternalServerError, "vault_write_failed", "The connection could not be stored.")
		return
	}
	writeJSON(w, http.StatusOK, wirejson.Object("connected", true, "connector", c.ID, "account", b.Account))
}

func (cr *connectRoutes) status(w http.ResponseWriter, r *http.Request, sub string) {
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
	if cr.g.records != nil {
		conns, err := cr.g.records.List(sub)
		if err != nil {
			envelope.WriteSimple(w, http.StatusInternalServerError, "vault_unreadable", "The vault could not be read.")
			return
		}
		for _, c := range conns {
			items = append(items, item{Connector: c.Connector, Account: c.Account, Kind: c.Kind, Status: c.Status,
				ExpiresAt: c.ExpiresAt, Scope: c.Scope, UpdatedAt: c.UpdatedAt})
		}
	}
	writeJSON(w, http.StatusOK, wirejson.Object("sub", sub, "connections", items))
}

// Resolve implements Credentials from the vault.
func (cr *connectRoutes) Resolve(ctx context.Context, sub string, c *fleet.Connector, op *air.Operation, account string) (func(*http.Request), *envelope.Error) {
	a := c.AuthFor(op)
	kind := connectKind(a)
	if kind == "none" {
		return nil, nil
	}
	refuse := func(code, msg string) *envelope.Error {
		return &envelope.Error{Code: envelope.AuthRequired, Message: msg,
			Details: wirejson.Object("code", code, "connector", c.ID, "account", account)}
	}
	if kind == "unsupported" {
		return nil, refuse("connector/unsupported_auth", fmt.Sprintf("Connector %s uses %s, which the gateway cannot supply.", c.ID, a.Type))
	}
	if sub == "" {
		return nil, refuse("connector/unresolved", "The call has no principal to resolve a credential for.")
	}
	if cr.g.records == nil {
		return nil, refuse("connector/not_connected", fmt.Sprintf("Connector %s (account %s) is not connected for this person.", c.ID, account))
	}
	var conn *vault.Connection
	var err error
	if cr.g.vault != nil && cr.g.records == vaultRecords(cr.g.vault) {
		conn, err = cr.creds.get(cr.g.vault, sub, c.ID, account)
	} else {
		// Shared records are read on every call: a reconnect on any
		// replica is what the next call uses.
		conn, err = cr.g.records.Get(sub, c.ID, account)
	}
	switch {
	case errors.Is(err, store.ErrUnavailable):
		// The shared store is down: fail closed, nothing is sent.
		return nil, &envelope.Error{Code: envelope.IdempotencyLedgerUnavailable, Retryable: true, SafeToRetry: true,
			Message: "The gateway's state store is unavailable; nothing was sent upstream. Try again shortly.",
			Details: wirejson.Object("code", "store/unavailable", "connector", c.ID, "account", account)}
	case errors.Is(err, vault.ErrNotFound):
		return nil, refuse("connector/not_connected", fmt.Sprintf("Connector %s (account %s) is not connected for this person; the person must connect it first.", c.ID, account))
	case err != nil:
		return nil, refuse("connector/vault_unreadable", fmt.Sprintf("The stored connection for %s (account %s) cannot be read; the person must connect it again.", c.ID, account))
	}
	if conn.Status == "needs_reconnect" {
		return nil, refuse("connector/needs_reconnect", fmt.Sprintf("Connector %s (account %s) needs to be connected again.", c.ID, account))
	}
	switch conn.Kind {
	case "static":
		secret := conn.Secret
		return func(req *http.Request) { upstream.ApplyStatic(req, a, secret) }, nil
	case "oauth":
		return cr.oauthCredential(ctx, sub, c, account, conn, refuse)
	}
	return nil, refuse("connector/needs_reconnect", fmt.Sprintf("The stored connection for %s (account %s) is unusable; connect it again.", c.ID, account))
}

// maxCachedCreds bounds the credential cache; past it the cache starts over.
const maxCachedCreds = 4096

// credCache keeps decrypted vault records so that a granted call does not
// read and decrypt its record every time. An entry is used only while the
// record file is the very file it was read from: every vault write (this
// gateway's /connect routes, an OAuth refresh, another process) renames a
// new file into place, so a changed or removed record is read again at once.
// With a watch on the vault directory an entry stays valid while the
// directory's stamp is the one it was read under (the gateway polls the
// watcher at the start of each request), and is read again after any change
// notification; without a watch, the record file is stat-ed on each use
// (same inode, size and modification time). Entries hold secrets in memory
// only, as a call does anyway.
type credCache struct {
	watch *fswatch.Handle // the vault directory; nil or unwatched: stat every call
	mu    sync.Mutex
	m     map[credKey]credEntry
}

type credKey struct{ sub, connector, account string }

type credEntry struct {
	fi    os.FileInfo
	stamp uint64 // the watch stamp fi was checked under
	conn  vault.Connection
}

// get returns the record for the coordinates as Store.Get does (a copy the
// caller may keep), from the cache when the file is unchanged.
func (cc *credCache) get(st *vault.Store, sub, connector, account string) (*vault.Connection, error) {
	key := credKey{sub, connector, account}
	stamp := cc.watch.Stamp()
	cc.mu.Lock()
	e, cached := cc.m[key]
	cc.mu.Unlock()
	if cached && stamp != 0 && e.stamp == stamp {
		conn := e.conn
		return &conn, nil
	}
	path := filepath.Join(st.Dir(), vault.FileName(sub, connector, account))
	fi, serr := os.Stat(path)
	// Unwatched, an unchanged stat vouches for the record; watched, a new
	// stamp means something in the vault changed, so the record is read again.
	if stamp == 0 && serr == nil && cached && os.SameFile(e.fi, fi) && e.fi.Size() == fi.Size() && e.fi.ModTime().Equal(fi.ModTime()) {
		conn := e.conn
		return &conn, nil
	}
	conn, err := st.Get(sub, connector, account)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	switch {
	case err != nil || serr != nil:
		delete(cc.m, key)
	default:
		if cc.m == nil || len(cc.m) >= maxCachedCreds {
			cc.m = make(map[credKey]credEntry)
		}
		// fi and stamp were taken before the read: if the file changed in
		// between, the next check differs and the record is read again.
		cc.m[key] = credEntry{fi: fi, stamp: stamp, conn: *conn}
	}
	return conn, err
}
