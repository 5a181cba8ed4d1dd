package policy

// The grammar of a policy file: the keys of each block, the keys it
// requires and the values an enumerated key takes. The decoder reads these
// tables, and the schema tests compare schemas/anvil.policy.schema.json
// with them block by block ($defs names the blocks).
var (
	blockKeys = map[string][]string{
		"policy":         {"version", "resource", "issuers", "rules", "upstreams"},
		"resource":       {"audiences", "scopes_supported", "default_scopes", "scope_prefix", "omit_resource"},
		"issuer":         {"issuer", "jwks_uri", "audiences", "algorithms", "authorized_parties", "subject_prefix", "claims", "introspection"},
		"claims":         {"scope", "groups", "roles", "tenant"},
		"introspection":  {"endpoint", "client_id", "client_secret_env", "cache_seconds"},
		"rule":           {"name", "match", "grants", "connect"},
		"match":          {"issuers", "subjects", "groups", "roles", "tenants", "scopes"},
		"grant":          {"connector", "operations", "mode", "account", "confirm"},
		"upstream":       {"token_exchange"},
		"token_exchange": {"issuer", "token_endpoint", "client_id", "client_secret_env", "audience", "resource", "scopes"},
	}
	requiredKeys = map[string][]string{
		"policy":         {"version", "issuers", "rules"},
		"issuer":         {"issuer"},
		"introspection":  {"client_id", "client_secret_env"},
		"rule":           {"name", "match"},
		"grant":          {"connector", "operations", "mode"},
		"upstream":       {"token_exchange"},
		"token_exchange": {"client_id", "client_secret_env", "audience"},
	}
	// enums are the values of enumerated keys (block.key; for a list, its
	// items).
	enums = map[string][]string{
		"issuer.algorithms": {AlgRS256, AlgES256, AlgEdDSA},
		"grant.mode":        {"read", "write"},
		"grant.confirm":     {"allow"},
	}
)

// JWS algorithms an issuer may sign access tokens with.
const (
	AlgRS256 = "RS256"
	AlgES256 = "ES256"
	AlgEdDSA = "EdDSA"
)

// DefaultAlgorithms are the algorithms of an issuer that lists none: EdDSA
// is taken only when listed (Branchyard's tokens are EdDSA, and an OIDC
// gateway refuses them by default).
var DefaultAlgorithms = []string{AlgRS256, AlgES256}

// Version is the only policy file version.
const Version = 1

// Limits of a policy file.
const (
	// MaxFileBytes is the largest policy file read.
	MaxFileBytes = 1 << 20
	// MaxIssuers is the most issuers a policy trusts.
	MaxIssuers = 32
	// MaxRules is the most rules.
	MaxRules = 4096
	// MaxList is the most items in a list of strings.
	MaxList = 1024
	// MaxString is the longest string value, in bytes.
	MaxString = 2048
	// MaxIntrospectionCache is the longest introspection cache, in seconds.
	MaxIntrospectionCache = 300
	// DefaultIntrospectionCache is the introspection cache when unset.
	DefaultIntrospectionCache = 30
)
