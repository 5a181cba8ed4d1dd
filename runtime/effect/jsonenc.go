package effect

import (
	"encoding/json"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// reportValues writes the decoded values a report echoes (arguments, a
// staged handle) by canon.NumberExact: as they came, so that a replayed
// report re-encodes to the same bytes. Anything deeper than maxDepth (or a
// cyclic value built by hand) is written as null, so the report always
// stays well inside encoding/json's nesting limit (10000), which the MCP
// SDK applies when it re-reads MarshalJSON output.
var reportValues = canon.Value{Numbers: canon.NumberExact, MaxDepth: maxDepth}

const maxDepth = canon.DefaultMaxDepth

// appendValue appends the JSON of a decoded JSON value found depth
// containers deep (reportValues).
func appendValue(b []byte, v any, depth int) []byte { return reportValues.AppendAt(b, v, depth) }

// appendRaw appends raw JSON compacted, or null when it is not valid JSON.
func appendRaw(b []byte, raw json.RawMessage) []byte { return reportValues.Append(b, raw) }
