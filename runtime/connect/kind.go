package connect

import (
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// Kind is how a person connects a connector, from its declared auth.
type Kind string

// The kinds of connection.
const (
	// KindNone: the connector needs no credential.
	KindNone Kind = "none"
	// KindStatic: an API key or token the person submits (/connect/api-key).
	KindStatic Kind = "static"
	// KindOAuth: an OAuth authorization-code flow (/connect/start).
	KindOAuth Kind = "oauth"
	// KindUnsupported: an auth type the gateway cannot supply (mTLS,
	// workload identity).
	KindUnsupported Kind = "unsupported"
)

// KindOf classifies a connector's auth: what /connect/start offers and
// what the credential of a call is resolved from.
func KindOf(a *air.Auth) Kind {
	switch a.Type {
	case "", air.AuthNone:
		return KindNone
	case air.AuthOAuth2AuthorizationCode, air.AuthOAuth2:
		return KindOAuth
	case air.AuthMTLS, air.AuthWorkloadIdentity:
		return KindUnsupported
	}
	return KindStatic
}

// Records are a person's stored connections as the gateway reads and
// writes them: the vault directory (*vault.Store) for one gateway, or the
// shared state store for replicas. Beyond a Service's Vault they list a
// person's connections (/connect/status).
type Records interface {
	Vault
	List(sub string) ([]vault.Connection, error)
}
