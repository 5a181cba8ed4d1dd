package compiler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/compose"
	"github.com/anvil-dev/anvil/compiler/emit/index"
	"github.com/anvil-dev/anvil/runtime/air"
)

// LoadConnector loads the compiled bundle in dir as the connector the
// fleet gateway serves it as: explicitID when set (it must match
// air.ValidConnectorID), else its path in workspace folded, else its
// directory's name folded (air.FoldConnectorID).
func LoadConnector(dir, workspace, explicitID string) (emit.Connector, error) {
	doc, hash, err := loadBundle(dir)
	if err != nil {
		return emit.Connector{}, err
	}
	id, err := connectorID(dir, workspace, explicitID)
	if err != nil {
		return emit.Connector{}, err
	}
	return emit.Connector{ID: id, Doc: doc, BundleHash: hash, Dir: dir}, nil
}

// loadBundle loads a compiled bundle and its hash ("" without a readable
// generation.json).
func loadBundle(dir string) (*air.Document, string, error) {
	doc, err := air.Load(dir)
	if err != nil {
		return nil, "", fmt.Errorf("%s is not a compiled bundle (no readable %s): %v", dir, air.DocumentFile, err)
	}
	hash := ""
	if g, err := air.LoadGeneration(dir); err == nil {
		hash = g.BundleHash
	}
	return doc, hash, nil
}

// connectorID is LoadConnector's naming.
func connectorID(bundle, workspace, explicit string) (string, error) {
	if explicit != "" {
		if !air.ValidConnectorID.MatchString(explicit) {
			return "", fmt.Errorf("--connector %q must match ^[A-Za-z0-9_-]{1,64}$", explicit)
		}
		return explicit, nil
	}
	if workspace == "" {
		abs, err := filepath.Abs(bundle)
		if err != nil {
			return "", err
		}
		return air.FoldConnectorID(filepath.Base(abs)), nil
	}
	rel, err := bundleInWorkspace(bundle, workspace)
	if err != nil {
		return "", err
	}
	return air.FoldConnectorID(rel), nil
}

// bundleInWorkspace returns the bundle's path relative to the workspace, or
// an error when it lies outside it.
func bundleInWorkspace(bundle, workspace string) (string, error) {
	ab, err1 := filepath.Abs(bundle)
	aw, err2 := filepath.Abs(workspace)
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("cannot resolve %s in %s", bundle, workspace)
	}
	ab, aw = evalSymlinks(ab), evalSymlinks(aw)
	rel, err := filepath.Rel(aw, ab)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not a bundle the workspace %s serves", bundle, workspace)
	}
	return rel, nil
}

func evalSymlinks(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// loadConnectors loads every bundle as LoadConnector does, ids folded from
// workspace.
func loadConnectors(bundles []string, workspace string) ([]emit.Connector, error) {
	out := make([]emit.Connector, 0, len(bundles))
	for _, b := range bundles {
		c, err := LoadConnector(b, workspace, "")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ComposeOptions is one `anvil connectors compose`.
type ComposeOptions struct {
	// Bundles are the connectors' bundle directories.
	Bundles []string
	// Workspace, when set, names connectors by their path in it.
	Workspace string
	// Out is the composite's directory; SkillsRoot holds the harness
	// packages ("" is the parent of Out); Layout is compose.Options.Layout.
	Out, SkillsRoot, Layout string
}

// Compose writes the composite of the bundles (compose.Render) to Out
// atomically and returns the connector ids, in order.
func Compose(ctx context.Context, o ComposeOptions) ([]string, error) {
	conns, err := loadConnectors(o.Bundles, o.Workspace)
	if err != nil {
		return nil, err
	}
	root := o.SkillsRoot
	if root == "" {
		root = filepath.Dir(filepath.Clean(o.Out))
	}
	tree, err := compose.Render(conns, compose.Options{Layout: o.Layout, OutDir: o.Out, SkillsRoot: root})
	if err != nil {
		return nil, err
	}
	if err := writeTree(ctx, tree, o.Out); err != nil {
		return nil, err
	}
	ids := make([]string, len(conns))
	for i, c := range conns {
		ids[i] = c.ID
	}
	return ids, nil
}

// Grant is one entry of a turn's grant as INDEX.md reads it.
type Grant = index.Grant

// IndexOptions is one `anvil connectors index`.
type IndexOptions struct {
	// Bundles and Workspace are as in ComposeOptions.
	Bundles   []string
	Workspace string
	// Grants are the turn's grant entries, in grant order.
	Grants []Grant
	// Out is the INDEX.md to write; SkillsRoot holds the packages ("" is
	// the directory of Out).
	Out, SkillsRoot string
}

// IndexResult is what Index wrote.
type IndexResult struct {
	// Granted is the number of connectors the grants name.
	Granted int
	// Composite is set when INDEX.md points at the composite: more than
	// one connector is granted and <SkillsRoot>/_compose exists.
	Composite bool
}

// Index writes INDEX.md (index.Render) for the connectors the grants name.
func Index(ctx context.Context, o IndexOptions) (*IndexResult, error) {
	root := o.SkillsRoot
	if root == "" {
		root = filepath.Dir(o.Out)
	}
	conns, err := loadConnectors(o.Bundles, o.Workspace)
	if err != nil {
		return nil, err
	}
	res := &IndexResult{Granted: len(index.Granted(conns, o.Grants))}
	if res.Granted > 1 {
		if st, err := os.Stat(filepath.Join(root, index.CompositeDir)); err == nil && st.IsDir() {
			res.Composite = true
		}
	}
	tree, err := index.Render(conns, index.Options{Grants: o.Grants, SkillsRoot: root, Out: o.Out, Composite: res.Composite})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := tree.WriteFiles(filepath.Dir(o.Out)); err != nil {
		return nil, &StepError{Step: StepWrite, Path: o.Out, Err: err}
	}
	return res, nil
}
