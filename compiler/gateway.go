package compiler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	gatewayemit "github.com/anvil-dev/anvil/compiler/emit/gateway"
	"github.com/anvil-dev/anvil/runtime/air"
)

// GatewayOptions is one `anvil compile --workspace <dir> --yard <name>`.
type GatewayOptions struct {
	// Workspace is the directory of bundles the fleet gateway serves.
	Workspace string
	// Yard names the generated gateway: the tree is written to Gen/Yard.
	Yard string
	// Gen is the directory holding generated gateways.
	Gen string
	// ImportPath is the Go import path of Gen; "" derives it from the
	// go.mod of the module enclosing Gen.
	ImportPath string
}

// GatewayResult is what BuildGateway did.
type GatewayResult struct {
	// Diagnostics are the workspace's findings (connector ids the tree
	// would name alike), positioned at each bundle's air.json.
	Diagnostics diag.List
	// Out is the directory written, Gen/Yard.
	Out string
	// Files is the number of files written.
	Files int
	// Operations is the number of operations with generated handlers, and
	// Specialised how many of them validate their input entirely in
	// generated code (gateway.Specialised).
	Operations, Specialised int
}

// RefusedError is BuildGateway's answer when the workspace's diagnostics
// hold errors: nothing is written, and the caller shows the diagnostics
// (GatewayResult.Diagnostics) before this message.
type RefusedError struct {
	Workspace string
	Errors    int
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the workspace %s cannot make a gateway: %d error(s) above; nothing was written", e.Workspace, e.Errors)
}

// BuildGateway generates the specialised gateway of every bundle the fleet
// gateway would serve from the workspace and writes it to Gen/Yard
// atomically. It reads the workspace as the fleet gateway does
// (air.LoadWorkspace: same bundles, same connector ids) and checks, before
// anything is generated, what would make the tree not build; an error
// there is a *RefusedError and the result still carries the diagnostics.
func BuildGateway(ctx context.Context, o GatewayOptions) (*GatewayResult, error) {
	importPath := o.ImportPath
	if importPath == "" {
		p, err := ImportPathOf(o.Gen)
		if err != nil {
			return nil, err
		}
		importPath = p
	}
	bundles, err := air.LoadWorkspace(o.Workspace)
	if err != nil {
		return nil, err
	}
	model := &gatewayemit.Workspace{Yard: o.Yard, ImportPath: importPath}
	dirs := map[string]string{} // each connector's bundle directory, for positions
	res := &GatewayResult{Out: filepath.Join(o.Gen, o.Yard)}
	for _, b := range bundles {
		dirs[b.ID] = b.Dir
		mc := gatewayemit.Connector{ID: b.ID, Doc: b.Doc, BundleHash: b.BundleHash}
		for i := range b.Doc.Operations {
			op := &b.Doc.Operations[i]
			if air.IsServed(op) {
				mc.Tools = append(mc.Tools, gatewayemit.Tool{Name: air.WireToolName(b.ID, op), Op: op})
				res.Operations++
				if gatewayemit.Specialised(op) {
					res.Specialised++
				}
			}
		}
		model.Connectors = append(model.Connectors, mc)
	}
	res.Diagnostics = workspaceDiagnostics(model, dirs)
	if n := res.Diagnostics.Count(diag.Error); n > 0 {
		return res, &RefusedError{Workspace: o.Workspace, Errors: n}
	}
	tree, err := gatewayemit.Generate(model)
	if err != nil {
		return res, keepUnformatted(err)
	}
	if err := writeTree(ctx, tree, res.Out); err != nil {
		return res, err
	}
	res.Files = len(tree)
	return res, nil
}

// workspaceDiagnostics finds connector ids the tree would name alike, or
// that take a name it reserves (gateway/connector_id_collision, positioned
// at each bundle's air.json and naming both connectors).
func workspaceDiagnostics(model *gatewayemit.Workspace, dirs map[string]string) diag.List {
	var l diag.List
	ids := make([]string, len(model.Connectors))
	for i, c := range model.Connectors {
		ids[i] = c.ID
	}
	at := func(id string) diag.Pos { return diag.Pos{File: filepath.Join(dirs[id], air.DocumentFile)} }
	for _, c := range gatewayemit.Collisions(ids) {
		l = append(l, diag.Diagnostic{Pos: at(c.ID), Level: diag.Error, Code: gatewayemit.CodeConnectorCollision, Message: c.Error()[len(gatewayemit.CodeConnectorCollision)+2:]})
		if c.With != "" {
			l = append(l, diag.Diagnostic{Pos: at(c.With), Level: diag.Error, Code: gatewayemit.CodeConnectorCollision,
				Message: fmt.Sprintf("connector %q is named like %q in the generated gateway (see %s)", c.With, c.ID, at(c.ID).File)})
		}
	}
	return l
}

// ImportPathOf derives the Go import path of dir from the go.mod of the
// module that encloses it.
func ImportPathOf(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modulePath(b)
			if mod == "" {
				return "", fmt.Errorf("%s declares no module", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			return path.Join(mod, filepath.ToSlash(rel)), nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside a Go module: create one (go mod init) that requires github.com/anvil-dev/anvil, or pass --import-path", dir)
		}
	}
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// keepUnformatted writes the source of a generated file that does not
// format (gatewayemit.FormatError: a generator bug) to a file of its own in
// the temporary directory, outside the module it would break, and names it
// in the error; any other error passes unchanged.
func keepUnformatted(err error) error {
	var fe *gatewayemit.FormatError
	if !errors.As(err, &fe) {
		return err
	}
	f, cerr := os.CreateTemp("", "anvil-unformatted-*-"+path.Base(fe.Name))
	if cerr != nil {
		return fmt.Errorf("%w (the unformatted file could not be kept: %v)", err, cerr)
	}
	_, werr := f.Write(fe.Source)
	if cerr = f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%w (the unformatted file could not be kept: %v)", err, errors.Join(werr, cerr))
	}
	return fmt.Errorf("%w; the unformatted file is %s", err, f.Name())
}
