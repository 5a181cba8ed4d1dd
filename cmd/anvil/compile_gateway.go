package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	gatewayemit "github.com/anvil-dev/anvil/compiler/emit/gateway"
	"github.com/anvil-dev/anvil/runtime/air"
)

// withGatewayCompile adds the generated-gateway form to the compile
// command:
//
//	anvil compile --workspace <dir> --yard <name> [--gen <dir>] [--import-path <path>]
//
// It (re)generates <gen>/<yard>/, the specialised gateway of every bundle
// the fleet gateway would serve from <dir>, atomically. Without --workspace
// the command compiles a spec as before.
func withGatewayCompile(e *env, cmd *cli.Command) *cli.Command {
	cmd.Flags = append(cmd.Flags,
		&cli.StringFlag{Name: "workspace", Usage: "generate the gateway of this workspace of bundles (no spec argument)"},
		&cli.StringFlag{Name: "yard", Usage: "the generated gateway's name: writes <gen>/<yard>/"},
		&cli.StringFlag{Name: "gen", Value: "gen", Usage: "the directory holding generated gateways"},
		&cli.StringFlag{Name: "import-path", Usage: "Go import path of --gen (default: from the enclosing go.mod)"},
	)
	cmd.Usage += "; with --workspace, generate a workspace's gateway (<gen>/<yard>/, built with go build)"
	if cmd.ArgsUsage != "" {
		cmd.ArgsUsage += " | --workspace <dir> --yard <name> [--gen <dir>]"
	}
	spec := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if c.IsSet("workspace") || c.IsSet("yard") {
			return runCompileGateway(e, c)
		}
		return spec(c)
	}
	return cmd
}

func runCompileGateway(e *env, c *cli.Context) error {
	ws, yard, gen := c.String("workspace"), c.String("yard"), c.String("gen")
	switch {
	case c.NArg() != 0:
		return fail(1, "compile --workspace takes no spec argument (usage: anvil compile --workspace <dir> --yard <name> [--gen <dir>])")
	case ws == "":
		return fail(1, "compile --yard needs --workspace <dir> (usage: anvil compile --workspace <dir> --yard <name> [--gen <dir>])")
	case yard == "":
		return fail(1, "compile --workspace needs --yard <name> (usage: anvil compile --workspace <dir> --yard <name> [--gen <dir>])")
	}
	importPath := c.String("import-path")
	if importPath == "" {
		p, err := importPathOf(gen)
		if err != nil {
			return fail(1, "%v", err)
		}
		importPath = p
	}
	model, dirs, err := gatewayModel(ws, yard, importPath)
	if err != nil {
		return fail(1, "%v", err)
	}
	if l := workspaceDiagnostics(model, dirs); len(l) > 0 {
		printDiagnostics(e, l, false)
		if l.HasErrors() {
			return fail(1, "the workspace %s cannot make a gateway: %d error(s) above; nothing was written", ws, len(l))
		}
	}
	tree, stats, err := gatewayemit.Generate(model)
	if err != nil {
		return fail(1, "%v", keepUnformatted(err))
	}
	out := filepath.Join(gen, yard)
	if err := files.FromBytes(tree).WriteTo(out); err != nil {
		return fail(1, "writing %s: %v", out, err)
	}
	pkg := filepath.ToSlash(out)
	if !filepath.IsAbs(out) && !strings.HasPrefix(pkg, ".") {
		pkg = "./" + pkg
	}
	fmt.Fprintf(e.stdout, "Generated the %s gateway → %s (%d files, %d operations, %d fully specialised); build it with go build %s\n",
		yard, out, stats.Files, stats.Operations, stats.Specialised, pkg)
	return nil
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

// gatewayModel reads the workspace with air.LoadWorkspace, the reading the
// fleet gateway serves from (same bundles, same connector ids), and turns it
// into the generator's view model: every served operation under its wire
// name. It reads AIR only; nothing of the server is involved.
//
// dirs holds each connector's bundle directory, by id, for positions.
func gatewayModel(ws, yard, importPath string) (*gatewayemit.Workspace, map[string]string, error) {
	bundles, err := air.LoadWorkspace(ws)
	if err != nil {
		return nil, nil, err
	}
	model := &gatewayemit.Workspace{Yard: yard, ImportPath: importPath}
	dirs := map[string]string{}
	for _, b := range bundles {
		dirs[b.ID] = b.Dir
		mc := gatewayemit.Connector{ID: b.ID, Doc: b.Doc, BundleHash: b.BundleHash}
		for i := range b.Doc.Operations {
			op := &b.Doc.Operations[i]
			if air.IsServed(op) {
				mc.Tools = append(mc.Tools, gatewayemit.Tool{Name: air.WireToolName(b.ID, op), Op: op})
			}
		}
		model.Connectors = append(model.Connectors, mc)
	}
	return model, dirs, nil
}

// workspaceDiagnostics checks, before anything is generated, what would
// make the generated tree not build: connector ids the tree would name
// alike, or that take a name it reserves (gateway/connector_id_collision,
// positioned at each bundle's air.json and naming both connectors).
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

// importPathOf derives the Go import path of dir from the go.mod of the
// module that encloses it.
func importPathOf(dir string) (string, error) {
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
