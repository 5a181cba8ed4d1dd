package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/compose"
	"github.com/anvil-dev/anvil/compiler/emit/index"
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
	skillsRoot := c.String("skills-root")
	if skillsRoot == "" {
		skillsRoot = filepath.Dir(filepath.Clean(out))
	}
	bundles, err := argBundles(c)
	if err != nil {
		return err
	}
	tree, err := compose.Render(bundles, compose.Options{Layout: c.String("layout"), OutDir: out, SkillsRoot: skillsRoot})
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := tree.WriteTo(out); err != nil {
		return fail(1, "writing %s: %v", out, err)
	}
	ids := make([]string, len(bundles))
	for i, b := range bundles {
		ids[i] = b.ID
	}
	fmt.Fprintf(e.stdout, "Composed %d connector(s) (%s) to %s.\n", len(bundles), strings.Join(ids, ", "), out)
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
	skillsRoot := c.String("skills-root")
	if skillsRoot == "" {
		skillsRoot = filepath.Dir(out)
	}
	bundles, err := argBundles(c)
	if err != nil {
		return err
	}
	named := make([]index.Grant, len(grants))
	for i, g := range grants {
		named[i] = index.Grant{Connector: g.Connector, Mode: g.Mode, Operations: g.Operations, Account: g.Account}
	}
	n := len(index.Granted(bundles, named))
	composite := false
	if n > 1 {
		if st, err := os.Stat(filepath.Join(skillsRoot, index.CompositeDir)); err == nil && st.IsDir() {
			composite = true
		}
	}
	tree, err := index.Render(bundles, index.Options{Grants: named, SkillsRoot: skillsRoot, Out: out, Composite: composite})
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := tree.WriteFiles(filepath.Dir(out)); err != nil {
		return fail(1, "writing %s: %v", out, err)
	}
	if composite {
		fmt.Fprintf(e.stdout, "Wrote %s (%d granted connector(s), with the composite).\n", out, n)
	} else {
		fmt.Fprintf(e.stdout, "Wrote %s (%d granted connector(s)).\n", out, n)
	}
	return nil
}

// argBundles loads the bundles named as arguments as the connectors the
// gateway serves them as (ids folded from --workspace when given).
func argBundles(c *cli.Context) ([]emit.Connector, error) {
	var out []emit.Connector
	for _, b := range c.Args().Slice() {
		doc, hash, err := loadBundle(b)
		if err != nil {
			return nil, fail(1, "%v", err)
		}
		id, err := connectorID(b, c.String("workspace"), "")
		if err != nil {
			return nil, fail(1, "%v", err)
		}
		out = append(out, emit.Connector{ID: id, Doc: doc, BundleHash: hash, Dir: b})
	}
	return out, nil
}
