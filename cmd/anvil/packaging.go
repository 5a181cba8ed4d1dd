package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/diff/release"
)

func packageCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "package",
		Usage: "package compiled bundles",
		Subcommands: []*cli.Command{{
			Name:      "harness",
			Usage:     "write a connector's harness package (skill, SDKs, CLI) that calls only the gateway",
			ArgsUsage: "<bundle>",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "the package directory"},
				&cli.StringFlag{Name: "workspace", Usage: "the workspace the gateway serves (names the connector by its path there)"},
				&cli.StringFlag{Name: "connector", Usage: "the connector id (overrides the folded path)"},
				&cli.StringFlag{Name: "previous", Usage: "the previous package (or bundle): version by the semver verdict, CHANGELOG.md from the diff"},
				&cli.BoolFlag{Name: "allow-errors", Usage: "package a bundle whose compile reported errors (warns loudly)"},
			},
			Action: func(c *cli.Context) error { return runPackageHarness(e, c) },
		}},
	}
}

func runPackageHarness(e *env, c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(1, "package harness takes one bundle (usage: anvil package harness <bundle> --out <dir>)")
	}
	bundle, out := c.Args().First(), c.String("out")
	if out == "" {
		return fail(1, "package harness needs --out <dir>")
	}
	allow := c.Bool("allow-errors")
	res, err := compiler.Package(c.Context, compiler.PackageOptions{Bundle: bundle, Out: out, Workspace: c.String("workspace"),
		Connector: c.String("connector"), Previous: c.String("previous"), AllowErrors: allow})
	if res != nil && res.Errors > 0 && allow {
		fmt.Fprintf(e.stderr, "anvil: WARNING: packaging %s despite %d error diagnostic(s) (--allow-errors):\n", bundle, res.Errors)
		for _, f := range res.FirstErrors {
			fmt.Fprintf(e.stderr, "anvil:   %s\n", f)
		}
	}
	var step *compiler.StepError
	if errors.As(err, &step) && step.Step == compiler.StepPrevious {
		return fail(1, "--previous: %v", step.Err)
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(e.stdout, "Packaged connector '%s' (%d operation(s), gateway mode) to %s.\n", res.Connector, res.Operations, out)
	if r := res.Release; r != nil {
		fmt.Fprintf(e.stdout, "Version %s (%s from %s: %d breaking, %d non-breaking change(s)); see %s.\n", r.Version,
			r.Report.Semver, r.PreviousVersion, r.Report.Summary.Breaking, r.Report.Summary.NonBreaking, release.ChangelogFile)
	}
	return nil
}
