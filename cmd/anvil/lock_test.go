package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
)

// specPair writes the old and new spec of a golden/diff case into dir, with
// its manifest turned into one that approves nothing (so approvals come
// from anvil approve and the lock alone). It returns the three paths.
func specPair(t *testing.T, dir, kind string) (oldSpec, newSpec, manifest string) {
	t.Helper()
	return writeCase(t, dir, kind, func(m string) string { return strings.ReplaceAll(m, "state: approved", "state: review_required") })
}

// writeCase writes a golden/diff case's spec pair and manifest into dir
// (old.yaml, new.yaml, anvil.yaml), the manifest passed through edit.
func writeCase(t *testing.T, dir, kind string, edit func(string) string) (oldSpec, newSpec, manifest string) {
	t.Helper()
	c, err := golden.ReadDiffCase(kind)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"old.yaml": c.OldSpec, "new.yaml": c.NewSpec, "anvil.yaml": []byte(edit(string(c.OldManifest)))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml"), filepath.Join(dir, "anvil.yaml")
}

func states(t *testing.T, bundle string) map[string]air.OperationState {
	t.Helper()
	doc, err := air.Load(bundle)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]air.OperationState{}
	for _, op := range doc.Operations {
		m[op.ID] = op.State
	}
	return m
}

// TestLockSurvivesRecompile: approvals made with anvil approve are recorded
// in anvil.lock beside the manifest; a recompile after a spec change keeps
// the unchanged approvals and sends the changed operation back to review
// with a warning naming the change.
func TestLockSurvivesRecompile(t *testing.T) {
	dir := t.TempDir()
	oldSpec, newSpec, man := specPair(t, dir, "input_type_changed")
	out := filepath.Join(dir, "bundle")
	if code, _, stderr := runCLI(t, "", "compile", oldSpec, "--manifest", man, "--out", out); code != 0 {
		t.Fatalf("compile: %d %s", code, stderr)
	}
	if s := states(t, out); s["tracker.issues.get"] != air.StateReviewRequired {
		t.Fatalf("the manifest approves nothing, yet: %v", s)
	}
	code, stdout, stderr := runCLI(t, "", "approve", out, "tracker.issues.get", "tracker.issues.list")
	if code != 0 {
		t.Fatalf("approve: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, lock.OriginFile)); err != nil {
		t.Errorf("approve dropped the bundle's origin record: %v", err)
	}
	lockPath := filepath.Join(dir, lock.FileName)
	if !strings.Contains(stdout, "Recorded the approvals in "+lockPath) {
		t.Errorf("approve does not name the lock: %s", stdout)
	}
	first, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}

	// The same spec again: both approvals hold, no warning, same lock bytes.
	again := filepath.Join(dir, "again")
	code, _, stderr = runCLI(t, "", "compile", oldSpec, "--manifest", man, "--out", again)
	if code != 0 || strings.Contains(stderr, lock.CodeChanged) {
		t.Fatalf("recompile: %d %s", code, stderr)
	}
	if s := states(t, again); s["tracker.issues.get"] != air.StateApproved || s["tracker.issues.list"] != air.StateApproved || s["tracker.issues.create"] != air.StateReviewRequired {
		t.Errorf("the lock was not applied as recorded: %v", s)
	}
	if code, _, stderr := runCLI(t, "", "approve", again, "tracker.issues.list", "tracker.issues.get"); code != 0 {
		t.Fatal(stderr)
	}
	if second, _ := os.ReadFile(lockPath); string(second) != string(first) {
		t.Errorf("approving the same contracts again changed the lock:\n%s\n---\n%s", first, second)
	}

	// The new spec changes getIssue's issue_number from integer to string.
	code, _, stderr = runCLI(t, "", "compile", newSpec, "--manifest", man, "--out", out)
	if code != 0 {
		t.Fatalf("compile new: %d %s", code, stderr)
	}
	s := states(t, out)
	if s["tracker.issues.list"] != air.StateApproved {
		t.Errorf("an unchanged approval was lost: %v", s)
	}
	if s["tracker.issues.get"] != air.StateReviewRequired {
		t.Errorf("a changed operation kept its approval: %v", s)
	}
	want := "warning " + lock.CodeChanged + ": tracker.issues.get was approved in anvil.lock but its contract changed (input_type_changed: input `issue_number`: type integer → string (narrowed))"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "tracker.issues.list was approved") {
		t.Errorf("an unchanged operation was flagged:\n%s", stderr)
	}
}

// TestLockManifestOverrideAndBadLock: --manifest names where the lock goes;
// a lock whose entry was edited by hand is refused by compile.
func TestLockManifestOverrideAndBadLock(t *testing.T) {
	dir := t.TempDir()
	oldSpec, _, man := specPair(t, dir, "input_added")
	out := filepath.Join(dir, "bundle")
	// Compiled without a manifest: the bundle records none.
	if code, _, stderr := runCLI(t, "", "compile", oldSpec, "--service", "tracker", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	doc, err := air.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	id := doc.Operations[0].ID
	code, stdout, stderr := runCLI(t, "", "approve", out, id)
	if code != 0 {
		t.Fatal(stderr)
	}
	if strings.Contains(stdout, "Recorded") || !strings.Contains(stdout, "records no manifest") {
		t.Errorf("a bundle without a recorded manifest wrote a lock: %s", stdout)
	}
	other := filepath.Join(dir, "elsewhere", "anvil.yaml")
	if code, _, stderr := runCLI(t, "", "approve", out, id, "--manifest", other); code != 0 {
		t.Fatal(stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "elsewhere", lock.FileName))
	if err != nil {
		t.Fatalf("--manifest did not place the lock: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, lock.FileName), []byte(strings.Replace(string(b), `"GET"`, `"PUT"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "", "compile", oldSpec, "--manifest", man, "--out", filepath.Join(dir, "b2"))
	if code != 1 || !strings.Contains(stderr, "fingerprint does not match") {
		t.Errorf("a hand-edited lock: exit %d, %s", code, stderr)
	}
}

// TestApproveConfinesTheOrigin is issue 30's regression test: approve
// wrote anvil.lock wherever the bundle's anvil.origin.json pointed (a
// "../.." path outside the manifest's directory; an absolute path printed
// "Recorded" and lost the lock). The lock now goes only beside the
// manifest the record names, which must be a regular file holding a
// manifest of the bundle's service; any other record is refused with
// lock/origin_refused and nothing is written.
func TestApproveConfinesTheOrigin(t *testing.T) {
	dir := t.TempDir()
	oldSpec, _, man := specPair(t, dir, "input_type_changed")
	out := filepath.Join(dir, "bundle")
	if code, _, stderr := runCLI(t, "", "compile", oldSpec, "--manifest", man, "--out", out); code != 0 {
		t.Fatalf("compile: %d %s", code, stderr)
	}
	elsewhere := filepath.Join(dir, "elsewhere", "deep")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("version: 1\nservice:\n  name: another\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(man, filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, origin := range []string{
		man,                   // absolute
		"../elsewhere/deep",   // a directory
		"../../../../../../x", // nothing there
		"../link.yaml",        // a symlink
		"../old.yaml",         // not a manifest
		"../other.yaml",       // a manifest of another service
	} {
		rec := `{"manifest": "` + filepath.ToSlash(origin) + `"}`
		if err := os.WriteFile(filepath.Join(out, lock.OriginFile), []byte(rec), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, "", "approve", out, "tracker.issues.get")
		if code == 0 || !strings.Contains(stderr, lock.CodeOriginRefused) || strings.Contains(stdout, "Recorded") {
			t.Errorf("origin %s: exit %d\n%s%s", origin, code, stdout, stderr)
		}
		if s := states(t, out); s["tracker.issues.get"] != air.StateReviewRequired {
			t.Errorf("origin %s: the refused approve changed the bundle: %v", origin, s)
		}
	}
	for _, p := range []string{filepath.Join(dir, lock.FileName), filepath.Join(elsewhere, lock.FileName), filepath.Join(dir, "elsewhere", lock.FileName)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused approve wrote %s", p)
		}
	}
	// A lock that is a symlink is refused too.
	if err := os.WriteFile(filepath.Join(out, lock.OriginFile), []byte(`{"manifest": "../anvil.yaml"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(elsewhere, "target.lock")
	if err := os.Symlink(target, filepath.Join(dir, lock.FileName)); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "approve", out, "tracker.issues.get"); code == 0 || !strings.Contains(stderr, lock.CodeOriginRefused) {
		t.Errorf("symlinked lock: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("approve wrote through the symlinked lock")
	}
	// The record compile wrote still works.
	if err := os.Remove(filepath.Join(dir, lock.FileName)); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "", "approve", out, "tracker.issues.get"); code != 0 || !strings.Contains(stdout, "Recorded the approvals in "+filepath.Join(dir, lock.FileName)) {
		t.Errorf("the compiled origin: exit %d %s%s", code, stdout, stderr)
	}
}
