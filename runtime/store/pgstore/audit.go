package pgstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/store"
)

// The fleet's shared audit trail (docs/state.md, "The audit chain"). Each
// replica ships the records of its own audit file (audit.Shipper) into one
// table, anvil_audit, in the order the replicas' transactions take the
// head row's lock: row n's link is the MAC of row n-1's link, n and the
// record, under the same chain key as the files. A record is appended at
// most once (UNIQUE (source, source_seq)), and triggers refuse UPDATE,
// DELETE and TRUNCATE: the table only grows. Someone who can drop the
// triggers and holds the key can still rewrite it; the head (anvil audit
// verify prints it) anchored elsewhere shows that.

// rowLink is a row's link: MAC(prev "\n" seq "\n" record).
func rowLink(key []byte, prev string, seq int64, record string) string {
	b := make([]byte, 0, len(prev)+len(record)+24)
	b = append(b, prev...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, '\n')
	b = append(b, record...)
	return audit.Link(key, b)
}

// chainKey is the audit chain key of the store's vault key.
func (s *Store) chainKey() ([]byte, error) { return audit.ChainKey(s.opts.Key) }

// AuditShipped is the highest seq of source's records in the table (0:
// none).
func (s *Store) AuditShipped(ctx context.Context, source string) (uint64, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.OpTimeout)
	defer cancel()
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(source_seq), 0) FROM anvil_audit WHERE source = $1`, source).Scan(&n)
	if err != nil {
		return 0, classify(err)
	}
	return uint64(n), nil
}

// AppendAudit appends records of source, in order, after the table's head,
// in one transaction; records already in the table are skipped, so a
// batch shipped twice (a replica that died before it learnt the first
// commit) lands once.
func (s *Store) AppendAudit(ctx context.Context, source string, recs []audit.ShipRecord) error {
	key, err := s.chainKey()
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrConfig, err)
	}
	return s.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var seq int64
		var link string
		err := tx.QueryRow(ctx, `SELECT seq, link FROM anvil_audit_head WHERE id = 1 FOR UPDATE`).Scan(&seq, &link)
		if isNoRows(err) {
			// The first append: take the table's lock so that two first
			// appends do not both start at 1.
			if _, err := tx.Exec(ctx, `LOCK TABLE anvil_audit_head IN EXCLUSIVE MODE`); err != nil {
				return err
			}
			err = tx.QueryRow(ctx, `SELECT seq, link FROM anvil_audit_head WHERE id = 1`).Scan(&seq, &link)
			if isNoRows(err) {
				seq, link, err = 0, audit.Genesis(audit.Alg(key)), nil
			}
		}
		if err != nil {
			return err
		}
		var shipped int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(source_seq), 0) FROM anvil_audit WHERE source = $1`, source).Scan(&shipped); err != nil {
			return err
		}
		var batch pgx.Batch
		for _, r := range recs {
			if int64(r.Seq) <= shipped {
				continue
			}
			seq++
			next := rowLink(key, link, seq, string(r.Line))
			batch.Queue(`INSERT INTO anvil_audit (seq, source, source_seq, record, prev, link) VALUES ($1, $2, $3, $4, $5, $6)`,
				seq, source, int64(r.Seq), string(r.Line), link, next)
			link = next
		}
		if batch.Len() == 0 {
			return nil
		}
		batch.Queue(`INSERT INTO anvil_audit_head (id, seq, link) VALUES (1, $1, $2)
			ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, link = EXCLUDED.link`, seq, link)
		return tx.SendBatch(ctx, &batch).Close()
	})
}

// VerifyAudit walks the table in seq order and checks its chain (see
// verifyAudit).
func (s *Store) VerifyAudit(ctx context.Context, head string) (audit.Report, error) {
	if err := s.usable(); err != nil {
		return audit.Report{}, err
	}
	key, err := s.chainKey()
	if err != nil {
		return audit.Report{}, err
	}
	return verifyIn(ctx, s.pool, key, head)
}

// beginner starts a transaction: a pool or a connection.
type beginner interface {
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// verifyIn runs verifyAudit in one read-only, repeatable-read transaction:
// the rows and the head row are one snapshot, however the replicas append
// meanwhile.
func verifyIn(ctx context.Context, b beginner, key []byte, head string) (audit.Report, error) {
	tx, err := b.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return audit.Report{}, classify(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read only
	return verifyAudit(ctx, tx, key, head)
}

// VerifyAuditTable checks the shared audit table of the database dsn names
// over one connection of its own, reading only: no schema is created or
// migrated (anvil audit verify). vaultKey is the gateways' vault key.
func VerifyAuditTable(ctx context.Context, dsn string, vaultKey []byte, head string) (audit.Report, error) {
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return audit.Report{}, fmt.Errorf("%w: not a valid PostgreSQL connection string", store.ErrConfig)
	}
	if cc.ConnectTimeout <= 0 {
		cc.ConnectTimeout = connectTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return audit.Report{}, classify(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	key, err := audit.ChainKey(vaultKey)
	if err != nil {
		return audit.Report{}, err
	}
	return verifyIn(ctx, conn, key, head)
}

// querier is what verifyAudit reads through: a pool or one connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// verifyAudit walks anvil_audit in seq order and checks its chain: seq
// runs from 1 without a gap, each row's prev is the row before's link,
// each link is the MAC of its row, and the head row names the last row; a
// head anchored elsewhere (head) must be one of the links. It returns the
// first problem found, as an *audit.VerifyError whose Line is the row's
// seq.
func verifyAudit(ctx context.Context, q querier, key []byte, head string) (audit.Report, error) {
	var rep audit.Report
	rows, err := q.Query(ctx, `SELECT seq, record, prev, link FROM anvil_audit ORDER BY seq`)
	if err != nil {
		return rep, classify(err)
	}
	defer rows.Close()
	want, prevLink := int64(1), audit.Genesis(audit.Alg(key))
	rep.Alg = audit.Alg(key)
	headSeen := head == ""
	for rows.Next() {
		var seq int64
		var record, prev, link string
		if err := rows.Scan(&seq, &record, &prev, &link); err != nil {
			return rep, classify(err)
		}
		switch {
		case seq > want:
			return rep, &audit.VerifyError{Line: int(seq), Problem: fmt.Sprintf("rows %d to %d are missing", want, seq-1)}
		case prev != prevLink:
			return rep, &audit.VerifyError{Line: int(seq), Problem: fmt.Sprintf("row %d's link to row %d does not match it: one of them was edited", seq, seq-1)}
		case link != rowLink(key, prev, seq, record):
			return rep, &audit.VerifyError{Line: int(seq), Problem: fmt.Sprintf("row %d was edited", seq)}
		}
		if rep.Records == 0 {
			rep.FirstSeq = uint64(seq)
		}
		rep.Records++
		rep.LastSeq = uint64(seq)
		want, prevLink = seq+1, link
		if link == head {
			headSeen = true
		}
	}
	if err := rows.Err(); err != nil {
		return rep, classify(err)
	}
	if rep.Records > 0 {
		rep.Head = prevLink
	}
	var hseq int64
	var hlink string
	err = q.QueryRow(ctx, `SELECT seq, link FROM anvil_audit_head WHERE id = 1`).Scan(&hseq, &hlink)
	switch {
	case isNoRows(err) && rep.Records == 0:
	case err != nil && !isNoRows(err):
		return rep, classify(err)
	case hseq != int64(rep.LastSeq) || hlink != rep.Head:
		return rep, &audit.VerifyError{Line: int(hseq), Problem: fmt.Sprintf("the head row names row %d, but the table ends at row %d: rows were removed from its end", hseq, rep.LastSeq)}
	}
	if !headSeen {
		return rep, &audit.VerifyError{Problem: fmt.Sprintf("the anchored head %s is not in the table: rows were removed from its end, or it was rewritten", head)}
	}
	return rep, nil
}
