package main

import (
	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/schemas"
)

// schemaCommand prints the JSON Schemas embedded in the binary.
func schemaCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "print a JSON Schema Anvil publishes",
		Subcommands: []*cli.Command{{
			Name:  "manifest",
			Usage: "print the JSON Schema (draft 2020-12) of anvil.yaml",
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return fail(1, "schema manifest takes no arguments")
				}
				_, err := e.stdout.Write(schemas.Manifest)
				return err
			},
		}, {
			Name:  "policy",
			Usage: "print the JSON Schema (draft 2020-12) of the identity policy (inbound auth mode oidc)",
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return fail(1, "schema policy takes no arguments")
				}
				_, err := e.stdout.Write(schemas.Policy)
				return err
			},
		}},
	}
}
