// Package openapi loads and resolves OpenAPI 3.0/3.1 and Swagger 2.0
// descriptions (YAML or JSON, local multi-file references) into a small,
// parser-independent model that the lowering stage reads. It is the only
// package that imports an OpenAPI parser library.
package openapi

import (
	"encoding/json"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Source kinds.
const (
	KindOpenAPI30 = "openapi-3.0"
	KindOpenAPI31 = "openapi-3.1"
	KindSwagger20 = "swagger-2.0"
)

// Spec is a loaded, resolved service description.
type Spec struct {
	Kind        string // one of the Kind constants
	File        string // the entry file as given on the command line
	SourceHash  string // "sha256:<hex>" of the entry file's bytes
	Title       string
	Version     string
	Description string
	Servers     []air.Server
	// SecuritySchemes by name.
	SecuritySchemes map[string]*SecurityScheme
	// Security is the document-level requirement (alternatives, in order).
	Security []SecurityRequirement
	// Operations in document order: paths as written, methods in the order
	// get, put, post, delete, options, head, patch, trace.
	Operations []*Operation
	// Schemas holds every named schema that a "#/$defs/<name>" reference in
	// this spec points at (component schemas and schemas from other files).
	// Recursive schemas refer to themselves through these names.
	Schemas map[string]*air.Schema
	// Diagnostics are non-fatal findings made while loading.
	Diagnostics diag.List
}

// Operation is one method on one path.
type Operation struct {
	Path        string // as written, e.g. /repos/{owner}/{repo}/issues
	Method      string // upper case
	OperationID string
	Summary     string
	Description string
	Tags        []string
	Deprecated  bool
	// Params merges path-level and operation-level parameters (operation
	// wins), in the order written, path-level first.
	Params      []*Param
	RequestBody *RequestBody
	// Responses in status order as written.
	Responses []*Response
	// Security is the operation's own requirement when HasSecurity is set
	// (an empty list then means "no auth"); otherwise the document's applies.
	Security    []SecurityRequirement
	HasSecurity bool
	// Extensions holds x-* keys as JSON.
	Extensions map[string]json.RawMessage
	// Pos is where the operation (its method key) is written.
	Pos diag.Pos
}

// Param is one parameter.
type Param struct {
	Name        string
	In          string // path, query, header, cookie
	Required    bool
	Deprecated  bool
	Description string
	Schema      *air.Schema
	Example     json.RawMessage
	Style       string
	Explode     *bool
}

// RequestBody is the chosen request body media type.
type RequestBody struct {
	Required    bool
	ContentType string // preferring application/json, then +json, form, multipart, other
	Schema      *air.Schema
	Description string
	// Others are the media types not chosen, in the order written; loaded
	// only with Options.AllMediaTypes.
	Others []Media `json:",omitempty"`
}

// Media is one media type of a request body or response, and its schema.
type Media struct {
	ContentType string
	Schema      *air.Schema
}

// Response is one declared response.
type Response struct {
	Status      string // "200", "2XX", "default"
	Description string
	ContentType string
	Schema      *air.Schema
	// Links are the response's OpenAPI 3 links, in the order written.
	Links []*Link `json:",omitempty"`
	// Others are the media types not chosen, in the order written; loaded
	// only with Options.AllMediaTypes.
	Others []Media `json:",omitempty"`
}

// Link is one OpenAPI 3 response link: the operation it leads to and how
// that operation's parameters are filled from this response.
type Link struct {
	Name        string
	OperationID string // operationId, or the operation a local operationRef names
	// Parameters maps a parameter name (optionally "in.name") of the linked
	// operation to a runtime expression ("$response.body#/id") or constant,
	// sorted by parameter name.
	Parameters []LinkParam
}

// LinkParam is one parameter of a Link.
type LinkParam struct {
	Name       string
	Expression string
}

// SecurityScheme is a declared security scheme.
type SecurityScheme struct {
	Name         string
	Type         string // apiKey, http, oauth2, openIdConnect, mutualTLS
	Scheme       string // for http: bearer, basic, ...
	BearerFormat string
	In           string // for apiKey: header, query, cookie
	ParamName    string // for apiKey
	Description  string
	// OAuth2 flows.
	AuthorizationCode *OAuthFlow
	ClientCredentials *OAuthFlow
	Implicit          *OAuthFlow
	Password          *OAuthFlow
	OpenIDConnectURL  string
}

// OAuthFlow is one OAuth2 flow.
type OAuthFlow struct {
	AuthorizationURL string
	TokenURL         string
	RefreshURL       string
	Scopes           []string // sorted
}

// SecurityRequirement is one alternative: every named scheme applies together.
type SecurityRequirement []SchemeUse

// SchemeUse names a scheme and the scopes a requirement asks of it.
type SchemeUse struct {
	Scheme string
	Scopes []string
}
