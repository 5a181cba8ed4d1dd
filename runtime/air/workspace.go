package air

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrNoBundles is returned by LoadWorkspace for a workspace without bundles.
var ErrNoBundles = errors.New("no bundles found")

// WorkspaceBundle is one bundle of a workspace.
type WorkspaceBundle struct {
	// ID is the connector id: the bundle's path in the workspace, folded
	// (FoldConnectorID).
	ID string
	// Dir is the bundle's directory.
	Dir string
	// Doc is the bundle's AIR.
	Doc *Document
	// BundleHash is generation.json's bundle hash ("" when it is missing).
	BundleHash string
}

// LoadWorkspace reads every bundle under root (Discover), in order, with its
// connector id. It is the one reading of a workspace directory: the fleet
// gateway serves what it returns and the gateway generator compiles it, so
// both see the same bundles under the same ids. It refuses a workspace that
// cannot be read, holds no bundle, or holds a bundle whose AIR does not load;
// it does not check the ids (the fleet does, with the tool names).
func LoadWorkspace(root string) ([]WorkspaceBundle, error) {
	return LoadWorkspaceWith(root, Load)
}

// LoadWorkspaceWith is LoadWorkspace reading each bundle's AIR with load
// (given the bundle directory) instead of Load: the fleet gateway streams
// it, and still sees the same bundles under the same ids.
func LoadWorkspaceWith(root string, load func(dir string) (*Document, error)) ([]WorkspaceBundle, error) {
	dirs, err := Discover(root)
	if err != nil {
		return nil, fmt.Errorf("reading the workspace %s: %w", root, err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoBundles, root)
	}
	out := make([]WorkspaceBundle, 0, len(dirs))
	for _, dir := range dirs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		doc, err := load(dir)
		if err != nil {
			return nil, fmt.Errorf("loading bundle %s: %w", dir, err)
		}
		b := WorkspaceBundle{ID: FoldConnectorID(rel), Dir: dir, Doc: doc}
		if g, err := LoadGeneration(dir); err == nil {
			b.BundleHash = g.BundleHash
		}
		out = append(out, b)
	}
	return out, nil
}

// WireToolName is the name a gateway serves an operation's tool under:
// <connector>__<tool name>.
func WireToolName(connector string, op *Operation) string {
	return connector + "__" + op.MCP.ToolName
}
