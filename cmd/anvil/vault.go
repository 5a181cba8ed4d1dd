package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/vault"
)

// vaultCommand is `anvil vault keygen <file>`: the key ANVIL_VAULT_KEY_FILE
// names.
func vaultCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "vault",
		Usage: "manage the gateway's credential vault",
		Subcommands: []*cli.Command{{
			Name:      "keygen",
			Usage:     "write a new vault key (32 random bytes as 64 hex characters, mode 0600) to <file>; never replaces a file",
			ArgsUsage: "<file>",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 || c.Args().First() == "" {
					return fail(1, "vault keygen takes one file (usage: anvil vault keygen <file>)")
				}
				path := c.Args().First()
				if err := vault.WriteNewKey(path); err != nil {
					if errors.Is(err, fs.ErrExist) {
						return fail(1, "%s exists; a vault key is never replaced, since the connections it encrypts could no longer be read.", path)
					}
					return fail(1, "%v", err)
				}
				abs, _ := filepath.Abs(path)
				fmt.Fprintf(e.stderr, "anvil: serve with ANVIL_VAULT_KEY_FILE=%s\n", abs)
				return nil
			},
		}},
	}
}
