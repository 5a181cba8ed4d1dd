package serve

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/anvil-dev/anvil/runtime/credential"
	"github.com/anvil-dev/anvil/runtime/frontdoor"
	oidcid "github.com/anvil-dev/anvil/runtime/identity/oidc"
	"github.com/anvil-dev/anvil/runtime/policy"
	"github.com/anvil-dev/anvil/runtime/tokenexchange"
)

// oidcMode is what inbound auth mode oidc adds to a gateway: the identity
// (over the policy file) and the token exchanges the policy names, both
// swapped when the policy file changes.
type oidcMode struct {
	file   string
	id     *oidcid.Identity
	getenv func(string) string
	client *http.Client

	// exchanges are the policy's token exchanges by connector id.
	exchanges atomic.Pointer[map[string]*tokenexchange.Exchanger]

	mu sync.Mutex // orders reloads
	// stamp is the policy file's when it was last read, seen its stamp at
	// the previous poll (a change is read once two polls agree, so a file
	// being written is not read half-way).
	stamp, seen string
	failed      atomic.Bool
}

// newOIDC loads the policy file and builds the identity of cfg.
func newOIDC(cfg Config, resource string, client *http.Client) (*oidcMode, error) {
	p, err := policy.Load(cfg.Auth.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("the identity policy cannot be used:\n%w", err)
	}
	id, err := oidcid.New(oidcid.Config{Resource: resource, Policy: p, Leeway: cfg.Auth.Leeway, Getenv: cfg.Getenv, HTTPClient: client})
	if err != nil {
		return nil, err
	}
	stamp := fileStamp(cfg.Auth.PolicyFile)
	m := &oidcMode{file: cfg.Auth.PolicyFile, id: id, getenv: cfg.Getenv, client: client, stamp: stamp, seen: stamp}
	m.exchanges.Store(m.buildExchanges(p))
	return m, nil
}

// buildExchanges makes an Exchanger per upstream of p.
func (m *oidcMode) buildExchanges(p *policy.Policy) *map[string]*tokenexchange.Exchanger {
	out := map[string]*tokenexchange.Exchanger{}
	for _, u := range p.Upstreams {
		tx := u.TokenExchange
		endpoint := func(ctx context.Context) (string, error) {
			if tx.TokenEndpoint != "" {
				return tx.TokenEndpoint, nil
			}
			return m.id.TokenEndpoint(ctx, tx.Issuer)
		}
		out[u.Connector] = tokenexchange.New(tokenexchange.Config{
			Issuer: tx.Issuer, Endpoint: endpoint,
			ClientID: tx.ClientID, ClientSecret: m.getenv(tx.ClientSecretEnv),
			Audience: tx.Audience, Resource: tx.Resource, Scopes: tx.Scopes,
			HTTPClient: m.client,
		})
	}
	return &out
}

// exchange is the credential resolver's token exchange of a connector.
func (m *oidcMode) exchange(connector string) credential.Exchanger {
	if ex := (*m.exchanges.Load())[connector]; ex != nil {
		return ex
	}
	return nil
}

// metadata is the protected resource metadata the policy in force makes.
func (m *oidcMode) metadata() frontdoor.ResourceMetadata {
	p := m.id.Policy()
	servers := make([]string, len(p.Issuers))
	for i, is := range p.Issuers {
		servers[i] = is.Issuer
	}
	return frontdoor.ResourceMetadata{Resource: m.id.Resource(), OmitResource: p.Resource.OmitResource,
		AuthorizationServers: servers, ScopesSupported: p.ScopesSupported()}
}

// reload reads the policy file again and, when it is valid and its
// secrets are set, makes it the policy; otherwise the policy in force
// stays and the error says why. Without force (a poll) it reads only a file
// that changed since it was read and has stayed as it is since the previous
// poll; force (SIGHUP) reads it anyway. changed says whether it was read.
func (m *oidcMode) reload(force bool) (changed bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stamp := fileStamp(m.file)
	if !force && (stamp == m.stamp || stamp != m.seen) {
		m.seen = stamp
		return false, nil
	}
	m.stamp, m.seen = stamp, stamp
	p, err := policy.Load(m.file)
	if err == nil {
		err = m.id.SetPolicy(p)
	}
	if err != nil {
		m.failed.Store(true)
		return true, err
	}
	// The exchanges start again with empty caches: a changed audience or
	// client must not reuse tokens (one exchange per person after a reload).
	m.exchanges.Store(m.buildExchanges(p))
	m.failed.Store(false)
	return true, nil
}

// report is the startup report's lines of the mode.
func (m *oidcMode) report(audience string) []string {
	p := m.id.Policy()
	var issuers []string
	for _, is := range p.Issuers {
		issuers = append(issuers, is.Issuer)
	}
	out := []string{fmt.Sprintf("inbound auth: oidc (resource %s, policy %s: %d issuer(s) %s, %d rule(s))",
		audience, m.file, len(p.Issuers), strings.Join(issuers, ", "), len(p.Rules))}
	for _, u := range p.Upstreams {
		out = append(out, fmt.Sprintf("token exchange: connector %s takes tokens of %s exchanged for audience %s", u.Connector, u.TokenExchange.Issuer, u.TokenExchange.Audience))
	}
	return out
}

// fileStamp is a file's identity, size and modification time ("" when it
// cannot be read).
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d:%d:%s", fi.Size(), fi.ModTime().UnixNano(), fileID(fi))
}

// ReloadPolicy reads the identity policy file of oidc mode again (nothing
// in the other modes): always with force (SIGHUP), else only once it has
// changed and stayed as it is since the previous call (the reload poll).
// A policy that does not decode, or whose secrets are not set, keeps the
// one in force: the reason is logged and /readyz says "reload":"failed"
// until a policy loads.
func (g *Gateway) ReloadPolicy(force bool, why string) {
	if g.oidc == nil {
		return
	}
	changed, err := g.oidc.reload(force)
	switch {
	case err != nil:
		g.logf("anvil: policy reload (%s) failed, still using the policy loaded before:\n%v", why, err)
	case changed:
		p := g.oidc.id.Policy()
		g.logf("anvil: policy reloaded (%s): %d issuer(s), %d rule(s)", why, len(p.Issuers), len(p.Rules))
	}
}
