package idptest

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage implements zitadel's op.Storage (and its optional client
// credentials, token exchange and request-based claims interfaces) in
// memory. It decides who may do what and remembers what was issued; every
// protocol step, token and signature is zitadel's.
type storage struct {
	opts     Options // with defaults
	issuer   string
	loginURL string

	mu       sync.Mutex
	clients  map[string]*opClient
	users    map[string]*User  // by subject
	logins   map[string]string // login name → subject
	requests map[string]*authRequest
	codes    map[string]string // authorization code → auth request ID
	access   map[string]*accessRecord
	refresh  map[string]*refreshRecord
	signing  *signingKey   // signs new tokens
	keys     []*signingKey // published in the JWKS, signing key first
}

var (
	_ op.Storage                        = (*storage)(nil)
	_ op.ClientCredentialsStorage       = (*storage)(nil)
	_ op.TokenExchangeStorage           = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest      = (*storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)
)

// Bounds: how long an authorization request may wait for its login and
// code exchange, and how many records the store holds before it refuses to
// issue more (it first drops the expired ones). A test never comes near;
// a long-running cmd/idp does not grow without end.
const (
	authRequestTTL = 10 * time.Minute
	maxRecords     = 100_000
)

var errNotFound = errors.New("idptest: not found")

func newStorage(opts Options, issuer, loginURL string, key *signingKey) *storage {
	return &storage{
		opts:     opts,
		issuer:   issuer,
		loginURL: loginURL,
		clients:  map[string]*opClient{},
		users:    map[string]*User{},
		logins:   map[string]string{},
		requests: map[string]*authRequest{},
		codes:    map[string]string{},
		access:   map[string]*accessRecord{},
		refresh:  map[string]*refreshRecord{},
		signing:  key,
		keys:     []*signingKey{key},
	}
}

// putClient registers c, replacing a client of the same ID.
func (s *storage) putClient(c Client) error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("idptest: client %q: %w", c.ID, err)
	}
	ttl := c.AccessTokenTTL
	if ttl == 0 {
		ttl = s.opts.AccessTokenTTL
	}
	oc := &opClient{Client: cloneClient(c), loginURL: s.loginURL, accessTTL: ttl, idTTL: s.opts.IDTokenTTL}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = oc
	return nil
}

// putUser registers u, replacing the user of the same subject.
func (s *storage) putUser(u User) error {
	if err := u.validate(); err != nil {
		return fmt.Errorf("idptest: user %q: %w", u.Subject, err)
	}
	u = cloneUser(u)
	if u.Password == "" {
		u.Password = randomID(12)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub, ok := s.logins[u.loginName()]; ok && sub != u.Subject {
		return fmt.Errorf("idptest: username %q belongs to subject %q", u.loginName(), sub)
	}
	if old, ok := s.users[u.Subject]; ok {
		delete(s.logins, old.loginName())
	}
	s.users[u.Subject] = &u
	s.logins[u.loginName()] = u.Subject
	return nil
}

func (s *storage) client(id string) (*opClient, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	return c, ok
}

func (s *storage) password(username string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[s.logins[username]]
	if !ok {
		return "", false
	}
	return u.Password, true
}

// rotate makes k the signing key; the old keys stay in the JWKS only when
// keep is set.
func (s *storage) rotate(k *signingKey, keep bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if keep {
		s.keys = append([]*signingKey{k}, s.keys...)
	} else {
		s.keys = []*signingKey{k}
	}
	s.signing = k
}

func (s *storage) currentAlg() jose.SignatureAlgorithm {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signing.alg
}

func (s *storage) keyIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.keys))
	for i, k := range s.keys {
		ids[i] = k.id
	}
	return ids
}

// login marks the authorization request id as done by the user whose
// login name and password these are.
func (s *storage) login(id, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.liveRequest(id)
	if !ok {
		return errUnknownRequest
	}
	if ar.done {
		return errors.New("idptest: this login request is already complete")
	}
	u, ok := s.users[s.logins[username]]
	// Compare even for an unknown user, so timing does not tell which
	// usernames exist.
	want := "\x00no such user"
	if ok {
		want = u.Password
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(password)) != 1 || !ok {
		return errBadCredentials
	}
	ar.subject, ar.authTime, ar.done = u.Subject, time.Now(), true
	return nil
}

var (
	errUnknownRequest = errors.New("idptest: unknown or expired login request")
	errBadCredentials = errors.New("invalid username or password")
)

// requestInfo describes an authorization request for the login page.
func (s *storage) requestInfo(id string) (clientID string, scopes []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.liveRequest(id)
	if !ok {
		return "", nil, errUnknownRequest
	}
	return ar.clientID, slices.Clone(ar.scopes), nil
}

// liveRequest returns the authorization request id unless it has expired
// (it is then dropped). The caller holds s.mu.
func (s *storage) liveRequest(id string) (*authRequest, bool) {
	ar, ok := s.requests[id]
	if !ok {
		return nil, false
	}
	if time.Since(ar.created) > authRequestTTL {
		s.dropRequest(ar)
		return nil, false
	}
	return ar, true
}

func (s *storage) dropRequest(ar *authRequest) {
	delete(s.requests, ar.id)
	if ar.code != "" {
		delete(s.codes, ar.code)
	}
}

// room makes room for one more record, dropping expired ones when the
// store is full. The caller holds s.mu.
func (s *storage) room() error {
	if len(s.requests)+len(s.access)+len(s.refresh) < maxRecords {
		return nil
	}
	now := time.Now()
	for _, ar := range s.requests {
		if now.Sub(ar.created) > authRequestTTL {
			s.dropRequest(ar)
		}
	}
	maps.DeleteFunc(s.access, func(_ string, a *accessRecord) bool { return now.After(a.expires) })
	maps.DeleteFunc(s.refresh, func(_ string, r *refreshRecord) bool { return now.After(r.expires) })
	if len(s.requests)+len(s.access)+len(s.refresh) >= maxRecords {
		return oidc.ErrServerError().WithDescription("idptest: the provider holds too many live requests and tokens")
	}
	return nil
}

// ---- op.AuthStorage ----

func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[req.ClientID]
	if !ok {
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client")
	}
	if req.CodeChallenge == "" && !c.confidential() {
		return nil, oidc.ErrInvalidRequest().WithDescription("a public client must send a PKCE code_challenge")
	}
	if req.CodeChallenge != "" && req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	}
	audience := c.audience()
	var resources []string
	if requested, ok := requestedResources(ctx); ok {
		var err error
		if resources, err = grantResources(requested, c.Resources); err != nil {
			return nil, err
		}
		audience = slices.Clone(resources)
	}
	if err := s.room(); err != nil {
		return nil, err
	}
	ar := &authRequest{
		id:           randomID(16),
		created:      time.Now(),
		clientID:     req.ClientID,
		redirectURI:  req.RedirectURI,
		state:        req.State,
		nonce:        req.Nonce,
		scopes:       slices.Clone([]string(req.Scopes)),
		responseType: req.ResponseType,
		responseMode: req.ResponseMode,
		resources:    resources,
		audience:     audience,
	}
	if req.CodeChallenge != "" {
		ar.challenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}
	}
	s.requests[ar.id] = ar
	return ar.clone(), nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.liveRequest(id)
	if !ok {
		return nil, errUnknownRequest
	}
	return ar.clone(), nil
}

// AuthRequestByCode returns the request behind an authorization code. A
// resource parameter at the token endpoint narrows the token's audience to
// resources granted at /authorize (or, when none were, to resources the
// client may request).
func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.liveRequest(s.codes[code])
	if !ok || !ar.done {
		return nil, errors.New("idptest: unknown, used or expired code")
	}
	out := ar.clone()
	if requested, ok := requestedResources(ctx); ok {
		allowed := ar.resources
		if len(allowed) == 0 {
			allowed = s.clients[ar.clientID].Resources
		}
		res, err := grantResources(requested, allowed)
		if err != nil {
			return nil, err
		}
		out.audience = res
	}
	return out, nil
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.liveRequest(id)
	if !ok {
		return errUnknownRequest
	}
	if ar.code != "" {
		delete(s.codes, ar.code) // one code per request
	}
	ar.code = code
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest is called once the code is exchanged: the code cannot
// be used again.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ar, ok := s.requests[id]; ok {
		s.dropRequest(ar)
	}
	return nil
}

// clientOf returns the client a token request is for.
func clientOf(req op.TokenRequest) string {
	switch r := req.(type) {
	case interface{ GetClientID() string }:
		return r.GetClientID()
	case *oidc.JWTTokenRequest:
		return r.Issuer
	}
	return ""
}

// newAccess records an access token for req. The caller holds s.mu.
func (s *storage) newAccess(req op.TokenRequest) (*accessRecord, error) {
	c, ok := s.clients[clientOf(req)]
	if !ok {
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client")
	}
	if err := s.room(); err != nil {
		return nil, err
	}
	aud := slices.Clone(req.GetAudience())
	if len(aud) == 0 {
		aud = []string{c.ID} // what zitadel puts in the JWT then
	}
	issued := time.Now().Add(-c.Backdate)
	a := &accessRecord{
		id:       randomID(16),
		clientID: c.ID,
		subject:  req.GetSubject(),
		audience: aud,
		scopes:   slices.Clone(req.GetScopes()),
		issued:   issued,
		expires:  issued.Add(c.accessTTL),
	}
	s.access[a.id] = a
	return a, nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.newAccess(req)
	if err != nil {
		return "", time.Time{}, err
	}
	return a.id, a.expires, nil
}

// CreateAccessAndRefreshTokens issues an access token and a refresh token.
// A refresh token presented (current) is rotated: it stops working.
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if current != "" {
		if _, ok := s.refresh[current]; !ok {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token already used or revoked")
		}
		delete(s.refresh, current)
	}
	a, err := s.newAccess(req)
	if err != nil {
		return "", "", time.Time{}, err
	}
	r := &refreshRecord{
		token:    randomID(32),
		clientID: a.clientID,
		subject:  a.subject,
		audience: a.audience,
		scopes:   a.scopes,
		authTime: time.Now(),
		expires:  time.Now().Add(s.opts.RefreshTokenTTL),
		accessID: a.id,
	}
	switch q := req.(type) {
	case *authRequest:
		r.resources, r.authTime, r.amr = slices.Clone(q.resources), q.authTime, q.GetAMR()
		r.audience = slices.Clone(q.audience)
	case *refreshRequest:
		// The rotated token keeps the grant, not what this refresh narrowed.
		r.resources, r.authTime, r.amr = q.rec.resources, q.rec.authTime, q.rec.amr
		r.audience, r.scopes = q.rec.audience, q.rec.scopes
	}
	s.refresh[r.token] = r
	return a.id, r.token, a.expires, nil
}

// TokenRequestByRefreshToken returns the grant behind a refresh token. A
// resource parameter narrows the new access token's audience to resources
// of the grant.
func (s *storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.refresh[token]
	if !ok || time.Now().After(r.expires) {
		return nil, errors.New("idptest: unknown, used or expired refresh token")
	}
	req := &refreshRequest{rec: *r, scopes: slices.Clone(r.scopes), audience: slices.Clone(r.audience)}
	if requested, ok := requestedResources(ctx); ok {
		res, err := grantResources(requested, r.resources)
		if err != nil {
			return nil, err
		}
		req.audience = res
	}
	return req, nil
}

func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.access, func(_ string, a *accessRecord) bool { return a.subject == userID && a.clientID == clientID })
	maps.DeleteFunc(s.refresh, func(_ string, r *refreshRecord) bool { return r.subject == userID && r.clientID == clientID })
	return nil
}

// RevokeToken revokes an access token (by ID) or a refresh token (with the
// access token issued beside it). Only the client the token was issued to
// may revoke it; an unknown token is not an error (RFC 7009 section 2.2).
func (s *storage) RevokeToken(_ context.Context, tokenOrID, _ string, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.access[tokenOrID]; ok {
		if a.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("the token was issued to another client")
		}
		delete(s.access, tokenOrID)
	}
	if r, ok := s.refresh[tokenOrID]; ok {
		if r.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("the token was issued to another client")
		}
		delete(s.refresh, tokenOrID)
		delete(s.access, r.accessID)
	}
	return nil
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, _ string, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.refresh[token]
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	return r.subject, r.token, nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signing, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []jose.SignatureAlgorithm{s.signing.alg}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

// ---- op.OPStorage ----

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, errNotFound
	}
	return c, nil
}

// AuthorizeClientIDSecret authenticates a confidential client; a public
// client has no secret to present and is refused here.
func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok || !c.confidential() || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return errors.New("idptest: invalid client credentials")
	}
	return nil
}

// SetUserinfoFromScopes is deprecated in zitadel, which calls
// SetUserinfoFromRequest instead.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fillUserinfo(info, req.GetSubject(), scopes)
}

// SetUserinfoFromToken answers /userinfo for a live access token.
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.liveAccess(tokenID, subject)
	if err != nil {
		return err
	}
	return s.fillUserinfo(info, a.subject, a.scopes)
}

// SetIntrospectionFromToken answers RFC 7662 introspection for a live
// access token (JWT or opaque); zitadel answers active=false when this
// fails. Any authenticated confidential client may introspect.
func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.liveAccess(tokenID, subject)
	if err != nil {
		return err
	}
	info := new(oidc.UserInfo)
	if err := s.fillUserinfo(info, a.subject, a.scopes); err != nil && !errors.Is(err, errNotFound) {
		return err
	}
	resp.SetUserInfo(info)
	resp.Subject = a.subject
	resp.Scope = slices.Clone(a.scopes)
	resp.ClientID = a.clientID
	resp.TokenType = oidc.BearerToken
	resp.Expiration = oidc.FromTime(a.expires)
	resp.IssuedAt = oidc.FromTime(a.issued)
	resp.NotBefore = oidc.FromTime(a.issued)
	resp.Audience = slices.Clone(a.audience)
	resp.Issuer = s.issuer
	resp.JWTID = a.id
	return nil
}

// liveAccess returns the unexpired, unrevoked access token id of subject.
// The caller holds s.mu.
func (s *storage) liveAccess(id, subject string) (*accessRecord, error) {
	a, ok := s.access[id]
	if !ok || a.subject != subject || !time.Now().Before(a.expires) {
		return nil, errors.New("idptest: access token unknown, revoked or expired")
	}
	return a, nil
}

// fillUserinfo sets the claims of the user subject that scopes release,
// and the groups, roles and custom claims always. A subject that is no
// user (a client_credentials client) gets errNotFound and no claims.
// The caller holds s.mu.
func (s *storage) fillUserinfo(info *oidc.UserInfo, subject string, scopes []string) error {
	info.Subject = subject
	u, ok := s.users[subject]
	if !ok {
		return errNotFound
	}
	if slices.Contains(scopes, oidc.ScopeProfile) {
		info.Name = u.Name
		info.PreferredUsername = u.loginName()
	}
	if slices.Contains(scopes, oidc.ScopeEmail) && u.Email != "" {
		info.Email = u.Email
		info.EmailVerified = true
	}
	for k, v := range u.extraClaims() {
		info.AppendClaims(k, v)
	}
	return nil
}

// extraClaims are the claims beyond OpenID Connect's standard ones that a
// user adds to every token and response: groups, roles and Claims.
func (u *User) extraClaims() map[string]any {
	m := make(map[string]any, len(u.Claims)+2)
	maps.Copy(m, u.Claims)
	if len(u.Groups) > 0 {
		m["groups"] = slices.Clone(u.Groups)
	}
	if len(u.Roles) > 0 {
		m["roles"] = slices.Clone(u.Roles)
	}
	return m
}

func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, userID, _ string, scopes []string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accessClaims(userID, scopes), nil
}

func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accessClaims(req.GetSubject(), req.GetScopes()), nil
}

// accessClaims are the claims a JWT access token carries beyond the
// registered ones zitadel sets: scope (RFC 9068), the user's email and name,
// groups, roles and custom claims. The caller holds s.mu.
func (s *storage) accessClaims(subject string, scopes []string) map[string]any {
	m := map[string]any{}
	if u, ok := s.users[subject]; ok {
		m = u.extraClaims()
		if u.Email != "" {
			m["email"] = u.Email
		}
		if u.Name != "" {
			m["name"] = u.Name
		}
	}
	if len(scopes) > 0 {
		m["scope"] = strings.Join(scopes, " ")
	}
	return m
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("idptest: no client has JWT profile keys")
}

func (s *storage) ValidateJWTProfileScopes(_ context.Context, _ string, scopes []string) ([]string, error) {
	return scopes, nil
}

func (s *storage) Health(context.Context) error { return nil }

// ---- op.ClientCredentialsStorage ----

func (s *storage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := s.AuthorizeClientIDSecret(ctx, id, secret); err != nil {
		return nil, err
	}
	return s.GetClientByClientID(ctx, id)
}

func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, oidc.ErrInvalidClient()
	}
	req := &clientCredentialsRequest{clientID: id, audience: c.audience()}
	for _, sc := range scopes {
		if c.IsScopeAllowed(sc) {
			req.scopes = append(req.scopes, sc)
		}
	}
	if requested, ok := requestedResources(ctx); ok {
		res, err := grantResources(requested, c.Resources)
		if err != nil {
			return nil, err
		}
		req.audience = res
	}
	return req, nil
}

func cloneClient(c Client) Client {
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	c.Scopes = slices.Clone(c.Scopes)
	c.Audience = slices.Clone(c.Audience)
	c.Resources = slices.Clone(c.Resources)
	c.ExchangeAudiences = slices.Clone(c.ExchangeAudiences)
	return c
}

func cloneUser(u User) User {
	u.Groups = slices.Clone(u.Groups)
	u.Roles = slices.Clone(u.Roles)
	u.Claims = maps.Clone(u.Claims)
	return u
}
