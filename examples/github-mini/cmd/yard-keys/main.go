// Command yard-keys makes a yard's signing key and mints Branchyard-style
// tokens for github-mini's end-to-end run (see package yardkeys).
//
//	yard-keys keygen <dir>
//	yard-keys mint <dir> --iss <iss> --aud <aud> --sub <sub> [--grants '<json>']
//	          [--ttl <seconds>] [--tenant <t>] [--branch <b>] [--turn <n>] [--purpose connect]
//
// keygen prints {"kid":…,"jwksPath":…} and a newline. mint prints the
// compact token with no trailing newline. mint sets iss, aud and sub
// (required), by_grants (the --grants JSON, default []), and by_tenant,
// by_branch, by_turn (a string) and by_purpose only when their flag is
// given. Flags may come before or after <dir>, as --name value or
// --name=value. Bad usage prints the usage to standard error and exits 2; a
// key or file error exits 1.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/anvil-dev/anvil/examples/github-mini/yardkeys"
)

const usage = `usage:
  yard-keys keygen <dir>
  yard-keys mint <dir> --iss <iss> --aud <aud> --sub <sub> [--grants '<json>']
            [--ttl <seconds>] [--tenant <t>] [--branch <b>] [--turn <n>] [--purpose connect]
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return bad(stderr, "")
	}
	switch args[0] {
	case "keygen":
		if len(args) != 2 || len(args[1]) == 0 || args[1][0] == '-' {
			return bad(stderr, "")
		}
		res, err := yardkeys.Keygen(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "yard-keys: %v\n", err)
			return 1
		}
		line, _ := json.Marshal(res)
		fmt.Fprintf(stdout, "%s\n", line)
		return 0
	case "mint":
		return mint(args[1:], stdout, stderr)
	default:
		return bad(stderr, fmt.Sprintf("unknown command %q", args[0]))
	}
}

func mint(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mint", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	names := []string{"iss", "aud", "sub", "grants", "ttl", "tenant", "branch", "turn", "purpose"}
	vals := map[string]*string{}
	for _, n := range names {
		vals[n] = fs.String(n, "", "")
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return bad(stderr, err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if len(positional) != 1 || positional[0] == "" {
		return bad(stderr, "mint takes exactly one <dir>")
	}
	for _, n := range []string{"iss", "aud", "sub"} {
		if !given[n] {
			return bad(stderr, "missing --"+n)
		}
	}

	var grants any = []any{}
	if given["grants"] {
		dec := json.NewDecoder(bytes.NewReader([]byte(*vals["grants"])))
		dec.UseNumber()
		if err := dec.Decode(&grants); err != nil || dec.More() {
			return bad(stderr, "--grants must be JSON")
		}
		if _, err := dec.Token(); err != io.EOF {
			return bad(stderr, "--grants must be one JSON value")
		}
	}
	opts := yardkeys.MintOptions{}
	if given["ttl"] {
		ttl, err := strconv.ParseInt(*vals["ttl"], 10, 32)
		if err != nil {
			return bad(stderr, "--ttl must be a whole number of seconds")
		}
		opts.TTL = time.Duration(ttl) * time.Second
		if ttl == 0 {
			opts.TTL = time.Nanosecond // truncates to exp == iat; zero would mean the default
		}
	}

	claims := map[string]any{
		"iss":       *vals["iss"],
		"aud":       *vals["aud"],
		"sub":       *vals["sub"],
		"by_grants": grants,
	}
	for flagName, claim := range map[string]string{"tenant": "by_tenant", "branch": "by_branch", "turn": "by_turn", "purpose": "by_purpose"} {
		if given[flagName] {
			claims[claim] = *vals[flagName]
		}
	}
	token, err := yardkeys.Mint(positional[0], claims, opts)
	if err != nil {
		fmt.Fprintf(stderr, "yard-keys: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, token)
	return 0
}

// bad prints an optional reason and the usage to stderr and returns 2.
func bad(stderr io.Writer, reason string) int {
	if reason != "" {
		fmt.Fprintf(stderr, "yard-keys: %s\n", reason)
	}
	fmt.Fprint(stderr, usage)
	return 2
}
