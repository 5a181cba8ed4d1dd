// Package manifest decodes anvil.yaml strictly: every key is known (an unknown
// key is an error at its line and column with the nearest valid key
// suggested), every value has the right type, and positions are kept so the
// compiler can point at what it reports.
package manifest

import (
	"encoding/json"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Manifest is a decoded anvil.yaml.
type Manifest struct {
	File         string
	Version      string
	Service      *Service
	Auth         *Auth
	PathGrammar  string            // resource_grammar | rpc_plain | rpc_dotted | adapter_lowered
	Operations   []*OperationEntry // in the order written
	Workflows    []*Workflow
	Capabilities []*Capability
	// QueryTemplates are kept as JSON; Anvil does not interpret them yet.
	QueryTemplates json.RawMessage
	// PathGrammarPos is the position of the path_grammar value.
	PathGrammarPos diag.Pos
}

// Service is the service block.
type Service struct {
	Name        string
	DisplayName string
	// Description replaces the spec's info.description in AIR (and so in
	// SKILL.md, INDEX.md and every other output that shows the service).
	Description string
	Owner       string
	Environment string
	Pos         diag.Pos
}

// Auth is an auth block (top level or per operation).
type Auth struct {
	Type              air.AuthType // an air.Auth* type (air.AuthOAuth2 accepted as legacy)
	CredentialProfile string
	Principal         string
	Issuer            string
	Audience          string
	Carrier           *Carrier
	SecretSource      string
	Tenant            string
	Actor             string
	Subject           string
	TLS               *TLS
	Provider          *Provider
	Scopes            []string
	Pos               diag.Pos
	// TypePos is the position of the type value.
	TypePos diag.Pos
}

// Carrier is where a credential travels.
type Carrier struct {
	In     air.Location
	Name   string
	Scheme string
}

// TLS names client certificate material.
type TLS struct {
	ClientCertRef string
	ClientKeyRef  string
	CARef         string
}

// Provider holds OAuth provider settings.
type Provider struct {
	TokenEndpoint         string
	Grant                 air.OAuthGrant
	ClientAuth            air.ClientAuthMethod
	Resource              string
	SubjectTokenType      string
	RequestedTokenType    string
	APIKey                string
	AuthorizationEndpoint string
	PKCE                  *bool
	RedirectURI           string
}

// OperationEntry is one key under operations:. The key may be an
// operationId, a canonical name or an AIR id.
type OperationEntry struct {
	Key    string
	KeyPos diag.Pos
	Op     *Operation
}

// Operation is the manifest's settings for one operation. A nil pointer or
// empty string means "not set".
type Operation struct {
	SideEffect     air.EffectKind
	Risk           air.Risk
	Reversible     *bool
	DisplayName    string
	Description    string
	IntentExamples []string
	Action         string
	Name           *Name
	Idempotency    *Idempotency
	Confirmation   *Confirmation
	Retries        *Retries
	Auth           *Auth
	Pagination     *Pagination
	QueryPolicy    json.RawMessage
	QuerySchema    json.RawMessage
	AsyncContract  json.RawMessage
	Stream         *Stream
	State          air.OperationState
	StatePos       diag.Pos
	ReviewedBy     string
	ReviewReason   string
	Effect         *Effect
	// Needs overrides, per identifier input, the operations lowering
	// infers produce it (nil: not set).
	Needs []*Need
	Pos   diag.Pos
	// Positions of single values, for diagnostics about them.
	SideEffectPos diag.Pos
	RiskPos       diag.Pos
	ReversiblePos diag.Pos
	ActionPos     diag.Pos
}

// Need names the producers of one identifier input (needs: in the
// manifest): operations, by operationId, canonical name or AIR id, whose
// answers yield the input's value. An empty From says no operation does.
type Need struct {
	Argument string
	From     []string
	FromPos  []diag.Pos
	Pos      diag.Pos
}

// Name re-homes the routing names.
type Name struct {
	Resource string
	Verb     string
	Pos      diag.Pos
}

// Idempotency strategies.
const (
	StrategyNatural            = "natural"
	StrategyRequiredRequestKey = "required_request_key"
	StrategyKeySupported       = "key_supported"
	StrategyClientID           = "client_id"
	StrategyNone               = "none"
)

// Idempotency is the idempotency block.
type Idempotency struct {
	Strategy    string
	KeyLocation air.KeyMechanism // header, query, body, path (never none)
	Header      string
	Parameter   string
	Field       string
	Pos         diag.Pos
	// StrategyPos is the position of the strategy value.
	StrategyPos diag.Pos
}

// Confirmation is the confirmation block.
type Confirmation struct {
	Required      *bool
	Risk          air.Risk
	Reason        string
	HumanApproval *bool
	Pos           diag.Pos
}

// Retries is the retries block.
type Retries struct {
	Enabled     *bool
	OnlyOn      []string
	MaxAttempts int // 0: not set; 1..5
	Pos         diag.Pos
}

// Pagination is the pagination block.
type Pagination struct {
	Style           air.PaginationStyle
	CursorParam     string
	NextField       string
	ItemsField      string
	PageSizeParam   string
	MaxPageSize     int
	DefaultPageSize int
}

// Stream bounds a streaming operation.
type Stream struct {
	MaxEvents  int
	MaxSeconds int
}

// Effect is the effect block: what a write does and how to undo it
// (docs/manifest.md, "effect").
type Effect struct {
	Class      air.EffectClass
	ClassPos   diag.Pos
	Inverse    *FollowUp
	Compensate *FollowUp
	Lookup     *Lookup
	Draft      *Draft
	Pos        diag.Pos
}

// FollowUp is inverse: or compensate:.
type FollowUp struct {
	Operation    string
	OperationPos diag.Pos
	Arguments    Arguments
	Deadline     *Deadline
	Pos          diag.Pos
}

// Deadline is {within_ms} or {at}; both or neither is reported by the compiler.
type Deadline struct {
	WithinMs *int64
	At       string
	Pos      diag.Pos
	// AtPos is the position of the at value.
	AtPos diag.Pos
}

// Lookup is lookup:.
type Lookup struct {
	Operation    string
	OperationPos diag.Pos
	By           air.LookupBy
	ByPos        diag.Pos
	Arguments    Arguments
	Pos          diag.Pos
}

// Draft is draft:.
type Draft struct {
	Operation    string
	OperationPos diag.Pos
	Arguments    Arguments
	Handle       string
	HandlePos    diag.Pos
	Promote      *Call
	Discard      *Call
	Pos          diag.Pos
}

// Call is promote: or discard:.
type Call struct {
	Operation    string
	OperationPos diag.Pos
	Arguments    Arguments
	Pos          diag.Pos
}

// Arguments is an argument mapping in the order written.
type Arguments []Argument

// Argument is one mapped argument. Source is a path string or a literal.
type Argument struct {
	Name   string
	Source air.ArgSource
	Pos    diag.Pos // position of the value
	// NamePos is the position of the argument's key.
	NamePos diag.Pos
}

// Workflow is a documented sequence of operation references.
type Workflow struct {
	ID          string
	Description string
	Steps       []string
	Pos         diag.Pos
	// StepPos holds the position of each step, parallel to Steps.
	StepPos []diag.Pos
}

// Capability groups operation references.
type Capability struct {
	ID          string
	Description string
	Operations  []string
	Pos         diag.Pos
	// OperationPos holds the position of each reference, parallel to Operations.
	OperationPos []diag.Pos
}
