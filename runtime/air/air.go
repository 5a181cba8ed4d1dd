// Package air defines the Anvil Intermediate Representation (AIR): the typed,
// versioned document that the compiler writes into a bundle and that every
// other part of Anvil (gateways, harness packages, the composite) reads.
//
// AIR is plain data. Its JSON form is canonical: struct fields are emitted in
// declaration order, Go maps with sorted keys, and ordered mappings (effect
// argument mappings) in the order the manifest wrote them, so identical inputs
// give identical bytes.
package air

import "encoding/json"

// SchemaVersion is the versioned schema string every AIR document carries.
// v2 stores each named schema once per document (Document.Schemas) and
// operations refer to it, where v1 repeated in every operation's input
// schema the named schemas it reaches (docs/ARCHITECTURE.md, "AIR").
const SchemaVersion = "anvil.air/v2"

// AnvilVersion is the toolchain version recorded in AIR documents.
const AnvilVersion = "0.1.0"

// Document is one compiled service.
type Document struct {
	Schema       string       `json:"schema"`
	AnvilVersion string       `json:"anvilVersion"`
	Service      Service      `json:"service"`
	Operations   []Operation  `json:"operations"`
	Capabilities []Capability `json:"capabilities"`
	Workflows    []Workflow   `json:"workflows"`
	// Schemas holds every named schema reachable from any operation's
	// input, body or output, once: operations refer to them as
	// "#/$defs/<name>".
	Schemas map[string]*Schema `json:"schemas"`
	// SchemaStandIns holds, once, the permissive stand-in of each named
	// schema that some operation's input schema replaces to stay within
	// the input schema budget (Input.StandIns).
	SchemaStandIns map[string]*Schema `json:"schemaStandIns,omitempty"`
	// Parameters holds, in a stored document, each parameter that several
	// operations declare alike, once; those operations refer to it
	// (Param.Ref). A loaded document's operations hold their parameters
	// whole (Link).
	Parameters map[string]*Param `json:"parameters,omitempty"`
	// StructuredSchemas holds, in a stored document, each structured output
	// schema that several operations share, once, under a name derived from
	// its content; those operations refer to it (Output.StructuredRef). A
	// loaded document's operations hold their schemas (Link).
	StructuredSchemas map[string]*Schema `json:"structuredSchemas,omitempty"`
	Diagnostics       []Diagnostic       `json:"diagnostics"`
}

// Service describes the upstream API a document compiles.
type Service struct {
	ID          string   `json:"id"`
	Version     string   `json:"version"`
	DisplayName string   `json:"displayName,omitempty"`
	Description string   `json:"description,omitempty"`
	Owner       string   `json:"owner,omitempty"`
	Environment string   `json:"environment,omitempty"`
	Source      Source   `json:"source"`
	Auth        Auth     `json:"auth"`
	Servers     []Server `json:"servers"`
}

// Source records where the service description came from.
type Source struct {
	Kind       string `json:"kind"` // openapi-3.0, openapi-3.1, swagger-2.0
	URI        string `json:"uri,omitempty"`
	SourceHash string `json:"sourceHash,omitempty"` // sha256:<hex> of the entry document bytes
	Entrypoint string `json:"entrypoint,omitempty"`
}

// Server is one upstream base URL.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Auth types accepted in AIR.
const (
	AuthNone                    = "none"
	AuthAPIKey                  = "api_key"
	AuthBasic                   = "basic"
	AuthBearer                  = "bearer" // static bearer token (OpenAPI http bearer)
	AuthOAuth2ClientCredentials = "oauth2_client_credentials"
	AuthOAuth2AuthorizationCode = "oauth2_authorization_code"
	AuthOAuth2OnBehalfOf        = "oauth2_on_behalf_of"
	AuthJWTBearer               = "jwt_bearer"
	AuthMTLS                    = "mtls"
	AuthCustomHeader            = "custom_header"
	AuthWorkloadIdentity        = "workload_identity"
)

// Auth is a declared way to authenticate upstream calls.
type Auth struct {
	Type              string    `json:"type"`
	Scheme            string    `json:"scheme,omitempty"` // security scheme name in the source
	CredentialProfile string    `json:"credentialProfile,omitempty"`
	Principal         string    `json:"principal,omitempty"`
	Issuer            string    `json:"issuer,omitempty"`
	Audience          string    `json:"audience,omitempty"`
	Carrier           *Carrier  `json:"carrier,omitempty"`
	Provider          *Provider `json:"provider,omitempty"`
	Scopes            []string  `json:"scopes,omitempty"`
}

// Carrier says where a credential travels on the upstream request.
type Carrier struct {
	In     string `json:"in"` // header, query, cookie
	Name   string `json:"name"`
	Scheme string `json:"scheme,omitempty"` // e.g. Bearer, Basic; empty: the raw value
}

// Provider holds OAuth provider endpoints and client settings.
type Provider struct {
	AuthorizationEndpoint string `json:"authorizationEndpoint,omitempty"`
	TokenEndpoint         string `json:"tokenEndpoint,omitempty"`
	Grant                 string `json:"grant,omitempty"`
	ClientAuth            string `json:"clientAuth,omitempty"` // client_secret_basic, client_secret_post, private_key_jwt
	Resource              string `json:"resource,omitempty"`
	PKCE                  *bool  `json:"pkce,omitempty"`
	RedirectURI           string `json:"redirectUri,omitempty"`
}

// Operation states. Only approved operations are served.
const (
	StateGenerated      = "generated"
	StateReviewRequired = "review_required"
	StateApproved       = "approved"
	StateDeprecated     = "deprecated"
	StateBlocked        = "blocked"
)

// Operation kinds.
const (
	KindRead     = "read"
	KindMutation = "mutation"
)

// Effect classes: what a call does to the world (docs/manifest.md, "effect").
const (
	ClassRead         = "read"
	ClassReversible   = "reversible"
	ClassCompensable  = "compensable"
	ClassIrreversible = "irreversible"
)

// Operation is one callable upstream operation.
type Operation struct {
	ID            string       `json:"id"`
	CanonicalName string       `json:"canonicalName"`
	DisplayName   string       `json:"displayName"`
	Description   string       `json:"description"`
	Tags          []string     `json:"tags"`
	SourceRef     SourceRef    `json:"sourceRef"`
	Effect        Effect       `json:"effect"`
	Input         Input        `json:"input"`
	Output        Output       `json:"output"`
	Errors        []ErrorCase  `json:"errors"`
	Idempotency   Idempotency  `json:"idempotency"`
	Retries       Retries      `json:"retries"`
	Confirmation  Confirmation `json:"confirmation"`
	Auth          *Auth        `json:"auth,omitempty"`
	Pagination    *Pagination  `json:"pagination,omitempty"`
	Archetype     string       `json:"archetype,omitempty"` // e.g. webhook_receiver
	Deprecated    bool         `json:"deprecated"`
	CLI           CLI          `json:"cli"`
	MCP           MCP          `json:"mcp"`
	Skill         Skill        `json:"skill"`
	// Needs records, per identifier input, the operations whose answers
	// produce its value (lowering decides them; discovery, SKILL.md and the
	// composite read them). Empty when no input needs another call first.
	Needs       []Need   `json:"needs,omitempty"`
	State       string   `json:"state"`
	ReviewNotes []string `json:"reviewNotes"`
}

// SourceRef points back at the operation in the source description.
type SourceRef struct {
	Kind        string `json:"kind"` // openapi
	Path        string `json:"path"`
	Method      string `json:"method"` // upper case
	OperationID string `json:"operationId,omitempty"`
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Column      int    `json:"column,omitempty"`
}

// Effect is what an operation does to the world and, when declared, how to undo it.
type Effect struct {
	Kind       string    `json:"kind"` // read | mutation
	Action     string    `json:"action"`
	Resource   string    `json:"resource,omitempty"`
	Risk       string    `json:"risk"`
	Reversible bool      `json:"reversible"`
	Class      string    `json:"class,omitempty"` // declared class; empty: the default (EffectClassOf)
	Inverse    *FollowUp `json:"inverse,omitempty"`
	Compensate *FollowUp `json:"compensate,omitempty"`
	Lookup     *Lookup   `json:"lookup,omitempty"`
	Draft      *Draft    `json:"draft,omitempty"`
}

// FollowUp is a call that undoes or compensates an effect.
type FollowUp struct {
	Operation string    `json:"operation"` // AIR id
	Arguments Mapping   `json:"arguments"`
	Deadline  *Deadline `json:"deadline,omitempty"`
}

// Deadline bounds how long a follow-up keeps working.
type Deadline struct {
	WithinMs *int64 `json:"withinMs,omitempty"`
	At       string `json:"at,omitempty"` // response.<path>
}

// Lookup finds the effect of a call for reconciliation.
type Lookup struct {
	Operation string  `json:"operation"`
	By        string  `json:"by"` // idempotency_key | id
	Arguments Mapping `json:"arguments"`
}

// Draft is the staged form of an irreversible operation.
type Draft struct {
	Operation string  `json:"operation"`
	Arguments Mapping `json:"arguments"`
	Handle    string  `json:"handle"` // response.<path>
	Promote   Call    `json:"promote"`
	Discard   *Call   `json:"discard,omitempty"`
}

// Call is a follow-up operation with its argument mapping.
type Call struct {
	Operation string  `json:"operation"`
	Arguments Mapping `json:"arguments"`
}

// Input describes what a caller passes to an operation.
type Input struct {
	Params []Param `json:"params"`
	Body   *Body   `json:"body,omitempty"`
	// Schema is the combined tool input schema (params + body fields). In
	// a loaded document its $defs hold every named schema it reaches,
	// shared with Document.Schemas (Link), so it is self-contained; the
	// bundle's air.json stores it without them (Stored).
	Schema *Schema `json:"schema"`
	// StandIns lists, sorted, the named schemas Schema's $defs replace by
	// their stand-in (Document.SchemaStandIns) to keep the published
	// schema within its budget; a stand-in's references are not followed.
	StandIns []string `json:"standIns,omitempty"`
	// Safety names the tool's control inputs (confirm, idempotency key, dry
	// run) as published in Schema.
	Safety Safety `json:"safety"`
	// Sensitive lists, sorted, the inputs (Schema's top-level properties)
	// whose values the audit hash replaces by "***" (canon.SensitiveKey):
	// lowering decides it once, and generated hashers write the redaction
	// instead of testing names when a gateway starts.
	Sensitive []string `json:"sensitive,omitempty"`
}

// Param is a path, query, header or cookie parameter.
type Param struct {
	Name        string          `json:"name"` // the wire name
	Key         string          `json:"key"`  // the input key callers use
	In          string          `json:"in"`   // path | query | header | cookie
	Required    bool            `json:"required"`
	Schema      *Schema         `json:"schema"`
	Description string          `json:"description,omitempty"`
	Example     json.RawMessage `json:"example,omitempty"`
	// Style and Explode are how the value is serialised, as lowering
	// decided (read them through Wire).
	Style   ParamStyle `json:"style,omitempty"`
	Explode *bool      `json:"explode,omitempty"`
	// Ref, in a stored document only, names the shared parameter
	// (Document.Parameters) this one is; the other fields are then empty.
	Ref string `json:"ref,omitempty"`
	// SDKName, when set, is the name the SDKs and the CLI give this input
	// instead of its key, because the key would shadow one of their
	// controls (a query parameter named dry_run is dry_run_field, so
	// dry_run=True still asks for a plan). Lowering decides it; the tool
	// input key is Key either way.
	SDKName string `json:"sdkName,omitempty"`
}

// Body projections.
const (
	ProjectionFields = "fields" // each top-level body property is its own input
	ProjectionWhole  = "whole"  // the whole body is one input named "body"
)

// Body describes the request body.
type Body struct {
	Required    bool        `json:"required"`
	ContentType string      `json:"contentType"` // the media type the description declares
	Projection  string      `json:"projection"`
	Fields      []BodyField `json:"fields"`
	Schema      *Schema     `json:"schema"`
	// Encoding is how the body is written and SendContentType the
	// Content-Type sent with it, as lowering decided (read them through
	// Wire).
	Encoding        BodyEncoding `json:"encoding,omitempty"`
	SendContentType string       `json:"sendContentType,omitempty"`
}

// BodyField is one top-level body property projected as an input.
type BodyField struct {
	Name     string `json:"name"` // the wire name in the body
	Key      string `json:"key"`  // the input key callers use
	Required bool   `json:"required"`
	// SDKName is the SDKs' and the CLI's name for the field when its key
	// would shadow one of their controls (see Param.SDKName).
	SDKName string `json:"sdkName,omitempty"`
}

// Output describes a successful response.
type Output struct {
	Status      int     `json:"status,omitempty"`
	ContentType string  `json:"contentType,omitempty"`
	Schema      *Schema `json:"schema,omitempty"`
	Description string  `json:"description,omitempty"`
	// StructuredSchema is the tool's MCP outputSchema: what the
	// structuredContent of a successful call conforms to (the answer when
	// it is an object, else {"result": <answer>}). Lowering derives it from
	// a JSON success response (compiler/lower, outschema.go): an object
	// schema, self-contained (no $ref), bounded, and made only of type,
	// properties, additionalProperties, items, prefixItems, anyOf and
	// allOf, with no "required", so leaving out the members of an answer
	// that do not conform always makes it conform (docs/mcp.md). Nil when
	// the success response is not JSON or declares no schema; optional, so
	// a document without it is read as before.
	StructuredSchema *Schema `json:"structuredSchema,omitempty"`
	// StructuredRef, in a stored document, names the shared structured
	// schema (Document.StructuredSchemas) this operation's is; empty once
	// loaded.
	StructuredRef string `json:"structuredRef,omitempty"`
}

// ErrorCase is a declared non-success response.
type ErrorCase struct {
	Status      string `json:"status"` // "404", "4XX", "default"
	Description string `json:"description,omitempty"`
}

// Idempotency modes, mechanisms and key derivations.
const (
	IdemNatural      = "natural"
	IdemKeySupported = "key_supported"
	IdemClientID     = "client_id"
	IdemRequired     = "required"
	IdemNone         = "none"
)

// Idempotency says how repeating a call behaves and how a key travels.
type Idempotency struct {
	Mode          string `json:"mode"`
	Mechanism     string `json:"mechanism"` // header | query | body | path | none
	Key           string `json:"key,omitempty"`
	KeyDerivation string `json:"keyDerivation"` // request_fingerprint | client_supplied | none
}

// HasCarrier reports whether the operation sends an idempotency key upstream.
func (i Idempotency) HasCarrier() bool {
	return i.Mechanism != "" && i.Mechanism != "none" && i.Key != ""
}

// Retries is the retry policy of an operation.
type Retries struct {
	Mode        string   `json:"mode"` // safe | none
	Basis       string   `json:"basis"`
	MaxAttempts int      `json:"maxAttempts"`
	Backoff     string   `json:"backoff"`
	BaseDelayMs int      `json:"baseDelayMs"`
	MaxDelayMs  int      `json:"maxDelayMs"`
	RetryOn     []string `json:"retryOn"`
}

// Confirmation says whether a caller must confirm a call.
type Confirmation struct {
	Required      bool   `json:"required"`
	Risk          string `json:"risk,omitempty"`
	Reason        string `json:"reason,omitempty"`
	HumanApproval bool   `json:"humanApproval,omitempty"`
}

// Pagination describes how an operation pages.
type Pagination struct {
	Style           string `json:"style"` // cursor | page | offset | link
	CursorParam     string `json:"cursorParam,omitempty"`
	NextField       string `json:"nextField,omitempty"`
	ItemsField      string `json:"itemsField,omitempty"`
	PageSizeParam   string `json:"pageSizeParam,omitempty"`
	MaxPageSize     int    `json:"maxPageSize,omitempty"`
	DefaultPageSize int    `json:"defaultPageSize,omitempty"`
}

// CLI holds the command words of an operation.
type CLI struct {
	Command string   `json:"command"` // "<service> <resource> <action>"
	Aliases []string `json:"aliases"`
}

// MCP holds the MCP tool name of an operation.
type MCP struct {
	ToolName string `json:"toolName"`
}

// Input keys with a meaning of their own, shared by lowering (which names
// inputs) and every back end (which reads them).
const (
	// DryRunKey is the reserved tool argument that asks for a dry run.
	DryRunKey = "anvil_dry_run"
	// ProjectionKey is the reserved tool argument that asks for a
	// projection of the answer.
	ProjectionKey = "anvil_projection"
	// WholeBodyKey is the usual input of a body whose projection is
	// "whole" (its BodyField's Key names it when lowering had to move it).
	WholeBodyKey = "body"
	// IdempotencyInputKey is the usual input that carries an idempotency
	// key (Safety.IdempotencyKey names the one an operation uses).
	IdempotencyInputKey = "idempotency_key"
)

// IsControlInput reports whether an input key is a reserved control input
// (DryRunKey, ProjectionKey): it steers the gateway and is never sent
// upstream, even when an operation declares an input under that key.
func IsControlInput(key string) bool { return key == DryRunKey || key == ProjectionKey }

// InputKey is the input key callers use for the parameter: Key, or the
// wire name in a document that records none.
func (p *Param) InputKey() string {
	if p.Key != "" {
		return p.Key
	}
	return p.Name
}

// InputKey is the input key callers use for the body field: Key, or the
// wire name in a document that records none.
func (f *BodyField) InputKey() string {
	if f.Key != "" {
		return f.Key
	}
	return f.Name
}

// Safety names the control inputs of an operation's tool.
type Safety struct {
	// ConfirmKey is the input that confirms the call ("confirm", or
	// "anvil_confirm" when a business input is already named confirm). Set
	// only when the operation requires confirmation.
	ConfirmKey string `json:"confirmKey,omitempty"`
	// IdempotencyKey is the input that carries the idempotency key upstream
	// ("idempotency_key" unless a business input already takes that name).
	// Set only when the operation declares a carrier.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// DryRun is the input that asks for a dry run: always DryRunKey.
	DryRun string `json:"dryRun"`
}

// Skill holds agent-facing hints.
type Skill struct {
	IntentExamples []string `json:"intentExamples"`
}

// Need is one identifier input of an operation and the operations that
// produce its value: a caller that knows a name, not the id, calls one of
// them first.
type Need struct {
	// Argument is the input key (Param.InputKey or BodyField.InputKey).
	Argument string `json:"argument"`
	// From lists the producers, best first.
	From []Producer `json:"from"`
}

// Producer bases: how lowering decided a producer link.
const (
	// ProducerManifest: the manifest's needs: names it.
	ProducerManifest = "manifest"
	// ProducerLink: an OpenAPI response link of the producer names the
	// input's operation and parameter.
	ProducerLink = "link"
	// ProducerField: the producer's response has a field of the input's
	// name (owner_id → owner_id), or an id field of the input's resource.
	ProducerField = "field"
)

// Producer is one operation whose answer yields a Need's value.
type Producer struct {
	// Operation is the producer's AIR id.
	Operation string `json:"operation"`
	// Field is where the value is in the producer's answer, as a path of
	// property names with [] for array items ("results[].id"); empty when
	// only a link declares it.
	Field string `json:"field,omitempty"`
	// Basis is how the link was decided (ProducerManifest, ProducerLink,
	// ProducerField).
	Basis string `json:"basis"`
}

// Capability groups operations under a user-facing purpose.
type Capability struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Operations  []string `json:"operations"`
}

// Workflow is a documented sequence of operations.
type Workflow struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Steps       []string `json:"steps"`
}

// Diagnostic levels.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelInfo    = "info"
)
