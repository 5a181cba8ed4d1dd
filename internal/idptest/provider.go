package idptest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
)

// Provider is a running OpenID provider on a loopback port.
type Provider struct {
	issuer string
	op     *op.Provider
	store  *storage
	srv    *http.Server
	served chan struct{} // closed when Serve returns

	closeOnce sync.Once
	closeErr  error
}

// Start starts a provider for the test and stops it when the test ends. It
// fails the test when opts are invalid.
func Start(t testing.TB, opts Options) *Provider {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("idptest: stop provider: %v", err)
		}
	})
	return p
}

// New starts a provider; Close stops it. Start is the form for tests.
func New(opts Options) (*Provider, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("idptest: %w", err)
	}
	opts = opts.withDefaults()
	ln, err := listenLoopback(opts.Addr)
	if err != nil {
		return nil, err
	}
	p, err := newProvider(opts, ln)
	if err != nil {
		ln.Close()
		return nil, err
	}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return p, nil
}

// listenLoopback listens on addr, which must name a loopback host: the
// provider issues real tokens with test passwords and serves no one else.
func listenLoopback(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("idptest: addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("idptest: addr %q is not a loopback IP address (use 127.0.0.1 or [::1])", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("idptest: listen: %w", err)
	}
	return ln, nil
}

func newProvider(opts Options, ln net.Listener) (*Provider, error) {
	issuer := "http://" + ln.Addr().String()
	key, err := newSigningKey(opts.SigningAlg)
	if err != nil {
		return nil, err
	}
	store := newStorage(opts, issuer, issuer+loginPath, key)
	for _, c := range opts.Clients {
		if err := store.putClient(c); err != nil {
			return nil, err
		}
	}
	for _, u := range opts.Users {
		if err := store.putUser(u); err != nil {
			return nil, err
		}
	}
	cfg := &op.Config{
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       slices.Concat(op.DefaultSupportedScopes, opts.Scopes),
		SupportedClaims:       slices.Concat(op.DefaultSupportedClaims, []string{"scope", "groups", "roles"}),
	}
	// The key that seals opaque access tokens and authorization codes.
	_, _ = rand.Read(cfg.CryptoKey[:])
	cfg.CryptoKeyId = randomID(6)
	provider, err := op.NewProvider(cfg, store, op.StaticIssuer(issuer),
		op.WithAllowInsecure(), // an http issuer on loopback
		op.WithHttpInterceptors(formInterceptor),
		op.WithAccessTokenVerifierOpts(op.WithSupportedAccessTokenSigningAlgorithms(verifyAlgs...)),
		op.WithIDTokenHintVerifierOpts(op.WithSupportedIDTokenHintSigningAlgorithms(verifyAlgs...)),
	)
	if err != nil {
		return nil, fmt.Errorf("idptest: %w", err)
	}
	p := &Provider{issuer: issuer, op: provider, store: store, served: make(chan struct{})}
	withIssuer := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux := http.NewServeMux()
	mux.Handle(loginPath, withIssuer.Handler(formInterceptor(p.loginHandler())))
	// RFC 8414 metadata: zitadel's discovery document, which is a superset
	// of it, at the OAuth well-known path too.
	mux.Handle(oidc.AuthorizationServerMetadataEndpoint, withIssuer.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op.Discover(w, op.CreateDiscoveryConfig(r.Context(), provider, store))
	}))
	mux.Handle("/", provider)
	p.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	return p, nil
}

// Close stops the provider, waiting up to 5 seconds for requests in flight.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.srv.Shutdown(ctx); err != nil {
			p.closeErr = errors.Join(err, p.srv.Close())
		}
		<-p.served
	})
	return p.closeErr
}

// Issuer is the provider's issuer URL, http://127.0.0.1:<port> (no
// trailing slash): the iss of its tokens and the base of its metadata.
func (p *Provider) Issuer() string { return p.issuer }

// Endpoint is the provider's authorization and token endpoints, for
// golang.org/x/oauth2.
func (p *Provider) Endpoint() oauth2.Endpoint {
	return oauth2.Endpoint{
		AuthURL:  p.op.AuthorizationEndpoint().Absolute(p.issuer),
		TokenURL: p.op.TokenEndpoint().Absolute(p.issuer),
	}
}

// JWKSURL is the URL of the provider's key set.
func (p *Provider) JWKSURL() string { return p.op.KeysEndpoint().Absolute(p.issuer) }

// IntrospectionURL is the RFC 7662 introspection endpoint.
func (p *Provider) IntrospectionURL() string {
	return p.op.IntrospectionEndpoint().Absolute(p.issuer)
}

// RevocationURL is the RFC 7009 revocation endpoint.
func (p *Provider) RevocationURL() string { return p.op.RevocationEndpoint().Absolute(p.issuer) }

// AddClient registers a client, or replaces the one with its ID.
func (p *Provider) AddClient(c Client) error { return p.store.putClient(c) }

// SetUser registers a user, or replaces the one with its subject (new
// groups, roles or claims show in tokens issued from then on).
func (p *Provider) SetUser(u User) error { return p.store.putUser(u) }

// RotateKey makes a new key of alg ("" keeps the current algorithm) the
// signing key and removes every other key from the JWKS: tokens signed
// before no longer verify against it. It returns the new key's ID.
func (p *Provider) RotateKey(alg string) (string, error) { return p.rotate(alg, false) }

// AddSigningKey makes a new key of alg the signing key and keeps the old
// ones in the JWKS, as a graceful rollover does.
func (p *Provider) AddSigningKey(alg string) (string, error) { return p.rotate(alg, true) }

func (p *Provider) rotate(alg string, keep bool) (string, error) {
	if alg == "" {
		alg = string(p.store.currentAlg())
	}
	k, err := newSigningKey(alg)
	if err != nil {
		return "", err
	}
	p.store.rotate(k, keep)
	return k.id, nil
}

// KeyIDs are the IDs of the keys in the JWKS, the signing key first.
func (p *Provider) KeyIDs() []string { return p.store.keyIDs() }
