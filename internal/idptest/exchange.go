package idptest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// RFC 8693 token exchange, as zitadel's op package runs it: zitadel parses
// the request, authenticates the client (HTTP Basic only), verifies the
// subject token (signature, issuer, expiry, or the opaque token's seal) and
// issues the new token; the storage decides whether this exchange is
// allowed, here.

// ValidateTokenExchangeRequest allows an exchange when the client has
// ExchangeAudiences, the subject token is a live access token of this
// provider addressed to the client (its aud names the client's ID or one of
// its Audience values), every requested audience and resource is one of
// the client's ExchangeAudiences, and the scopes asked for are a subset of
// the subject token's (none asked for: the same scopes). The new token's
// aud is the audience parameter, which is therefore required: zitadel does
// not put resource values in aud.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[req.GetClientID()]
	if !ok || len(c.ExchangeAudiences) == 0 {
		return oidc.ErrUnauthorizedClient().WithDescription("this client may not exchange tokens")
	}
	if req.GetExchangeSubjectTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("subject_token_type must be " + string(oidc.AccessTokenType))
	}
	if req.GetExchangeActorTokenIDOrToken() != "" {
		return oidc.ErrInvalidRequest().WithDescription("actor_token (delegation) is not supported")
	}
	switch req.GetRequestedTokenType() {
	case "":
		req.SetRequestedTokenType(oidc.AccessTokenType)
	case oidc.AccessTokenType:
	default:
		return oidc.ErrInvalidRequest().WithDescription("requested_token_type must be " + string(oidc.AccessTokenType))
	}
	subject, ok := s.access[req.GetExchangeSubjectTokenIDOrToken()]
	if !ok || subject.subject != req.GetExchangeSubject() || !time.Now().Before(subject.expires) {
		return oidc.ErrInvalidRequest().WithDescription("subject_token is unknown, revoked or expired")
	}
	if !c.isAudience(subject.audience) {
		return oidc.ErrInvalidRequest().WithDescription("subject_token is not addressed to this client")
	}
	if len(req.GetAudience()) == 0 {
		return oidc.ErrInvalidTarget().WithDescription("audience is required: it becomes the new token's aud")
	}
	for _, a := range slices.Concat(req.GetAudience(), req.GetResourses()) {
		if !slices.Contains(c.ExchangeAudiences, a) {
			return oidc.ErrInvalidTarget().WithDescription("a requested audience or resource is not allowed for this client")
		}
	}
	scopes := req.GetScopes()
	for _, sc := range scopes {
		if !slices.Contains(subject.scopes, sc) {
			return oidc.ErrInvalidScope().WithDescription("a requested scope is not in the subject token")
		}
	}
	if len(scopes) == 0 {
		scopes = slices.Clone(subject.scopes)
	}
	req.SetCurrentScopes(scopes)
	return nil
}

// CreateTokenExchangeRequest keeps nothing: the issued token is recorded by
// CreateAccessToken like any other.
func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accessClaims(req.GetSubject(), req.GetScopes()), nil
}

func (s *storage) SetUserinfoFromTokenExchangeRequest(_ context.Context, info *oidc.UserInfo, req op.TokenExchangeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fillUserinfo(info, req.GetSubject(), req.GetScopes()); err != nil && !errors.Is(err, errNotFound) {
		return err
	}
	return nil
}
