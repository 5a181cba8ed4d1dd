package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/runtime/grant"
)

func connectorsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "connectors",
		Usage: "write what a harness home needs across connectors",
		Subcommands: []*cli.Command{{
			Name:      "index",
			Usage:     "write INDEX.md for the connectors a grant names",
			ArgsUsage: "<bundle...>",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "grants", Usage: "the turn's grant (a JSON array, or {grants} / {by_grants})"},
				&cli.StringFlag{Name: "out", Usage: "where to write INDEX.md"},
				&cli.StringFlag{Name: "skills-root", Usage: "the directory holding the packages (default: the directory of --out)"},
				&cli.StringFlag{Name: "workspace", Usage: "the workspace the gateway serves (names connectors by their path there)"},
			},
			Action: func(c *cli.Context) error { return runConnectorsIndex(e, c) },
		}, {
			Name:      "compose",
			Usage:     "write the composite (_compose): one client across connectors, and flows of their calls",
			ArgsUsage: "<bundle...>",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "the composite's directory (e.g. <home>/connectors/_compose)"},
				&cli.StringFlag{Name: "workspace", Usage: "the workspace the gateway serves (names connectors by their path there)"},
				&cli.StringFlag{Name: "skills-root", Usage: "the directory holding the harness packages (default: the parent of --out)"},
				&cli.StringFlag{Name: "layout", Value: "harness", Usage: "where the connector SDKs are: harness or bundle"},
			},
			Action: func(c *cli.Context) error { return runConnectorsCompose(e, c) },
		}},
	}
}

func runConnectorsCompose(e *env, c *cli.Context) error {
	out := c.String("out")
	if out == "" || c.NArg() == 0 {
		return fail(1, "connectors compose needs --out <dir> and at least one bundle")
	}
	ids, err := compiler.Compose(c.Context, compiler.ComposeOptions{Bundles: c.Args().Slice(), Workspace: c.String("workspace"),
		Out: out, SkillsRoot: c.String("skills-root"), Layout: c.String("layout")})
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(e.stdout, "Composed %d connector(s) (%s) to %s.\n", len(ids), strings.Join(ids, ", "), out)
	return nil
}

func runConnectorsIndex(e *env, c *cli.Context) error {
	grantsFile, out := c.String("grants"), c.String("out")
	if grantsFile == "" || out == "" {
		return fail(1, "connectors index needs --grants <file> and --out <INDEX.md>")
	}
	raw, err := os.ReadFile(grantsFile)
	if err != nil {
		return fail(1, "cannot read %s: %v", grantsFile, err)
	}
	grants, err := grant.ParseFile(raw)
	if err != nil {
		return fail(1, "%s %v", grantsFile, err)
	}
	named := make([]compiler.Grant, len(grants))
	for i, g := range grants {
		named[i] = compiler.Grant{Connector: g.Connector, Mode: g.Mode, Operations: g.Operations, Account: g.Account}
	}
	res, err := compiler.Index(c.Context, compiler.IndexOptions{Bundles: c.Args().Slice(), Workspace: c.String("workspace"),
		Grants: named, Out: out, SkillsRoot: c.String("skills-root")})
	if err != nil {
		return fail(1, "%v", err)
	}
	if res.Composite {
		fmt.Fprintf(e.stdout, "Wrote %s (%d granted connector(s), with the composite).\n", out, res.Granted)
	} else {
		fmt.Fprintf(e.stdout, "Wrote %s (%d granted connector(s)).\n", out, res.Granted)
	}
	return nil
}
