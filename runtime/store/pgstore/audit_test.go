package pgstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
	"github.com/anvil-dev/anvil/runtime/store/storetest"
)

// TestSharedAuditTrail: three replicas, each with its own audit file,
// ship their records into one table: each record lands once, in one chain
// that verifies, even when a shipper starts again (a replica restarted)
// or two ship the same file; the table refuses UPDATE, DELETE and
// TRUNCATE; and a row edited behind the triggers' back is found.
func TestSharedAuditTrail(t *testing.T) {
	dsn := freshDSN(t)
	key := storetest.TestKey()
	chain, _ := audit.ChainKey(key)
	opts := storetest.Options(storetest.NewClock())
	dir := t.TempDir()
	const perReplica = 40
	var stops []func()
	for i := 0; i < 3; i++ {
		st := open(t, dsn, opts)
		l, err := audit.OpenWith(filepath.Join(dir, string(rune('a'+i))+".jsonl"), audit.Options{ChainKey: chain})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		stops = append(stops, l.Ship(st, t.Logf))
		if i == 0 {
			// The same file shipped by a second shipper (a replica
			// restarted while the first still ran): still once.
			stops = append(stops, l.Ship(open(t, dsn, opts), t.Logf))
		}
		for j := 0; j < perReplica; j++ {
			if err := l.Write(audit.Line{Sub: "s", Connector: "c", Operation: "o", Decision: audit.DecisionAllowed, TraceID: audit.NewTraceID(), EffectClass: "read"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := open(t, dsn, opts)
	ctx := context.Background()
	var rep audit.Report
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		rep, err = st.VerifyAudit(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if rep.Records == 3*perReplica {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the table holds %d records, want %d", rep.Records, 3*perReplica)
		}
	}
	for _, stop := range stops {
		stop()
	}
	if r, err := pgstore.VerifyAuditTable(ctx, dsn, key, rep.Head); err != nil || r.Records != rep.Records {
		t.Fatalf("VerifyAuditTable: %+v %v", r, err)
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{`UPDATE anvil_audit SET record = 'x' WHERE seq = 5`, `DELETE FROM anvil_audit WHERE seq = 5`, `TRUNCATE anvil_audit`} {
		if _, err := conn.Exec(ctx, sql); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// An operator who drops the triggers can edit a row; the chain shows it.
	if _, err := conn.Exec(ctx, `ALTER TABLE anvil_audit DISABLE TRIGGER anvil_audit_no_change`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE anvil_audit SET record = replace(record, '"sub":"s"', '"sub":"x"') WHERE seq = 7`); err != nil {
		t.Fatal(err)
	}
	_, err = st.VerifyAudit(ctx, "")
	var ve *audit.VerifyError
	if !errors.As(err, &ve) || ve.Line != 7 || !strings.Contains(ve.Problem, "row 7 was edited") {
		t.Fatalf("edited row: %v", err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM anvil_audit WHERE seq > 100`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE anvil_audit SET record = replace(record, '"sub":"x"', '"sub":"s"') WHERE seq = 7`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.VerifyAudit(ctx, ""); err == nil || !strings.Contains(err.Error(), "removed from its end") {
		t.Fatalf("rows removed from the end: %v", err)
	}
}
