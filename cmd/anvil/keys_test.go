package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/buildinfo"
	"github.com/anvil-dev/anvil/runtime/vault"
)

func TestVersion(t *testing.T) {
	want := buildinfo.Read().String() + "\n"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("anvil %v: exit %d, stdout %q (want %q), stderr %q", args, code, stdout, want, stderr)
		}
	}
	code, stdout, _ := runCLI(t, "", "version", "--json")
	var info buildinfo.Info
	if err := json.Unmarshal([]byte(stdout), &info); code != 0 || err != nil || info != buildinfo.Read() {
		t.Errorf("anvil version --json: exit %d, %q (%v)", code, stdout, err)
	}
}

// TestVersionOfABuiltBinary builds anvil as a person would, with VCS
// stamping, and checks that `anvil version` names the checkout's revision.
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("links the anvil binary")
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	// The go command stamps a revision only where .git is a directory: not
	// in a linked worktree, whose .git is a file.
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if fi, serr := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || serr != nil || !fi.IsDir() {
		t.Skip("a linked git worktree: the go command records no revision")
	}
	bin := filepath.Join(t.TempDir(), "anvil")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info buildinfo.Info
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if info.Revision != strings.TrimSpace(string(rev)) || info.Main != buildinfo.Module || info.Anvil == buildinfo.Unknown {
		t.Errorf("anvil version --json = %+v, want revision %s", info, rev)
	}
}

func TestKeysInitAndTokenMint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "yard")
	code, stdout, stderr := runCLI(t, "", "keys", "init", dir)
	if code != 0 {
		t.Fatalf("keys init: exit %d, %s", code, stderr)
	}
	var res struct{ Kid, JWKS string }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !strings.HasPrefix(res.Kid, "by-") || res.JWKS != filepath.Join(dir, "jwks.json") {
		t.Errorf("keys init printed %q", stdout)
	}
	if !strings.Contains(stderr, "ANVIL_INBOUND_JWKS_URI=file://"+res.JWKS) {
		t.Errorf("keys init stderr %q", stderr)
	}
	if code, _, stderr := runCLI(t, "", "keys", "init", dir); code != 1 || !strings.Contains(stderr, "already holds a signing key") {
		t.Errorf("second keys init: exit %d, %q", code, stderr)
	}

	aud := "http://127.0.0.1:8931/mcp"
	v, err := auth.NewVerifier(auth.Config{Mode: auth.ModeBranchyard, Issuer: "branchyard:local:op", Audience: aud,
		JWKSURI: "file://" + res.JWKS, Leeway: auth.DefaultLeeway}, nil)
	if err != nil {
		t.Fatal(err)
	}
	grantFile := filepath.Join(t.TempDir(), "grants.json")
	if err := os.WriteFile(grantFile, []byte(`[{"connector":"github","operations":["issues.*"],"mode":"write","confirm":"allow"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"token", "mint", dir, "--iss", "branchyard:local:op", "--aud", aud, "--sub", "local:ada"}
	code, stdout, stderr = runCLI(t, "", append(common, "--grants", "@"+grantFile, "--tenant", "acme", "--branch", "octo/hello:main", "--turn", "turn-3", "--ttl", "90")...)
	if code != 0 || !strings.HasSuffix(stdout, "\n") {
		t.Fatalf("token mint: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	c, err := v.Verify(context.Background(), "Bearer "+strings.TrimSpace(stdout))
	if err != nil {
		t.Fatalf("the gateway's verifier refuses the minted token: %v", err)
	}
	if c.Subject != "local:ada" || c.Tenant != "acme" || c.Branch != "octo/hello:main" || c.Turn != "turn-3" || c.IsConnect() ||
		c.Expiry.Sub(c.IssuedAt) != 90*time.Second || string(c.RawGrants) != `[{"connector":"github","operations":["issues.*"],"mode":"write","confirm":"allow"}]` {
		t.Errorf("claims %+v, grants %s", c, c.RawGrants)
	}

	code, stdout, stderr = runCLI(t, "", append(common, "--purpose", "connect", "--ttl", "5m")...)
	if code != 0 {
		t.Fatalf("connect token: exit %d, %s", code, stderr)
	}
	c, err = v.Verify(context.Background(), "Bearer "+strings.TrimSpace(stdout))
	if err != nil || !c.IsConnect() || c.Expiry.Sub(c.IssuedAt) != 5*time.Minute || string(c.RawGrants) != "[]" || c.Tenant != "local" {
		t.Errorf("connect token: %v, %+v", err, c)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(strings.TrimSpace(stdout), ".")[1])
	if !strings.Contains(string(payload), `"by_branch":"","by_turn":"","by_grants":[],"by_purpose":"connect"}`) {
		t.Errorf("connect payload %s", payload)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no dir", []string{"token", "mint", "--iss", "i", "--aud", aud, "--sub", "s", "--grants", "[]"}, "takes one key directory"},
		{"no iss", []string{"token", "mint", dir, "--aud", aud, "--sub", "s", "--grants", "[]"}, "needs --iss"},
		{"turn token without grants", common, "a turn token needs --grants"},
		{"grants not JSON", append(common, "--grants", "{"), "by_grants"},
		{"grant file missing", append(common, "--grants", "@"+filepath.Join(dir, "nope.json")), "no such file"},
		{"bad grant", append(common, "--grants", `[{"connector":"github","operations":["*"],"mode":"admin"}]`), "mode must be read or write"},
		{"bad purpose", append(common, "--purpose", "admin", "--grants", "[]"), "--purpose may only be connect"},
		{"connect with grants", append(common, "--purpose", "connect", "--grants", `[{"connector":"github","operations":["*"],"mode":"read"}]`), "no grants, branch or turn"},
		{"connect too long", append(common, "--purpose", "connect", "--ttl", "11m"), "at most 10m0s"},
		{"ttl too long", append(common, "--grants", "[]", "--ttl", "2h"), "from 1s to 1h0m0s"},
		{"ttl zero", append(common, "--grants", "[]", "--ttl", "0"), "from 1s to 1h0m0s"},
		{"ttl not a duration", append(common, "--grants", "[]", "--ttl", "soon"), "--ttl takes seconds"},
		{"turn too long", append(common, "--grants", "[]", "--turn", strings.Repeat("7", 257)), "by_turn is longer than 256 characters"},
		{"no key", []string{"token", "mint", t.TempDir(), "--iss", "i", "--aud", aud, "--sub", "s", "--grants", "[]"}, "run anvil keys init"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			if code != 1 || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

func TestVaultKeygen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets", "vault.key")
	code, stdout, stderr := runCLI(t, "", "vault", "keygen", path)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "ANVIL_VAULT_KEY_FILE="+path) {
		t.Fatalf("vault keygen: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	key, err := vault.LoadKey(path) // the gateway's own reader: mode 0600 and 32 bytes
	if err != nil || len(key) != 32 {
		t.Fatalf("the vault refuses the key: %v", err)
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, _ := os.Stat(p)
		if want := map[bool]os.FileMode{true: 0o600, false: 0o700}[p == path]; fi.Mode().Perm() != want {
			t.Errorf("%s has mode %04o, want %04o", p, fi.Mode().Perm(), want)
		}
	}
	before, _ := os.ReadFile(path)
	if code, _, stderr := runCLI(t, "", "vault", "keygen", path); code != 1 || !strings.Contains(stderr, "is never replaced") {
		t.Errorf("second keygen: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused keygen changed the key")
	}
	other := filepath.Join(filepath.Dir(path), "other.key")
	_, _, _ = runCLI(t, "", "vault", "keygen", other)
	if b, _ := os.ReadFile(other); string(b) == string(before) {
		t.Error("two keys are equal")
	}
	if code, _, stderr := runCLI(t, "", "vault", "keygen"); code != 1 || !strings.Contains(stderr, "usage: anvil vault keygen <file>") {
		t.Errorf("keygen without a file: exit %d, %q", code, stderr)
	}
}

// TestTokenMintChecksConnectorsAgainstTheWorkspace: with --workspace, a
// grant naming a connector the workspace does not serve is refused with
// the nearest id, and nothing is minted; a grant naming served ones mints.
func TestTokenMintChecksConnectorsAgainstTheWorkspace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "yard")
	if code, _, stderr := runCLI(t, "", "keys", "init", dir); code != 0 {
		t.Fatal(stderr)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	copyBundle(t, gatewayFixture, filepath.Join(ws, "github"), "http://127.0.0.1:1", nil)
	copyBundle(t, gatewayFixture, filepath.Join(ws, "team", "tracker"), "http://127.0.0.1:1", nil)
	common := []string{"token", "mint", dir, "--iss", "i", "--aud", "http://127.0.0.1:8931/mcp", "--sub", "s", "--workspace", ws}
	code, stdout, stderr := runCLI(t, "", append(common, "--grants",
		`[{"connector":"githib","operations":["*"],"mode":"read"},{"connector":"team_tracker","operations":["*"],"mode":"read"},{"connector":"jira","operations":["*"],"mode":"read"}]`)...)
	if code != 1 || stdout != "" || !strings.Contains(stderr,
		`the grants name connector(s) "githib" (did you mean "github"?), "jira" that `+ws+` does not serve (it serves: github, team_tracker); nothing was minted`) {
		t.Errorf("misspelled connector: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", append(common, "--grants", `[{"connector":"team_tracker","operations":["*"],"mode":"read"}]`)...)
	if code != 0 || strings.Count(stdout, ".") != 2 {
		t.Errorf("served connector: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "token", "mint", dir, "--iss", "i", "--aud", "a", "--sub", "s", "--grants", "[]", "--workspace", t.TempDir()); code != 1 || !strings.Contains(stderr, "holds no bundles") {
		t.Errorf("empty workspace: exit %d %q", code, stderr)
	}
}
