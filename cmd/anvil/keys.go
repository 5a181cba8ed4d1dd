package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/auth/mint"
)

// keysCommand is `anvil keys init <dir>`: a yard's signing key and JWKS, as
// Branchyard's token broker keeps them (package mint).
func keysCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "keys",
		Usage: "make a yard's token signing key",
		Subcommands: []*cli.Command{{
			Name:      "init",
			Usage:     "make an Ed25519 signing key (signing.jwk.json, 0600) and its public jwks.json in <dir>; never replaces a key",
			ArgsUsage: "<dir>",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 || c.Args().First() == "" {
					return fail(1, "keys init takes one directory (usage: anvil keys init <dir>)")
				}
				dir := c.Args().First()
				k, err := mint.Init(dir)
				if errors.Is(err, mint.ErrExists) {
					return fail(1, "%s already holds a signing key; tokens minted with it would stop verifying if it were replaced, so it is kept (remove the directory to start over).", dir)
				}
				if err != nil {
					return fail(1, "%v", err)
				}
				jwks, err := filepath.Abs(filepath.Join(dir, mint.JWKSFile))
				if err != nil {
					return fail(1, "%v", err)
				}
				line, _ := json.Marshal(struct {
					Kid  string `json:"kid"`
					JWKS string `json:"jwks"`
				}{k.Kid, jwks})
				fmt.Fprintf(e.stdout, "%s\n", line)
				fmt.Fprintf(e.stderr, "anvil: serve with ANVIL_INBOUND_JWKS_URI=file://%s\n", jwks)
				return nil
			},
		}},
	}
}
