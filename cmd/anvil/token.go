package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/mint"
	"github.com/anvil-dev/anvil/runtime/grant"
)

// maxGrantFile bounds a --grants @file (a grant holds at most 64 entries of
// 256 globs of 256 characters).
const maxGrantFile = 8 << 20

// tokenCommand is `anvil token mint <dir> …`: Branchyard's turn and connect
// tokens, signed with the key `anvil keys init` made (package mint).
func tokenCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "mint tokens the gateway verifies in Branchyard mode",
		Subcommands: []*cli.Command{{
			Name:      "mint",
			Usage:     "sign a turn token (or with --purpose connect a connect token) with <dir>/signing.jwk.json and print it",
			ArgsUsage: "<dir>",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "iss", Usage: "issuer: the gateway's ANVIL_INBOUND_ISSUER (required)"},
				&cli.StringFlag{Name: "aud", Usage: "audience: the gateway's ANVIL_INBOUND_AUDIENCE, its /mcp URL (required)"},
				&cli.StringFlag{Name: "sub", Usage: "subject: the principal, e.g. local:<user> (required)"},
				&cli.StringFlag{Name: "grants", Usage: `by_grants: a JSON list of {"connector","operations","mode"[,"confirm":"allow"][,"account"]}, or @file (required for a turn token; a connect token has [])`},
				&cli.StringFlag{Name: "ttl", Usage: "lifetime: seconds or a duration like 10m (default 10m; at most 1h, 10m for a connect token)"},
				&cli.StringFlag{Name: "purpose", Usage: "connect: a connect token for anvil connect (no grants, branch or turn)"},
				&cli.StringFlag{Name: "tenant", Usage: "by_tenant (default local); any string of at most 256 characters"},
				&cli.StringFlag{Name: "branch", Usage: "by_branch; any string of at most 256 characters"},
				&cli.StringFlag{Name: "turn", Usage: "by_turn (Branchyard writes the turn number); any string of at most 256 characters"},
				&cli.StringFlag{Name: "workspace", Usage: "the workspace the gateway serves: every connector the grants name must be one of its connectors"},
			},
			Action: func(c *cli.Context) error { return runMint(e, c) },
		}},
	}
}

func runMint(e *env, c *cli.Context) error {
	if c.NArg() != 1 || c.Args().First() == "" {
		return fail(1, "token mint takes one key directory (usage: anvil token mint <dir> --iss <issuer> --aud <audience> --sub <subject> --grants <json|@file>)")
	}
	for _, f := range []string{"iss", "aud", "sub"} {
		if c.String(f) == "" {
			return fail(1, "token mint needs --%s", f)
		}
	}
	if p := c.String("purpose"); c.IsSet("purpose") && p != auth.PurposeConnect {
		return fail(1, "--purpose may only be %s, not %q", auth.PurposeConnect, p)
	}
	claims := mint.Claims{
		Issuer: c.String("iss"), Audience: c.String("aud"), Subject: c.String("sub"),
		Tenant: c.String("tenant"), Branch: c.String("branch"), Turn: c.String("turn"),
		Purpose: c.String("purpose"),
	}
	switch g := c.String("grants"); {
	case !c.IsSet("grants") && claims.Purpose == "":
		return fail(1, `a turn token needs --grants, e.g. --grants '[{"connector":"github","operations":["*"],"mode":"read"}]' (an empty grant is '[]')`)
	case strings.HasPrefix(g, "@"):
		b, err := readGrantFile(g[1:])
		if err != nil {
			return fail(1, "--grants %s: %v", g, err)
		}
		claims.Grants = b
	default:
		claims.Grants = []byte(g)
	}
	if ws := c.String("workspace"); ws != "" {
		if err := checkGrantConnectors(ws, claims.Grants); err != nil {
			return err
		}
	}
	if c.IsSet("ttl") {
		ttl, err := parseTTL(c.String("ttl"))
		if err != nil {
			return fail(1, "--ttl takes seconds or a duration like 10m, not %q", c.String("ttl"))
		}
		claims.TTL = ttl
	}
	k, err := mint.Load(c.Args().First())
	if err != nil {
		return fail(1, "%v", err)
	}
	tok, err := k.Mint(claims, time.Now())
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}

// parseTTL reads whole seconds ("600") or a Go duration ("10m"). Zero and
// negative lifetimes are left for mint to refuse with its own message.
func parseTTL(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		if n == 0 {
			return -1, nil // zero would mean the default
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d == 0 {
		d = -1
	}
	return d, err
}

// readGrantFile reads a grant file of at most maxGrantFile bytes.
func readGrantFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGrantFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxGrantFile {
		return nil, fmt.Errorf("larger than %d bytes", maxGrantFile)
	}
	return b, nil
}

// checkGrantConnectors refuses grants that name a connector the workspace
// ws does not serve (a misspelled connector would otherwise mint a token
// whose grant allows nothing), suggesting the nearest id.
func checkGrantConnectors(ws string, raw []byte) error {
	ids, err := workspaceConnectors(ws)
	if err != nil {
		return fail(1, "--workspace %s: %v", ws, err)
	}
	if len(ids) == 0 {
		return fail(1, "--workspace %s holds no bundles", ws)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	l, err := grant.Parse(raw)
	if err != nil {
		return nil // mint refuses it with the parser's reason
	}
	var unknown []string
	for _, e := range l {
		if slices.Contains(ids, e.Connector) || slices.Contains(unknown, e.Connector) {
			continue
		}
		unknown = append(unknown, e.Connector)
	}
	if len(unknown) == 0 {
		return nil
	}
	msgs := make([]string, len(unknown))
	for i, u := range unknown {
		msgs[i] = fmt.Sprintf("%q", u)
		if s, ok := manifest.Suggest(u, ids); ok {
			msgs[i] += fmt.Sprintf(" (did you mean %q?)", s)
		}
	}
	return fail(1, "the grants name connector(s) %s that %s does not serve (it serves: %s); nothing was minted",
		strings.Join(msgs, ", "), ws, strings.Join(ids, ", "))
}
