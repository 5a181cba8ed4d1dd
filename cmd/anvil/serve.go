package main

import (
	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/serve"
)

// serveCommand is anvil serve mcp: the command, its flags, the environment
// and the start are runtime/serve's (serve.Command), the one command line
// every generated gateway runs too, so both take the same arguments and
// refuse the same way.
func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve compiled bundles",
		Subcommands: []*cli.Command{
			serve.Command(nil, serve.Options{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv}),
		},
	}
}
