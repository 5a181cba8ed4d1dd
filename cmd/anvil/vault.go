package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
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
				if err := writeVaultKey(path); err != nil {
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

// writeVaultKey writes 32 bytes from crypto/rand, hex-encoded with a
// newline (a form the vault reads, and one that survives copy and paste), to
// a new file of mode 0600, created exclusively: an existing path is never
// replaced, even one created meanwhile, and a failed write leaves no file.
// The parent directory is created 0700 when missing.
func writeVaultKey(path string) error {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(hex.EncodeToString(key[:]) + "\n"))
	if err := errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close()); err != nil { // Chmod: whatever the umask
		_ = os.Remove(path)
		return err
	}
	return nil
}
