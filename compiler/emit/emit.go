// Package emit holds what the file emitters share. Every one of them —
// harness (one connector's package), index (INDEX.md) and compose (the
// composite) — has the same shape:
//
//	func Render(<one or more Connector>, Options) (files.Tree, error)
//
// AIR in, an in-memory file tree out. Emitters never write: the caller hands
// the tree to files, which writes it atomically (a whole directory with
// Tree.WriteTo, or files into an existing directory with Tree.WriteFiles).
package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Connector is one compiled bundle as the gateway serves it.
type Connector struct {
	// ID is the connector id the gateway serves the bundle under (tools are
	// called as <ID>__<tool>); it matches air.ValidConnectorID.
	ID string
	// Doc is the bundle's AIR document.
	Doc *air.Document
	// BundleHash is the bundle's hash from generation.json, or "".
	BundleHash string
	// Dir is the bundle directory the document was loaded from, or "" when
	// it was not loaded from disk.
	Dir string
}

// NamedResources bounds the resources a connector's one-line description
// names (SKILL.md's and INDEX.md's alike); the rest are counted.
const NamedResources = 8

// ShortList is at most NamedResources items of l, then "N more" when some
// were left out.
func ShortList(l []string) []string {
	if len(l) <= NamedResources {
		return l
	}
	return append(append([]string(nil), l[:NamedResources]...), fmt.Sprintf("%d more", len(l)-NamedResources))
}

// EffectLabel is how the SDKs and SKILL.md name an effect class
// (docs/manifest.md, "effect").
func EffectLabel(class air.EffectClass) string {
	switch class {
	case air.ClassRead:
		return "read"
	case air.ClassReversible:
		return "write, can be undone"
	case air.ClassCompensable:
		return "write, can be compensated (not undone)"
	}
	return "write, cannot be undone"
}

// ToolName is the operation's tool name in its bundle (the gateway serves
// it as <connector>__<tool>): its MCP tool name, else its canonical name.
func ToolName(op *air.Operation) string {
	if op.MCP.ToolName != "" {
		return op.MCP.ToolName
	}
	return op.CanonicalName
}

// LiteralType is the JSON type of a literal value (an enum member or a
// const): string, boolean, integer, number, array, object or null; "" when
// it is not JSON.
func LiteralType(v json.RawMessage) string {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if d.Decode(&x) != nil {
		return ""
	}
	switch t := x.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(t.String(), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}
