// Package air defines the Anvil Intermediate Representation (AIR): the typed,
// versioned document that the compiler writes into a bundle and that every
// other part of Anvil (gateways, harness packages, the composite) reads.
//
// AIR is plain data. Its JSON form is canonical: struct fields are emitted in
// declaration order, Go maps with sorted keys, and ordered mappings (effect
// argument mappings) in the order the manifest wrote them, so identical inputs
// give identical bytes.
package air

import (
	"encoding/json"
	"strings"
)

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

// SourceKind is the dialect of a service description (Source.Kind):
// lowering copies the loader's finding, and source snapshots
// (compiler/sources) record it to load the same bytes the same way.
type SourceKind string

// Source kinds.
const (
	SourceOpenAPI30 SourceKind = "openapi-3.0"
	SourceOpenAPI31 SourceKind = "openapi-3.1"
	SourceSwagger20 SourceKind = "swagger-2.0"
)

// Source records where the service description came from.
type Source struct {
	Kind       SourceKind `json:"kind"`
	URI        string     `json:"uri,omitempty"`
	SourceHash string     `json:"sourceHash,omitempty"` // sha256:<hex> of the entry document bytes
	Entrypoint string     `json:"entrypoint,omitempty"`
}

// Server is one upstream base URL.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// AuthType is how upstream calls authenticate (Auth.Type): lowering maps a
// security scheme or the manifest's auth: block onto one; the connect flow
// (runtime/connect.KindOf), the credential resolver and the harness
// emitters read it.
type AuthType string

// Auth types accepted in AIR.
const (
	AuthNone                    AuthType = "none"
	AuthAPIKey                  AuthType = "api_key"
	AuthBasic                   AuthType = "basic"
	AuthBearer                  AuthType = "bearer" // static bearer token (OpenAPI http bearer)
	AuthOAuth2ClientCredentials AuthType = "oauth2_client_credentials"
	AuthOAuth2AuthorizationCode AuthType = "oauth2_authorization_code"
	AuthOAuth2OnBehalfOf        AuthType = "oauth2_on_behalf_of"
	AuthJWTBearer               AuthType = "jwt_bearer"
	AuthMTLS                    AuthType = "mtls"
	AuthCustomHeader            AuthType = "custom_header"
	AuthWorkloadIdentity        AuthType = "workload_identity"
	// AuthOAuth2 is the legacy manifest word: lowering now writes
	// oauth2_authorization_code or oauth2_client_credentials for it, and
	// the runtime reads it, in an older document, as the former.
	AuthOAuth2 AuthType = "oauth2"
)

// Auth is a declared way to authenticate upstream calls.
type Auth struct {
	Type              AuthType  `json:"type"`
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
	In     Location `json:"in"` // InHeader, InQuery or InCookie (never InPath)
	Name   string   `json:"name"`
	Scheme string   `json:"scheme,omitempty"` // e.g. Bearer, Basic; empty: the raw value
}

// OAuthGrant is the OAuth 2.0 grant a provider runs (Provider.Grant):
// lowering takes it from the description's flow or the manifest, and
// blocks an operation whose grant the gateway cannot run (GrantImplicit,
// GrantPassword). A manifest may name another grant; it is kept as
// written.
type OAuthGrant string

// OAuth grants.
const (
	GrantAuthorizationCode OAuthGrant = "authorization_code"
	GrantClientCredentials OAuthGrant = "client_credentials"
	GrantImplicit          OAuthGrant = "implicit"
	GrantPassword          OAuthGrant = "password"
)

// GatewayCannotRun reports whether the gateway cannot run the grant: the
// implicit grant hands tokens to a browser and has no token endpoint, and
// the password grant would make the gateway hold a person's password.
// Lowering blocks the operations that need one; the scaffold and anvil
// init say so.
func (g OAuthGrant) GatewayCannotRun() bool { return g == GrantImplicit || g == GrantPassword }

// ClientAuthMethod is how the gateway authenticates itself to a token
// endpoint (Provider.ClientAuth, RFC 7591's token_endpoint_auth_method):
// runtime/connect reads it; empty means client_secret_basic. The manifest
// writes it; a method other than these is kept as written and treated as
// the default.
type ClientAuthMethod string

// Client authentication methods.
const (
	ClientSecretBasic ClientAuthMethod = "client_secret_basic"
	ClientSecretPost  ClientAuthMethod = "client_secret_post"
	PrivateKeyJWT     ClientAuthMethod = "private_key_jwt"
)

// Provider holds OAuth provider endpoints and client settings.
type Provider struct {
	AuthorizationEndpoint string           `json:"authorizationEndpoint,omitempty"`
	TokenEndpoint         string           `json:"tokenEndpoint,omitempty"`
	Grant                 OAuthGrant       `json:"grant,omitempty"`
	ClientAuth            ClientAuthMethod `json:"clientAuth,omitempty"`
	Resource              string           `json:"resource,omitempty"`
	PKCE                  *bool            `json:"pkce,omitempty"`
	RedirectURI           string           `json:"redirectUri,omitempty"`
}

// OperationState is an operation's review state (Operation.State):
// lowering sets it, anvil approve and the lock move it, and only approved
// operations are served (IsServed).
type OperationState string

// Operation states.
const (
	StateGenerated      OperationState = "generated"
	StateReviewRequired OperationState = "review_required"
	StateApproved       OperationState = "approved"
	StateDeprecated     OperationState = "deprecated"
	StateBlocked        OperationState = "blocked"
)

// EffectKind says whether a call changes the world (Effect.Kind):
// lowering decides it from the method and the manifest; confirmation,
// idempotency, the effect ledger and the harnesses read it.
type EffectKind string

// Operation kinds.
const (
	KindRead     EffectKind = "read"
	KindMutation EffectKind = "mutation"
)

// Risk is how much harm a mistaken call does (Effect.Risk, and
// Confirmation.Risk when a confirmation cites it): lowering decides it
// (compiler/lower, classify.go) or takes the manifest's; confirmation and
// the harnesses read it.
type Risk string

// Risks, from least to most harmful.
const (
	RiskNone        Risk = "none"
	RiskLow         Risk = "low"
	RiskMedium      Risk = "medium"
	RiskHigh        Risk = "high"
	RiskFinancial   Risk = "financial"
	RiskDestructive Risk = "destructive"
)

// EffectClass is what a call does to the world (Effect.Class,
// docs/manifest.md, "effect"): the manifest declares it, EffectClassOf
// gives the default, and the effect ledger and reconciliation read it.
type EffectClass string

// Effect classes.
const (
	ClassRead         EffectClass = "read"
	ClassReversible   EffectClass = "reversible"
	ClassCompensable  EffectClass = "compensable"
	ClassIrreversible EffectClass = "irreversible"
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
	Archetype     string       `json:"archetype,omitempty"` // e.g. ArchetypeWebhookReceiver
	Deprecated    bool         `json:"deprecated"`
	CLI           CLI          `json:"cli"`
	MCP           MCP          `json:"mcp"`
	Skill         Skill        `json:"skill"`
	// Needs records, per identifier input, the operations whose answers
	// produce its value (lowering decides them; discovery, SKILL.md and the
	// composite read them). Empty when no input needs another call first.
	Needs       []Need         `json:"needs,omitempty"`
	State       OperationState `json:"state"`
	ReviewNotes []string       `json:"reviewNotes"`
}

// ArchetypeWebhookReceiver is the archetype (Operation.Archetype, a free
// word) of an operation the upstream calls rather than one a caller
// invokes: it is never served (IsServed).
const ArchetypeWebhookReceiver = "webhook_receiver"

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
	Kind       EffectKind  `json:"kind"`
	Action     string      `json:"action"`
	Resource   string      `json:"resource,omitempty"`
	Risk       Risk        `json:"risk"`
	Reversible bool        `json:"reversible"`
	Class      EffectClass `json:"class,omitempty"` // declared class; empty: the default (EffectClassOf)
	Inverse    *FollowUp   `json:"inverse,omitempty"`
	Compensate *FollowUp   `json:"compensate,omitempty"`
	Lookup     *Lookup     `json:"lookup,omitempty"`
	Draft      *Draft      `json:"draft,omitempty"`
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

// LookupBy is what a lookup finds a call's effect by (Lookup.By): the
// manifest declares it, and reconciliation (runtime/executor) reads it.
type LookupBy string

// Lookup keys.
const (
	LookupByIdempotencyKey LookupBy = "idempotency_key"
	LookupByID             LookupBy = "id"
)

// Lookup finds the effect of a call for reconciliation.
type Lookup struct {
	Operation string   `json:"operation"`
	By        LookupBy `json:"by"`
	Arguments Mapping  `json:"arguments"`
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
	In          Location        `json:"in"`
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

// Projection is how a request body becomes inputs (Body.Projection):
// lowering decides it; request builders, the emitters and Link read it.
type Projection string

// Body projections.
const (
	ProjectionFields Projection = "fields" // each top-level body property is its own input
	ProjectionWhole  Projection = "whole"  // the whole body is one input named "body"
)

// Body describes the request body.
type Body struct {
	Required    bool        `json:"required"`
	ContentType string      `json:"contentType"` // the media type the description declares
	Projection  Projection  `json:"projection"`
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

// IdempotencyMode is how repeating a call behaves (Idempotency.Mode):
// lowering decides it from the method, the description's idempotency
// header and the manifest's strategy; retries, confirmation, the request
// builders and the harnesses read it.
type IdempotencyMode string

// Idempotency modes.
const (
	IdemNatural      IdempotencyMode = "natural"
	IdemKeySupported IdempotencyMode = "key_supported"
	IdemClientID     IdempotencyMode = "client_id"
	IdemRequired     IdempotencyMode = "required"
	IdemNone         IdempotencyMode = "none"
)

// KeyMechanism is where an idempotency key travels upstream
// (Idempotency.Mechanism): lowering decides it; the request builders
// (runtime/upstream, generated gateways) read it.
type KeyMechanism string

// Idempotency key mechanisms.
const (
	MechanismHeader KeyMechanism = "header"
	MechanismQuery  KeyMechanism = "query"
	MechanismBody   KeyMechanism = "body"
	MechanismPath   KeyMechanism = "path"
	MechanismNone   KeyMechanism = "none"
)

// ParamIn is the location of the parameter that carries the key when it
// travels in one (MechanismHeader, MechanismQuery, MechanismPath), else "".
func (m KeyMechanism) ParamIn() Location {
	switch m {
	case MechanismHeader, MechanismQuery, MechanismPath:
		return Location(m)
	}
	return ""
}

// KeyDerivation is where an idempotency key comes from
// (Idempotency.KeyDerivation): lowering decides it; the executor and the
// SDKs read it.
type KeyDerivation string

// Idempotency key derivations.
const (
	// DeriveRequestFingerprint: the gateway derives the key from the
	// request when the caller sends none.
	DeriveRequestFingerprint KeyDerivation = "request_fingerprint"
	// DeriveClientSupplied: the caller must send the key.
	DeriveClientSupplied KeyDerivation = "client_supplied"
	DeriveNone           KeyDerivation = "none"
)

// Idempotency says how repeating a call behaves and how a key travels.
type Idempotency struct {
	Mode          IdempotencyMode `json:"mode"`
	Mechanism     KeyMechanism    `json:"mechanism"`
	Key           string          `json:"key,omitempty"`
	KeyDerivation KeyDerivation   `json:"keyDerivation"`
}

// HasCarrier reports whether the operation sends an idempotency key upstream.
func (i Idempotency) HasCarrier() bool {
	return i.Mechanism != "" && i.Mechanism != MechanismNone && i.Key != ""
}

// KeyRequired reports whether a call without an idempotency key is
// refused (idempotency_required): the mode is required and no key is
// derived from the request. The SDKs and the composite check it before a
// call.
func (i Idempotency) KeyRequired() bool {
	return i.Mode == IdemRequired && i.KeyDerivation != DeriveRequestFingerprint
}

// KeyDerived reports whether the SDKs derive a key from the inputs when a
// caller gives none: the key is not required and is supported or derived
// from the request.
func (i Idempotency) KeyDerived() bool {
	return !i.KeyRequired() && (i.Mode == IdemKeySupported || i.KeyDerivation == DeriveRequestFingerprint)
}

// CarriedByParam reports whether p carries the idempotency key upstream:
// a parameter at the mechanism's location named Key (in any case). The
// harness and composite emitters leave it out of the business inputs.
func (i Idempotency) CarriedByParam(p *Param) bool {
	in := i.Mechanism.ParamIn()
	return i.HasCarrier() && in != "" && p.In == in && strings.EqualFold(p.Name, i.Key)
}

// CarriedByField reports whether the body property name carries the
// idempotency key upstream (MechanismBody, in any case).
func (i Idempotency) CarriedByField(name string) bool {
	return i.HasCarrier() && i.Mechanism == MechanismBody && strings.EqualFold(name, i.Key)
}

// RetryMode says whether a failed call is retried (Retries.Mode): lowering
// decides it from the idempotency and the manifest; runtime/upstream reads
// it.
type RetryMode string

// Retry modes.
const (
	RetrySafe RetryMode = "safe"
	RetryNone RetryMode = "none"
)

// RetryBasis is why lowering decided a retry mode (Retries.Basis); the
// tool listing publishes it.
type RetryBasis string

// Retry bases.
const (
	RetryBasisNatural        RetryBasis = "natural"         // the operation is naturally idempotent
	RetryBasisIdempotencyKey RetryBasis = "idempotency_key" // a key makes repeats safe
	RetryBasisNotIdempotent  RetryBasis = "not_idempotent"  // repeating is not safe: no retries
	RetryBasisManifest       RetryBasis = "manifest"        // the manifest's retries: block decided
)

// Backoff is how the delay between retries grows (Retries.Backoff).
type Backoff string

// Backoffs.
const (
	BackoffExponential Backoff = "exponential"
	BackoffNone        Backoff = "none"
)

// Retries is the retry policy of an operation.
type Retries struct {
	Mode        RetryMode  `json:"mode"`
	Basis       RetryBasis `json:"basis"`
	MaxAttempts int        `json:"maxAttempts"`
	Backoff     Backoff    `json:"backoff"`
	BaseDelayMs int        `json:"baseDelayMs"`
	MaxDelayMs  int        `json:"maxDelayMs"`
	RetryOn     []string   `json:"retryOn"`
}

// Confirmation says whether a caller must confirm a call.
type Confirmation struct {
	Required      bool   `json:"required"`
	Risk          Risk   `json:"risk,omitempty"`
	Reason        string `json:"reason,omitempty"`
	HumanApproval bool   `json:"humanApproval,omitempty"`
}

// PaginationStyle is how an operation pages (Pagination.Style): the
// manifest declares it; the harnesses' pagers read it.
type PaginationStyle string

// Pagination styles.
const (
	PageCursor PaginationStyle = "cursor"
	PagePage   PaginationStyle = "page"
	PageOffset PaginationStyle = "offset"
	PageLink   PaginationStyle = "link"
)

// Pagination describes how an operation pages.
type Pagination struct {
	Style           PaginationStyle `json:"style"`
	CursorParam     string          `json:"cursorParam,omitempty"`
	NextField       string          `json:"nextField,omitempty"`
	ItemsField      string          `json:"itemsField,omitempty"`
	PageSizeParam   string          `json:"pageSizeParam,omitempty"`
	MaxPageSize     int             `json:"maxPageSize,omitempty"`
	DefaultPageSize int             `json:"defaultPageSize,omitempty"`
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

// ProducerBasis is how lowering decided a producer link (Producer.Basis);
// discovery and SKILL.md rank and explain producers by it.
type ProducerBasis string

// Producer bases.
const (
	// ProducerManifest: the manifest's needs: names it.
	ProducerManifest ProducerBasis = "manifest"
	// ProducerLink: an OpenAPI response link of the producer names the
	// input's operation and parameter.
	ProducerLink ProducerBasis = "link"
	// ProducerField: the producer's response has a field of the input's
	// name (owner_id → owner_id), or an id field of the input's resource.
	ProducerField ProducerBasis = "field"
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
	Basis ProducerBasis `json:"basis"`
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

// Level is how serious a diagnostic is (Diagnostic.Level): an error
// fails the compile; compiler/diag sorts and counts by it.
type Level string

// Diagnostic levels.
const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelInfo    Level = "info"
)
