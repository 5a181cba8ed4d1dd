package main

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
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
	res, err := compiler.BuildGateway(c.Context, compiler.GatewayOptions{Workspace: ws, Yard: yard, Gen: gen, ImportPath: c.String("import-path")})
	if res != nil {
		printDiagnostics(e, res.Diagnostics, false)
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	out := res.Out
	pkg := filepath.ToSlash(out)
	if !filepath.IsAbs(out) && !strings.HasPrefix(pkg, ".") {
		pkg = "./" + pkg
	}
	fmt.Fprintf(e.stdout, "Generated the %s gateway → %s (%d files, %d operations, %d fully specialised); build it with %s\n",
		yard, out, res.Files, res.Operations, res.Specialised, staticBuild(yard, pkg))
	return nil
}

// staticBuild is the command that builds a generated gateway as one
// static binary: without cgo it links no libc, so it runs on any Linux of
// its architecture (a distroless or scratch image included), and -trimpath
// keeps the build machine's paths out of it (same sources, same bytes).
func staticBuild(yard, pkg string) string {
	return fmt.Sprintf("CGO_ENABLED=0 go build -trimpath -o %s %s", shellQuote(path.Join("bin", yard)), shellQuote(pkg))
}

// shellQuote returns s as one POSIX shell word: unchanged when it holds only
// characters no shell treats specially, else single-quoted.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./@%+=:,-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
