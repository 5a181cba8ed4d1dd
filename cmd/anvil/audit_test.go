package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// TestAuditVerify: anvil audit verify passes a file the gateway's logger
// wrote (keyed by the vault key), prints its head, and exits 1 naming the
// line of the first edited or missing record, or when the anchored head is
// gone.
func TestAuditVerify(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "vault.key")
	if err := vault.WriteNewKey(keyFile); err != nil {
		t.Fatal(err)
	}
	k, err := vault.LoadKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	chain, _ := audit.ChainKey(k)
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.OpenWith(path, audit.Options{ChainKey: chain})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if err := l.Write(audit.Line{Sub: "s", Connector: "c", Operation: "o", Decision: audit.DecisionAllowed, TraceID: audit.NewTraceID()}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	code, out, errOut := runCLI(t, "", "audit", "verify", path, "--key-file", keyFile)
	if code != 0 || !strings.HasPrefix(out, "ok: "+path+": 4 record(s), seq 1 to 4, hmac-sha256 chain; head hmac-sha256:") {
		t.Fatalf("verify: %d %q %q", code, out, errOut)
	}
	head := strings.TrimSpace(out[strings.LastIndex(out, "head ")+5:])
	if code, _, errOut := runCLI(t, "", "audit", "verify", path); code != 1 || !strings.Contains(errOut, "vault key") {
		t.Errorf("without the key: %d %q", code, errOut)
	}
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	edited := strings.Replace(lines[1], `"sub":"s"`, `"sub":"t"`, 1)
	for name, c := range map[string]struct{ file, says string }{
		"edited":    {lines[0] + edited + lines[2] + lines[3], "line 2: record 2 was edited"},
		"removed":   {lines[0] + lines[2] + lines[3], "line 2: record 3 follows record 1: records 2 to 2 are missing"},
		"truncated": {lines[0] + lines[1] + lines[2][:30], "line 3: the file ends in a truncated record"},
		"tail gone": {lines[0] + lines[1], "the anchored head " + head + " is not in the file"},
	} {
		if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI(t, "", "audit", "verify", path, "--key-file", keyFile, "--head", head)
		if code != 1 || !strings.Contains(errOut, c.says) {
			t.Errorf("%s: %d %q, want %q", name, code, errOut, c.says)
		}
	}
}
