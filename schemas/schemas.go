// Package schemas embeds the JSON Schemas Anvil publishes for files people
// write by hand, so the binary prints exactly the bytes the repository holds.
package schemas

import _ "embed"

// ManifestFile is the repository path of the manifest schema, relative to
// the module root.
const ManifestFile = "schemas/anvil.manifest.schema.json"

// ManifestLocalName is the file name `anvil init` points the editor line
// at, beside the manifest (`anvil schema manifest` writes its content).
const ManifestLocalName = "anvil.manifest.schema.json"

// ManifestID is the schema's $id: an identifier, not a place to fetch it
// from (the .invalid host, as AIR's schema).
const ManifestID = "https://anvil.invalid/schemas/anvil.manifest.schema.json"

// Manifest is the JSON Schema (draft 2020-12) of anvil.yaml. The manifest
// decoder's grammar and this schema are checked against each other by
// compiler/manifest's tests, key by key and enum by enum.
//
//go:embed anvil.manifest.schema.json
var Manifest []byte

// PolicyFile is the repository path of the identity policy schema.
const PolicyFile = "schemas/anvil.policy.schema.json"

// PolicyID is the policy schema's $id.
const PolicyID = "https://anvil.invalid/schemas/anvil.policy.schema.json"

// Policy is the JSON Schema (draft 2020-12) of the identity policy file of
// inbound auth mode oidc (ANVIL_INBOUND_POLICY_FILE). The runtime's policy
// decoder (runtime/policy) and this schema are checked against each other
// by that package's tests, block by block.
//
//go:embed anvil.policy.schema.json
var Policy []byte
