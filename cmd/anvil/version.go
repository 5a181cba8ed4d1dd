package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/buildinfo"
)

// versionFlag is anvil's own --version (urfave's would also claim -v).
var versionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and VCS revision this binary was built from"}

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the Anvil version and the VCS revision this binary was built from",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {main, anvil, revision, time, modified, go} as JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fail(1, "version takes no arguments")
			}
			printVersion(e, c.Bool("json"))
			return nil
		},
	}
}

func printVersion(e *env, asJSON bool) {
	info := buildinfo.Read()
	if asJSON {
		fmt.Fprintf(e.stdout, "%s\n", info.JSON())
		return
	}
	fmt.Fprintln(e.stdout, info.String())
}

// rootAction answers `anvil --version`, and `anvil` alone with the help; a
// first argument that names no command is an error.
func rootAction(e *env) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Bool(versionFlag.Name) {
			printVersion(e, false)
			return nil
		}
		if c.NArg() > 0 {
			return fail(1, "no command %q (anvil --help lists them)", c.Args().First())
		}
		return cli.ShowAppHelp(c)
	}
}
