package air

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// cannot be read, holds no bundle, or holds a bundle whose AIR does not load
// or does not match its generation.json (CheckBundle); it does not check
// the ids (the fleet does, with the tool names).
func LoadWorkspace(root string) ([]WorkspaceBundle, error) {
	return LoadWorkspaceWith(root, Parse)
}

// LoadWorkspaceWith is LoadWorkspace decoding each bundle's air.json with
// decode instead of Parse: the fleet gateway decodes it its own way, and
// still sees the same bundles under the same ids, checked the same way.
func LoadWorkspaceWith(root string, decode func(b []byte) (*Document, error)) ([]WorkspaceBundle, error) {
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
		raw, err := os.ReadFile(filepath.Join(dir, DocumentFile))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				err = fmt.Errorf("%s: %w", dir, ErrNotBundle)
			}
			return nil, fmt.Errorf("loading bundle %s: %w", dir, err)
		}
		g, err := CheckBundle(dir, raw)
		if err != nil {
			return nil, err
		}
		doc, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("loading bundle %s: %w", dir, err)
		}
		out = append(out, WorkspaceBundle{ID: FoldConnectorID(rel), Dir: dir, Doc: doc, BundleHash: g.BundleHash})
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

// ErrBundleMismatch wraps CheckBundle's refusals.
var ErrBundleMismatch = errors.New("the bundle does not match its generation.json")

// maxBundleFile bounds each file CheckBundle reads besides air.json.
const maxBundleFile = 1 << 30

// CheckBundle verifies the bundle in dir against its generation.json: the
// files it lists, air.json among them (doc holds air.json's bytes, already
// read), hash to its bundleHash (HashFiles, the hash anvil compile and
// anvil approve write). It refuses, naming the file, a bundle without
// generation.json, one whose generation.json does not cover air.json or
// names a file outside the bundle, and one whose content was changed after
// it was written: an operation approved by hand in air.json is never
// served. It returns the generation.json it read.
func CheckBundle(dir string, doc []byte) (*Generation, error) {
	genPath := filepath.Join(dir, GenerationFile)
	g, err := LoadGeneration(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is missing; a bundle is served only as anvil compile or anvil approve wrote it", ErrBundleMismatch, genPath)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBundleMismatch, genPath, err)
	}
	if !slices.Contains(g.Files, DocumentFile) {
		return nil, fmt.Errorf("%w: %s does not list %s", ErrBundleMismatch, genPath, DocumentFile)
	}
	files := map[string][]byte{DocumentFile: doc}
	for _, name := range g.Files {
		if name == DocumentFile {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) || name == GenerationFile {
			return nil, fmt.Errorf("%w: %s lists %q, which is not a file of the bundle", ErrBundleMismatch, genPath, name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxBundleFile {
			return nil, fmt.Errorf("%w: %s lists %s, which is missing or not a regular file", ErrBundleMismatch, genPath, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBundleMismatch, err)
		}
		files[name] = b
	}
	if got := HashFiles(files); got != g.BundleHash {
		what := filepath.Join(dir, DocumentFile)
		if len(files) > 1 {
			what = fmt.Sprintf("one of %s's files %v", dir, g.Files)
		}
		return nil, fmt.Errorf("%w: %s was changed after it was written (its content hashes to %s, %s says %s); recompile it, and approve operations with anvil approve, never by editing it",
			ErrBundleMismatch, what, got, genPath, g.BundleHash)
	}
	return g, nil
}
