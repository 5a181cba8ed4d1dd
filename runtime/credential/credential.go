// Package credential resolves the upstream credential of a call: the
// person's stored connection for the connector and account, read from the
// connection records (the vault directory, or the shared state store), an
// API key applied as the connector declares it, or an OAuth access token,
// refreshed through runtime/connect when it is about to expire — or, for a
// connector whose upstream trusts the caller's identity provider, a token
// exchanged for the caller's own (RFC 8693, runtime/tokenexchange). runtime/serve
// builds the Resolver and gives it to the executor (executor.Credentials);
// the connect door writes the records it reads.
package credential

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/tokenexchange"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"github.com/anvil-dev/anvil/runtime/vault"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// Resolver implements executor.Credentials from the connection records.
type Resolver struct {
	records connect.Records // nil: no vault, nothing is connected
	// dir is records when they are the vault directory: its records are
	// cached (cache.go); shared records are read on every call.
	dir      *vault.Store
	cache    credCache
	oauth    *connect.Service
	getenv   func(string) string
	exchange func(connector string) Exchanger
}

// Exchanger obtains a caller's upstream token by token exchange
// (*tokenexchange.Exchanger).
type Exchanger interface {
	Token(ctx context.Context, p *identity.Principal) (string, error)
}

// Options are what a Resolver needs beyond the records.
type Options struct {
	// OAuth refreshes OAuth connections (the connect door's service);
	// nil: an OAuth connection cannot be used.
	OAuth *connect.Service
	// Watch reports changes to the vault directory (fswatch); nil: each
	// cached record's file is stat-ed on use.
	Watch *fswatch.Handle
	// Getenv reads ANVIL_CONNECT_<C>_* (the OAuth client of a connector).
	Getenv func(string) string
	// Exchange returns the token exchange of a connector, or nil for one
	// whose calls carry the person's stored connection (nil: none).
	Exchange func(connector string) Exchanger
}

// New returns the resolver reading records (nil: none).
func New(records connect.Records, o *Options) *Resolver {
	if o == nil {
		o = &Options{}
	}
	r := &Resolver{records: records, oauth: o.OAuth, getenv: o.Getenv, exchange: o.Exchange}
	if r.getenv == nil {
		r.getenv = func(string) string { return "" }
	}
	if st, ok := records.(*vault.Store); ok {
		r.dir = st
		r.cache.watch = o.Watch
	}
	return r
}

// Resolve returns a function that authenticates the upstream request of op
// for the caller p (its Sub is the person) and the account, or the refusal:
// auth_required with a connector/… code when nothing usable is stored or
// a token exchange fails, a retryable refusal when the shared store is
// down (nothing is sent), policy_denied when an OAuth token endpoint is
// outside the egress allowlist.
func (r *Resolver) Resolve(ctx context.Context, p *identity.Principal, c *fleet.Connector, op *air.Operation, account string) (func(*http.Request), *envelope.Error) {
	sub := p.Subject()
	a := c.AuthFor(op)
	kind := connect.KindOf(a)
	if kind == connect.KindNone {
		return nil, nil
	}
	refuse := func(code, msg string) *envelope.Error {
		return &envelope.Error{Code: envelope.AuthRequired, Message: msg,
			Details: wirejson.Object("code", code, "connector", c.ID, "account", account)}
	}
	if kind == connect.KindUnsupported {
		return nil, refuse("connector/unsupported_auth", fmt.Sprintf("Connector %s uses %s, which the gateway cannot supply.", c.ID, a.Type))
	}
	if sub == "" {
		return nil, refuse("connector/unresolved", "The call has no principal to resolve a credential for.")
	}
	if r.exchange != nil {
		if ex := r.exchange(c.ID); ex != nil {
			return exchanged(ctx, ex, p, a, c.ID, kind, refuse)
		}
	}
	if r.records == nil {
		return nil, refuse("connector/not_connected", fmt.Sprintf("Connector %s (account %s) is not connected for this person.", c.ID, account))
	}
	var conn *vault.Connection
	var err error
	if r.dir != nil {
		conn, err = r.cache.get(r.dir, sub, c.ID, account)
	} else {
		// Shared records are read on every call: a reconnect on any
		// replica is what the next call uses.
		conn, err = r.records.Get(sub, c.ID, account)
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
		return r.oauthCredential(ctx, c, op, account, conn, refuse)
	}
	return nil, refuse("connector/needs_reconnect", fmt.Sprintf("The stored connection for %s (account %s) is unusable; connect it again.", c.ID, account))
}

// oauthCredential resolves a stored OAuth connection's access token,
// refreshing it when it expires within 60 s (one refresh per connection at a
// time). A grant that lacks a scope the operation needs (an operation
// approved after the person connected) is auth_required
// connector/reconnect_required with the missing scopes, before anything is
// sent: the provider would refuse the call. The provider refusing the
// refresh marks the connection needs_reconnect; a declared token endpoint
// outside the egress allowlist is policy_denied policy/egress_denied, as an
// upstream host outside it is; any other failure is
// connector/refresh_failed.
func (r *Resolver) oauthCredential(ctx context.Context, c *fleet.Connector, op *air.Operation, account string, conn *vault.Connection,
	refuse func(code, msg string) *envelope.Error) (func(*http.Request), *envelope.Error) {
	cfg := connect.ConfigFor(c.ID, c.ConnectAuth(), r.getenv)
	if missing := connect.MissingScopes(conn.Scope, connect.OperationScopes(cfg, c.AuthFor(op))); len(missing) > 0 {
		return nil, &envelope.Error{Code: envelope.AuthRequired,
			Message: fmt.Sprintf("Connector %s (account %s) was connected without the scope(s) %s this operation needs; the person must connect it again (anvil connect) to grant them.",
				c.ID, account, strings.Join(missing, ", ")),
			Details: wirejson.Object("code", "connector/reconnect_required", "connector", c.ID, "account", account, "missing_scopes", missing)}
	}
	if r.oauth == nil {
		return nil, refuse("connector/refresh_failed", fmt.Sprintf("The access of connector %s (account %s) could not be refreshed; try again later.", c.ID, account))
	}
	token, err := r.oauth.AccessToken(ctx, cfg, conn)
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

// exchanged resolves a connector whose calls carry a token exchanged for
// the caller's own: applied as the connector's credential (its carrier, or
// a bearer). The provider refusing the exchange, or a caller without a
// token of its provider, is auth_required connector/token_exchange_refused;
// any other failure connector/token_exchange_failed. Nothing is sent.
func exchanged(ctx context.Context, ex Exchanger, p *identity.Principal, a *air.Auth, connector string, kind connect.Kind,
	refuse func(code, msg string) *envelope.Error) (func(*http.Request), *envelope.Error) {
	token, err := ex.Token(ctx, p)
	switch {
	case errors.Is(err, tokenexchange.ErrRefused), errors.Is(err, tokenexchange.ErrNoSubjectToken):
		return nil, refuse("connector/token_exchange_refused", fmt.Sprintf("The identity provider would not exchange this caller's token for one of connector %s.", connector))
	case err != nil:
		return nil, refuse("connector/token_exchange_failed", fmt.Sprintf("A token for connector %s could not be obtained from the identity provider; try again later.", connector))
	}
	if kind == connect.KindOAuth || a.Type == air.AuthBasic {
		return func(req *http.Request) { upstream.ApplyBearer(req, token) }, nil
	}
	return func(req *http.Request) { upstream.ApplyStatic(req, a, token) }, nil
}
