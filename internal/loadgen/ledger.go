package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/internal/pgtest"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// The keyed-write rows: POST /call/github__github_create_comment with a
// new Idempotency-Key on every request, so each one is a new ledger entry
// (Begin before the upstream, the upstream write, Complete after it; see
// docs/state.md), through the gateway on the embedded store (the gateway
// measured above) and through one on PostgreSQL (ANVIL_STORE). The
// PostgreSQL server is internal/pgtest's: the one ANVIL_TEST_POSTGRES
// names, or a throwaway one started from /usr/lib/postgresql/*/bin that
// syncs every commit to disk (pgtest.StartDurable), as the embedded store
// syncs its file on every write transaction; the gateway gets a schema of
// its own.
const (
	ledgerEmbedded = "ledger embedded"
	ledgerPostgres = "ledger postgres"
	writeTool      = "/call/github__github_create_comment"
	writeBody      = `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"load"}}`
)

// ledgerTargets returns the keyed-write targets. Without PostgreSQL it
// prints one line saying why the PostgreSQL row is skipped and returns the
// embedded row alone.
func ledgerTargets(st *stack, procs *procOptions, cfg serve.Config, ws, dir string, writeTok, connectTok string, client *http.Client) ([]target, error) {
	var seq atomic.Int64
	keyed := func(base string) func() (func() error, func(), error) {
		return func() (func() error, func(), error) {
			c := &http.Client{Transport: tunedTransport(1), Timeout: 10 * time.Second}
			h := http.Header{"Authorization": {"Bearer " + writeTok}, "Content-Type": {"application/json"}}
			return func() error {
				hk := h.Clone()
				hk.Set("Idempotency-Key", "loadgen-"+strconv.FormatInt(seq.Add(1), 10))
				return expect200(c, "POST", base+writeTool, hk, writeBody, nil)
			}, c.CloseIdleConnections, nil
		}
	}
	targets := []target{{ledgerEmbedded, keyed(st.gateway)}}

	srv, err := pgtest.StartDurable()
	if err != nil {
		fmt.Printf("loadgen: the PostgreSQL row is skipped (%v)\n", err)
		return targets, nil
	}
	st.onStop(srv.Close)
	dsn, err := srv.NewSchema()
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	cfg.VaultDir = filepath.Join(dir, "vault-postgres")
	cfg.AuditFile = filepath.Join(dir, "audit-postgres.jsonl")
	var base string
	if procs != nil {
		env := append(gatewayEnv(cfg), "ANVIL_AUDIT_FILE="+cfg.AuditFile, "ANVIL_STORE="+dsn)
		if base, err = startGateway(st, procs.anvil, ws, env); err != nil { // procs.go
			return nil, fmt.Errorf("the gateway on PostgreSQL: %w", err)
		}
	} else {
		cfg.Getenv = func(k string) string {
			if k == "ANVIL_STORE" {
				return dsn
			}
			return ""
		}
		f, err := fleet.Load(ws)
		if err != nil {
			return nil, err
		}
		var stop func()
		if base, stop, err = serveGateway(cfg, f); err != nil { // procs.go
			return nil, fmt.Errorf("the gateway on PostgreSQL: %w", err)
		}
		st.onStop(stop)
	}
	// Its vault records are in PostgreSQL: connect there too.
	if err := expect200(client, "POST", base+"/connect/api-key", http.Header{"Authorization": {"Bearer " + connectTok},
		"Content-Type": {"application/json"}}, `{"connector":"github","api_key":"`+upstreamPAT+`"}`, nil); err != nil {
		return nil, fmt.Errorf("connecting the gateway on PostgreSQL: %w", err)
	}
	return append(targets, target{ledgerPostgres, keyed(base)}), nil
}

// printLedger compares the PostgreSQL row with the embedded one.
func printLedger(targets []target, results []result) {
	idx := map[string]int{}
	for i, t := range targets {
		idx[t.name] = i
	}
	ei, ok1 := idx[ledgerEmbedded]
	pi, ok2 := idx[ledgerPostgres]
	if !ok1 || !ok2 {
		return
	}
	e, p := results[ei], results[pi]
	fmt.Printf("\nkeyed writes (POST %s, a new Idempotency-Key each: one ledger entry per request):\n", writeTool)
	fmt.Printf("%-16s throughput %.2fx the embedded store, p50 %.2fx, p99 %.2fx\n", ledgerPostgres,
		p.rps/e.rps, float64(p.p50)/float64(e.p50), float64(p.p99)/float64(e.p99))
}
