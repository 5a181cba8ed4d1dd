package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// syntheticSpec writes an OpenAPI description of n operations into dir:
// every one answers a Page whose properties reach n/20 named schemas, and
// every other one also takes one in its body. What each operation stores
// stays the same size, but its contract (and its anvil.lock entry) grows
// with the API, as Microsoft Graph's do.
func syntheticSpec(t testing.TB, dir string, n int) string {
	t.Helper()
	k := n / 20
	page := map[string]any{}
	schemas := map[string]any{}
	for j := range k {
		name := fmt.Sprintf("Field%d", j)
		page[fmt.Sprintf("f%d", j)] = map[string]any{"$ref": "#/components/schemas/" + name}
		schemas[name] = map[string]any{"type": "object", "description": "Field " + name,
			"properties": map[string]any{"v": map[string]any{"type": "string", "maxLength": j + 1}}}
	}
	schemas["Page"] = map[string]any{"type": "object", "properties": page}
	ref := map[string]any{"$ref": "#/components/schemas/Page"}
	paths := map[string]any{}
	for i := range n {
		op := map[string]any{"operationId": fmt.Sprintf("op%d", i),
			"responses": map[string]any{"200": map[string]any{"description": "ok",
				"content": map[string]any{"application/json": map[string]any{"schema": ref}}}}}
		method := "get"
		if i%2 == 1 {
			method = "post"
			body := map[string]any{"type": "object", "properties": map[string]any{"page": ref, "note": map[string]any{"type": "string"}}}
			op["requestBody"] = map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": body}}}
		}
		paths[fmt.Sprintf("/items%d", i)] = map[string]any{method: op}
	}
	b, err := json.Marshal(map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "Syn", "version": "1"},
		"paths": paths, "components": map[string]any{"schemas": schemas}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// approveAllOnce compiles spec into dir and returns a function that
// approves every operation and records them in a fresh anvil.lock.
func approveAllOnce(tb testing.TB, dir, spec, service string) func() {
	tb.Helper()
	bundle := filepath.Join(dir, "ws", service)
	manifest := filepath.Join(dir, "anvil.yaml")
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	if code := runEnv(context.Background(), e, []string{"anvil", "compile", spec, "--service", service, "--out", bundle, "--root", dir}); code != 0 {
		tb.Fatalf("compile: %s", e.stderr)
	}
	return func() {
		os.Remove(filepath.Join(dir, "anvil.lock"))
		if code := runEnv(context.Background(), e, []string{"anvil", "approve", bundle, "--all", "--manifest", manifest}); code != 0 {
			tb.Fatalf("approve: %s", e.stderr)
		}
	}
}

// TestApproveAllScalesLinearly: doubling a synthetic API (operations, and
// the named schemas each reaches) must not much more than double what
// approve --all allocates. Building each operation's contract copied
// every schema it reaches (3.8 times the allocations for twice the API); the lock now encodes each named schema once and assembles the
// contracts from those bytes. Allocation counts, not time, so the test is
// stable on a loaded machine.
func TestApproveAllScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	allocs := map[int]float64{}
	for _, n := range []int{1000, 2000} {
		dir := t.TempDir()
		run := approveAllOnce(t, dir, syntheticSpec(t, dir, n), "syn")
		allocs[n] = testing.AllocsPerRun(1, run)
	}
	ratio := allocs[2000] / allocs[1000]
	t.Logf("allocations: %.0f for 1000 operations, %.0f for 2000 (×%.2f)", allocs[1000], allocs[2000], ratio)
	if ratio > 2.6 {
		t.Errorf("approve --all allocates ×%.2f for twice the API: more than linear", ratio)
	}
}

// TestApproveStopsOnSignal: SIGTERM (or SIGINT) during approve ends it
// with nothing written: the old lock and bundle stay as they were and no
// temporary file is left.
func TestApproveStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	spec := syntheticSpec(t, dir, 4000)
	bin := filepath.Join(t.TempDir(), "anvil")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	bundle := filepath.Join(dir, "ws", "syn")
	if out, err := exec.Command(bin, "compile", spec, "--service", "syn", "--out", bundle, "--root", dir).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	before := snapshot(t, dir)
	// Each attempt works on a fresh copy of dir: an attempt the signal
	// missed finishes the approval, and the next must start from scratch.
	approve := func(sig syscall.Signal, after time.Duration) (stopped bool, stderr, now string) {
		cp := copyTree(t, dir)
		cmd := exec.Command(bin, "approve", filepath.Join(cp, "ws", "syn"), "--all", "--manifest", filepath.Join(cp, "anvil.yaml"))
		var buf bytes.Buffer
		cmd.Stderr = &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		// Finished before the signal, or got it before it listened: nothing to check.
		return err != nil && !(ok && ws.Signaled()), buf.String(), snapshot(t, cp)
	}
	// The signal must land while approve works, so the delays are fractions
	// of how long a whole approval takes on this machine now (measured on a
	// copy), not fixed times that a loaded machine overruns.
	whole := measureApproval(t, bin, dir)
	stopped := 0
	for i, frac := range []float64{0.5, 0.3, 0.7, 0.2, 0.85, 0.4, 0.6} {
		sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}[i%2]
		after := time.Duration(frac * float64(whole))
		ok, stderr, now := approve(sig, after)
		if !ok {
			continue
		}
		stopped++
		if !strings.Contains(stderr, "Approval interrupted: nothing was changed") {
			t.Errorf("%v after %v: %s", sig, after, stderr)
		}
		if now != before {
			t.Fatalf("%v after %v changed the files:\n%s\nwas\n%s", sig, after, now, before)
		}
		if stopped == 2 {
			break
		}
	}
	if stopped == 0 {
		t.Errorf("approve (%v in whole) finished or had not started listening at every signal: nothing was tested", whole)
	}
}

// copyTree copies dir into a new temporary directory and returns it.
func copyTree(t *testing.T, dir string) string {
	t.Helper()
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return cp
}

// measureApproval times one uninterrupted `approve --all` of a copy of dir.
func measureApproval(t *testing.T, bin, dir string) time.Duration {
	t.Helper()
	cp := copyTree(t, dir)
	start := time.Now()
	cmd := exec.Command(bin, "approve", filepath.Join(cp, "ws", "syn"), "--all", "--manifest", filepath.Join(cp, "anvil.yaml"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	return time.Since(start)
}

// snapshot lists dir's files with the sha256 of each.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %x\n", rel, sha256.Sum256(data))
		return nil
	})
	return b.String()
}

// BenchmarkApproveAll is anvil approve --all (load, select, record every
// approval in a fresh anvil.lock, render and write the bundle) on GitHub's
// REST description.
func BenchmarkApproveAll(b *testing.B) {
	dir := b.TempDir()
	run := approveAllOnce(b, dir, githubSpec(b), "github")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		run()
	}
}
