package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/anvil-dev/anvil/runtime/store"
)

// migrations[i] takes the schema from version i to i+1. Append only: a
// released migration is never edited. SchemaVersion is len(migrations).
var migrations = []string{
	// 1: vault records, pending flows, the ledger, MCP sessions.
	`
CREATE TABLE anvil_vault (
	coords_digest text PRIMARY KEY,  -- sha256 hex of the coordinates (the vault file name without .json)
	sub           text NOT NULL,
	connector     text NOT NULL,
	account       text NOT NULL,
	record        bytea NOT NULL,    -- runtime/vault record bytes: AES-256-GCM, coordinates as AAD
	updated_at    timestamptz NOT NULL
);
CREATE INDEX anvil_vault_sub ON anvil_vault (sub);
CREATE TABLE anvil_flows (
	state_digest bytea PRIMARY KEY,  -- sha256 of the OAuth state
	sub          text NOT NULL,
	expires_at   timestamptz NOT NULL,
	payload      bytea NOT NULL      -- sealed
);
CREATE INDEX anvil_flows_expires ON anvil_flows (expires_at);
CREATE TABLE anvil_ledger (
	subject     text NOT NULL,
	ledger_id   text NOT NULL,
	tool        text NOT NULL,
	input_hash  text NOT NULL,
	state       smallint NOT NULL,   -- 1 in flight, 2 done
	owner       text,                -- lease owner while in flight
	lease_until timestamptz NOT NULL,
	done_at     timestamptz,
	answer      bytea,               -- sealed first answer and effect report
	PRIMARY KEY (subject, ledger_id)
);
CREATE TABLE anvil_sessions (
	id_digest   bytea PRIMARY KEY,   -- sha256 of the MCP session id
	fingerprint text NOT NULL,
	last_seen   timestamptz NOT NULL
);
CREATE INDEX anvil_sessions_seen ON anvil_sessions (last_seen);
`,
	// 2: when a ledger entry's current attempt began (an outcome_unknown
	// answer names it); the fleet's shared audit trail, append-only and
	// chained (audit.go).
	`
ALTER TABLE anvil_ledger ADD COLUMN began_at timestamptz;
CREATE TABLE anvil_audit (
	seq        bigint PRIMARY KEY,   -- 1, 2, 3 … in the order rows were appended
	source     text NOT NULL,        -- the audit file's chain: the link of its first record
	source_seq bigint NOT NULL,      -- the record's seq in that file
	record     text NOT NULL,        -- the audit line as the file holds it
	prev       text NOT NULL,        -- the previous row's link (the genesis link for seq 1)
	link       text NOT NULL,        -- MAC of prev, seq and record under the chain key
	UNIQUE (source, source_seq)
);
CREATE TABLE anvil_audit_head (
	id   smallint PRIMARY KEY CHECK (id = 1),
	seq  bigint NOT NULL,
	link text NOT NULL
);
CREATE FUNCTION anvil_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS
	$$ BEGIN RAISE EXCEPTION 'anvil_audit is append-only'; END $$;
CREATE TRIGGER anvil_audit_no_change BEFORE UPDATE OR DELETE ON anvil_audit
	FOR EACH ROW EXECUTE FUNCTION anvil_audit_append_only();
CREATE TRIGGER anvil_audit_no_truncate BEFORE TRUNCATE ON anvil_audit
	FOR EACH STATEMENT EXECUTE FUNCTION anvil_audit_append_only();
`,
}

// SchemaVersion is the schema this package creates and reads.
var SchemaVersion = len(migrations)

// VersionTable records every applied schema version, one row each.
const VersionTable = "anvil_schema_version"

// migrationLock is the advisory lock key that serialises migrations of
// replicas starting together.
const migrationLock int64 = 0x616e76696c5f6d67 // "anvil_mg"

// migrate brings the schema up to SchemaVersion in one transaction, or
// refuses (ErrSchema) a database already at a newer version.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return classify(err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+VersionTable+` (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return classify(err)
	}
	var cur int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+VersionTable).Scan(&cur); err != nil {
		return classify(err)
	}
	if cur > SchemaVersion {
		return fmt.Errorf("%w: the database schema is version %d, newer than this gateway's %d; upgrade the gateway (or point ANVIL_STORE at another database)",
			store.ErrSchema, cur, SchemaVersion)
	}
	for v := cur + 1; v <= SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
			return fmt.Errorf("migrating to schema version %d: %w", v, classify(err))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+VersionTable+` (version) VALUES ($1)`, v); err != nil {
			return classify(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return classify(err)
	}
	return nil
}

// isNoRows reports pgx's "no row" answer.
func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
