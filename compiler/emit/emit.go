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
	"fmt"

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
