package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/schemas"
)

const checkPolicy = `version: 1
issuers:
  - issuer: https://idp.example
    subject_prefix: "idp:"
  - issuer: https://entra.example/v2.0
    subject_prefix: "entra:"
    claims: {scope: scp, tenant: tid}
rules:
  - name: readers
    match: {groups: [eng], scopes: ["tools:read"]}
    grants: [{connector: github, operations: ["*"], mode: read}]
  - name: writers
    match: {groups: [eng], scopes: ["tools:write"]}
    grants: [{connector: github, operations: ["issues.*"], mode: write, confirm: allow}]
    connect: true
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPolicyCheck: a valid policy is summarised; with a token (claims
// JSON, a JWT from stdin) the grant, rules and step-up are printed; a
// token of an untrusted issuer gets nothing.
func TestPolicyCheck(t *testing.T) {
	file := writeFile(t, "policy.yaml", checkPolicy)
	code, out, errOut := runCLI(t, "", "policy", "check", file)
	if code != 0 || out != file+": ok (2 issuer(s), 2 rule(s), 0 token exchange(s))\n" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	claims := writeFile(t, "claims.json", `{"iss":"https://idp.example","sub":"ada","scope":"openid tools:read","groups":["eng"],"by_grants":[{"connector":"github","operations":["*"],"mode":"write"}]}`)
	code, out, errOut = runCLI(t, "", "policy", "check", file, "--token", claims)
	want := `claims read without verifying the token's signature, audience or times
issuer:  https://idp.example
person:  idp:ada
scopes:  openid tools:read
groups:  eng
roles:   (none)
tenant:  (none)
rules:   readers
connect: no
grant:   [{"connector":"github","operations":["*"],"mode":"read"}]
step-up: with tools:write the grant is [{"connector":"github","operations":["*"],"mode":"read"},{"connector":"github","operations":["issues.*"],"mode":"write","confirm":"allow"}]
`
	if code != 0 || out != want {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	seg := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	jwt := seg(`{"alg":"RS256"}`) + "." + seg(`{"iss":"https://entra.example/v2.0","sub":"grace","scp":"tools:write","groups":["eng"],"tid":"t1"}`) + ".c2ln"
	code, out, errOut = runCLI(t, jwt+"\n", "policy", "check", file, "--token", "-", "--json")
	if code != 0 || out != `{"issuer":"https://entra.example/v2.0","subject":"grace","person":"entra:grace","rules":["writers"],"connect":true,`+
		`"grants":[{"connector":"github","operations":["issues.*"],"mode":"write","confirm":"allow"}],"step_up":[{"scopes":["tools:read"],`+
		`"grants":[{"connector":"github","operations":["*"],"mode":"read"},{"connector":"github","operations":["issues.*"],"mode":"write","confirm":"allow"}]}]}`+"\n" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct{ token, want string }{
		{`{"iss":"https://elsewhere","sub":"ada"}`, "anvil: the gateway would refuse this token: Token issuer is not accepted."},
		{`{"iss":"https://idp.example","sub":"ada","groups":7}`, "anvil: the gateway would refuse this token: Token claim groups must be a string or a list"},
		{`{"iss":"https://idp.example"}`, "anvil: the gateway would refuse this token: Token subject (sub)"},
		{"not a token", "anvil: --token: neither a JSON object of claims nor a compact JWT"},
	} {
		code, _, errOut := runCLI(t, "", "policy", "check", file, "--token", c.token)
		if code != 1 || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%s: exit %d %s", c.token, code, errOut)
		}
	}
}

// TestPolicyCheckProblems: every problem is printed with its position and
// code, and the exit is 1.
func TestPolicyCheckProblems(t *testing.T) {
	file := writeFile(t, "bad.yaml", "version: 1\nissuers: [{issuer: \"http://idp.example\"}]\nrules: [{name: r, match: {}, grants: [{connector: github, operations: [\"*\"], mode: admin}]}]\n")
	code, out, errOut := runCLI(t, "", "policy", "check", file)
	want := file + ":2:20: policy/invalid_value: issuer must be https: (http: only on a loopback host: localhost, 127.0.0.1, [::1])\n" +
		file + ":3:39: policy/invalid_value: grant entry: mode must be read or write\n" +
		"anvil: " + file + ": 2 problem(s); the gateway would not use this policy\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d\nstdout %s\nstderr %s\nwant %s", code, out, errOut, want)
	}
	if code, _, _ := runCLI(t, "", "policy", "check"); code != 2 {
		t.Errorf("no argument: exit %d", code)
	}
}

// TestSchemaPolicyPrintsRepositoryFile: anvil schema policy prints the
// repository's file.
func TestSchemaPolicyPrintsRepositoryFile(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "schema", "policy")
	want, err := os.ReadFile("../../" + schemas.PolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !bytes.Equal([]byte(stdout), want) {
		t.Fatalf("exit %d %s", code, stderr)
	}
}
