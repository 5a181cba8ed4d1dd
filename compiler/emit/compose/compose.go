// Package compose renders the composite (docs/ARCHITECTURE.md, "The compiler"): one directory beside
// the connector packages that wraps every composed connector's own SDK in
// one client, and runs flows (DAGs of their calls) with plan, validate, dry
// run, run and compensate.
//
// Render returns an in-memory files.Tree:
//
//	SKILL.md                      when to use a flow and the rules for running one
//	compose.json                  the catalog (anvil.compose-catalog/v1)
//	python/anvil_compose/         Composite, Flow, ref, item; python -m anvil_compose
//	typescript/src/               the same API over the connectors' TypeScript SDKs
//	typescript/tsconfig.json
//
// The composite never re-implements a call: every call is the connector
// SDK's own method, so confirmation, idempotency, dry run, gateway mode and
// the branch's grant apply unchanged.
package compose

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
)

// ReservedID is the connector id the composite itself takes in a harness
// home; no connector may be composed under it.
const ReservedID = "_compose"

// Layouts: where the connector SDKs are.
const (
	// LayoutHarness: the packages `anvil package harness` wrote under
	// Options.SkillsRoot (the default).
	LayoutHarness = "harness"
	// LayoutBundle: each bundle's own sdk/ directory, a harness package
	// (`anvil package harness <bundle> --out <bundle>/sdk`).
	LayoutBundle = "bundle"
)

// Refusals Render returns, wrapped with detail. The CLI maps each to exit 1
// with the error's message.
var (
	// ErrReservedID: a connector is named _compose.
	ErrReservedID = errors.New("the connector id _compose is reserved")
	// ErrDuplicateConnector: the same connector id is composed twice.
	ErrDuplicateConnector = errors.New("connector composed twice")
	// ErrNotHarnessPackage: <skills-root>/<connector> (or, with the bundle
	// layout, <bundle>/sdk) holds no harness.json.
	ErrNotHarnessPackage = errors.New("is not a harness package")
	// ErrRefuseReplace: --out holds something that is not a composite.
	ErrRefuseReplace = errors.New("refusing to replace")
	// ErrInvalidConnector: a connector id does not match ^[A-Za-z0-9_-]{1,64}$,
	// or a connector has no AIR document.
	ErrInvalidConnector = errors.New("invalid connector")
	// ErrNoConnectors: nothing to compose.
	ErrNoConnectors = errors.New("no connectors to compose")
	// ErrInvalidOptions: an unknown layout, or no output directory.
	ErrInvalidOptions = errors.New("invalid compose options")
	// ErrTemplate: a template failed to parse or execute (a bug in Anvil).
	ErrTemplate = errors.New("compose: template failed")
)

// Options configures Render.
type Options struct {
	// Layout is LayoutHarness (the default when empty) or LayoutBundle.
	Layout string
	// OutDir is where the composite will be written (the catalog's paths
	// are relative to it). Required.
	OutDir string
	// SkillsRoot holds the harness packages; default the parent of OutDir.
	SkillsRoot string
}

// Render renders the composite of conns; it has the shape of every file
// emitter (package emit). With the harness layout each connector's SDKs are
// its harness package <SkillsRoot>/<ID>; with the bundle layout they are the
// sdk/ of its bundle directory (Connector.Dir; relative paths are taken from
// the working directory). Render reads the file system only to check that
// each harness package exists and that OutDir is empty, absent, or a
// previous composite; it writes nothing.
func Render(conns []emit.Connector, opts Options) (files.Tree, error) {
	layout := opts.Layout
	if layout == "" {
		layout = LayoutHarness
	}
	if layout != LayoutHarness && layout != LayoutBundle {
		return nil, fmt.Errorf("%w: --layout must be harness or bundle, not %q", ErrInvalidOptions, opts.Layout)
	}
	if opts.OutDir == "" {
		return nil, fmt.Errorf("%w: no output directory", ErrInvalidOptions)
	}
	if len(conns) == 0 {
		return nil, ErrNoConnectors
	}
	out, err := filepath.Abs(opts.OutDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	root := opts.SkillsRoot
	if root == "" {
		root = filepath.Dir(out)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}

	seen := map[string]bool{}
	for _, c := range conns {
		switch {
		case c.ID == ReservedID:
			return nil, fmt.Errorf("%w: rename the bundle or pass another id", ErrReservedID)
		case !air.ValidConnectorID.MatchString(c.ID):
			return nil, fmt.Errorf("%w: id %q must match ^[A-Za-z0-9_-]{1,64}$", ErrInvalidConnector, c.ID)
		case c.Doc == nil || c.Doc.Service.ID == "":
			return nil, fmt.Errorf("%w: %s has no AIR document", ErrInvalidConnector, c.ID)
		case seen[c.ID]:
			return nil, fmt.Errorf("%w: %s", ErrDuplicateConnector, c.ID)
		}
		seen[c.ID] = true
	}

	cat := Catalog{Schema: CatalogSchema}
	for _, c := range conns {
		cc, err := catalogConnector(c, layout, root, out)
		if err != nil {
			return nil, err
		}
		cat.Connectors = append(cat.Connectors, cc)
	}
	if err := checkOut(out); err != nil {
		return nil, err
	}
	return renderTree(conns, &cat)
}

// catalogConnector describes one connector, locating its SDKs.
func catalogConnector(c emit.Connector, layout, root, out string) (CatalogConnector, error) {
	svc := c.Doc.Service
	pkg := naming.Snake(svc.ID)
	if pkg == "" {
		pkg = "service"
	}
	client := naming.Pascal(pkg) + "Client"
	title := oneLine(svc.DisplayName)
	if title == "" {
		title = svc.ID
	}
	cc := CatalogConnector{ID: c.ID, Title: title, Service: CatalogService{ID: svc.ID, Version: svc.Version},
		Operations: catalogOps(c.Doc)}

	var pyDir, tsIndex string
	pyPkg := "anvil_" + pkg
	// Both layouts use a harness package: with the harness layout the one
	// under the skills root, with the bundle layout the bundle's own sdk/
	// (the seed's "each bundle's own sdk/"), which `anvil package harness
	// <bundle> --out <bundle>/sdk` writes.
	var abs, missing string
	switch layout {
	case LayoutHarness:
		a, err := filepath.Abs(filepath.Join(root, c.ID))
		if err != nil {
			return cc, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
		}
		abs = a
		missing = fmt.Sprintf("run anvil package harness for connector %s first", c.ID)
	case LayoutBundle:
		if c.Dir == "" {
			return cc, fmt.Errorf("%w: connector %s names no bundle directory", ErrInvalidOptions, c.ID)
		}
		a, err := filepath.Abs(c.Dir)
		if err != nil {
			return cc, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
		}
		abs = filepath.Join(a, "sdk")
		missing = fmt.Sprintf("compose/bundle_sdk_missing: with --layout bundle each bundle carries its SDKs in sdk/; write them with `anvil package harness %s --out %s`, or compose --layout harness",
			c.Dir, filepath.Join(c.Dir, "sdk"))
	}
	hj, err := readHarnessJSON(abs)
	if err != nil {
		return cc, fmt.Errorf("%s %w (no harness.json); %s", abs, ErrNotHarnessPackage, missing)
	}
	pyDir = filepath.Join(abs, "python")
	tsIndex = filepath.Join(abs, "typescript", "src", "index.ts")
	if p := hj.Entrypoints.Python; safeRel(p) {
		pyDir = filepath.Join(abs, filepath.FromSlash(path.Dir(p)))
		pyPkg = path.Base(p)
	}
	if p := hj.Entrypoints.TypeScript; safeRel(p) {
		tsIndex = filepath.Join(abs, filepath.FromSlash(p))
	}
	py, err := filepath.Rel(out, pyDir)
	if err != nil {
		return cc, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	ts, err := filepath.Rel(filepath.Join(out, "typescript", "src"), tsIndex)
	if err != nil {
		return cc, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	ts = filepath.ToSlash(ts)
	ts = strings.TrimSuffix(ts, path.Ext(ts)) + ".js"
	if !strings.HasPrefix(ts, "../") {
		ts = "./" + ts
	}
	cc.Python = CatalogPython{Path: filepath.ToSlash(py), Package: pyPkg, Client: client}
	cc.TypeScript = CatalogTypeScript{Import: ts, Client: client}
	return cc, nil
}

// harnessJSON is the part of harness.json the composite reads.
type harnessJSON struct {
	Entrypoints struct {
		Python     string `json:"python"`
		TypeScript string `json:"typescript"`
	} `json:"entrypoints"`
}

func readHarnessJSON(dir string) (*harnessJSON, error) {
	b, err := os.ReadFile(filepath.Join(dir, "harness.json"))
	if err != nil {
		return nil, err
	}
	var h harnessJSON
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// safeRel reports whether p is a clean relative slash path inside its root.
func safeRel(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != "." && !strings.HasPrefix(p, "../") &&
		!strings.Contains(p, "\\")
}

// checkOut refuses an output directory that holds something other than a
// previous composite (recognised by its compose.json).
func checkOut(out string) error {
	st, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrRefuseReplace, out, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w %s: it is not a directory", ErrRefuseReplace, out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrRefuseReplace, out, err)
	}
	if len(entries) == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(out, "compose.json"))
	if err == nil {
		var head struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(b, &head) == nil && head.Schema == CatalogSchema {
			return nil
		}
	}
	return fmt.Errorf("%w %s: it is not empty and holds no composite (compose.json)", ErrRefuseReplace, out)
}
