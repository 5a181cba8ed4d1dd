package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// TestLoadgenRuns runs make load's measurement end to end with tiny
// durations: every target starts, answers 200s and gets its row. It
// measures nothing (the figures of so short a run mean nothing); it keeps
// make load working, which no other test runs: a set-up regression (two
// gateways sharing one state file) once broke it unseen.
func TestLoadgenRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the load generator")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "loadgen")
	t.Logf("building internal/loadgen")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-duration", "40ms", "-rounds", "1", "-conns", "4")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Logf("running loadgen with 40 ms per target")
	if err := cmd.Run(); err != nil {
		t.Fatalf("loadgen: %v\n%s", err, out.String())
	}
	rows := []string{"bare proxy", "gateway /call", "gateway MCP", "generated /call", "generated MCP", "oidc /call", "oidc MCP", "ledger embedded"}
	pgSkipped := strings.Contains(out.String(), "the PostgreSQL row is skipped")
	if !pgSkipped {
		rows = append(rows, "ledger postgres")
	}
	for _, row := range rows {
		if !strings.Contains(out.String(), "\n"+row+" ") {
			t.Errorf("no %q row in loadgen's output:\n%s", row, out.String())
		}
	}
	if pgSkipped {
		testinput.Missing(t, "PostgreSQL for loadgen's ledger row: %s", out.String())
	}
}
