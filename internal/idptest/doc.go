// Package idptest starts a real OpenID provider for tests: zitadel's
// OpenID Connect and OAuth 2.0 implementation (github.com/zitadel/oidc/v3,
// package op) serving on 127.0.0.1 on a free port, over an in-memory
// storage that holds the clients, users and issued tokens the test sets up.
// Every protocol step, token and signature is zitadel's; this package
// decides only who may do what (the storage), and adds the login page and
// a programmatic browser. It is test infrastructure: internal/archtest
// keeps it, and zitadel, out of everything under cmd/, runtime/, compiler/
// and gen/ except their tests.
//
// # Starting
//
// Start(t, Options{Clients: …, Users: …}) starts a provider and stops it
// when the test ends; New and Close do the same without a testing.TB.
// Issuer() is http://127.0.0.1:<port> (plain http, which zitadel allows
// with its insecure option; no trailing slash). The provider serves:
//
//   - /.well-known/openid-configuration (OpenID discovery) and the same
//     document at /.well-known/oauth-authorization-server (RFC 8414);
//   - /authorize, /oauth/token, /oauth/introspect (RFC 7662), /userinfo,
//     /revoke (RFC 7009), /keys (the JWKS), /end_session; Endpoint(),
//     JWKSURL(), IntrospectionURL() and RevocationURL() return them;
//   - /login, the login page /authorize sends the browser to.
//
// Command cmd/idp runs the same provider as a process from a YAML or JSON
// file of Options (LoadOptions) and prints the issuer as its first line:
// go run ./internal/idptest/cmd/idp -config idp.yaml.
//
// # Clients and users
//
// A Client with a Secret is confidential (client_secret_basic, or
// client_secret_post with AuthMethod); without one it is public: it must
// send a PKCE challenge, and a loopback redirect URI matches on any port
// (RFC 8252), as MCP hosts and CLIs use. PKCE is S256 only. Clients are
// registered up front (Options.Clients) or later with AddClient; there is
// no dynamic client registration (RFC 7591): zitadel does not implement
// it. A User has a Subject (the sub claim), a Username and Password for
// the login page (a random password when empty; Login knows it), a Name
// and Email, Groups and Roles (the groups and roles claims) and further
// Claims (tenant, …). SetUser changes a user for the tokens issued after.
//
// # Logging in without a browser
//
// Login(ctx, authURL, username) plays the user's browser: it opens an
// authorization URL the test (or the client under test) built, logs in on
// the login page, and returns the Redirect to the client's redirect URI
// (Code, State) without following it. An error response there
// (access_denied, invalid_target, …) comes back as an *AuthorizationError
// beside the Redirect; a wrong password is ErrLoginRefused (use
// Browser().Login to give one); Browser().Deny presses Deny. A Browser
// needs only the issuer, so it also drives a cmd/idp process. With the MCP
// Go SDK's auth.AuthorizationCodeHandler, an AuthorizationCodeFetcher is
// a call to Login with args.URL, returning the Redirect's Code and State.
// AuthCode runs a whole code flow with PKCE through golang.org/x/oauth2
// and returns the token, for tests that only need one.
//
// # Tokens
//
// Access tokens are JWTs signed with RS256 (Options.SigningAlg: ES256 or
// EdDSA instead), or, for a client with Opaque set, opaque tokens
// (zitadel seals them; they verify only by introspection). A JWT carries
// iss, sub, aud, exp, iat, nbf, jti, client_id, scope (the granted scopes,
// space-separated), and the user's email, name, groups, roles and custom
// claims. ID tokens carry the profile and email claims the scopes release,
// and the same groups, roles and custom claims. Refresh tokens are issued
// for offline_access, and rotate: a used one stops working; a scope
// parameter at refresh narrows the new access token only. A confidential
// client may also use client_credentials: the token's sub is its own ID.
//
// The aud of an access token is, when the authorization request carried
// RFC 8707 resource parameters, exactly those resources (each must be in
// the client's Resources, or the request fails with invalid_target); a
// resource parameter at the token endpoint narrows aud to resources
// granted at /authorize (a refused one fails there as invalid_grant,
// zitadel's wrapping). zitadel itself parses resource only for token
// exchange, so this package reads it from the request (an HTTP interceptor)
// and applies it in the storage. Without resources, aud is the client's
// Audience, or its ID.
//
// exp is Options.AccessTokenTTL (5 minutes) or the client's
// AccessTokenTTL. A client's Backdate moves iat, nbf and exp into the
// past: with Backdate > AccessTokenTTL it receives tokens that are already
// expired, for attack tests, without sleeping.
//
// Introspection (RFC 7662) answers for JWT and opaque tokens alike to any
// confidential client authenticating with HTTP Basic: active with sub,
// scope, client_id, aud, exp, iat, iss, jti and the user's claims while the
// token is unexpired and unrevoked, else active=false.
//
// RotateKey(alg) makes a new key the signing key and removes every other
// key from the JWKS, so tokens signed before no longer verify;
// AddSigningKey keeps the old keys published (a graceful rollover);
// KeyIDs lists the published ones.
//
// # Token exchange
//
// RFC 8693 token exchange (zitadel's implementation) is open to a
// confidential client with ExchangeAudiences, authenticating with HTTP
// Basic. The subject_token must be a live access token of this provider
// (subject_token_type access_token) whose aud names the client's ID or
// one of its Audience values: a client exchanges only tokens addressed to
// it. The audience parameter is required and becomes the new token's aud;
// it, and any resource parameter, must be among ExchangeAudiences
// (invalid_target otherwise). Requested scopes must be a subset of the
// subject token's (invalid_scope); none requested keeps them. The new
// token has the same sub and user claims, client_id the exchanging client,
// and the client's lifetime. Actor tokens (delegation) and other token
// types are refused.
//
// # Not supported
//
// Dynamic client registration, private_key_jwt client authentication,
// pushed authorization requests, DPoP, the device flow, RFC 9207's iss in
// the authorization response, consent screens and single sign-on sessions
// (every authorization shows the login page, so prompt=none cannot
// succeed), persistence across restarts, and HTTPS. zitadel logs refused
// requests through log/slog's default logger (WARN lines with the error,
// no secrets).
package idptest
