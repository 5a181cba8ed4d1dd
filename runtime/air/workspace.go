package air

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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

// MaxWireName is the longest name a gateway serves a tool under: what
// OpenAI function calling, Claude Desktop and many MCP clients accept
// (^[A-Za-z0-9_-]{1,64}$).
const MaxWireName = 64

// wireHashLen is the number of hex digits a fitted tool name ends in.
const wireHashLen = 6

// WireToolName is the name a gateway serves an operation's tool under:
// <connector>__<tool name>, fitted to MaxWireName (FitWireName).
//
// Lowering keeps <service>__<tool name> within MaxWireName, so a bundle
// served under a connector id no longer than its service id (the bundle at
// <workspace>/<service id>, as anvil compile writes it by default) is
// served under exactly <connector>__<tool name>. Every name a gateway
// serves, lists or rewrites into an effect report goes through this
// function, so the fleet, the generated gateway, the search index and the
// harness SDKs agree.
func WireToolName(connector string, op *Operation) string {
	return FitWireName(connector, op.MCP.ToolName)
}

// FitWireName is connector + "__" + tool when that is at most MaxWireName
// characters. Otherwise the tool part is cut to fit, at a "_" when one is
// in its second half, and ends in "_" and the first wireHashLen hex digits
// of the SHA-256 of the whole tool name, so the name depends only on the
// connector id and the tool name and two tools of one connector stay
// apart. A connector id too long to leave room for the hash (over
// MaxWireName-3-wireHashLen characters) gets the hash alone after "__",
// and the name is then longer than MaxWireName.
func FitWireName(connector, tool string) string {
	name := connector + "__" + tool
	if len(name) <= MaxWireName {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	tail := hex.EncodeToString(sum[:])[:wireHashLen]
	room := MaxWireName - len(connector) - 2 - len(tail) - 1
	if room < 1 {
		return connector + "__" + tail
	}
	head := tool[:room]
	if i := strings.LastIndexByte(head, '_'); i >= len(head)/2 {
		head = head[:i]
	}
	return connector + "__" + strings.TrimRight(head, "_") + "_" + tail
}
