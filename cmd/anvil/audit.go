package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// auditCommand is `anvil audit verify <file|postgres://…>`: the audit
// chain's check (runtime/audit.Verify for a file, pgstore.VerifyAuditTable
// for the fleet's shared table). Wiring only.
func auditCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "check the gateway's audit trail",
		Subcommands: []*cli.Command{{
			Name:      "verify",
			Usage:     "check an audit file's chain (or the fleet's shared audit table at a postgres:// URL); print the head to anchor elsewhere; exit 1 at the first edited, missing, reordered or truncated record",
			ArgsUsage: "<file|postgres://…>",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "key-file", Usage: "the gateway's vault key (default: ANVIL_VAULT_KEY_FILE); needed for a keyed (hmac-sha256) chain"},
				&cli.StringFlag{Name: "head", Usage: "a head printed by an earlier verify, anchored elsewhere: it must still be in the trail"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 || c.Args().First() == "" {
					return fail(1, "audit verify takes one audit file or postgres:// URL (usage: anvil audit verify <file|postgres://…>)")
				}
				target := c.Args().First()
				keyFile := c.String("key-file")
				if keyFile == "" {
					keyFile = e.getenv("ANVIL_VAULT_KEY_FILE")
				}
				var vaultKey, chainKey []byte
				if keyFile != "" {
					k, err := vault.LoadKey(keyFile)
					if err != nil {
						return fail(1, "%v", err)
					}
					vaultKey = k
					if chainKey, err = audit.ChainKey(k); err != nil {
						return fail(1, "%v", err)
					}
				}
				var rep audit.Report
				var err error
				name := target
				if strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://") {
					if vaultKey == nil {
						return fail(1, "the shared audit table is chained under the vault key: give --key-file or ANVIL_VAULT_KEY_FILE")
					}
					name = "the shared audit table"
					ctx, cancel := context.WithTimeout(c.Context, 10*time.Minute)
					defer cancel()
					rep, err = pgstore.VerifyAuditTable(ctx, target, vaultKey, c.String("head"))
				} else {
					f, oerr := os.Open(target)
					if oerr != nil {
						return fail(1, "%v", oerr)
					}
					defer f.Close()
					rep, err = audit.Verify(f, audit.VerifyOptions{Key: chainKey, Head: c.String("head")})
				}
				var ve *audit.VerifyError
				if errors.As(err, &ve) {
					where := ""
					if ve.Line > 0 {
						where = fmt.Sprintf(" at line %d", ve.Line)
						if name == "the shared audit table" {
							where = fmt.Sprintf(" at row %d", ve.Line)
						}
					}
					return fail(1, "audit verify: %s%s: %s", name, where, ve.Problem)
				}
				if err != nil {
					return fail(1, "audit verify: %s: %v", name, err)
				}
				fmt.Fprintf(e.stdout, "ok: %s: %d record(s), seq %d to %d, %s chain; head %s\n", name, rep.Records, rep.FirstSeq, rep.LastSeq, rep.Alg, rep.Head)
				if rep.Leading > 0 {
					fmt.Fprintf(e.stdout, "note: %d line(s) before the first record were written before the chain existed and are not covered by it\n", rep.Leading)
				}
				return nil
			},
		}},
	}
}
