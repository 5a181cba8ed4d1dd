package serve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/credential"
)

// TestLedgerConflictBothDoors: the same ledger id with other arguments is
// refused as conflict, REST 409 and an MCP tool error with the same code,
// and nothing more goes upstream.
func TestLedgerConflictBothDoors(t *testing.T) {
	f := newFleetFixture(t, nil)
	write := f.turn(fxWriteGrant)
	key := http.Header{"Idempotency-Key": {"ledger-conflict-1"}}
	a := f.call(write, "github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"one"}}`, key)
	if a.status != 200 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	b := f.call(write, "github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"two"}}`, key)
	if b.status != http.StatusConflict || b.errCode() != "conflict" {
		t.Fatalf("REST conflict: %d %s", b.status, b.body)
	}
	s := f.rawInitialize(write)
	res := s.callTool("github__github_create_comment", map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "three"},
		map[string]any{"idempotency_key": "ledger-conflict-1"})
	if e := toolError(t, res); e["code"] != "conflict" {
		t.Fatalf("MCP conflict: %v", e)
	}
	if n := len(f.mock.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
}

// TestStateDownReadyzAnd503: with the store closed /healthz still answers,
// /readyz says the store is down, and a keyed write is refused with 503
// idempotency_ledger_unavailable without reaching the upstream.
func TestStateDownReadyzAnd503(t *testing.T) {
	f := newFleetFixture(t, nil)
	if a := f.do("GET", "/readyz", f.turn(fxReadGrant), "", "", nil); a.status != 200 {
		t.Fatalf("readyz before: %d %s", a.status, a.body)
	}
	if err := f.g.Close(); err != nil {
		t.Fatal(err)
	}
	if a := f.do("GET", "/healthz", "", "", "", nil); a.status != 200 {
		t.Errorf("healthz: %d %s", a.status, a.body)
	}
	if a := f.do("GET", "/readyz", f.turn(fxReadGrant), "", "", nil); a.status != 503 || !strings.Contains(a.body, `"store":"down"`) {
		t.Errorf("readyz with the store down: %d %s", a.status, a.body)
	}
	before := len(f.mock.Requests())
	a := f.call(f.turn(fxWriteGrant), "github__github_create_comment", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"x"}}`,
		http.Header{"Idempotency-Key": {"k-down"}})
	if a.status != 503 || a.errCode() != "idempotency_ledger_unavailable" {
		t.Errorf("keyed write with the store down: %d %s", a.status, a.body)
	}
	if n := len(f.mock.Requests()); n != before {
		t.Errorf("upstream saw %d more requests", n-before)
	}
}

// TestNoVaultKeyNoLedger: without a vault key the gateway runs without a
// ledger and says so once in its log.
func TestNoVaultKeyNoLedger(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(c *Config) {
		c.Auth.Mode, c.VaultKeyFile = "none", ""
	}})
	if f.g.state != nil || f.g.exec.Ledger != nil {
		t.Fatal("a store was opened without a vault key")
	}
	if !strings.Contains(f.logs.String(), "running without the idempotency ledger") {
		t.Errorf("log: %s", f.logs.String())
	}
}

// TestStateFileHeldElsewhere: a second gateway on the same vault directory
// (so the same state file) refuses to start, naming the file, rather than
// serve keyed writes without its ledger.
func TestStateFileHeldElsewhere(t *testing.T) {
	f := newFleetFixture(t, nil)
	cfg := f.config(0)
	getenv := cfg.Getenv
	cfg.Getenv = func(k string) string {
		if k == "ANVIL_STATE_LOCK_WAIT" {
			return "200ms"
		}
		return getenv(k)
	}
	g, err := NewFromDir(cfg, f.ws, &GatewayOptions{Logf: t.Logf})
	if err == nil {
		g.Close()
		t.Fatal("a second gateway started on a state file another one holds")
	}
	if !strings.Contains(err.Error(), "state.db") || !strings.Contains(err.Error(), "held by another gateway process") {
		t.Errorf("refusal: %v", err)
	}
}

// TestSharedRecordsDown: with shared vault records and the store down, a
// call that needs its credential is refused with a coded 503 and nothing
// reaches the upstream.
func TestSharedRecordsDown(t *testing.T) {
	f := newFleetFixture(t, nil)
	// The calls' credentials come from the shared records, as on replicas.
	f.g.exec.Credentials = credential.New(stateVault{f.g.state}, &credential.Options{OAuth: f.g.oauth})
	if err := f.g.Close(); err != nil {
		t.Fatal(err)
	}
	before := len(f.mock.Requests())
	a := f.call(f.turn(fxReadGrant), "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil)
	if a.status != 503 || !strings.Contains(a.body, `"store/unavailable"`) {
		t.Errorf("store down: %d %s", a.status, a.body)
	}
	if n := len(f.mock.Requests()); n != before {
		t.Errorf("upstream saw %d more requests", n-before)
	}
}
