package idptest

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
)

// OAuth2Config is a golang.org/x/oauth2 client configuration for the
// registered client id: its secret, the provider's endpoints, its first
// redirect URI and the scopes given.
func (p *Provider) OAuth2Config(clientID string, scopes ...string) (*oauth2.Config, error) {
	c, ok := p.store.client(clientID)
	if !ok {
		return nil, fmt.Errorf("idptest: no client %q", clientID)
	}
	cfg := &oauth2.Config{
		ClientID:     c.ID,
		ClientSecret: c.Secret,
		Endpoint:     p.Endpoint(),
		Scopes:       scopes,
	}
	switch {
	case !c.confidential():
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams // client_id only
	case c.Client.AuthMethod == authPost:
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	default:
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	if len(c.Client.RedirectURIs) > 0 {
		cfg.RedirectURL = c.Client.RedirectURIs[0]
	}
	return cfg, nil
}

// AuthCodeRequest is one authorization code flow for AuthCode.
type AuthCodeRequest struct {
	ClientID string
	Username string // logs in with the user's password
	Scopes   []string
	// Resources are RFC 8707 resource parameters of the authorization
	// request; the token's aud is then exactly these.
	Resources []string
	// RedirectURI is the redirect URI to use; empty is the client's first.
	RedirectURI string
}

// AuthCode runs a whole authorization code flow with PKCE (S256), as a
// client would with golang.org/x/oauth2: the authorization request, the
// login (Login), the state check and the code exchange. The token's
// Extra("id_token") is the ID token when openid was asked for; its
// RefreshToken is set when offline_access was.
func (p *Provider) AuthCode(ctx context.Context, req AuthCodeRequest) (*oauth2.Token, error) {
	cfg, err := p.OAuth2Config(req.ClientID, req.Scopes...)
	if err != nil {
		return nil, err
	}
	if req.RedirectURI != "" {
		cfg.RedirectURL = req.RedirectURI
	}
	verifier, state := oauth2.GenerateVerifier(), randomID(16)
	authURL, err := url.Parse(cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		return nil, err
	}
	q := authURL.Query()
	for _, r := range req.Resources {
		q.Add("resource", r) // repeated, which oauth2.SetAuthURLParam cannot do
	}
	authURL.RawQuery = q.Encode()
	redirect, err := p.Login(ctx, authURL.String(), req.Username)
	if err != nil {
		return nil, err
	}
	if redirect.State != state {
		return nil, errors.New("idptest: the redirect's state is not the request's")
	}
	return cfg.Exchange(ctx, redirect.Code, oauth2.VerifierOption(verifier))
}
