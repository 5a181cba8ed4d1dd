// Package lower turns a loaded service description (compiler/openapi.Spec)
// and a decoded manifest (compiler/manifest.Manifest) into an AIR document
// (runtime/air.Document) plus coded diagnostics. Every decision the emitters
// and the gateway rely on (names, tool names, CLI words, input keys, safety
// controls, idempotency, retries, confirmation, effect contracts) is made
// here; emitters only print.
//
// # Service id
//
// The manifest's service.name, else Options.ServiceID (--service), else the
// snake_case of the ASCII spelling of the spec's title ("GitHub Mini" →
// "git_hub_mini", "Überschall API" → "uberschall_api"), cut at a word
// boundary to at most 32 characters, "s_" before a leading digit, and
// "service" when nothing is left. A given id outside ^[A-Za-z0-9_-]{1,64}$
// is an error, lower/invalid_service_id, and is used sanitized (other
// characters become "_").
//
// # Names
//
// Names follow the reference (§b): the resource is the last path segment that
// is not a {param} (format suffixes and OData keys removed; an RPC dotted
// segment such as chat.postMessage gives resource chat and action
// post_message; a bare trailing verb segment such as /field/search or
// /transactions/get names the action and the segment before it the
// resource; a custom method /{name}:cancel names the action). The action
// comes from the method (GET/HEAD get or list, POST create/update/delete,
// PUT replace/upsert, PATCH update/upsert, DELETE delete), overridden by a
// read-intent first word of the operationId (search, find, query, lookup,
// export, download, validate, verify, simulate, preview, estimate, poll),
// then by the path forms above. id = <service>.<snake(resource)>.<action>;
// canonicalName = snake(operationId), else <action>_<singular(resource)>;
// CLI = "<service> <resource as written> <action>"; tool =
// <service>_<canonicalName>. The manifest's name: {resource, verb} re-homes
// the canonical name, CLI and tool (never the id). The path_grammar
// resource_grammar and rpc_plain turn dotted-segment splitting off, and
// rpc_dotted splits every dotted identifier segment; otherwise a dotted
// segment splits only when its last part is camelCase or a known method
// word, so domain-like segments (apiextensions.k8s.io) stay whole.
//
// Ids, canonical names, tool names and collision tokens are ASCII: they are
// derived from the ASCII spelling of the operationId and path, in which
// Latin letters lose their diacritics (é → e, ß → ss) and any other
// character outside ASCII separates words. An operationId with no ASCII
// letter or digit counts as absent (the canonical name comes from the
// path; info weak_operation_name). The CLI command keeps the resource word
// as written.
//
// Collisions are resolved on each kind of name on its own (CLI command,
// tool name, id: a CLI collision changes no tool name or id), and every
// operation sharing a name is qualified by its own identity alone: "_" and
// its literal path segments that are not words of the name, in path order
// (github.variables.list_orgs_actions), then, where that leaves two alike
// or adds nothing, "_" and 4 hex digits of the SHA-256 of its method and
// path (parameter names left out); operations alike even then (the same
// route twice) are numbered. So an operation's names depend only on it and
// on the operations sharing its derived name, never on the rest of the
// spec or its order, and no name passes from one operation to another
// when an operation joins or leaves a group. Each resolution is an info
// naming_collision_resolved. An operation with no operationId, or a
// one-word one, gets the info weak_operation_name (unless the manifest
// renames it).
//
// Options.Pins (anvil.lock's names of approved operations, compiler/lock)
// are applied first: an approved operation keeps its id, canonical name,
// tool name and CLI command while its method, path (parameter names aside)
// and operationId stay, and the others sharing a pinned name are
// qualified around it (info naming_pinned when a pin keeps a name that
// differs from today's derivation; warning naming_pin_ignored for a pin
// that no longer fits the rules). The manifest's name override still
// renames the canonical name, tool and CLI (never the id).
//
// A served name is <connector>__<tool> (air.WireToolName), and clients
// accept at most 64 characters (air.MaxWireName). Lowering keeps
// <service>__<service>_<canonical> within 64, that is the canonical name
// within 61 - 2*len(service) characters (at least 16): a bundle served
// under a connector id no longer than its service id (its directory in the
// workspace named by the service id, as anvil compile writes it) is served
// under exactly <connector>__<tool>; under a longer connector id the
// gateway fits the name (air.FitWireName). A longer canonical name is
// shortened readably, each step only while still too long: a repeated word
// is dropped, then filler words (for, of, the, …), then long words take
// their common abbreviations (organization → org, repository → repo, …);
// if that is not enough the name is cut at a word boundary and ends in "_"
// and 6 hex digits of the SHA-256 of the whole name (info
// naming_shortened). Every step reads the name alone; collisions are then
// resolved again. Ids and CLI commands are not shortened.
//
// # Effect defaults
//
// GET, HEAD, OPTIONS and TRACE are reads with risk none; other methods are
// mutations with risk low, except a delete action (DELETE, or a POST whose
// operationId starts with a delete verb), which has risk destructive and is
// not reversible; other operations are reversible by default. The naming
// action is mapped onto AIR's action enum (upsert → replace for PUT and
// update otherwise; post_message → send; unknown → other). The manifest's
// side_effect reclassifies (resetting risk, reversible and idempotency to the
// new kind's defaults), then risk, reversible and action override; a
// declared effect class sets reversible (true for read and reversible, false
// otherwise) unless the entry sets reversible.
//
// # Idempotency, retries and confirmation
//
// Without a manifest idempotency block: reads, PUT and DELETE are natural;
// other mutations are none, unless the spec declares an
// Idempotency-Key-style header (a header whose name, letters and digits only,
// contains "idempotencykey"), which makes them key_supported through that
// header with keyDerivation request_fingerprint. A strategy maps as the
// reference's table says; key_location names the mechanism and the header,
// parameter or field its key (a keyed strategy without key_location uses the
// spec's Idempotency-Key-style header when there is one). A carrier the spec
// does not declare is added (a header or query parameter, or a body field);
// a path carrier the path lacks is dropped with a review note.
//
// Retries are safe (3 attempts, exponential from 250 ms to 5 s, on timeout,
// connection_reset, dns_failure, 429, 502, 503, 504) when the mode is natural,
// or key_supported or required with a carrier; otherwise none (1 attempt).
// The manifest's retries block then applies (enabled false: none; enabled,
// only_on or max_attempts: safe with basis manifest; max_attempts ≤ 5).
//
// Confirmation is required for a mutation whose risk is financial,
// destructive or high, that is not reversible, or whose idempotency mode is
// none; the manifest's confirmation block overrides (human_approval: true
// forces required); Options.HumanApproval "all" forces every mutation and
// "unsafe" every mutation the classification flags, both with humanApproval.
//
// # Structured output
//
// A JSON success response with a schema gets Output.StructuredSchema, the
// tool's MCP outputSchema (outschema.go): the schema of structuredContent
// (the answer when it is an object, else {"result": answer}), inlined
// without $refs, loosened to type, properties, additionalProperties,
// items, prefixItems, anyOf and allOf (no required, enum, format, bounds;
// oneOf becomes anyOf), nested at most 6 deep and within
// MaxStructuredSchemaBytes (8 KiB) of compact JSON, the depth lowered until
// it fits. docs/mcp.md states the rule the gateway applies with it.
//
// # Inputs
//
// Parameters keep their order (header Accept, Content-Type and Authorization,
// and the auth scheme's own api-key parameter, are not inputs); a {name} of
// the path template that no path parameter declares follows them as a
// required string path input, so the URL can always be built. An input key
// is the wire name when it matches ^[A-Za-z_][A-Za-z0-9_]*$, else its
// snake_case; a key already taken gets the location as a prefix
// (header_x_trace). A JSON object body with properties is projected as
// fields in name order (a key taken by a parameter becomes body_<key>); any
// other body is projected whole under the key "body" (a parameter with that
// key moves aside). The idempotency carrier is re-keyed idempotency_key
// (anvil_idempotency_key when a business input has that key). The published
// Input.Schema is an object of every input, required keys sorted,
// additionalProperties false, plus the controls: confirm (anvil_confirm when
// a business input is named confirm) as a required {"type":"boolean",
// "const":true} when confirmation is required, and anvil_dry_run. Its $defs
// hold exactly the named schemas reachable from it; Document.Schemas holds
// every named schema reachable from any operation's input, body or output.
//
// # Input schema budget
//
// A published input schema, $defs included, takes at most
// DefaultInputSchemaBudget (256 KiB) of compact JSON, so that descriptions
// whose entities reach hundreds of others (Microsoft Graph) do not publish
// megabytes per operation. A schema that fits is left as it is (every
// operation of the GitHub, Stripe, Kubernetes and Jira descriptions does).
// Otherwise the named schemas are taken breadth-first from the schema's own
// references, each level in name order, and each is kept whole when the
// total still fits with it; every name that the schema or a kept definition
// refers to but that is not kept gets a permissive stand-in in $defs under
// its name: {"description":"Schema omitted: …","type":…}, with the JSON
// types the left-out schema declares (none when it declares none), so no
// $ref dangles and a string stays a string. The operation's own schema and
// every kept definition are unchanged, Document.Schemas still holds the
// whole schemas, and effect checks read the whole schemas. Each bounded
// operation gets one warning, spec/schema_truncated (CodeSchemaTruncated),
// at the operation.
//
// # Effect contracts
//
// The manifest's effect block becomes air.Effect with operation references
// (operationId, canonical name before or after the name override, or AIR id)
// rewritten to AIR ids and argument mappings in the manifest's order. Every
// effect/* check of the reference (§c) runs against the other operations'
// state before any effect check changed it; mappings are checked against the
// target's published input schema (its safety controls, including
// anvil_dry_run, may not be mapped), request paths against the source's
// input schema, response paths against the source's output schema (the
// draft's for promote and discard; no response schema is unverified), with
// $refs followed through the named schemas. An error downgrades the
// operation: class irreversible (read for a read), reversible false, no
// follow-ups, a review note "Effect contract rejected (n error(s)); served as
// <class> with no undo until it is fixed: <code>: <message>; …", and for a
// mutation confirmation required with the confirm control published.
// Diagnostics point at the manifest value they concern.
//
// # Auth
//
// The service's auth comes from the spec's security (the first non-empty
// alternative, its first scheme; more is info auth/alternatives_unmodeled):
// http bearer → bearer, http basic → basic, another http scheme →
// custom_header, apiKey → api_key with its carrier, oauth2 →
// oauth2_authorization_code (authorizationCode or implicit flow) or
// oauth2_client_credentials (clientCredentials or password flow; several
// flows: info auth/service_oauth2_ambiguous), openIdConnect →
// oauth2_authorization_code with no issuer, mutualTLS → mtls. The
// manifest's auth block overlays it (kept when the type matches, else
// replaced; legacy oauth2 means oauth2_authorization_code when an
// authorization endpoint is known, else oauth2_client_credentials). An
// operation gets its own auth when its security or its manifest auth makes
// it differ from the service's.
//
// # Determinism
//
// Operations keep the spec's order, maps are only read in sorted order, and
// diagnostics are sorted by position, code and message.
package lower
