package air

import _ "embed"

// JSONSchema is the JSON Schema (draft 2020-12) of an AIR document's JSON
// form. Tests validate every emitted air.json against it.
//
//go:embed air.schema.json
var JSONSchema []byte
