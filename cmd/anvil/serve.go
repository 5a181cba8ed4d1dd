package main

import (
	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/serve"
)

// serveCommand is anvil serve mcp: the flags, the environment and the start
// are runtime/serve's, the one command line every generated gateway runs
// too, so both take the same arguments and refuse the same way.
func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve compiled bundles",
		Subcommands: []*cli.Command{{
			Name:            "mcp",
			Usage:           "serve a workspace of bundles as MCP tools (and REST calls) through the fleet gateway",
			ArgsUsage:       "<workspace> --fleet [--http <port>] [--host <host>]",
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				args := append([]string{"anvil", "serve", "mcp"}, c.Args().Slice()...)
				code := serve.Main(c.Context, args, nil, serve.Options{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv})
				if code != 0 {
					return silentExit(code)
				}
				return nil
			},
		}},
	}
}
