// Package frontdoor is the front hall: the one HTTP handler in front of the
// gateway's doors. It matches the request path, guards every route in
// auth mode none (loopback Host and Origin only), sets the body's deadline,
// reads an incoming traceparent (the parent the call's own trace links to,
// tracing.StartCall), verifies the caller with the inbound
// identity and checks the credential's purpose (turn or connect), and
// hands the request to the door that serves the route: the MCP door
// (runtime/door/mcpdoor), the REST door (runtime/door/restdoor) or the
// connect door (runtime/door/connectdoor). It builds nothing: runtime/serve
// builds the doors, the identity and the executor behind them.
package frontdoor

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/anvil-dev/anvil/runtime/door/connectdoor"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
	"github.com/anvil-dev/anvil/runtime/door/restdoor"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/httpkit"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/metrics"
	"github.com/anvil-dev/anvil/runtime/tracing"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// Hall is what the front hall routes to and checks with.
type Hall struct {
	// Identity verifies every caller of /mcp, /call/<tool>, /tools and
	// /connect/* (required).
	Identity identity.Identity
	// LoopbackOnly answers only requests addressed to a loopback host from
	// a loopback page (auth mode none, where every caller is the
	// unrestricted local person).
	LoopbackOnly bool
	// Watch is polled before each caller is verified, so that changes to
	// the files read on every call (the JWKS file, vault records, the audit
	// log's path) made before a request are seen by it; nil: none.
	Watch *fswatch.Watcher
	// Limits are the listener's limits (the body's deadline).
	Limits httpkit.Limits
	// Tracer reads an incoming traceparent, which the call's span links to
	// as its parent (never its trace id: the audit id is the gateway's
	// own); nil: none.
	Tracer *tracing.Tracer
	// Metrics counts refused credentials; nil: nothing.
	Metrics *metrics.Metrics

	// The doors (required).
	MCP     *mcpdoor.Door
	REST    *restdoor.Door
	Connect *connectdoor.Door
	// Health and Ready answer /healthz and /readyz (required); MetricsRoute
	// /metrics (nil: not served on this listener).
	Health, Ready, MetricsRoute http.Handler

	// Resource is the gateway's canonical /mcp URL and
	// AuthorizationServers the issuers of its credentials: the protected
	// resource metadata (/.well-known/oauth-protected-resource).
	Resource             string
	AuthorizationServers []string
	// Metadata, when set, is the protected resource metadata instead
	// (auth mode oidc, whose policy may change it on reload): it is
	// answered at /.well-known/oauth-protected-resource and at the RFC 9728
	// location of Resource (the well-known path followed by Resource's
	// path, /.well-known/oauth-protected-resource/mcp).
	Metadata func() ResourceMetadata
}

// ResourceMetadata is a protected resource metadata document (RFC 9728).
type ResourceMetadata struct {
	// Resource is the resource identifier; left out when OmitResource.
	Resource     string
	OmitResource bool
	// AuthorizationServers are the issuers clients may get tokens from.
	AuthorizationServers []string
	// ScopesSupported are the scopes a client may ask for (left out when
	// empty).
	ScopesSupported []string
}

// document is the metadata's JSON: resource, authorization_servers,
// scopes_supported when any, and bearer_methods_supported (header only).
func (m ResourceMetadata) document() []byte {
	var kv []any
	if !m.OmitResource {
		kv = append(kv, "resource", m.Resource)
	}
	servers := m.AuthorizationServers
	if servers == nil {
		servers = []string{}
	}
	kv = append(kv, "authorization_servers", servers)
	if len(m.ScopesSupported) > 0 {
		kv = append(kv, "scopes_supported", m.ScopesSupported)
	}
	kv = append(kv, "bearer_methods_supported", []string{"header"})
	return wirejson.Object(kv...)
}

// ErrIncomplete is New's error for a Hall without its identity or a door.
var ErrIncomplete = errors.New("frontdoor: the hall needs an identity, the three doors, health and readiness")

// New returns the front hall's handler. Routes match the request path
// exactly, without cleaning or redirects (anvil-reference §e "Routes on one
// listener"): /healthz, /readyz, /.well-known/oauth-protected-resource,
// /mcp, /call/<tool>, /tools, /connect/callback and /connect/<route>
// (and /metrics when served here); anything else is 404
// {"error":{"code":"not_found","message":"No such route."}}.
func New(h Hall) (http.Handler, error) {
	if h.Identity == nil || h.MCP == nil || h.REST == nil || h.Connect == nil || h.Health == nil || h.Ready == nil {
		return nil, ErrIncomplete
	}
	if h.AuthorizationServers == nil {
		h.AuthorizationServers = []string{}
	}
	// Listing and calling tools takes a turn credential, never a connect
	// one; the connect routes take only the person's connect credential.
	turn := func(next func(http.ResponseWriter, *http.Request, *identity.Caller)) http.HandlerFunc {
		return h.require(identity.ForTurn, "turn_token_required", turnRequired, next)
	}
	mcpRoute := turn(h.MCP.Serve)
	callRoute := turn(func(w http.ResponseWriter, r *http.Request, c *identity.Caller) { h.REST.ServeCall(w, r, c.Principal) })
	toolsRoute := turn(func(w http.ResponseWriter, r *http.Request, c *identity.Caller) { h.REST.ServeTools(w, r, c.Principal) })
	connectRoute := h.require(identity.ForConnect, "connect_token_required", connectRequired,
		func(w http.ResponseWriter, r *http.Request, c *identity.Caller) {
			h.Connect.Serve(w, r, c.Principal.Subject())
		})
	limits := h.Limits.WithDefaults()
	metadata := func(w http.ResponseWriter) {
		if h.Metadata != nil {
			httpkit.WriteJSON(w, http.StatusOK, h.Metadata().document())
			return
		}
		httpkit.WriteJSON(w, http.StatusOK, wirejson.Object("resource", h.Resource, "authorization_servers", h.AuthorizationServers))
	}
	// RFC 9728 section 3.1: the metadata of https://gw/mcp is at
	// https://gw/.well-known/oauth-protected-resource/mcp.
	const wellKnown = "/.well-known/oauth-protected-resource"
	suffixed := ""
	if u, err := url.Parse(h.Resource); err == nil && strings.Trim(u.Path, "/") != "" && h.Metadata != nil {
		suffixed = wellKnown + strings.TrimSuffix(u.Path, "/")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.LoopbackOnly && !localRequest(w, r) {
			return
		}
		httpkit.BodyDeadline(w, r, limits.BodyTimeout)
		if h.Tracer != nil {
			r = r.WithContext(h.Tracer.Extract(r.Context(), r.Header))
		}
		switch p := r.URL.Path; {
		case p == "/mcp":
			mcpRoute(w, r)
		case strings.HasPrefix(p, "/call/"):
			callRoute(w, r)
		case p == "/tools" || strings.HasPrefix(p, "/tools/"):
			toolsRoute(w, r)
		case p == "/healthz":
			h.Health.ServeHTTP(w, r)
		case p == "/readyz":
			h.Ready.ServeHTTP(w, r)
		case p == "/metrics" && h.MetricsRoute != nil:
			h.MetricsRoute.ServeHTTP(w, r)
		case p == wellKnown || (p == suffixed && suffixed != ""):
			metadata(w)
		case p == "/connect/callback":
			h.Connect.ServeCallback(w, r)
		case strings.HasPrefix(p, "/connect/"):
			connectRoute(w, r)
		default:
			httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
				envelope.WriteSimple(w, http.StatusNotFound, "not_found", "No such route.")
			})
		}
	}), nil
}

// localRequest guards every route in auth mode none, where any request is
// the unrestricted local person: a web page that rebinds its own name to
// 127.0.0.1 reaches the listener, but its requests carry that name as Host
// (and the page's origin as Origin). Only a Host that is a loopback address
// or localhost, and an Origin (when sent) whose host is one too, get through;
// anything else is 403 host_not_allowed or origin_not_allowed, before any
// route reads the body or the vault.
func localRequest(w http.ResponseWriter, r *http.Request) bool {
	if !httpkit.IsLoopbackAddr(strings.ToLower(r.Host)) {
		httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusForbidden, "host_not_allowed",
				"Without inbound auth the gateway answers only requests addressed to a loopback host (localhost, 127.0.0.1, [::1]).")
		})
		return false
	}
	if origins, sent := r.Header["Origin"]; sent {
		for _, o := range origins {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !httpkit.IsLoopbackAddr(strings.ToLower(u.Host)) {
				httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) {
					envelope.WriteSimple(w, http.StatusForbidden, "origin_not_allowed",
						"Without inbound auth the gateway answers only pages served from a loopback host.")
				})
				return false
			}
		}
	}
	return true
}

// authenticate verifies the caller of r, answering a refusal itself.
func (h *Hall) authenticate(w http.ResponseWriter, r *http.Request) (*identity.Caller, bool) {
	// Changes to the JWKS file and the vault made before this request are
	// seen by it.
	if h.Watch != nil {
		h.Watch.Poll()
	}
	c, refused := h.Identity.Authenticate(r.Context(), r)
	if refused != nil || c == nil {
		if refused == nil {
			refused = &identity.Refusal{Code: "invalid_token", Message: "Token is invalid."}
		}
		code := refused.Code
		if code == "" {
			code = "invalid_token"
		}
		h.Metrics.TokenError(code)
		httpkit.RefuseRequest(w, r, refused.Write)
		return nil, false
	}
	return c, true
}

// Refusals of a verified credential issued for another purpose.
const (
	turnRequired    = "This route takes a turn token; a connect token can neither list nor call tools."
	connectRequired = "The connect routes take only the person's connect token (by_purpose: connect), never a turn token."
)

// require serves a route for callers whose credential was issued for
// purpose p (the local person's is for every purpose); any other verified
// caller is refused 403 code with msg.
func (h *Hall) require(p identity.Purpose, code, msg string, next func(http.ResponseWriter, *http.Request, *identity.Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := h.authenticate(w, r)
		if !ok {
			return
		}
		if !c.May(p) {
			httpkit.RefuseRequest(w, r, func(w http.ResponseWriter) { envelope.WriteSimple(w, http.StatusForbidden, code, msg) })
			return
		}
		next(w, r, c)
	}
}
