package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/identity/oidc"
	"github.com/anvil-dev/anvil/runtime/policy"
)

// policyCommand checks identity policies (inbound auth mode oidc).
func policyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "check an identity policy (ANVIL_INBOUND_POLICY_FILE of inbound auth mode oidc)",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate a policy and, with --token, print the grant a token would get",
			ArgsUsage: "<policy.yaml>",
			Description: "Without --token: decode the policy as the gateway does at start and reload, printing every\n" +
				"problem as file:line:col: code: message (exit 1), or a one-line summary (exit 0).\n" +
				"With --token: read the token's claims (a JWT, or a JSON object of claims; the value, a file\n" +
				"holding either, or - for stdin) WITHOUT verifying its signature, audience or times, and print\n" +
				"the issuer, the person, the matching rules, the connect permission, the grant and the step-up\n" +
				"options. A token whose issuer the policy does not trust gets nothing (exit 1).",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "token", Usage: "a JWT or claims JSON: the value, a file, or - for stdin"},
				&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"},
			},
			Action: func(c *cli.Context) error { return policyCheck(e, c) },
		}},
	}
}

func policyCheck(e *env, c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(2, "usage: anvil policy check <policy.yaml> [--token <jwt|claims.json|->] [--json]")
	}
	file := c.Args().First()
	p, err := policy.Load(file)
	if err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			for _, pr := range pe.Problems {
				fmt.Fprintln(e.stderr, pr.String())
			}
			return fail(1, "%s: %d problem(s); the gateway would not use this policy", file, len(pe.Problems))
		}
		return fail(1, "%v", err)
	}
	if !c.IsSet("token") {
		fmt.Fprintf(e.stdout, "%s: ok (%d issuer(s), %d rule(s), %d token exchange(s))\n", file, len(p.Issuers), len(p.Rules), len(p.Upstreams))
		return nil
	}
	members, err := readTokenClaims(e, c.String("token"))
	if err != nil {
		return fail(1, "--token: %v", err)
	}
	claims, is, err := oidc.PolicyClaims(p, members)
	if err != nil {
		return fail(1, "the gateway would refuse this token: %s", err)
	}
	d := p.Decide(claims)
	steps := p.StepUp(claims)
	if c.Bool("json") {
		type option struct {
			Scopes []string   `json:"scopes"`
			Grants grant.List `json:"grants"`
		}
		out := struct {
			Issuer  string     `json:"issuer"`
			Subject string     `json:"subject"`
			Person  string     `json:"person"`
			Rules   []string   `json:"rules"`
			Connect bool       `json:"connect"`
			Grants  grant.List `json:"grants"`
			StepUp  []option   `json:"step_up"`
		}{claims.Issuer, claims.Subject, is.SubjectPrefix + claims.Subject, d.Rules, d.Connect, d.Grants, []option{}}
		for _, o := range steps {
			out.StepUp = append(out.StepUp, option{p.Prefixed(o.Scopes), o.Grants})
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	w := e.stdout
	fmt.Fprintln(w, "claims read without verifying the token's signature, audience or times")
	fmt.Fprintf(w, "issuer:  %s\n", claims.Issuer)
	fmt.Fprintf(w, "person:  %s\n", is.SubjectPrefix+claims.Subject)
	fmt.Fprintf(w, "scopes:  %s\n", orNone(p.Prefixed(claims.Scopes)))
	fmt.Fprintf(w, "groups:  %s\n", orNone(claims.Groups))
	fmt.Fprintf(w, "roles:   %s\n", orNone(claims.Roles))
	fmt.Fprintf(w, "tenant:  %s\n", orNone([]string{claims.Tenant}))
	fmt.Fprintf(w, "rules:   %s\n", orNone(d.Rules))
	fmt.Fprintf(w, "connect: %s\n", yesNo(d.Connect))
	g, _ := d.Grants.MarshalJSON()
	fmt.Fprintf(w, "grant:   %s\n", g)
	for _, o := range steps {
		g, _ := o.Grants.MarshalJSON()
		fmt.Fprintf(w, "step-up: with %s the grant is %s\n", strings.Join(p.Prefixed(o.Scopes), " "), g)
	}
	return nil
}

// maxTokenInput bounds what --token reads.
const maxTokenInput = 256 << 10

// readTokenClaims reads --token: "-" is stdin; a value naming a file is
// its content; the content is a JSON object of claims or a compact JWT,
// whose payload is decoded (not verified).
func readTokenClaims(e *env, v string) (map[string]json.RawMessage, error) {
	var raw []byte
	switch {
	case v == "-":
		b, err := io.ReadAll(io.LimitReader(e.stdin, maxTokenInput+1))
		if err != nil {
			return nil, err
		}
		raw = b
	default:
		if fi, err := os.Stat(v); err == nil && fi.Mode().IsRegular() {
			b, err := os.ReadFile(v)
			if err != nil {
				return nil, err
			}
			raw = b
		} else {
			raw = []byte(v)
		}
	}
	if len(raw) > maxTokenInput {
		return nil, errors.New("more than 256 KiB")
	}
	raw = bytes.TrimSpace(raw)
	if !bytes.HasPrefix(raw, []byte("{")) {
		tok := strings.TrimPrefix(string(raw), "Bearer ")
		parts := strings.Split(tok, ".")
		if len(parts) != 3 {
			return nil, errors.New("neither a JSON object of claims nor a compact JWT")
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			return nil, errors.New("the JWT's payload is not base64url")
		}
		raw = payload
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, errors.New("the claims are not a JSON object")
	}
	return members, nil
}

func orNone(list []string) string {
	var out []string
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, " ")
}

func yesNo(b bool) string {
	if b {
		return "yes (/connect/* routes)"
	}
	return "no"
}
